"""Ungated write latency with the search index written inline or by a background thread.

    python bench/writes.py [--single 300] [--paced 100] [--pause-ms 250] [--bulk 1000]

For each ``index_writes`` mode (``inline``: a write embeds and indexes its facts before
it returns; ``background``: it returns once SQL holds them and a thread of the store
indexes them), on a fresh SQLite store with the packaged MiniLM embedder (loaded and
warmed before the clock): ``single`` facts written one ``add_fact`` at a time, back to
back (p50/p95); then ``paced`` facts one at a time with ``pause_ms`` between them, as an
agent writes a memory a turn (p50/p95 of the call, and of the time from the call until
the index holds the fact: ``measure.paced_writes``); then ``bulk`` facts in ``add_facts``
batches of 1,000 (facts per second committed), then how long ``sync_index()`` takes to
catch the index up after the bulk write. Last, the same bulk batches on a fresh store
with no search index (``index=False``): what the write path commits to SQL alone.

Back to back on a small machine, a background index thread embeds while the next
writes run, so the calls share the cores with it; paced, it has finished before the
next write begins, as it would between an agent's turns. The facts
are the seeded synthetic World's (``bench/synthetic.py``). Results go to
``bench/results/writes.json`` with the machine, the date, the commit and the command.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import RESULTS, SEED, VISIBLE_WITHIN_S, paced_writes, percentiles, provenance, save
from synthetic import World

import memstore

MODES = ("inline", "background")
BATCH = 1_000


def measure(
    mode: str, facts: list[dict[str, Any]], single: int, paced: int, pause: float
) -> dict[str, Any]:
    """One mode on a fresh store: single writes back to back, then paced, bulk writes,
    then the index catching up."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        memstore.open(Path(tmp), "bench", hook=memstore.Ungated(), index_writes=mode) as store,
    ):
        store.add_facts(facts[:50])  # the embedder loaded and warm
        store.sync_index()
        samples = []
        for fact in facts[50 : 50 + single]:
            started = time.perf_counter()
            store.add_fact(fact)
            samples.append(time.perf_counter() - started)
        store.sync_index()
        done = paced_writes(store, facts[50 + single : 50 + single + paced], pause)
        bulk = facts[50 + single + paced :]
        started = time.perf_counter()
        written = add_in_batches(store, bulk)
        bulk_seconds = time.perf_counter() - started
        backlog = store.index_backlog()
        started = time.perf_counter()
        store.sync_index()
        sync_seconds = time.perf_counter() - started
        # Found by its own words (ties are possible: "A and B are friends" and "B and A ...").
        hits = store.search(bulk[-1]["statement"], 10, mode="text")
        return {
            "mode": mode,
            "single_add_fact": percentiles(samples),
            "paced_add_fact": percentiles(done.calls),
            "paced_in_index_after": percentiles(done.in_index) if done.in_index else None,
            "paced_not_in_index_within_s": {"writes": done.late, "seconds": VISIBLE_WITHIN_S},
            "bulk_facts_per_s": round(len(bulk) / bulk_seconds, 1),
            "queued_after_bulk": backlog,
            "sync_index_after_bulk_s": round(sync_seconds, 2),
            "last_bulk_fact_found": written[-1].id in {hit.fact.id for hit in hits},
        }


def sql_only(facts: list[dict[str, Any]], bulk: int) -> float:
    """Facts per second that bulk ``add_facts`` commits to SQL on a fresh store with no
    search index (``index=False``): the write path alone, with no embedder beside it."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        memstore.open(Path(tmp), "bench", hook=memstore.Ungated(), index=False) as store,
    ):
        store.add_facts(facts[:50])
        rows = facts[-bulk:]
        started = time.perf_counter()
        add_in_batches(store, rows)
        return round(len(rows) / (time.perf_counter() - started), 1)


def add_in_batches(store: memstore.Store, rows: list[dict[str, Any]]) -> list[Any]:
    """``rows`` written by ``add_facts`` in batches of ``BATCH``; the last batch's results."""
    written: list[Any] = []
    for first in range(0, len(rows), BATCH):
        written = store.add_facts(rows[first : first + BATCH])
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--single", type=int, default=300)
    parser.add_argument("--paced", type=int, default=100)
    parser.add_argument("--pause-ms", type=float, default=250.0)
    parser.add_argument("--bulk", type=int, default=1_000)
    parser.add_argument("--out", type=Path, default=RESULTS / "writes.json")
    args = parser.parse_args(argv)
    if min(args.single, args.paced, args.bulk) < 1 or args.pause_ms < 0:
        parser.error("--single, --paced and --bulk must be at least 1, --pause-ms at least 0")
    facts = list(World(50 + args.single + args.paced + args.bulk, SEED).items())
    result = provenance("writes")
    result["single"], result["bulk"] = args.single, args.bulk
    result["paced"], result["pause_ms"] = args.paced, args.pause_ms
    result["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    pause = args.pause_ms / 1000
    result["modes"] = [measure(m, facts, args.single, args.paced, pause) for m in MODES]
    result["bulk_sql_only_facts_per_s"] = sql_only(facts, args.bulk)
    save(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
