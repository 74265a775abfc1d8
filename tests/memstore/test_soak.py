"""N processes x M threads writing, reading and re-verifying one store for a bounded
time, on SQLite (WAL, busy timeout) and PostgreSQL, with LanceDB shared by all.

No lost writes (the facts and rejections found are exactly the ones acknowledged), no
duplicate entities although every process creates the same ones, no deadlock (every
process finishes within its time plus a margin), and afterwards SQL, the audit chain
and the search index agree. The test prints its counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from crash_checks import WORKER, check_whole, sql_rows
from workers import NS, fact, open_store, read_acks

pytestmark = pytest.mark.slow  # real processes and minutes of work: -m 'not slow' skips it

PROCESSES = int(os.environ.get("MEMSTORE_SOAK_PROCESSES", "3"))
THREADS = int(os.environ.get("MEMSTORE_SOAK_THREADS", "4"))  # 1 re-verifier, 1 reader, writers
SECONDS = float(os.environ.get("MEMSTORE_SOAK_SECONDS", "10"))
#: Beyond SECONDS, what a process may take to start, finish its last calls and close.
MARGIN_S = 120.0


@contextmanager
def reaped(workers: Sequence[subprocess.Popen[str]]) -> Iterator[None]:
    """On the way out, however the test went, no worker is left running."""
    try:
        yield
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
            worker.communicate()


@pytest.mark.both_databases
def test_processes_and_threads_on_one_store_lose_nothing(
    data_dir: Path, tmp_path: Path, database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    index, acked, target = tmp_path / "index", tmp_path / "acked.txt", str(data_dir)
    with open_store(target, index) as store:  # migrated once, before the race
        url = store.url
        first = {r.id for r in store.add_facts([fact(n) for n in range(20)])}  # to re-verify
    started = time.monotonic()
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                str(WORKER),
                "soak",
                target,
                str(index),
                str(acked),
                str((p + 1) * 10_000_000),
                str(SECONDS),
                str(THREADS),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(PROCESSES)
    ]
    done: Counter[str] = Counter()
    with reaped(workers):
        for worker in workers:
            try:
                left = SECONDS + MARGIN_S - (time.monotonic() - started)
                out, err = worker.communicate(timeout=left)
            except subprocess.TimeoutExpired:
                pytest.fail("a worker did not finish in time: a deadlock or a lock held too long")
            assert worker.returncode == 0, err[-3000:]
            done.update(json.loads(out.splitlines()[-1]))
    elapsed = time.monotonic() - started

    acks = read_acks(acked)
    stored = {line.split()[2] for line in acks if line.startswith("fact ")}
    rejected = sum(1 for line in acks if line.startswith("rejected "))
    [(queued,)] = sql_rows(url, "SELECT count(*) FROM index_outbox")
    with open_store(target, index) as store:
        assert store.verify_audit_chain().ok
        stats = store.stats()
    found = check_whole(url, index)  # whole facts; SQL and index agree
    assert len(first) == 20 and not first & stored
    assert set(found) == stored | first  # exact: none lost, none extra
    assert sum(stats.rejections.values()) == rejected
    names = sql_rows(url, "SELECT name FROM entities WHERE namespace = :ns")
    members = sql_rows(
        url,
        "SELECT DISTINCT e.name FROM fact_members m JOIN entities e ON e.id = m.entity_id"
        " WHERE m.namespace = :ns",
    )
    assert len(names) == len(set(names)) == len(members)  # one row per entity, none orphaned
    assert done["facts stored"] == len(stored) and done["facts rejected"] == rejected
    assert done["reads"] > 0 and done["facts re-verified"] > 0
    with capsys.disabled():
        print(
            f"\nsoak on {database}: {PROCESSES} processes x {THREADS} threads for {SECONDS:.0f} s "
            f"(all done in {elapsed:.0f} s): facts acknowledged {len(stored)}, found "
            f"{len(found) - 20} (+20 written first), rejections acknowledged {rejected}, "
            f"found {sum(stats.rejections.values())}; {done['facts re-verified']} re-verified, "
            f"{done['reads']} reads; {len(names)} entities, no twins; {queued} index changes "
            f"queued at the end, none after reopening; namespace {NS!r}"
        )


@pytest.mark.both_databases
def test_processes_opening_one_new_store_at_once_all_get_it(
    data_dir: Path, tmp_path: Path, database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first migrates and creates the index; the others wait for it, then find it."""
    index, acked, target = tmp_path / "index", tmp_path / "acked.txt", str(data_dir)
    at = time.time() + 8  # after every worker has imported memstore
    command = [sys.executable, str(WORKER), "add_one", target, str(index), str(acked)]
    workers = [
        subprocess.Popen(
            [*command, str(n), str(at)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES + 1)
    ]
    with reaped(workers):
        for worker in workers:
            _, err = worker.communicate(timeout=MARGIN_S)
            assert worker.returncode == 0, err[-3000:]
    stored = {line.split()[2] for line in read_acks(acked)}
    assert len(stored) == PROCESSES + 1
    with open_store(target, index) as store:
        url = store.url
    assert set(check_whole(url, index)) == stored  # whole, and in the index
    with capsys.disabled():
        print(f"\nfirst open on {database}: {PROCESSES + 1} processes at once, all opened")
