"""A batch's facts are written together, a transaction per ``TRANSACTION_FACTS``:
every fact linked into the audit chain, duplicates answered within and across
transactions, a database failure rolling back the transaction it hits whole, and on
PostgreSQL a batch that loses a deadlock running again."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa
from db_rows import row_counts, rows
from samples import works_at
from scripted import states
from sqlmodel import Session

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore import FactPublic, InvalidInput, RejectionPublic, StorageError, Store, Ungated
from memstore.defaults import IN_LIST_CHUNK
from memstore.storage.tables import Entity, EntityAlias
from memstore.write import path as write_path

PEOPLE = ["Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus"]


@pytest.fixture
def small_transactions(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(write_path, "TRANSACTION_FACTS", 3)
    return 3


def test_a_stored_fact_repeated_past_one_in_list_comes_back_whole_each_time(
    store: Store,
) -> None:
    """The repeats are read back together: a fact named in two ``IN`` lists was read,
    members and citations, once per list."""
    first = store.add_fact(works_at())
    results = store.add_facts([works_at()] * (IN_LIST_CHUNK + 1))

    assert {r.id for r in results} == {first.id} and all(r.deduplicated for r in results)
    assert {(len(r.members), len(r.citations)) for r in results} == {(2, 1)}
    results[0].members[0].name = "changed"  # each result is its own
    assert results[1].members[0].name == "Alice"


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
    inserts: list[str] = []

    def fail_the_second(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith("INSERT INTO fact_members"):
            inserts.append(statement)
            if len(inserts) == 2:  # the second transaction's members
                raise sa.exc.OperationalError("INSERT", {}, Exception("disk I/O error"))

    sa.event.listen(sa.Engine, "before_cursor_execute", fail_the_second)
    try:
        with pytest.raises(StorageError, match="disk I/O error"):
            store.add_facts(batch)
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", fail_the_second)

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
@pytest.mark.parametrize("people", [3, 7], ids=["one transaction", "several"])
def test_a_bad_fact_last_in_an_ungated_batch_writes_nothing(
    store: Store, small_transactions: int, people: int
) -> None:
    """Up to ``TRANSACTION_FACTS`` an ungated batch is checked inside its one
    transaction, past it before the first: either way nothing of it is written."""
    store.add_fact(works_at("Zoe"))
    before = row_counts(store.url)
    batch = [works_at(person, "Acme") for person in PEOPLE[: people - 1]]
    batch.append(works_at("Ana", citations=[{"evidence": 0, "quote": "shellfish"}]))
    with pytest.raises(InvalidInput) as err:
        store.add_facts(batch)
    assert err.value.field == f"facts.{people - 1}.citations.0.quote"
    assert row_counts(store.url) == before
    assert store.verify_audit_chain().ok


def test_a_repeated_fact_stores_none_of_its_new_evidence(store: Store) -> None:
    """A duplicate, stored or earlier in the batch, is answered with the stored fact; its
    other evidence is not stored (nothing would cite it) nor indexed."""
    first = store.add_fact(works_at("Ana"))
    before = row_counts(store.url)
    again = store.add_fact(works_at("Ana", evidence=["Ana's payslip from Acme, May."]))
    batch = store.add_facts([works_at("Ben"), works_at("Ben", evidence=["Ben, Acme badge."])])

    assert again.deduplicated and again.id == first.id
    assert [r.deduplicated for r in batch] == [False, True] and batch[0].id == batch[1].id
    after = row_counts(store.url)
    assert after["evidence"] == before["evidence"] + 1  # Ben's first evidence only
    assert after["facts"] == before["facts"] + 1
    store.sync_index()
    assert store.search_evidence("payslip badge", mode="text") == []


@pytest.mark.both_databases
def test_inline_and_uri_evidence_in_one_transaction_are_stored_once_each(store: Store) -> None:
    """Inline text goes in with the transaction's other rows, a URI source's versions are
    counted as they are added: the same inline text in two facts is one row, and two
    texts of one URI are its versions 1 and 2, each cited by its own fact."""
    said, page = "Ana and Ben: we both work at Acme.", "https://hr.example/acme"
    batch = store.add_facts(
        [
            works_at("Ana", evidence=[said, {"text": "Staff: Ana.", "source": page}]),
            works_at("Ben", evidence=[said, {"text": "Staff: Ana, Ben.", "source": page}]),
        ]
    )

    stored = rows(store.url, "SELECT source, version, text FROM evidence ORDER BY version, source")
    assert stored == [
        (page, 1, "Staff: Ana."),
        ("inline", 1, said),
        (page, 2, "Staff: Ana, Ben."),
    ]
    cited = [{store.get_evidence(c.evidence_id).text for c in f.citations} for f in batch]
    assert cited == [{said, "Staff: Ana."}, {said, "Staff: Ana, Ben."}]


@pytest.mark.both_databases
def test_a_pending_fact_is_no_duplicate_of_a_checked_one(opener: Callable[..., Store]) -> None:
    """The same fact twice in one transaction: on garbled evidence the verifier answers
    nonsense (a verifier error: stored pending, never checked), on clear evidence it
    is verified. The second is stored too, not answered with the pending one."""

    def garbled_fails(claim: str, context: str) -> float:
        return math.nan if "garbled" in context else states(claim, context)

    store = opener(gate=Gate(ScriptedBackend(garbled_fails), REFUSE_UNGROUNDED))
    results = store.add_facts(
        [
            works_at("Ana", evidence=["garbled: Ana works at Acme."]),
            works_at("Ana", evidence=["Ana works at Acme, she told me."]),
        ]
    )

    assert [r.status for r in results] == ["pending", "verified"]  # type: ignore[union-attr]
    assert not results[1].deduplicated  # type: ignore[union-attr]
    assert results[0].id != results[1].id


@pytest.mark.both_databases
def test_rejections_and_facts_of_one_batch_all_link_into_the_chain(
    opener: Callable[..., Store], small_transactions: int
) -> None:
    store = opener(gate=Gate(ScriptedBackend(states), REFUSE_UNGROUNDED))
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
    # The chain follows the batch's order (drift is judged on it), across transactions.
    assert chain_order(store.url) == [r.id for r in results]


@pytest.mark.both_databases
def test_evidence_a_rejection_stored_is_queued_again_by_a_later_fact_citing_it(
    opener: Callable[..., Store], small_transactions: int
) -> None:
    """A rejection stores new evidence; an accepted fact in a later transaction of the
    batch cites it. That transaction queues it for the index too: an index syncer that
    ran between the two (and left it out, cited by a rejection alone) must not have the
    last word."""
    store = opener(
        gate=Gate(ScriptedBackend(states), REFUSE_UNGROUNDED), index=False
    )  # the queue stays
    shared = "Ana works at Acme, she told me."
    batch = [
        works_at("Ben", evidence=[shared]),  # rejected: the text does not say it
        works_at("Cleo", evidence=["Cleo works at Acme, she told me."]),
        works_at("Dev", evidence=["Dev works at Acme, he told me."]),
        works_at("Ana", evidence=[shared]),  # the next transaction (3 to one)
    ]
    results = store.add_facts(batch)

    assert [type(r) for r in results] == [RejectionPublic, FactPublic, FactPublic, FactPublic]
    ana = results[3]
    assert isinstance(ana, FactPublic)
    [evidence_id] = ana.evidence_ids
    assert [e.id for e in results[0].evidence] == [evidence_id]  # type: ignore[union-attr]
    queue = rows(store.url, "SELECT id, target_id FROM index_outbox ORDER BY id")
    ana_queued = min(n for n, target in queue if target == ana.id)
    assert any(n > ana_queued and target == evidence_id for n, target in queue)


def chain_order(url: str) -> list[str]:
    """Fact ids (for write links) and rejection ids in audit chain order."""
    chain = rows(
        url,
        "SELECT chain_seq, fact_id FROM verifications "
        "UNION ALL SELECT chain_seq, id FROM rejections ORDER BY 1",
    )
    return [str(fact_id) for _, fact_id in chain]


def test_a_batch_that_loses_a_deadlock_runs_again(postgres: Any) -> None:
    """Another transaction holds the new key "globex" and then wants "acme", which the
    batch (inserting its new keys in order: "acme", "ana", "globex") holds while it
    waits: a real deadlock. The batch waits first and so is the one PostgreSQL fails
    (its deadlock_timeout is 5 s, the other session's 60 s); it runs again once the other
    commits and finds both entities stored."""
    url = postgres.new_database()
    engine = sa.create_engine(url)
    with engine.connect() as conn:  # wide enough for a loaded machine (checked once)
        database = conn.execute(sa.text("SELECT current_database()")).scalar_one()
        conn.execute(sa.text(f"ALTER DATABASE \"{database}\" SET deadlock_timeout = '5s'"))
        conn.commit()
    store = memstore.open(url, "user:alice", hook=Ungated())
    result: dict[str, Any] = {}

    def write() -> None:
        try:
            result["facts"] = store.add_facts([works_at("Ana", "Acme"), works_at("Ana", "Globex")])
        except Exception as exc:  # reported by the assertion below
            result["error"] = exc

    def entity(session: Session, name: str) -> None:
        row = Entity(namespace="user:alice", name=name, key=name.lower(), kind="org")
        session.add(row)
        session.flush()
        alias = EntityAlias(namespace="user:alice", entity_id=row.id, alias=name, key=row.key)
        session.add(alias)
        session.flush()

    writer = threading.Thread(target=write)
    try:
        with Session(engine) as other, other.begin():
            other.exec(sa.text("SET LOCAL deadlock_timeout = '60s'"))  # type: ignore[call-overload]
            entity(other, "Globex")
            writer.start()
            wait_until_blocked(engine)
            entity(other, "Acme")  # waits for the batch, which PostgreSQL then fails
        writer.join(timeout=120)
        counts = row_counts(url)
        chain = store.verify_audit_chain()
    finally:
        store.close()
        engine.dispose()

    assert "error" not in result, result
    assert [f.deduplicated for f in result["facts"]] == [False, False]
    assert counts["facts"] == 2
    assert counts["entities"] == 3  # Acme and Globex from the other session, Ana
    assert chain.ok and chain.rows == 2


def wait_until_blocked(engine: sa.Engine) -> None:
    """Until some session of this database waits for a lock (at most a minute)."""
    with engine.connect() as conn:
        for _ in range(600):
            waiting = conn.execute(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            ).scalar_one()
            if waiting:
                return
            threading.Event().wait(0.1)
    raise AssertionError("the batch never waited for the other session's key")
