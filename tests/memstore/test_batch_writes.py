"""A batch's accepted facts are written together, a transaction per ``TRANSACTION_FACTS``:
every fact linked into the audit chain, duplicates answered within and across
transactions, a database failure rolling back the transaction it hits whole, and on
PostgreSQL two batches that deadlock both landing (the loser runs again)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa
from db_rows import row_counts
from samples import works_at
from scripted import states

import memstore
from gate import Gate, ScriptedBackend
from memstore import FactPublic, RejectionPublic, StorageError, Store, Ungated, write_path
from memstore.models import Fact, FactMember

PEOPLE = ["Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus"]


@pytest.fixture
def small_transactions(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(write_path, "TRANSACTION_FACTS", 3)
    return 3


@pytest.mark.both_databases
def test_a_batch_over_several_transactions_links_every_fact(
    store: Store, small_transactions: int
) -> None:
    batch = [works_at(person, "Acme") for person in PEOPLE]
    batch.insert(5, works_at("Ben", "Acme"))  # item 1 again, in the next transaction
    results = store.add_facts(batch)

    assert len(results) == len(batch)
    assert all(isinstance(r, FactPublic) for r in results)
    assert results[5].deduplicated and results[5].id == results[1].id
    assert len({r.id for r in results}) == len(PEOPLE)
    # Acme, named by every fact, is one entity: created in the first transaction, found after.
    assert {m.entity_id for r in results for m in r.members if m.name == "Acme"} == {
        store.entity("Acme").id
    }
    chain = store.verify_audit_chain()
    assert chain.ok, chain.problems
    assert chain.rows == len(PEOPLE)  # one write link per stored fact, none for the duplicate
    assert row_counts(store.url)["verifications"] == len(PEOPLE)


@pytest.mark.both_databases
def test_a_database_failure_rolls_back_only_its_transaction(
    store: Store, small_transactions: int
) -> None:
    batch = [works_at(person, "Acme") for person in PEOPLE]
    inserted: list[Any] = []

    def fail_on_the_fifth(mapper: Any, connection: Any, target: FactMember) -> None:
        inserted.append(target.fact_id)
        if len(set(inserted)) == 5:  # the second transaction's second fact
            raise sa.exc.OperationalError("INSERT", {}, Exception("disk I/O error"))

    sa.event.listen(FactMember, "before_insert", fail_on_the_fifth)
    try:
        with pytest.raises(StorageError, match="disk I/O error"):
            store.add_facts(batch)
    finally:
        sa.event.remove(FactMember, "before_insert", fail_on_the_fifth)

    # The first transaction (3 facts) stays whole; nothing of the second is left.
    stored = {f.statement for f in store.list_facts().items}
    assert stored == {works_at(p)["statement"] for p in PEOPLE[:3]}
    counts = row_counts(store.url)
    assert counts["facts"] == counts["verifications"] == 3
    assert counts["fact_members"] == 6
    assert store.verify_audit_chain().ok

    again = store.add_facts(batch)  # the caller retries the batch: nothing is doubled
    assert [r.deduplicated for r in again] == [True] * 3 + [False] * 4
    assert row_counts(store.url)["facts"] == len(PEOPLE)
    assert store.verify_audit_chain().ok


@pytest.mark.both_databases
def test_a_fact_twice_in_one_transaction_is_stored_once(
    store: Store, small_transactions: int
) -> None:
    results = store.add_facts([works_at("Ana"), works_at("Ana"), works_at("Ben")])

    assert [r.deduplicated for r in results] == [False, True, False]
    assert results[1].id == results[0].id
    assert row_counts(store.url)["facts"] == 2
    assert store.verify_audit_chain().rows == 2


@pytest.mark.both_databases
def test_rejections_and_facts_of_one_batch_all_link_into_the_chain(
    opener: Callable[..., Store], small_transactions: int
) -> None:
    store = opener(gate=Gate(ScriptedBackend(states)))
    said = [works_at(p, evidence=[f"{p} works at Acme, she told me."]) for p in PEOPLE[:4]]
    unsaid = [works_at(p) for p in PEOPLE[4:]]  # the evidence does not state the claim
    batch = [said[0], unsaid[0], said[1], said[2], unsaid[1], said[3], unsaid[2]]

    results = store.add_facts(batch)

    kinds = [type(r) for r in results]
    fact, rejection = FactPublic, RejectionPublic
    assert kinds == [fact, rejection, fact, fact, rejection, fact, rejection]
    chain = store.verify_audit_chain()
    assert chain.ok, chain.problems
    assert chain.rows == len(batch)  # four write links and three rejections
    assert len(store.rejections()) == 3


def test_batches_creating_entities_in_opposite_orders_both_land(postgres: Any) -> None:
    """Each batch creates one new entity, then waits (once) until the other has created
    its own; each then needs the other's: a real deadlock, which PostgreSQL breaks by
    failing one transaction. The loser runs again once the winner has committed."""
    url = postgres.new_database()
    first, second = (memstore.open(url, "user:alice", hook=Ungated()) for _ in range(2))
    batches = {
        "a": [works_at("Ana", "Acme"), works_at("Ana", "Globex")],
        "b": [works_at("Ben", "Globex"), works_at("Ben", "Acme")],
    }
    both_hold_one = threading.Barrier(2, timeout=60)
    waited: set[str] = set()
    mine = threading.local()

    def after_first_fact(mapper: Any, connection: Any, target: Fact) -> None:
        name = getattr(mine, "name", None)
        if name is not None and name not in waited:
            waited.add(name)
            both_hold_one.wait()

    results: dict[str, Any] = {}

    def write(name: str, store: Store) -> None:
        mine.name = name
        try:
            results[name] = store.add_facts(batches[name])
        except Exception as exc:  # reported by the assertion below
            results[name] = exc

    sa.event.listen(Fact, "after_insert", after_first_fact)
    try:
        threads = [
            threading.Thread(target=write, args=("a", first)),
            threading.Thread(target=write, args=("b", second)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        sa.event.remove(Fact, "after_insert", after_first_fact)
        chain = first.verify_audit_chain()
        first.close()
        second.close()

    assert all(isinstance(r, list) for r in results.values()), results
    counts = row_counts(url)
    assert counts["facts"] == 4
    assert counts["entities"] == 4  # Ana, Ben, Acme, Globex: each created once
    assert chain.ok and chain.rows == 4
