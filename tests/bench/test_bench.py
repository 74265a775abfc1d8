"""The benchmark suite's own parts: the synthetic world, the metrics, the summary."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import gate_quality  # noqa: E402
import gate_table  # noqa: E402
import held_floor  # noqa: E402
import summary  # noqa: E402
from synthetic import World  # noqa: E402

import memstore  # noqa: E402

pytestmark = pytest.mark.slow  # real processes and minutes of work: -m 'not slow' skips it


def test_the_world_is_the_same_for_the_same_seed_and_differs_for_another() -> None:
    first = list(World(facts=300, seed=3).items())
    assert first == list(World(facts=300, seed=3).items())
    assert first != list(World(facts=300, seed=4).items())
    assert len(first) == 300


def test_every_fact_links_two_to_four_distinct_members_named_in_its_evidence() -> None:
    for fact in World(facts=500).items():
        names = [m[0] for m in fact["members"]]
        assert 2 <= len(names) <= 4
        assert len(set(names)) == len(names)
        for name in names:
            assert name in fact["statement"]
            assert name in fact["evidence"][0]


def test_facts_share_evidence_turns_and_entity_popularity_is_skewed() -> None:
    items = list(World(facts=5_000).items())
    turns = {fact["evidence"][0] for fact in items}
    assert len(items) / 3 < len(turns) < len(items)  # 1-3 facts per turn
    degree = Counter(m[0] for fact in items for m in fact["members"])
    counts = sorted(degree.values(), reverse=True)
    # Zipf: the most popular entity is in far more facts than the typical one.
    assert counts[0] > 50 * counts[len(counts) // 2]


def test_the_world_is_what_the_store_takes(tmp_path: Path) -> None:
    world = World(facts=40)
    with memstore.open(tmp_path, "bench", hook=memstore.Ungated(), index=False) as store:
        written = [r for batch in world.batches(16) for r in store.add_facts(batch)]
        assert all(isinstance(r, memstore.FactPublic) for r in written)
        assert sum(store.stats().facts.values()) == 40


def test_calibration_error_is_zero_when_p_matches_the_rate_and_large_when_it_does_not() -> None:
    labels = np.array([1] * 7 + [0] * 3 + [1] * 2 + [0] * 8)
    matched = np.array([0.7] * 10 + [0.2] * 10)
    assert gate_quality.expected_calibration_error(labels, matched) == pytest.approx(0.0)
    overconfident = np.array([0.99] * 10 + [0.01] * 10)
    assert gate_quality.expected_calibration_error(labels, overconfident) == pytest.approx(
        (10 * 0.29 + 10 * 0.19) / 20
    )


def test_rejection_rates_count_the_rows_the_gate_should_have_rejected() -> None:
    rejected = np.array([True, True, False, False, True])
    labels = np.array([0, 1, 0, 1, 1])
    rates = gate_quality._rejections(rejected, labels)
    assert rates["rejection_precision"] == pytest.approx(1 / 3, abs=1e-4)
    assert rates["rejection_recall"] == pytest.approx(0.5)
    assert rates["false_rejection_rate"] == pytest.approx(2 / 3, abs=1e-4)


def test_the_summary_shows_every_gate_result_with_a_dash_for_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = _gate_result()
    partial = {k: v for k, v in full.items() if k != "scrub_test_wice"}
    partial["identity"] = "other"
    text = gate_table.table([full, partial])
    assert full["identity"] in text and "other" in text
    scrub_row = next(line for line in text.splitlines() if line.startswith("| WiCE scrub"))
    assert scrub_row.rstrip(" |").endswith("-")
    (tmp_path / "gate_quality_x.json").write_text(json.dumps(full))
    monkeypatch.setattr(summary, "RESULTS", tmp_path)
    monkeypatch.setattr(summary, "STEPS_FILE", tmp_path / "steps.json")
    monkeypatch.setattr(summary, "SUMMARY", tmp_path / "SUMMARY.md")
    out = summary.write_summary("make bench", {"gate-embedded": 12.0}, 60.0)
    written = out.read_text()
    assert "`make bench`: 1.0 min" in written and "gate-embedded 12 s" in written
    assert f"{full['mean_auroc']:.3f}" in written


def test_the_summary_gives_the_checks_time_alone_and_added_to_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shares = {
        "true_facts_refused": 0.01,
        "false_facts_verified": 0.06,
        "held": 0.8,
        "true_facts_verified": 0.1,
    }
    result = {
        "command": "python bench/three_outcomes.py --split test --backend embedded",
        "date": "2026-12-07T00:00:00+00:00",
        "commit": "abc1234",
        "backend": "embedded",
        "old": shares,
        "new": shares,
        "checks_ms_per_claim": {"p50": 6.2, "p95": 8.0},
        "checks_added_ms_per_claim": {"added": 3.1},
    }
    older = {**result, "backend": "embedded-ce", "checks_added_ms_per_claim": None}
    del older["checks_added_ms_per_claim"]
    (tmp_path / "three_outcomes_test_embedded.json").write_text(json.dumps(result))
    (tmp_path / "three_outcomes_test_embedded-ce.json").write_text(json.dumps(older))
    monkeypatch.setattr(summary, "RESULTS", tmp_path)
    monkeypatch.setattr(summary, "STEPS_FILE", tmp_path / "steps.json")
    monkeypatch.setattr(summary, "SUMMARY", tmp_path / "SUMMARY.md")
    rows = summary.write_summary("make bench", {}, 60.0).read_text().splitlines()
    new = [r for r in rows if r.startswith("| embedded") and "three outcomes" in r]
    assert [r.split("|")[-2].strip() for r in new] == ["6.2 / -", "6.2 / 3.1"]


def test_the_held_floor_is_nothing_for_a_verifier_that_separates_and_all_for_one_that_cannot() -> (
    None
):
    label = [True] * 20 + [False] * 20
    apart = held_floor.floor([0.9] * 20 + [0.1] * 20, label, [False] * 40)
    assert apart is not None and apart["held"] == 0.0
    same = held_floor.floor([0.5] * 40, label, [False] * 40)
    assert same is not None and same["held"] == 1.0 and same["verify_from"] is None
    # the checks' refusals are decided whatever the thresholds
    checked = held_floor.floor([0.5] * 40, label, [False] * 30 + [True] * 10)
    assert checked is not None and checked["held"] == 0.75


def test_a_verifier_needs_a_higher_auroc_where_the_checks_refuse_less() -> None:
    assert held_floor.needed_auroc(0.0) > held_floor.needed_auroc(0.35) > 0.85
    assert held_floor.auroc([0.9, 0.8], [0.1, 0.8]) == 0.875


def _gate_result() -> dict[str, object]:
    """A gate_quality result as the script writes it, for two datasets."""
    scores = {"auroc": 0.8, "balanced_accuracy": 0.7, "ece": 0.1, "brier": 0.2}
    rates = {"rejection_precision": 0.9, "rejection_recall": 0.6, "false_rejection_rate": 0.2}
    batch = {"ms": 100.0, "ms_per_claim": 12.5, "spec_ms": 1300, "within_spec": True}
    return {
        "command": "python bench/gate_quality.py --backend embedded",
        "date": "2026-11-21T00:00:00+00:00",
        "commit": "abc1234",
        "identity": "embedded:test",
        "per_dataset_limit": 0,
        "datasets": {"a": {"rows": 10, **scores, **rates}, "b": {"rows": 12, **scores, **rates}},
        "mean_auroc": 0.8,
        "min_auroc": 0.8,
        "mean_balanced_accuracy": 0.7,
        "gate": {**rates, "verdicts": {"grounded": 12, "unsupported": 10}},
        "scrub_test_wice": {"share_p0_below_p1": 0.95, "scored": 20},
        "gate_ms_per_row": 30.0,
        "gate_single_ms_p50": 20.0,
        "gate_single_ms_p95": 30.0,
        "gate_single_within_spec": True,
        "gate_batched": {"8": batch, "32": batch, "128": batch},
        "batch32_ms_per_claim": 10.0,
        "load_s": 2.0,
    }


def _run(script: str, *args: str) -> None:
    subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=600,
    )


def test_a_small_store_scale_run_reports_every_measure_consistently(tmp_path: Path) -> None:
    out = tmp_path / "store_300.json"
    _run(
        "store_scale.py",
        *("--facts", "300", "--gated", "40", "--queries", "5", "--reverify", "10"),
        *("--out", str(out)),
    )
    result = json.loads(out.read_text())
    assert result["facts"] == 300 and result["commit"] and result["machine"]["cpus"]
    ingest = result["ungated_ingest"]
    assert ingest["facts"] == 300 and ingest["facts_per_second"] > 0
    gated = result["gated_ingest"]
    assert gated["accepted"] + gated["rejected"] == gated["facts"] == 40
    assert sum(gated["verdicts"].values()) == 40
    stored = sum(result["stats"]["facts"].values())
    assert stored == 300 - ingest["deduplicated"] + gated["accepted"] - gated["deduplicated"]
    rows = gated["rejected"] - gated["refused_again"]
    assert sum(result["stats"]["rejections"].values()) == rows
    for name, series in result["latency"].items():
        assert 0 < series["p50_ms"] <= series["p95_ms"], name
    assert result["reverify"]["checked"] == min(10, result["reverify"]["due"])
    assert result["disk_mib"]["database"] > 0 and max(result["peak_rss_mib"].values()) > 0
    table = summary.store_table([result]).splitlines()
    assert "| ungated ingest, facts/s |" in "\n".join(table)
    measured = [line for line in table if not line.startswith("| index texts")]  # no-index only
    assert not [line for line in measured if "| - |" in line]


def test_a_store_scale_run_without_its_index_measures_the_embedding_floor_instead(
    tmp_path: Path,
) -> None:
    out = tmp_path / "store_300.json"
    _run(
        "store_scale.py",
        *("--facts", "300", "--gated", "20", "--queries", "5", "--reverify", "5"),
        *("--no-index", "--out", str(out)),
    )
    result = json.loads(out.read_text())
    assert result["index"] is False and result["disk_mib"]["index"] is None
    assert not any(name.startswith("search") for name in result["latency"])
    assert "index_tables" not in result
    floor = result["index_floor"]
    stats = result["stats"]
    assert floor["texts"] == sum(stats["facts"].values()) + stats["evidence"]
    assert floor["texts_per_second"] > 0
    assert abs(floor["minutes"] - floor["texts"] / floor["texts_per_second"] / 60) < 0.1
    table = summary.store_table([result])
    assert "| | 300 facts, no index |" in table and "none built" in table


def test_a_small_writes_run_finds_every_last_fact_in_both_modes(tmp_path: Path) -> None:
    out = tmp_path / "writes.json"
    _run("writes.py", "--single", "5", "--paced", "3", "--pause-ms", "0", "--bulk", "30",
         "--out", str(out))  # fmt: skip
    result = json.loads(out.read_text())
    assert (
        result["commit"] and result["machine"]["cpus"] and len(result["load_average_at_start"]) == 3
    )
    assert [m["mode"] for m in result["modes"]] == ["inline", "background"]
    for m in result["modes"]:
        assert m["single_add_fact"]["samples"] == 5 and m["last_bulk_fact_found"], m["mode"]
        assert m["bulk_facts_per_s"] > 0 and m["paced_add_fact"]["samples"] == 3
        late = m["paced_not_in_index_within_s"]["writes"]
        assert late + (m["paced_in_index_after"] or {"samples": 0})["samples"] == 3
    inline = result["modes"][0]  # indexed before a write returns
    assert inline["queued_after_bulk"] == 0 and inline["paced_not_in_index_within_s"]["writes"] == 0
    assert result["bulk_sql_only_facts_per_s"] > 0
    table = summary.writes_table(result)
    assert table.count("| yes |") == 2 and "| NO |" not in table
    assert f"SQL alone: {result['bulk_sql_only_facts_per_s']} facts/s" in table


def test_a_small_namespaces_run_leaves_the_busy_backlog_to_its_own_namespace(
    tmp_path: Path,
) -> None:
    out = tmp_path / "namespaces.json"
    _run("namespaces.py", "--backlog", "40", "--first", "3", "--namespaces", "6",
         "--concurrency", "3", "--out", str(out))  # fmt: skip
    result = json.loads(out.read_text())
    assert result["commit"] and result["machine"]["cpus"]
    # Nine namespaces opened, none applied busy's queue: only busy's own open does that.
    assert result["backlog_queued"] == result["backlog_left_after"] == 40
    first, many = result["first_requests"], result["many_namespaces"]
    assert first["not_ok"] == 0 and len(first["each_ms"]) == 3
    assert many["outcomes"] == {"ok": 6} and many["timeouts"] == 0
    assert many["server_rss_mib_after"] > 0
    table = summary.namespaces_table(result)
    assert "| 6 more | 3 |" in table and "40 search-index changes queued" in table


def test_a_small_audit_page_run_times_every_page(tmp_path: Path) -> None:
    out = tmp_path / "audit_page_150.json"
    _run("audit_page.py", "--rejections", "150", "--repeats", "3", "--out", str(out))
    result = json.loads(out.read_text())
    assert result["rejections"] == 150 and result["commit"] and result["machine"]["cpus"]
    assert result["ingest"]["per_s"] > 0
    assert set(result["latency"]) == {
        "list", "list_by_verdict", "list_by_words", "list_deep_page", "one_rejection",
        "whole_chain", "drift_api",
    }  # fmt: skip
    for name, series in result["latency"].items():
        assert series["samples"] == 3 and 0 < series["p50_ms"] <= series["p95_ms"], name
    assert result["goal"]["met"] == (result["latency"]["list"]["p95_ms"] <= 300)


def test_a_small_gate_quality_run_scores_every_dataset(tmp_path: Path) -> None:
    out = tmp_path / "gate_quality_embedded-ce.json"
    _run(
        "gate_quality.py",
        *("--backend", "embedded-ce", "--per-dataset", "10", "--singles", "2"),
        *("--batches", "8", "--out", str(out)),
    )
    result = json.loads(out.read_text())
    assert set(result["datasets"]) >= {"wice", "summedits_news", "begin_cmu"}
    assert result["rows"] == sum(d["rows"] for d in result["datasets"].values())
    assert sum(result["gate"]["verdicts"].values()) == result["rows"]
    for d in result["datasets"].values():
        assert d["auroc"] is None or 0 <= d["auroc"] <= 1  # None: one class in the sample
        assert 0 <= d["ece"] <= 1
    assert result["gate_batched"]["8"]["spec_ms"] == 1300
    assert "| WiCE scrub test" in gate_table.table([result])


def test_a_small_host_models_run_measures_every_route(tmp_path: Path) -> None:
    out = tmp_path / "host_models.json"
    subprocess.run(
        [sys.executable, str(BENCH / "host_models.py"), "--rows", "2", "--samples", "2",
         "--out", str(out)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    result = json.loads(out.read_text())
    routes = {r["route"]: r for r in result["routes"]}
    assert set(routes) == {"openai-logprobs", "sampling", "mcp-host-mid-call", "mcp-host-rounds"}
    assert routes["openai-logprobs"]["requests_per_write"] == 2  # one per question
    for name in ("sampling", "mcp-host-mid-call", "mcp-host-rounds"):
        route = routes[name]
        assert route["requests_per_write"] == 2 * 2  # p1 and p0, two samples each
        assert route["tokens_per_write"] > 0 and 0.0 <= route["bare_answers"] <= 1.0
        assert sum(route["outcomes"].values()) == pytest.approx(1.0, abs=0.01)
        assert route["latency_per_claim"]["samples"] == 2
    assert "| mcp-host-rounds | 4 |" in summary.host_table(result)
