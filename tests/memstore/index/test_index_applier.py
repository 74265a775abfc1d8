"""One elected applier for the search index (``memstore.index.writer``): of every store
and process writing with ``index_writes="background"`` (and ``memstore index-worker``),
one applies the queue of every namespace; the others follow and one takes over when
it stops, or when its process is killed mid-batch, losing and doubling nothing."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import lancedb
import pytest
from crash_checks import check_whole
from workers import NS, HashedWords, fact

import memstore
from memstore import Store
from memstore.index import handle, outbox
from memstore.index.rows import FACTS
from memstore.storage import db
from memstore.storage.locks import FileLease

#: How long a test waits for what should happen soon (only a hang reaches it).
HANG = 120


def open_store(target: Path | str, index: Path, namespace: str = NS, **options: Any) -> Store:
    """A store writing with ``index_writes="background"`` (unless ``options`` say else)."""
    chosen: dict[str, Any] = {"index_writes": "background", **options}
    return memstore.open(
        target, namespace, hook=memstore.Ungated(), embedder=HashedWords(), index=index, **chosen
    )


def wait_until(condition: object, what: str) -> None:
    """Poll ``condition`` (a function) until true; the deadline only stops a hang."""
    deadline = time.monotonic() + HANG
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"waited {HANG} s for {what}"
        time.sleep(0.05)


def indexed(index: Path) -> Counter[str]:
    table = lancedb.connect(index).open_table(FACTS)
    return Counter(table.search().select(["id"]).limit(None).to_arrow().column("id").to_pylist())


def test_a_file_lease_has_one_holder_until_released(tmp_path: Path) -> None:
    first, second = FileLease(tmp_path / "lease"), FileLease(tmp_path / "lease")
    assert first.hold() and first.hold()  # held, and still held
    assert not second.hold()
    first.release()
    assert second.hold() and not first.hold()
    second.release()


@pytest.mark.both_databases
def test_a_lease_on_the_database_has_one_holder(data_dir: Path) -> None:
    url, _ = db.database_url(data_dir)
    engine = db.create_engine(url)
    try:
        first = db.lease(engine, "memstore test lease", ".test.lock")
        second = db.lease(engine, "memstore test lease", ".test.lock")
        other = db.lease(engine, "memstore another lease", ".another.lock")
        assert first.hold() and not second.hold() and other.hold()
        first.release()
        assert second.hold() and not first.hold()
        second.release()
        other.release()
    finally:
        engine.dispose()


@pytest.mark.both_databases
def test_one_store_applies_every_namespace_and_another_takes_over(
    data_dir: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    first = open_store(data_dir, index)
    wait_until(lambda: first.index_status().leading, "the first store to lead")
    second = open_store(data_dir, index, namespace="user:bob")
    try:
        # The follower's writes return at once; the leader applies them.
        written = [second.add_fact(fact(n)) for n in range(10)]
        wait_until(lambda: first.index_status().applied.facts == 10, "the leader to apply")
        assert second.index_status().applied.rows == 0 and not second.index_status().leading
        assert {h.fact.id for h in second.search(written[3].statement, 1, mode="text")} == {
            written[3].id
        }
        first.close()  # gives up the lease: the follower asks again within its interval
        more = [second.add_fact(fact(n)) for n in range(10, 20)]
        wait_until(lambda: second.index_status().leading, "the second store to take over")
        wait_until(lambda: second.index_status().applied.facts == 10, "the second to apply")
    finally:
        first.close()
        second.close()
    assert {i for i, n in indexed(index).items() if n == 1} == {f.id for f in written + more}
    assert max(indexed(index).values()) == 1


def test_index_status_says_how_far_behind_the_index_is(data_dir: Path, tmp_path: Path) -> None:
    with memstore.open(
        data_dir, NS, hook=memstore.Ungated(), embedder=HashedWords(), index=tmp_path / "i"
    ) as store:
        status = store.index_status()
        assert (status.writes, status.leading, status.queued, status.behind_s) == (
            "inline",
            None,
            0,
            0.0,
        )
        with store.index_batch():  # held back until the block ends: queued meanwhile
            store.add_fact(fact(1))
            time.sleep(0.05)  # at least this old, on any machine
            status = store.index_status()
            assert status.queued >= 2 and status.behind_s >= 0.05 and status.problem is None
        assert (store.index_status().queued, store.index_status().behind_s) == (0, 0.0)


# -- memstore index-worker ---------------------------------------------------------------


def index_worker(url: str, index: Path, tmp_path: Path, name: str) -> subprocess.Popen[str]:
    """``memstore index-worker`` in its own process, its output in ``<name>.out``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    with (tmp_path / f"{name}.out").open("w") as output:  # the child keeps its own copy
        return subprocess.Popen(
            [
                *(sys.executable, "-m", "memstore", "--store", url, "index-worker"),
                *("--index", str(index), "--report", "1s"),
            ],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )


def said(tmp_path: Path, name: str) -> str:
    return (tmp_path / f"{name}.out").read_text()


