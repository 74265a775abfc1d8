"""Bounded reads (issue 26, goal 1): ``facts_about``, ``history`` and ``neighborhood``
answer a page at a time in a documented order, with cursors tied to their read, on
SQLite and PostgreSQL; SQL does the bounding."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from samples import works_at

import memstore
from memstore import AsyncStore, FactList, FactPublic, InvalidInput, Store
from memstore.schemas import MAX_LIST_LIMIT, MAX_NEIGHBORHOOD_FACTS
from memstore.storage import cursors

Opener = Callable[..., Store]


@pytest.fixture
def plain(opener: Opener) -> Store:
    """An ungated store without a search index: these reads are SQL and the graph."""
    return opener(hook=memstore.Ungated(), index=False)


def sql(store: Store, text: str, **params: Any) -> list[Any]:
    """Rows of a query on the store's own database, through a separate engine."""
    engine = sa.create_engine(store.url)
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(text), params)
            return list(result) if result.returns_rows else []
    finally:
        engine.dispose()


def newest_first(store: Store, ids: list[str]) -> list[str]:
    """``ids`` as SQL sorts them newest first: recorded_at, then id, both descending."""
    rows = sql(store, "SELECT id FROM facts ORDER BY recorded_at DESC, id DESC")
    wanted = set(ids)
    return [fact_id for (fact_id,) in rows if fact_id in wanted]


def tie(store: Store, ids: list[str], at: datetime) -> None:
    """Give these facts one recording time (the id then decides their order)."""
    naive = at.replace(tzinfo=None)
    for table, column in (("facts", "id"), ("fact_members", "fact_id")):
        for fact_id in ids:
            update = f"UPDATE {table} SET recorded_at = :at WHERE {column} = :id"
            sql(store, update, at=naive, id=fact_id)


def walk(
    read: Callable[..., Any], limit: int, items: Callable[[Any], list[FactPublic]]
) -> list[str]:
    """The fact ids of every page of ``read(cursor=...)``, first to last; each page holds
    at most ``limit`` facts, and one with a ``next_cursor`` holds some."""
    page = read(cursor=None)
    seen = [f.id for f in items(page)]
    while page.next_cursor is not None:
        assert 0 < len(items(page)) <= limit
        page = read(cursor=page.next_cursor)
        seen += [f.id for f in items(page)]
    assert len(items(page)) <= limit
    return seen


def pages(read: Callable[..., Any]) -> list[Any]:
    """Every page of ``read(cursor=...)``, first to last."""
    found = [read(cursor=None)]
    while found[-1].next_cursor is not None:
        found.append(read(cursor=found[-1].next_cursor))
    return found


def listed(page: Any) -> list[FactPublic]:
    return list(page)


# -- facts_about ------------------------------------------------------------------------


@pytest.mark.both_databases
def test_facts_about_pages_give_every_fact_once_newest_first(plain: Store) -> None:
    facts = plain.add_facts([works_at(f"P{i}", "Acme") for i in range(11)])
    twice = plain.add_fact(
        statement="Acme audits Acme.",
        members=[("Acme", "org", "auditor"), ("Acme", "org", "audited")],
        evidence=["Acme's own audit report."],
    )  # one fact, the entity in two roles: one row of the read
    ids = [f.id for f in facts if isinstance(f, FactPublic)] + [twice.id]
    tie(plain, ids[3:8], facts[3].recorded_at)  # type: ignore[union-attr]
    expected = newest_first(plain, ids)

    page = plain.facts_about("Acme", limit=5)
    assert isinstance(page, FactList) and len(page) == 5 and page.next_cursor
    seen = [f.id for f in page]
    later = plain.add_fact(**works_at("Late", "Acme"))  # newer than the walk's start
    while page.next_cursor is not None:
        page = plain.facts_about("Acme", limit=5, cursor=page.next_cursor)
        assert 0 < len(page) <= 5
        seen += [f.id for f in page]
    assert seen == expected and len(set(seen)) == 12
    assert later.id not in seen
    full = plain.facts_about("Acme", limit=13)
    assert [f.id for f in full] == [later.id, *expected]
    assert full.next_cursor is None  # a full last page has no next


