"""The rejection audit log: filters, sorting, pages, counts, exports, and the hash chain."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from samples import allergy, works_at
from sqlmodel import Session

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED
from memstore import ErrFactNotGrounded, InvalidInput, RejectionPublic, Store
from memstore.audit.chain import row_hash
from memstore.storage.tables import Rejection

pytestmark = pytest.mark.both_databases

#: claim -> (p0, p1): the verdict each test claim gets.
SCRIPT = {
    "The user is allergic to shellfish.": (0.30, 0.40),  # unsupported
    "The user is allergic to milk.": (0.50, 0.05),  # contradicted
    "Bob works at Initech.": (0.05, 0.60),  # insufficient_evidence
    "Alice buys 100% cotton_shirts.": (0.30, 0.45),  # unsupported
    "The user is allergic to peanuts.": (0.01, 0.99),  # grounded
}


def scripted_gate() -> Gate:
    def answer(claim: str, context: str) -> float:
        p0, p1 = SCRIPT[claim]
        return p0 if REMOVED in context else p1

    return Gate(ScriptedBackend(answer), REFUSE_UNGROUNDED)


def reject(store: Store, **fact: object) -> RejectionPublic:
    with pytest.raises(ErrFactNotGrounded) as err:
        store.add_fact(**fact)
    return err.value.rejection


@pytest.fixture
def audited(data_dir: Path) -> Iterator[tuple[Store, dict[str, RejectionPublic], datetime]]:
    """A store with one stored fact and five rejections; ``middle`` splits them in time."""
    with memstore.open(data_dir, namespace="user:alice", gate=scripted_gate()) as store:
        store.add_fact(**works_at(person="Robert", company="Initech"), ungated=True)
        store.add_alias("Robert", "Bob")
        store.add_fact(**allergy("peanuts"))
        made = {
            "shellfish": reject(store, **allergy("shellfish")),
            "milk": reject(store, **allergy("milk")),
        }
        middle = datetime.now(UTC)
        made["bob"] = reject(
            store,
            **works_at(
                person="Bob",
                company="Initech",
                evidence=[{"text": "Bob applied to Initech.", "source": "https://hr.example/bob"}],
            ),
        )
        made["cotton"] = reject(
            store, **works_at(statement="Alice buys 100% cotton_shirts.", relation="buys")
        )
        # Cites evidence that exists nowhere: refused before the gate, with no evidence.
        cited = store.remember(
            "The user is allergic to shellfish [ev:5f2b0c1d9e8a7b6c].",
            [],
            members=allergy("shellfish")["members"],
        )
        made["none"] = cited.claims[0].rejection
        yield store, made, middle


def ids(rows: list[RejectionPublic]) -> list[str]:
    return [r.id for r in rows]


def test_filters_select_exactly_the_matching_rejections(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, middle = audited
    r = {name: row.id for name, row in made.items()}

    def found(**where: object) -> set[str]:
        return set(ids(store.rejections(**where)))

    assert found() == set(r.values())
    assert found(until=middle) == {r["shellfish"], r["milk"]}
    assert found(since=middle) == {r["bob"], r["cotton"], r["none"]}
    assert found(verdict="unsupported") == {r["shellfish"], r["cotton"]}
    assert found(verdict=["contradicted", "unknown_citation"]) == {r["milk"], r["none"]}
    gaps = {name: row.budget_gap for name, row in made.items()}
    assert gaps["none"] is None
    low = sorted(g for g in gaps.values() if g is not None)[1]
    assert found(max_gap=low) == {r[n] for n, g in gaps.items() if g is not None and g <= low}
    assert found(min_gap=low) == {r[n] for n, g in gaps.items() if g is not None and g >= low}
    assert found(text="SHELLFISH") == {r["shellfish"], r["none"]}
    assert found(text="100%") == {r["cotton"]} == found(text="n_s")
    assert found(text="%") == {r["cotton"]}
    assert found(source="https://hr.example/bob") == {r["bob"]}
    assert found(source="inline") == set(r.values()) - {r["bob"], r["none"]}
    assert found(entity="Robert") == {r["bob"]}  # "Bob" is an alias of Robert
    assert found(entity="  shellFISH ") == {r["shellfish"], r["none"]}
    assert found(relation="buys") == {r["cotton"]}
    assert found(verdict="unsupported", entity="user") == {r["shellfish"]}
    assert found(entity="nobody") == set()


def test_sorting_and_pages(audited: tuple[Store, dict[str, RejectionPublic], datetime]) -> None:
    store, _, _ = audited
    newest_first = store.rejections()
    assert [r.created_at for r in newest_first] == sorted(
        (r.created_at for r in newest_first), reverse=True
    )
    assert ids(store.rejections(descending=False)) == ids(newest_first)[::-1]
    by_gap = store.rejections(order_by="budget_gap", descending=False)
    gaps = [r.budget_gap for r in by_gap]
    assert gaps[-1] is None and gaps[:-1] == sorted(g for g in gaps if g is not None)
    assert store.rejections(order_by="budget_gap")[-1].budget_gap is None  # NULLs last both ways
    pages = [store.rejections(order_by="p1", limit=2, offset=i) for i in (0, 2, 4)]
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [r.id for p in pages for r in p] == ids(store.rejections(order_by="p1"))


@pytest.mark.parametrize("order_by", ["created_at", "budget_gap", "p1", "p0"])
@pytest.mark.parametrize("descending", [True, False])
def test_cursor_pages_read_every_row_once_in_order(
    audited: tuple[Store, dict[str, RejectionPublic], datetime], order_by: str, descending: bool
) -> None:
    """Pages by cursor (each after the last row of the one before, NULL numbers last)
    add up to the unpaged list; the last page has no cursor."""
    store, _, _ = audited
    whole = store.rejections(order_by=order_by, descending=descending)
    assert whole.next_cursor is None
    pages = [store.rejections(order_by=order_by, descending=descending, limit=2)]
    while pages[-1].next_cursor is not None:
        pages.append(
            store.rejections(
                order_by=order_by, descending=descending, limit=2, cursor=pages[-1].next_cursor
            )
        )
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [r.id for p in pages for r in p] == ids(whole)


@pytest.mark.parametrize("descending", [True, False])
def test_cursor_pages_read_past_rows_inserted_behind_the_stores_back(
    audited: tuple[Store, dict[str, RejectionPublic], datetime], descending: bool
) -> None:
    """Rows without a chain position (inserted by hand; the chain check reports them)
    page like the others: one page at a time, each row once, as the unpaged list."""
    store, made, _ = audited
    at = made["milk"].created_at.replace(tzinfo=None)
    for name in ("milk", "bob"):  # bob takes milk's time too: a tie, broken by id
        sql(
            store,
            "UPDATE rejections SET chain_seq = NULL, created_at = :at WHERE id = :id",
            at=at,
            id=made[name].id,
        )
    whole = store.rejections(descending=descending)
    pages = [store.rejections(descending=descending, limit=1)]
    while pages[-1].next_cursor is not None:
        pages.append(store.rejections(descending=descending, limit=1, cursor=pages[-1].next_cursor))
    assert [r.id for p in pages for r in p] == ids(whole) and len(whole) == 5


def test_a_cursor_belongs_to_its_filters_and_order(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, _, _ = audited
    cursor = store.rejections(limit=1, verdict="unsupported").next_cursor
    assert cursor is not None
    assert len(store.rejections(limit=1, verdict="unsupported", cursor=cursor)) == 1
    fact_cursor = store.list_facts(limit=1).next_cursor
    assert fact_cursor is not None
    for call in (
        lambda: store.rejections(cursor=cursor),  # other filters
        lambda: store.rejections(verdict="unsupported", order_by="p1", cursor=cursor),
        lambda: store.rejections(verdict="unsupported", descending=False, cursor=cursor),
        lambda: store.rejections(verdict="unsupported", cursor=cursor[:-3]),
        lambda: store.rejections(verdict="unsupported", cursor="x" * 20),
        lambda: store.rejections(cursor=fact_cursor),  # a listing of facts
    ):
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == "cursor"
    with pytest.raises(InvalidInput) as err:
        store.rejections(verdict="unsupported", cursor=cursor, offset=1)
    assert err.value.field == "offset"


def test_counts_by_verdict_and_by_day(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, middle = audited
    assert store.count_rejections() == {
        "contradicted": 1,
        "insufficient_evidence": 1,
        "unknown_citation": 1,
        "unsupported": 2,
    }
    assert store.count_rejections(by="verdict", since=middle) == {
        "insufficient_evidence": 1,
        "unknown_citation": 1,
        "unsupported": 1,
    }
    days = {r.created_at.date().isoformat() for r in made.values()}
    by_day = store.count_rejections(by="day")
    assert set(by_day) == days and sum(by_day.values()) == 5


def test_exports_round_trip(
    audited: tuple[Store, dict[str, RejectionPublic], datetime], tmp_path: Path
) -> None:
    store, made, _ = audited
    oldest_first = store.rejections(descending=False)
    assert store.export_rejections(tmp_path / "all.jsonl") == 5
    lines = (tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()
    assert [RejectionPublic.model_validate_json(line) for line in lines] == oldest_first

    assert store.export_rejections(tmp_path / "unsupported.csv", verdict="unsupported") == 2
    with (tmp_path / "unsupported.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [row["id"] for row in rows] == ids(store.rejections(verdict="unsupported"))[::-1]
    shellfish = next(row for row in rows if row["id"] == made["shellfish"].id)
    assert float(shellfish["p1"]) == made["shellfish"].p1
    assert json.loads(shellfish["evidence"])[0]["text"] == made["shellfish"].evidence[0].text
    assert json.loads(shellfish["members"])[1]["name"] == "shellfish"

    buffer = io.StringIO()
    assert store.export_rejections(buffer, format="jsonl", entity="Bob") == 1
    assert json.loads(buffer.getvalue())["id"] == made["bob"].id


def test_bad_audit_queries_name_the_field(
    audited: tuple[Store, dict[str, RejectionPublic], datetime], tmp_path: Path
) -> None:
    store, _, middle = audited
    cases = [
        (lambda: store.rejections(verdict="nope"), "verdict"),
        (lambda: store.rejections(colour="red"), "colour"),
        (lambda: store.rejections(until=middle, since=middle + timedelta(1)), "until"),
        (lambda: store.rejections(min_gap=3, max_gap=1), "max_gap"),
        (lambda: store.rejections(min_gap=float("nan")), "min_gap"),
        (lambda: store.rejections(text=""), "text"),
        (lambda: store.rejections(limit=0), "limit"),
        (lambda: store.rejections(offset=-1), "offset"),
        (lambda: store.rejections(order_by="statement; DROP TABLE facts"), "order_by"),
        (lambda: store.count_rejections(by="month"), "by"),
        (lambda: store.export_rejections(tmp_path / "x.txt"), "format"),
    ]
    for call, field in cases:
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == field
    assert not (tmp_path / "x.txt").exists()
    with pytest.raises(memstore.NotFound):
        store.get_rejection("nope")


def test_other_namespaces_see_none_of_it(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    with memstore.open(store.url, namespace="user:bob", gate=scripted_gate()) as bob:
        assert bob.rejections() == [] and bob.count_rejections() == {}
        with pytest.raises(memstore.NotFound):
            bob.get_rejection(made["milk"].id)
        reject(bob, **allergy("milk"))
        assert bob.verify_audit_chain().ok and bob.verify_audit_chain().rows == 1
    assert len(store.rejections()) == 5


# -- the hash chain -------------------------------------------------------------------


def sql(store: Store, query: str, /, **params: object) -> list[dict[str, object]]:
    """Run SQL through a separate engine, as someone editing the database directly would."""
    engine = sa.create_engine(store.url)
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(query), params)
            return [dict(r) for r in result.mappings()] if result.returns_rows else []
    finally:
        engine.dispose()


def kinds(store: Store) -> list[str]:
    return [p.kind for p in store.verify_audit_chain().problems]


def test_an_untouched_chain_verifies(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, _, _ = audited
    report = store.verify_audit_chain()
    assert report.ok and report.rows == 7  # 2 verifications (stored facts) + 5 rejections
    seqs = sorted(
        r["chain_seq"]
        for table in ("rejections", "verifications")
        for r in sql(store, f"SELECT chain_seq FROM {table}")
    )
    assert seqs == list(range(1, 8))
    assert report.head == sql(store, "SELECT hash FROM audit_heads")[0]["hash"]


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE rejections SET p1 = 0.9 WHERE id = :id",
        "UPDATE rejections SET verdict = 'grounded' WHERE id = :id",
        "UPDATE rejections SET statement = 'The user is allergic to milk!' WHERE id = :id",
        "UPDATE rejections SET created_at = '2020-01-01 00:00:00.000000' WHERE id = :id",
    ],
)
def test_an_edited_rejection_is_caught(
    audited: tuple[Store, dict[str, RejectionPublic], datetime], edit: str
) -> None:
    store, made, _ = audited
    sql(store, edit, id=made["milk"].id)
    report = store.verify_audit_chain()
    assert [(p.kind, p.row_id) for p in report.problems] == [("edited", made["milk"].id)]


def test_an_edited_verification_is_caught(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, _, _ = audited
    sql(store, "UPDATE verifications SET confidence = 0.99 WHERE verdict = 'grounded'")
    assert kinds(store) == ["edited"]


def rewrite_with_fresh_hash(store: Store, rejection_id: str) -> None:
    """Edit a rejection and give it the hash its new content has, as a forger would."""
    engine = sa.create_engine(store.url)
    with Session(engine) as session, session.begin():
        row = session.get(Rejection, rejection_id)
        assert row is not None
        row.p1 = 0.9
        row.chain_hash = row_hash(row.chain_prev or "", "rejections", row.model_dump())
    engine.dispose()


def test_a_row_rewritten_with_a_fresh_hash_breaks_the_next_link(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    rewrite_with_fresh_hash(store, made["milk"].id)
    report = store.verify_audit_chain()
    assert [p.kind for p in report.problems] == ["edited"]
    assert report.problems[0].row_id == made["bob"].id  # the next row no longer links


def delete_rejection(store: Store, rejection_id: str) -> None:
    for table in ("rejection_members", "rejection_evidence", "rejection_attempts"):
        sql(store, f"DELETE FROM {table} WHERE rejection_id = :id", id=rejection_id)
    sql(store, "DELETE FROM rejections WHERE id = :id", id=rejection_id)


def test_a_deleted_row_is_caught(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    delete_rejection(store, made["milk"].id)
    assert kinds(store) == ["deleted"]


def test_a_deleted_last_row_is_caught_by_the_head(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    delete_rejection(store, made["none"].id)
    report = store.verify_audit_chain()
    assert [p.kind for p in report.problems] == ["deleted"] and report.problems[0].seq == 7


def test_inserted_rows_are_caught(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    [found] = sql(store, "SELECT * FROM rejections WHERE id = :id", id=made["milk"].id)
    row = {k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in found.items()}
    insert = f"INSERT INTO rejections ({', '.join(row)}) VALUES ({', '.join(':' + k for k in row)})"
    sql(store, insert, **{**row, "id": "f" * 32, "chain_seq": None})
    assert kinds(store) == ["inserted"]
    [verification] = sql(store, "SELECT chain_seq FROM verifications WHERE verdict = 'grounded'")
    sql(store, insert, **{**row, "id": "e" * 32, "chain_seq": verification["chain_seq"]})
    report = store.verify_audit_chain()
    assert [(p.kind, p.row_id) for p in report.problems] == [
        ("inserted", "f" * 32),
        ("inserted", "e" * 32),
    ]


# -- a row's neighbourhood of the chain (chain order: 2 verifications, then shellfish 3,
# milk 4, bob 5, cotton 6, none 7) ----------------------------------------------------------


def span_problems(store: Store, span: tuple[int, int]) -> list[tuple[str, str | None]]:
    return [(p.kind, p.row_id) for p in store.verify_audit_chain(span=span).problems]


def test_a_span_walks_only_its_rows(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    report = store.verify_audit_chain(span=(3, 5))
    assert report.ok and report.rows == 3 and report.span == (3, 5)
    assert store.verify_audit_chain(span=(6, 9)).rows == 2  # past the head: up to it
    sql(store, "UPDATE rejections SET p1 = 0.9 WHERE id = :id", id=made["shellfish"].id)
    assert span_problems(store, (4, 6)) == []  # the edit is outside; the whole walk sees it
    assert span_problems(store, (3, 5)) == [("edited", made["shellfish"].id)]
    assert kinds(store) == ["edited"]


def test_a_span_catches_a_broken_link_a_deleted_row_and_a_deleted_head(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    rewrite_with_fresh_hash(store, made["milk"].id)
    assert span_problems(store, (3, 5)) == [("edited", made["bob"].id)]
    assert span_problems(store, (3, 4)) == []  # bob's link is what shows the rewrite
    delete_rejection(store, made["cotton"].id)
    assert span_problems(store, (5, 7)) == [("deleted", made["none"].id)]
    delete_rejection(store, made["none"].id)
    assert span_problems(store, (6, 8)) == [("deleted", None)]


@pytest.mark.parametrize("span", [(0, 1), (3, 2), (1, 2, 3), "12", (1, True), (1.0, 2)])
def test_a_bad_span_is_refused(
    audited: tuple[Store, dict[str, RejectionPublic], datetime], span: object
) -> None:
    store, _, _ = audited
    with pytest.raises(InvalidInput) as err:
        store.verify_audit_chain(span=span)  # type: ignore[arg-type]
    assert err.value.field == "span"


# -- the same refused write again ---------------------------------------------------------


def test_a_repeated_refusal_counts_on_its_rejection_and_links_each_attempt(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    first = made["shellfish"]
    assert (first.attempts, first.last_attempt_at) == (1, first.created_at)
    again = reject(store, **allergy("shellfish"))
    [batch_a, batch_b] = store.add_facts([allergy("shellfish"), allergy("shellfish")])
    assert again.id == batch_a.id == batch_b.id == first.id
    assert isinstance(batch_b, RejectionPublic) and batch_b.attempts == 4
    shown = store.get_rejection(first.id)
    assert shown.attempts == 4 and shown.last_attempt_at > first.created_at
    assert shown.model_dump(exclude={"attempts", "last_attempt_at"}) == first.model_dump(
        exclude={"attempts", "last_attempt_at"}
    )
    assert len(store.rejections()) == 5 and store.count_rejections()["unsupported"] == 2
    report = store.verify_audit_chain()
    assert report.ok and report.rows == 7 + 3  # the fixture's links, then one per attempt
    attempts = sql(store, "SELECT rejection_id, p1 FROM rejection_attempts ORDER BY chain_seq")
    assert attempts == [{"rejection_id": first.id, "p1": first.p1}] * 3
    # Other evidence, or another verdict, is another write: a row of its own.
    other = reject(store, **allergy("shellfish", evidence=["User: shellfish, maybe?"]))
    assert other.id != first.id and other.attempts == 1


def test_an_attempt_is_tamper_evident_and_erased_with_its_rejection(
    audited: tuple[Store, dict[str, RejectionPublic], datetime],
) -> None:
    store, made, _ = audited
    first = made["shellfish"]
    reject(store, **allergy("shellfish"))
    sql(store, "UPDATE rejection_attempts SET p1 = 0.9")
    assert kinds(store) == ["edited"]
    sql(store, "UPDATE rejection_attempts SET p1 = :p1", p1=first.p1)
    assert kinds(store) == []
    tombstone = store.erase_rejection(first.id, "asked to forget")
    assert [link["table"] for link in tombstone.links] == ["rejections", "rejection_attempts"]
    assert sql(store, "SELECT id FROM rejection_attempts") == []
    assert store.verify_audit_chain().ok
    fresh = reject(store, **allergy("shellfish"))  # nothing left to count on
    assert fresh.id != first.id and fresh.attempts == 1


def test_a_repeat_answers_with_its_own_numbers(data_dir: Path) -> None:
    def unsure(p1: float) -> Gate:  # unsupported either way, by the same backend name
        return Gate(
            ScriptedBackend(lambda claim, context: 0.05 if REMOVED in context else p1),
            REFUSE_UNGROUNDED,
        )

    with memstore.open(data_dir, namespace="user:alice", gate=unsure(0.30)) as s:
        first = reject(s, **allergy("shellfish"))
        with pytest.raises(ErrFactNotGrounded) as err:
            s.add_fact(**allergy("shellfish"), gate=unsure(0.40))
        second, logged = err.value.rejection, s.get_rejection(first.id)
    assert second.id == first.id and second.attempts == 2
    assert (first.p1, second.p1, logged.p1) == (0.30, 0.40, 0.30)  # the row keeps the first


def test_unknown_citations_of_other_ids_are_other_refusals(store: Store) -> None:
    said = "Bob works at Initech [ev:{}]."
    members = ["Bob", "Initech"]
    one = store.remember(said.format("a" * 16), [], members=members).claims[0].rejection
    other = store.remember(said.format("b" * 16), [], members=members).claims[0].rejection
    again = store.remember(said.format("b" * 16), [], members=members).claims[0].rejection
    assert one is not None and other is not None and again is not None
    assert one.id != other.id and "b" * 16 in other.reason
    assert again.id == other.id and again.attempts == 2