def role(tmp_path: Path, name: str) -> str | None:
    """What the worker first said it does: "leading" or "following" (None: not yet)."""
    for line in said(tmp_path, name).splitlines():
        if line.startswith(("leading", "following")):
            return line.split(":")[0]
    return None


@pytest.mark.slow
@pytest.mark.both_databases
def test_index_worker_killed_mid_batch_is_replaced_and_nothing_is_lost_or_doubled(
    data_dir: Path, tmp_path: Path
) -> None:
    """Two ``memstore index-worker`` processes: one leads; SIGKILL it while it applies a
    long queue; the other takes over and the index ends with every fact once."""
    url, _ = db.database_url(data_dir)
    index = tmp_path / "index"
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=index) as store:
        store.add_fact(fact(0))  # the store exists, and its index (MiniLM, as the workers')
    # Queued with no applier running: several of the applier's batches (1,024 changes).
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False) as store:
        batches = [[fact(n) for n in range(1 + 200 * k, 201 + 200 * k)] for k in range(12)]
        written = [f for batch in batches for f in store.add_facts(batch)]
        total = store.index_backlog()
    assert total > 4 * outbox.APPLY_BATCH
    # Started together: one leads (and applies), the other follows.
    workers = {name: index_worker(url, index, tmp_path, name) for name in ("a", "b")}
    try:
        wait_until(
            lambda: sorted(role(tmp_path, n) or "" for n in workers) == ["following", "leading"],
            "one worker to lead and the other to follow",
        )
        leader = next(n for n in workers if role(tmp_path, n) == "leading")
        other = next(n for n in workers if n != leader)
        with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False) as store:
            # Killed once it has applied a batch, with more to do.
            wait_until(lambda: store.index_backlog() < total, "the leader to apply")
            workers[leader].send_signal(signal.SIGKILL)
            workers[leader].wait(HANG)
            assert store.index_backlog() > 0
            wait_until(lambda: store.index_backlog() == 0, "the other to finish the queue")
        assert "leading" in said(tmp_path, other)
    finally:
        for process in workers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(HANG)
    assert workers[other].returncode == 0, said(tmp_path, other)
    counts = indexed(index)
    assert max(counts.values()) == 1
    assert {f.id for f in written} <= set(counts)
    check_whole(url, index)


def test_index_worker_once_applies_the_queue_and_exits(data_dir: Path, tmp_path: Path) -> None:
    from cli_runner import runner_at

    index = tmp_path / "index"
    # Written with no index: the changes wait in the outbox, of another namespace than
    # the one the command opens (whose own queue the open would apply).
    with memstore.open(data_dir, "user:bob", hook=memstore.Ungated(), index=False) as store:
        written = store.add_facts([fact(n) for n in range(5)])
        assert store.index_backlog() > 0
    invoke = runner_at(str(data_dir))
    result = invoke("index-worker", "--index", str(index), "--once")
    assert result.exit_code == 0, result.output
    assert "applied 11 queued change(s)" in result.output  # 5 facts, 5 + 1 shared evidence
    assert set(indexed(index)) == {f.id for f in written}


# -- the bound on the queue --------------------------------------------------------------


def test_a_write_past_the_bound_waits_for_the_applier(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an applier running, no write returns while the oldest queued change is
    older than ``MAX_BEHIND``; the time it waited is counted."""
    monkeypatch.setattr(handle, "MAX_BEHIND", 0.0)  # every write waits for an empty queue
    index = tmp_path / "index"
    with open_store(data_dir, index, namespace="user:bob") as applier:
        wait_until(lambda: applier.index_status().leading, "the applier to lead")
        with open_store(data_dir, index, index_writes="queued") as writer:
            for n in range(4):
                writer.add_fact(fact(n))
                assert writer.index_status().queued == 0  # applied before it returned
            assert writer.index_status().waited_s > 0
            assert writer.index_status().leading is None  # queued: never applies


def test_with_no_applier_a_write_waits_at_most_throttle_wait_and_says_why(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(handle, "MAX_BEHIND", 0.0)
    monkeypatch.setattr(handle, "THROTTLE_WAIT", 0.2)
    with open_store(data_dir, tmp_path / "index", index_writes="queued") as writer:
        with caplog.at_level(logging.WARNING, logger="memstore.index.handle"):
            stored = writer.add_fact(fact(1))
            waited = writer.index_status().waited_s
            assert waited >= 0.2
            writer.add_fact(fact(2))  # writes stop waiting for a while after that
        assert writer.index_status().waited_s == waited
        assert writer.get_fact(stored.id).id == stored.id  # stored all the same
        assert writer.index_status().queued > 0  # nobody applied it
    assert "is an index writer running" in caplog.text


def test_index_worker_names_a_bad_option_and_its_own_help(data_dir: Path) -> None:
    from cli_runner import runner_at

    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False):
        pass
    result = runner_at(str(data_dir))("index-worker", "--report", "soon")
    assert result.exit_code == 2
    assert "report" in result.output and "see `memstore index-worker --help`" in result.output