@pytest.mark.both_databases
def test_facts_about_pages_keep_their_filters(plain: Store) -> None:
    old = plain.add_fact(**works_at("Bo", "Acme"))
    new = plain.supersede(old.id, **works_at("Bo", "Globex"))
    others = [plain.add_fact(**works_at(f"Q{i}", "Globex", relation="owns")) for i in range(3)]
    owns = walk(
        lambda cursor: plain.facts_about("Globex", relation="owns", limit=2, cursor=cursor),
        2,
        listed,
    )
    assert owns == [f.id for f in reversed(others)]
    superseded = plain.facts_about("Bo", statuses=["superseded"], limit=1)
    assert [f.id for f in superseded] == [old.id] and superseded.next_cursor is None
    assert [f.id for f in plain.facts_about("Bo")] == [new.id]


def sqlite_plans(store: Store, needle: str, work: Callable[[], Any]) -> list[tuple[str, str]]:
    """The (statement, SQLite's query plan) of each statement holding ``needle`` that
    ``work`` sent, in order; a plan's steps joined by " | "."""
    seen: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if needle in statement:
            seen.append((statement, params))

    engine = store._scope.engine
    sa.event.listen(engine, "before_cursor_execute", capture)
    try:
        work()
    finally:
        sa.event.remove(engine, "before_cursor_execute", capture)
    with engine.connect() as conn:
        return [
            (s, " | ".join(row[3] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {s}", p)))
            for s, p in seen
        ]


def test_facts_about_reads_an_index_not_every_fact(plain: Store) -> None:
    """SQLite walks the members' (namespace, entity_id, recorded_at, fact_id) index in
    the read's order and stops after the page: no sort of the entity's facts (only of
    the page's rows, once they are picked)."""
    plain.add_facts([works_at(f"P{i}", "Acme") for i in range(4)])

    def two_pages() -> None:
        first = plain.facts_about("Acme", limit=2)
        plain.facts_about("Acme", limit=2, cursor=first.next_cursor)

    seen = sqlite_plans(plain, "FROM fact_members JOIN facts", two_pages)
    assert len(seen) == 2
    for statement, plan in seen:
        assert "LIMIT" in statement
        picked, rows = plan.split("SCAN page")
        assert "INDEX ix_fact_members_namespace_entity_recorded" in picked, plan
        assert "TEMP B-TREE" not in picked, plan
        assert "SEARCH facts USING INDEX sqlite_autoindex_facts_1 (id=?)" in rows, plan
    assert "(recorded_at,fact_id)<(?,?)" in seen[1][1], seen[1][1]  # the keyset is a range


def test_a_pages_members_come_from_one_index_in_order(plain: Store) -> None:
    """The members of a page (``Scope.hydrate``) are read from the (fact_id, position,
    entity_id, role) index alone: no member's table row, no sort."""
    plain.add_facts([works_at(f"P{i}", "Acme") for i in range(4)])
    pages: list[Any] = []
    seen = sqlite_plans(
        plain, "FROM fact_members JOIN entities", lambda: pages.append(plain.facts_about("Acme"))
    )
    assert len(pages[0]) == 4 and len(seen) == 1
    plan = seen[0][1]
    assert "USING COVERING INDEX ix_fact_members_fact_position (fact_id=?)" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


# -- history ----------------------------------------------------------------------------


@pytest.mark.both_databases
def test_history_pages_walk_the_chain_once_oldest_first(plain: Store) -> None:
    chain = [plain.add_fact(**works_at("Ann", "Co 0"))]
    for n in range(1, 7):
        chain.append(plain.supersede(chain[-1].id, **works_at("Ann", f"Co {n}")))
    plain.add_fact(**works_at("Ann", "Elsewhere"))  # not part of the chain
    ids = [f.id for f in chain]
    for entry in (ids[0], ids[3], ids[-1]):
        seen = walk(lambda cursor, e=entry: plain.history(e, limit=3, cursor=cursor), 3, listed)
        assert seen == ids, entry
    whole = plain.history(ids[2], limit=7)
    assert [f.id for f in whole] == ids and whole.next_cursor is None
    assert [f.status for f in plain.history(ids[0], limit=2)] == ["superseded"] * 2
    single = plain.add_fact(**works_at("Solo", "Acme"))
    assert plain.history(single.id) == [single] and plain.history(single.id).next_cursor is None


@pytest.mark.both_databases
def test_a_made_up_history_cursor_reads_no_other_chain_or_namespace(plain: Store) -> None:
    """Cursor checksums have no key: anyone can make one, naming any fact id."""
    secret = plain.add_fact(**works_at("Bob", "Salary 1"))
    plain.supersede(secret.id, **works_at("Bob", "Salary 2"))
    other = plain.add_fact(**works_at("Ann", "Co 0"))
    with memstore.open(plain.url, "user:mallory", hook=memstore.Ungated(), index=False) as mine:
        own = mine.add_fact(**works_at("Eve", "Co 1"))
        for store, fact in ((mine, own), (plain, other)):
            read = cursors.listing(store.namespace, {"read": "history", "fact": fact.id})
            forged = cursors.encode(cursors.Position(fact.recorded_at, secret.id), read)
            with pytest.raises(InvalidInput) as err:
                store.history(fact.id, cursor=forged)
            assert err.value.field == "cursor"


# -- neighborhood -----------------------------------------------------------------------


def link(store: Store, a: str, b: str) -> FactPublic:
    return store.add_fact(statement=f"{a} knows {b}.", members=[a, b], evidence=[f"{a}, {b}"])


@pytest.mark.both_databases
def test_neighborhood_pages_by_hop_then_newest(plain: Store) -> None:
    """Hop 2 is written first, so recency alone would put it ahead of hop 1."""
    far = [link(plain, f"A{i}", f"B{i}") for i in range(4)]
    far.append(link(plain, "A0", "A1"))  # both members one hop out: a hop-2 fact
    near = [link(plain, "S", f"A{i}") for i in range(4)]
    link(plain, "B0", "C0")  # three hops out
    expected = newest_first(plain, [f.id for f in near]) + newest_first(plain, [f.id for f in far])
    seed = plain.entity("S").id

    def read(cursor: str | None) -> Any:
        page = plain.neighborhood("S", 2, limit=3, cursor=cursor)
        assert page.complete is not False  # None until a page can tell; True at the end
        assert page.next_cursor is not None or page.complete is True
        members = {m.entity_id for f in page.facts for m in f.members}
        assert {e.id for e in page.entities} == members | {seed}  # the seeds and the page's
        assert len(page.entities) == len(members | {seed})  # each once
        assert page.distance == {e.id: "SAB".index(e.name[0]) for e in page.entities}
        return page

    assert walk(read, 3, lambda p: p.facts) == expected


@pytest.mark.both_databases
def test_neighborhood_keeps_at_most_max_facts_nearest_and_newest(plain: Store) -> None:
    near = [link(plain, "S", f"A{i}") for i in range(3)]
    far = [link(plain, f"A{i}", f"B{i}") for i in range(3)]
    order = newest_first(plain, [f.id for f in near]) + newest_first(plain, [f.id for f in far])
    for cap in (1, 3, 4, 5):

        def read(cursor: str | None, cap: int = cap) -> Any:
            return plain.neighborhood("S", 2, limit=2, cursor=cursor, max_facts=cap)

        assert walk(read, 2, lambda p: p.facts) == order[:cap], cap
        assert pages(read)[-1].complete is False, cap
    assert plain.neighborhood("S", 2, max_facts=6).complete is True
    alone = plain.neighborhood("S", 0)
    assert alone.facts == [] and [e.name for e in alone.entities] == ["S"]
    assert alone.next_cursor is None


def test_neighborhood_pages_skip_facts_no_longer_active(plain: Store) -> None:
    facts = [link(plain, "S", f"A{i}") for i in range(5)]
    first = plain.neighborhood("S", limit=2)
    gone = newest_first(plain, [f.id for f in facts])[2]
    plain.retract(gone, "no longer true")
    rest = plain.neighborhood("S", limit=2, cursor=first.next_cursor)
    assert gone not in [f.id for f in rest.facts] and len(rest.facts) == 2


# -- bad input and foreign cursors ---------------------------------------------------------


READS: dict[str, Callable[..., Any]] = {
    "facts_about": lambda s, **kw: s.facts_about("Acme", **kw),
    "history": lambda s, **kw: s.history(s.facts_about("Acme")[0].id, **kw),
    "neighborhood": lambda s, **kw: s.neighborhood("Acme", **kw),
}
BAD = [
    ("limit", 0), ("limit", MAX_LIST_LIMIT + 1), ("limit", True), ("limit", "5"),
    ("limit", 2.0), ("cursor", ""), ("cursor", "garbage"), ("cursor", 7),
    ("cursor", "x" * 600),
]  # fmt: skip


@pytest.mark.parametrize("read", sorted(READS))
@pytest.mark.parametrize(("field", "value"), BAD)
def test_bad_limit_or_cursor_is_invalid_input_naming_it(
    plain: Store, read: str, field: str, value: object
) -> None:
    plain.add_fact(**works_at())
    with pytest.raises(InvalidInput) as err:
        READS[read](plain, **{field: value})
    assert err.value.field == field


@pytest.mark.parametrize("value", [0, MAX_NEIGHBORHOOD_FACTS + 1, True, None])
def test_bad_max_facts_is_invalid_input(plain: Store, value: object) -> None:
    plain.add_fact(**works_at())
    with pytest.raises(InvalidInput) as err:
        plain.neighborhood("Acme", max_facts=value)  # type: ignore[arg-type]
    assert err.value.field == "max_facts"


def test_a_cursor_of_another_read_is_refused(opener: Opener) -> None:
    store = opener(hook=memstore.Ungated(), index=False)
    old = store.add_fact(**works_at("Alice", "Acme"))
    new = store.supersede(old.id, **works_at("Alice", "Acme", relation="employs"))
    store.add_fact(**works_at("Alice", "Globex"))
    store.add_fact(**works_at("Bob", "Acme"))
    cursors = {
        "facts_about Alice": store.facts_about("Alice", limit=1).next_cursor,
        "facts_about Acme": store.facts_about("Acme", limit=1).next_cursor,
        "history": store.history(old.id, limit=1).next_cursor,
        "neighborhood": store.neighborhood("Alice", limit=1).next_cursor,
        "list_facts": store.list_facts(limit=1).next_cursor,
    }
    assert all(cursors.values()), cursors
    reads: dict[str, Callable[[str], Any]] = {
        "facts_about Alice": lambda c: store.facts_about("Alice", limit=1, cursor=c),
        "facts_about Acme": lambda c: store.facts_about("Acme", limit=1, cursor=c),
        "history": lambda c: store.history(old.id, limit=1, cursor=c),
        "neighborhood": lambda c: store.neighborhood("Alice", limit=1, cursor=c),
        "list_facts": lambda c: store.list_facts(limit=1, cursor=c),
    }
    for made_by, cursor in cursors.items():
        reads[made_by](cursor)  # its own read takes it
        for other, read in reads.items():
            if other != made_by:
                with pytest.raises(InvalidInput, match="cursor: belongs to another listing"):
                    read(cursor)
    same = {
        "another relation": lambda c: store.facts_about("Alice", relation="works_at", cursor=c),
        "other statuses": lambda c: store.facts_about("Alice", statuses=["verified"], cursor=c),
        "another version": lambda c: store.history(new.id, cursor=c),
        "more hops": lambda c: store.neighborhood("Alice", hops=2, cursor=c),
        "another bound": lambda c: store.neighborhood("Alice", max_facts=5, cursor=c),
    }
    made = {
        "another relation": cursors["facts_about Alice"],
        "other statuses": cursors["facts_about Alice"],
        "another version": cursors["history"],
        "more hops": cursors["neighborhood"],
        "another bound": cursors["neighborhood"],
    }
    for why, read in same.items():
        with pytest.raises(InvalidInput, match="cursor: belongs to another listing"):
            read(made[why])
    with memstore.open(store.url, "user:bob", hook=memstore.Ungated(), index=False) as bob:
        bob.add_fact(**works_at("Alice", "Acme"))
        with pytest.raises(InvalidInput, match="cursor: belongs to another listing"):
            bob.facts_about("Alice", cursor=cursors["facts_about Alice"])


def test_async_store_pages_the_same(plain: Store) -> None:
    made = [plain.add_fact(**works_at(f"P{i}", "Acme")) for i in range(3)]

    async def read() -> list[str]:
        wrapped = AsyncStore(plain)
        first = await wrapped.facts_about("Acme", limit=2)
        rest = await wrapped.facts_about("Acme", limit=2, cursor=first.next_cursor)
        return [f.id for f in [*first, *rest]]

    assert anyio.run(read) == [f.id for f in reversed(made)]


def test_a_fact_list_is_a_list_with_a_cursor() -> None:
    empty = FactList()
    assert (
        empty == []
        and empty.next_cursor is None
        and repr(empty) == "FactList([], next_cursor=None)"
    )
    assert FactList([], next_cursor="c").next_cursor == "c"
