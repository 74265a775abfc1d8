"""SIGKILL at seeded random points during add_fact, batch add, reindex and
re-verification, many times over one store, on SQLite and PostgreSQL.

After each kill the store is reopened and checked against SQL and LanceDB directly:
every acknowledged fact is there, every fact is whole (its members, citations, write
record and search-index row), the latest history row of each fact agrees with its
status, the audit chain is unbroken, and the index matches SQL again. Each test prints
its counts (``-s`` not needed: they go to the terminal).
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from crash_checks import WORKER, check_whole, sql_rows
from workers import BATCH, fact, open_store, read_acks

from memstore.schemas import MAX_SEARCH_K
from memstore.storage.tables import ACTIVE_STATUSES

pytestmark = pytest.mark.slow  # real processes and minutes of work: -m 'not slow' skips it

#: Kills per operation and database (``MEMSTORE_CRASH_ROUNDS`` raises it for a long run).
ROUNDS = int(os.environ.get("MEMSTORE_CRASH_ROUNDS", "8"))
SEED = 20261121
#: A kill lands this long (uniform, seconds) after the worker has opened the store ...
KILL_WINDOW = (0.0, 1.5)
#: ... or, for this share of the kills, this long after it started: during imports,
#: migrations or the open's replay of what the previous kill left queued.
EARLY_KILLS = 0.3
EARLY_WINDOW = (1.0, 4.0)
SEEDED_FACTS = 60  # a store for reindex and re-verification to work on


@dataclass
class Tally:
    """What the kills left, summed over the rounds."""

    kills: int = 0
    early_kills: int = 0  # before the worker had opened the store
    seeded: int = 0  # facts written before the first kill
    acknowledged: int = 0
    found: int = 0
    unacknowledged_found: int = 0  # committed, killed before the worker heard back
    queued_at_kill: int = 0  # index changes waiting when the worker died
    completed_calls: Counter[str] = field(default_factory=Counter)

    def line(self, operation: str, database: str) -> str:
        calls = ", ".join(f"{n} {kind}" for kind, n in sorted(self.completed_calls.items()))
        return (
            f"crash {operation} on {database}: {self.kills} kills ({self.early_kills} while "
            f"starting); facts acknowledged "
            f"{self.acknowledged}, found {self.found} ({self.unacknowledged_found} "
            f"committed unacknowledged), lost 0, half-written 0; {self.queued_at_kill} "
            f"index changes queued at kill, all replayed; calls completed: {calls or 'none'}"
            + (f" (on {self.seeded} facts written first)" if self.seeded else "")
        )


def kill_at_random(
    operation: str, target: str, index: Path, acked: Path, start: int, delay: float, opened: bool
) -> None:
    """Start a worker, wait until it has opened the store (``opened``: else the clock
    starts at once, and the kill may land while the open replays the last crash's
    queue), let it run ``delay`` s, SIGKILL."""
    log = acked.with_suffix(".stderr")
    with log.open("a") as stderr:
        worker = subprocess.Popen(
            [sys.executable, str(WORKER), operation, target, str(index), str(acked), str(start)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        assert worker.stdout is not None
        if opened:
            ready, _, _ = select.select([worker.stdout], [], [], 180)
            line = worker.stdout.readline() if ready else ""
            if line.strip() != "ready":
                worker.kill()
                worker.wait()
                pytest.fail(f"the worker did not start: {log.read_text()[-3000:]}")
        try:
            worker.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            worker.send_signal(signal.SIGKILL)
        worker.wait()
        worker.stdout.close()
    assert worker.returncode == -signal.SIGKILL, log.read_text()[-3000:]


@pytest.mark.both_databases
@pytest.mark.parametrize("operation", ["add_fact", "add_facts", "reindex", "reverify"])
def test_killed_workers_leave_every_fact_whole_or_absent(
    data_dir: Path,
    tmp_path: Path,
    database: str,
    operation: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rng = random.Random(f"{SEED}-{operation}-{database}")
    tally = Tally()
    index, acked, target = tmp_path / "index", tmp_path / "acked.txt", str(data_dir)
    with open_store(target, index) as store:
        url = store.url
        if operation in ("reindex", "reverify"):
            seeded = store.add_facts([fact(n) for n in range(SEEDED_FACTS)])
            acked.write_text("".join(f"fact {n} {r.id}\n" for n, r in enumerate(seeded)))
            tally.seeded = len(seeded)
    for round_ in range(1, ROUNDS + 1):
        start = round_ * 100_000  # each round's facts are new
        opened = rng.random() >= EARLY_KILLS
        delay = rng.uniform(*(KILL_WINDOW if opened else EARLY_WINDOW))
        kill_at_random(operation, target, index, acked, start, delay, opened)
        tally.kills += 1
        tally.early_kills += not opened
        [(queued,)] = sql_rows(url, "SELECT count(*) FROM index_outbox")
        tally.queued_at_kill += queued
        with open_store(target, index) as store:  # the reopen that must repair
            assert store.verify_audit_chain().ok
            # The index serves queries again. A kill may land before the worker wrote
            # anything, so what search finds is compared with SQL, zero facts included.
            hits = store.search("Worker fact entity", MAX_SEARCH_K, mode="vector")
        found = check_whole(url, index)
        live = {fact_id for fact_id, status in found.items() if status in ACTIVE_STATUSES}
        served = {hit.fact.id for hit in hits}
        assert served <= live and len(served) == min(len(live), MAX_SEARCH_K)
        acks = read_acks(acked)
        acknowledged = {line.split()[2] for line in acks if line.startswith("fact ")}
        assert acknowledged <= set(found)  # nothing acknowledged is lost
        in_flight = set(found) - acknowledged
        allowed = {"add_fact": 1, "add_facts": BATCH}.get(operation, 0)
        assert len(in_flight) <= allowed * round_  # each kill leaves at most one call's facts
    tally.found = len(found)
    tally.acknowledged = len(acknowledged)
    tally.unacknowledged_found = len(in_flight)
    tally.completed_calls = Counter(line.split()[0] for line in acks[tally.seeded :])
    if operation in ("reindex", "reverify"):
        assert tally.found == SEEDED_FACTS  # these operations never add or drop facts
    with capsys.disabled():
        print("\n" + tally.line(operation, database))
