"""The agent-memory grounding set (bench/data/agent_memory): well formed, split cleanly, and
rebuilt byte for byte by its generator."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
DATA = BENCH / "data" / "agent_memory"
SPLITS = ("train", "dev", "test")
FILES = ("generated.jsonl", *(f"{s}.jsonl" for s in SPLITS))
sys.path.insert(0, str(BENCH))

from agent_memory import load_all  # noqa: E402


def _read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_memory_generate", DATA / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scenarios() -> list[dict[str, Any]]:
    return _read(DATA / "scenarios.jsonl")


@pytest.fixture(scope="module")
def splits() -> dict[str, list[dict[str, Any]]]:
    return {s: _read(DATA / f"{s}.jsonl") for s in SPLITS}


def test_scenarios_are_well_formed(scenarios: list[dict[str, Any]]) -> None:
    ids = [sc["id"] for sc in scenarios]
    assert len(ids) == len(set(ids))
    for sc in scenarios:
        assert sc["kind"] and sc["evidence"] and all(isinstance(e, str) for e in sc["evidence"])
        assert 2 <= len(sc["claims"]) <= 4, sc["id"]
        claims = [c["claim"] for c in sc["claims"]]
        assert len(claims) == len(set(claims)), sc["id"]
        for c in sc["claims"]:
            assert c["label"] in (0, 1) and c["phenomenon"], sc["id"]
            if c.get("quote") is not None:
                assert c["label"] == 1, (sc["id"], c["claim"])
                assert any(c["quote"] in e for e in sc["evidence"]), (sc["id"], c["quote"])
    labels = Counter(c["label"] for sc in scenarios for c in sc["claims"])
    assert min(labels.values()) >= 0.4 * sum(labels.values())


def test_rows_parse_and_quotes_are_verbatim(splits: dict[str, list[dict[str, Any]]]) -> None:
    keys = {"id", "scenario", "kind", "phenomenon", "claim", "evidence", "label", "quote"}
    for rows in splits.values():
        for row in rows:
            assert keys <= row.keys(), row["id"]
            assert row["label"] in (0, 1) and row["claim"] and row["evidence"]
            if row["quote"] is not None:
                assert row["label"] == 1
                assert any(row["quote"] in e for e in row["evidence"]), row["id"]
    all_ids = [row["id"] for rows in splits.values() for row in rows]
    assert len(all_ids) == len(set(all_ids))


def test_splits_are_disjoint_by_scenario_and_pair(
    splits: dict[str, list[dict[str, Any]]], generate: ModuleType
) -> None:
    by_scenario = {s: {row["scenario"] for row in rows} for s, rows in splits.items()}
    by_pair = {
        s: {(row["claim"], tuple(row["evidence"])) for row in rows} for s, rows in splits.items()
    }
    by_evidence = {s: {tuple(row["evidence"]) for row in rows} for s, rows in splits.items()}
    for i, a in enumerate(SPLITS):
        for b in SPLITS[i + 1 :]:
            assert not by_scenario[a] & by_scenario[b], (a, b)
            assert not by_pair[a] & by_pair[b], (a, b)
            assert not by_evidence[a] & by_evidence[b], (a, b)
    for split, rows in splits.items():
        assert all(generate.split_of(row["scenario"]) == split for row in rows)


def test_generated_pairs_come_from_train_and_dev_only(
    splits: dict[str, list[dict[str, Any]]],
) -> None:
    generated = _read(DATA / "generated.jsonl")
    assert generated
    test_scenarios = {row["scenario"] for row in splits["test"]}
    assert not any(row.get("generated_from") for row in splits["test"])
    by_id = {row["id"]: row for rows in splits.values() for row in rows}
    for row in generated:
        assert row["scenario"] not in test_scenarios
        assert row["label"] == 0 and row["quote"] is None
        assert by_id[row["id"]] == row  # it is in its scenario's split file, unchanged
        source = by_id[row["generated_from"]]
        assert source["label"] == 1 and source["generated_from"] is None
        assert source["scenario"] == row["scenario"] and source["claim"] != row["claim"]
    in_files = [r for s in ("train", "dev") for r in splits[s] if r.get("generated_from")]
    assert len(in_files) == len(generated)


def test_sizes_and_labels(splits: dict[str, list[dict[str, Any]]]) -> None:
    assert sum(len(rows) for rows in splits.values()) >= 400
    assert len(splits["test"]) >= 120
    for split, rows in splits.items():
        labels = Counter(row["label"] for row in rows)
        assert labels[0] and labels[1], split
    test_labels = Counter(row["label"] for row in splits["test"])
    assert min(test_labels.values()) >= 0.4 * len(splits["test"])
    kinds = {row["kind"] for row in splits["test"]}
    assert len(kinds) >= 6


def test_loader_matches_the_files(splits: dict[str, list[dict[str, Any]]]) -> None:
    loaded = load_all()
    for split, rows in splits.items():
        pairs = loaded[split]
        assert [p.id for p in pairs] == [row["id"] for row in rows]
        assert all(isinstance(p.evidence, tuple) for p in pairs)
        assert [p.label for p in pairs] == [row["label"] for row in rows]
    hand = load_all(generated=False)
    assert all(not p.generated for rows in hand.values() for p in rows)
    assert len(hand["test"]) == len(loaded["test"])


def test_generate_reproduces_the_files(tmp_path: Path) -> None:
    for out in (tmp_path / "a", tmp_path / "b"):
        subprocess.run(
            [sys.executable, str(DATA / "generate.py"), "--out", str(out)],
            check=True,
            capture_output=True,
        )
        for name in FILES:
            assert (out / name).read_bytes() == (DATA / name).read_bytes(), name
