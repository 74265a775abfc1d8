"""The grounding data loader and the embedded verifier's fitting script, on small fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from grounding_files import write_fixture

from gate.backends.embedded import Calibration
from training import datasets
from training.embedded import main as fit_main


def test_labels_and_splits(tmp_path: Path) -> None:
    root = write_fixture(tmp_path / "grounding")
    rows = datasets.load(root)
    assert datasets.datasets(rows) == ["begin_wow", "summedits_news", "wice"]
    begin = [r for r in rows if r.dataset == "begin_wow"]
    assert [r.label for r in begin[:3]] == [1, 0, 0]  # "Generic" is not attributable
    wice = {r.claim: r.label for r in rows if r.dataset == "wice"}
    assert sorted(wice.values()) == [0, 0, 1]  # partially supported is not supported
    summ = [r for r in rows if r.dataset == "summedits_news"]
    assert [r.label for r in summ[:2]] == [1, 0] and summ[0].split == "fit"
    assert summ[-1].split == "check"
    fit, check = datasets.load(root, "fit"), datasets.load(root, "check")
    assert len(fit) + len(check) == len(rows)
    assert not {(r.dataset, r.key) for r in fit} & {(r.dataset, r.key) for r in check}
    assert [r.key for r in datasets.load(root, "fit")] == [r.key for r in fit]  # stable


def test_missing_data_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="MEMSTORE_GROUNDING_DATA"):
        datasets.load(tmp_path / "nowhere")


def test_the_fitting_script_writes_loadable_params(tmp_path: Path) -> None:
    root = write_fixture(tmp_path / "grounding")
    out = tmp_path / "params.json"
    cache = tmp_path / "features.npz"
    assert fit_main(["--data", str(root), "--out", str(out), "--features-cache", str(cache)]) == 0
    params = json.loads(out.read_text())
    calibration = Calibration(params)
    assert params["scores"]["fit"]["summedits_news"]["rows"] == 8
    first = out.read_text()
    assert fit_main(["--data", str(root), "--out", str(out), "--features-cache", str(cache)]) == 0
    assert out.read_text() == first  # seeded and repeatable
    assert calibration.coef.shape == calibration.mean.shape
