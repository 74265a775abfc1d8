"""The grounding data loader and the embedded verifier's fitting script, on small fixtures."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gate.backends.embedded import Calibration
from training import datasets
from training.embedded import main as fit_main

FACTS = [
    ("Alice works at Acme as an engineer.", "Alice is an engineer at Acme."),
    ("The bridge opened in 1932 after six years of work.", "The bridge opened in 1932."),
    ("Tom moved to Berlin in May to study music.", "Tom moved to Berlin in May."),
    ("The museum is closed on Mondays and holidays.", "The museum is closed on Mondays."),
    ("Sara bought a red bicycle for her commute.", "Sara bought a red bicycle."),
    ("The river floods every spring near the village.", "The river floods every spring."),
]
WRONG = [
    "Alice works at Initech.",
    "The bridge opened in 1955.",
    "Tom moved to Paris in May.",
    "The museum is open on Mondays.",
    "Sara bought a blue car.",
    "The river never floods.",
]


def write_fixture(root: Path) -> Path:
    """A miniature copy of the three formats in ../shared/data/grounding."""
    root.mkdir()
    with (root / "begin_dev_wow.tsv").open("w", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t")
        writer.writerow(
            ["model_name", "data_source", "knowledge", "message", "response", "begin_label"]
        )
        for (doc, good), bad in zip(FACTS, WRONG, strict=True):
            writer.writerow(["t5", "wow", doc, "hi", good, "Fully attributable"])
            writer.writerow(["t5", "wow", doc, "hi", bad, "Not fully attributable"])
            writer.writerow(["t5", "wow", doc, "hi", "I love that!", "Generic"])
    rows = []
    for i, ((doc, good), bad) in enumerate(zip(FACTS, WRONG, strict=True)):
        split = "evaluation" if i < 4 else "test"
        rows.append({"id": f"g{i}", "doc": doc, "summary": good, "label": "1", "split": split})
        rows.append({"id": f"b{i}", "doc": doc, "summary": bad, "label": 0, "split": split})
    (root / "summedits_news.json").write_text(json.dumps(rows))
    with (root / "wice_dev.jsonl").open("w") as fh:
        for label, (doc, claim) in zip(
            ["supported", "partially_supported", "not_supported"], FACTS, strict=False
        ):
            row = {"label": label, "supporting_sentences": [[0]], "claim": claim, "evidence": [doc]}
            fh.write(json.dumps(row) + "\n")
    return root


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
