"""Concurrent writers on one store, SQLite and PostgreSQL: no lost writes or duplicates."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from db_rows import row_counts

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED
from memstore import ErrFactNotGrounded, InvalidInput

pytestmark = pytest.mark.both_databases

WRITERS = 4
FACTS_EACH = 15


def test_threads_creating_the_same_entities_share_them(data_dir: Path) -> None:
    stores = [
        memstore.open(data_dir, namespace="team", hook=memstore.Ungated()) for _ in range(WRITERS)
    ]

    def write(worker: int) -> list[str]:
        store = stores[worker]
        return [
            store.add_fact(
                statement=f"Writer {worker} logged event {i} at Acme with Alice.",
                members=[("Acme", "org", "place"), ("Alice", "person", "actor"), f"event {i}"],
                evidence=[f"log line {worker}-{i}", "shared context line"],
            ).id
            for i in range(FACTS_EACH)
        ]

    try:
        with ThreadPoolExecutor(WRITERS) as pool:
            ids = [fact_id for batch in pool.map(write, range(WRITERS)) for fact_id in batch]
    finally:
        for s in stores:
            s.close()

    assert len(set(ids)) == WRITERS * FACTS_EACH
    counts = row_counts(stores[0].url)
    assert counts["facts"] == WRITERS * FACTS_EACH
    assert counts["entities"] == 2 + FACTS_EACH  # Acme, Alice, event 0..14
    assert counts["evidence"] == WRITERS * FACTS_EACH + 1
    with memstore.open(data_dir, namespace="team", hook=memstore.Ungated()) as store:
        assert len(store.facts_about("Acme")) == WRITERS * FACTS_EACH
        assert len(store.graph) == WRITERS * FACTS_EACH


def test_two_writers_superseding_one_fact_one_wins(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace="team", hook=memstore.Ungated()) as first:
        old = first.add_fact(statement="Acme is in Berlin.", members=["Acme"], evidence=["Berlin"])
    stores = [
        memstore.open(data_dir, namespace="team", hook=memstore.Ungated()) for _ in range(WRITERS)
    ]
    barrier = threading.Barrier(WRITERS)

    def supersede(worker: int) -> str:
        barrier.wait()
        try:
            return (
                stores[worker]
                .supersede(
                    old.id,
                    statement=f"Acme is in city {worker}.",
                    members=["Acme"],
                    evidence=[f"city {worker}"],
                )
                .id
            )
        except InvalidInput as exc:
            assert exc.field == "old_id"
            return "lost"

    try:
        with ThreadPoolExecutor(WRITERS) as pool:
            outcomes = list(pool.map(supersede, range(WRITERS)))
    finally:
        for s in stores:
            s.close()
    winners = [o for o in outcomes if o != "lost"]
    assert len(winners) == 1
    with memstore.open(data_dir, namespace="team", hook=memstore.Ungated()) as store:
        assert [f.id for f in store.history(old.id)] == [old.id, winners[0]]
        assert row_counts(store.url)["facts"] == 2  # the losers left nothing behind


def test_concurrent_writers_keep_one_unbroken_audit_chain(data_dir: Path) -> None:
    """Writers in parallel, some facts stored and some rejected: one chain, no fork."""

    def answer(claim: str, context: str) -> float:
        if REMOVED in context:
            return 0.02
        return 0.09 if "odd" in claim else 0.99

    gate = Gate(ScriptedBackend(answer), REFUSE_UNGROUNDED)
    stores = [memstore.open(data_dir, namespace="team", gate=gate) for _ in range(WRITERS)]

    def write(worker: int) -> int:
        store, rejected = stores[worker], 0
        for i in range(FACTS_EACH):
            try:
                store.add_fact(
                    statement=f"Writer {worker} saw an {'odd' if i % 2 else 'even'} event {i}.",
                    members=[f"writer {worker}", f"event {i}"],
                    evidence=[f"log line {worker}-{i}"],
                )
            except ErrFactNotGrounded:
                rejected += 1
        return rejected

    try:
        with ThreadPoolExecutor(WRITERS) as pool:
            rejected = sum(pool.map(write, range(WRITERS)))
        report = stores[0].verify_audit_chain()
    finally:
        for s in stores:
            s.close()
    assert rejected == WRITERS * (FACTS_EACH // 2)
    assert report.ok, report.problems
    assert report.rows == WRITERS * FACTS_EACH  # one verification or rejection per write
