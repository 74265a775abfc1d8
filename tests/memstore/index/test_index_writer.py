"""Index writes on a background thread (``index_writes="background"``): a write returns
once SQL holds it; the thread, ``sync_index()`` or ``close()`` brings the index in line,
and nothing is lost or indexed twice."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import lancedb
import pytest
from crash_checks import check_whole, sql_rows
from workers import NS, HashedWords, fact

import memstore
from memstore import InvalidInput, Store
from memstore.index.lance import LOCK_FILE
from memstore.index.rows import FACTS
from memstore.index.writer import IndexWriter
from memstore.storage.locks import file_lock

#: How long a test waits for a thread that should end at once (only a hang reaches it).
HANG = 60


def open_store(data_dir: Path, **options: object) -> Store:
    return memstore.open(
        data_dir,
        NS,
        hook=memstore.Ungated(),
        embedder=HashedWords(),
        index_writes="background",
        **options,
    )


def wait_for_empty_queue(store: Store, seconds: float = 120) -> None:
    """Poll until the thread has applied everything (not a timing test: the deadline only
    stops a hung thread from hanging the suite)."""
    deadline = time.monotonic() + seconds
    while store.index_backlog():
        assert time.monotonic() < deadline, "the background writer applied nothing"
        time.sleep(0.05)


@pytest.mark.both_databases
def test_the_thread_indexes_writes_without_being_asked(data_dir: Path, tmp_path: Path) -> None:
    with open_store(data_dir, index=tmp_path / "index") as store:
        written = [store.add_fact(fact(n)) for n in range(12)]
        assert all(f.near_duplicates is None or f.near_duplicates == [] for f in written)
        wait_for_empty_queue(store)
        hits = store.search(written[7].statement, 3, mode="text")
        assert hits and hits[0].fact.id == written[7].id


def test_sync_index_waits_for_a_write_and_close_leaves_nothing_queued(data_dir: Path) -> None:
    with open_store(data_dir) as store:
        batch = store.add_facts([fact(n) for n in range(40)])
        store.sync_index()
        assert store.index_backlog() == 0
        assert store.search(batch[-1].statement, 1, mode="text")[0].fact.id == batch[-1].id
        more = store.add_facts([fact(n) for n in range(40, 80)])
    # close() stopped the thread once it had applied the queue: SQL and the index agree.
    facts = check_whole(f"sqlite:///{data_dir / 'memstore.db'}", data_dir / "index")
    assert set(facts) == {f.id for f in batch + more}


def test_writes_retracts_and_searches_from_threads_leave_sql_and_index_agreeing(
    data_dir: Path,
) -> None:
    """Three threads write and retract while the background writer applies their
    changes; afterwards each fact is in the index once, with its SQL status."""
    errors: list[BaseException] = []
    with open_store(data_dir) as store:

        def work(first: int) -> None:
            try:
                for n in range(first, first + 20):
                    written = store.add_fact(fact(n))
                    store.search(written.statement, 3, mode="text")
                    if n % 4 == 0:
                        store.retract(written.id, "changed its mind")
            except BaseException as exc:  # reported by the test below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(t * 100,)) for t in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
    url = f"sqlite:///{data_dir / 'memstore.db'}"
    facts = dict(sql_rows(url, "SELECT id, status FROM facts WHERE namespace = :ns"))
    assert len(facts) == 60 and list(facts.values()).count("retracted") == 15
    assert sql_rows(url, "SELECT count(*) FROM index_outbox") == [(0,)]
    table = lancedb.connect(data_dir / "index").open_table(FACTS)
    indexed = table.search().select(["id", "status"]).limit(None).to_arrow().to_pylist()
    assert len(indexed) == len(facts)  # each once
    assert {r["id"]: r["status"] for r in indexed} == facts


def test_a_write_returns_while_the_index_is_locked_and_close_applies_it(data_dir: Path) -> None:
    """Another process holds the index's write lock (its lock file): a background-mode
    write still returns, its change stays queued, and once the lock is free the queue
    drains and search finds the fact. Inline mode would wait for the lock here."""
    hold_index = file_lock(data_dir / "index" / LOCK_FILE)
    written: list[memstore.FactPublic] = []
    with open_store(data_dir) as store:
        assert store._index.writer is not None  # the thread runs
        with hold_index():
            writer = threading.Thread(target=lambda: written.append(store.add_fact(fact(1))))
            writer.start()
            writer.join(HANG)
            assert not writer.is_alive(), "add_fact waited for the search index"
            assert store.index_backlog() > 0
            assert store.stats().index_backlog == store.index_backlog()
        store.sync_index()
        assert store.index_backlog() == 0
        assert store.search(written[0].statement, 1, mode="text")[0].fact.id == written[0].id
    facts = check_whole(f"sqlite:///{data_dir / 'memstore.db'}", data_dir / "index")
    assert set(facts) == {written[0].id}


def test_stop_runs_a_last_turn_after_a_wake_during_a_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A change queued (and woken for) while a turn is under way, just before stop, is
    applied before the thread ends; a stop that times out says what is left."""
    queue: list[int] = []
    applied: list[int] = []
    in_turn, go_on = threading.Event(), threading.Event()

    def apply() -> None:  # reads the queue first, like a turn reading the outbox
        batch = queue[:]
        del queue[: len(batch)]
        in_turn.set()
        go_on.wait(HANG)
        applied.extend(batch)

    writer = IndexWriter(apply, "test-writer", interval=3600)  # turns only when woken
    writer.wake()
    assert in_turn.wait(HANG)
    queue.append(1)  # a write queues a change while the turn runs, and wakes the thread
    writer.wake()
    with caplog.at_level(logging.WARNING, logger="memstore.index.writer"):
        writer.stop(timeout=0)  # the turn still waits: stop gives up on it
    assert "stays queued in the SQL outbox" in caplog.text
    go_on.set()
    writer.stop()
    assert applied == [1]


def test_failed_turns_are_logged_once_per_run_of_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Turns fail, succeed, fail again: one warning per run of failures, one notice of
    recovery per run, and the thread keeps going throughout."""
    script = [False, False, False, True, False, True]  # whether each turn succeeds
    turns: list[bool] = []
    done = threading.Event()

    def apply() -> None:
        ok = script[len(turns)] if len(turns) < len(script) else True
        turns.append(ok)
        if len(turns) == len(script):
            done.set()
        if not ok:
            raise OSError("the index is unreachable")

    with caplog.at_level(logging.INFO, logger="memstore.index.writer"):
        writer = IndexWriter(apply, "test-writer", interval=0.001)
        assert done.wait(HANG)
        writer.stop()
    messages = [r.getMessage() for r in caplog.records]
    assert sum("failed; they stay queued" in m for m in messages) == 2
    assert sum("caught up" in m for m in messages) == 2
    assert turns[: len(script)] == script


def test_index_writes_must_be_inline_or_background(data_dir: Path) -> None:
    with pytest.raises(InvalidInput) as err:
        memstore.open(data_dir, NS, index_writes="later")
    assert err.value.field == "index_writes"
