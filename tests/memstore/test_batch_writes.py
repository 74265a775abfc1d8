"""A batch's accepted facts are written together, a transaction per ``TRANSACTION_FACTS``:
every fact linked into the audit chain, duplicates answered across transactions, and
a database failure rolling back the transaction it hits whole."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from db_rows import row_counts
from samples import works_at

from memstore import FactPublic, StorageError, Store, write_path
from memstore.models import FactMember

pytestmark = pytest.mark.both_databases

PEOPLE = ["Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus"]


@pytest.fixture
def small_transactions(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(write_path, "TRANSACTION_FACTS", 3)
    return 3


def test_a_batch_over_several_transactions_links_every_fact(
    store: Store, small_transactions: int
) -> None:
    batch = [works_at(person, "Acme") for person in PEOPLE]
    batch.insert(5, works_at("Ben", "Acme"))  # item 1 again, two transactions later
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
