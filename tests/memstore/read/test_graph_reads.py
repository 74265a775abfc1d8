"""The hypergraph is read from SQL for each query (issue 26, goal 2): opening a store
reads no fact, ``neighborhood`` loads only what its walk needs and so sees at once what
another process wrote, and it answers as a walk of the whole graph does."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

import memstore
from memstore import FactPublic, Store
from memstore.read import graph
from memstore.storage import db

Opener = Callable[..., Store]


@pytest.fixture
def plain(opener: Opener) -> Store:
    """An ungated store without a search index: neighborhood is SQL and the graph."""
    return opener(hook=memstore.Ungated(), index=False)


def link(store: Store, a: str, b: str, **fields: Any) -> FactPublic:
    return store.add_fact(
        statement=f"{a} knows {b}.", members=[a, b], evidence=[f"{a}, {b}"], **fields
    )


def statements_during(work: Callable[[], Any]) -> list[str]:
    """The SQL every engine sends while ``work`` runs."""
    sent: list[str] = []

    def grab(*args: Any) -> None:
        sent.append(args[2])  # (conn, cursor, statement, parameters, context, executemany)

    event.listen(Engine, "before_cursor_execute", grab)
    try:
        work()
    finally:
        event.remove(Engine, "before_cursor_execute", grab)
    return sent


def test_opening_a_store_reads_no_fact(opener: Opener, plain: Store) -> None:
    for i in range(3):
        link(plain, "S", f"A{i}")
    sent = statements_during(lambda: opener(hook=memstore.Ungated(), index=False))
    assert sent  # the open did talk to the database
    assert [s for s in sent if "fact_members" in s] == []
    # ...while a read does, and only for the entities its walk reaches
    read = statements_during(lambda: plain.neighborhood("A0", 1))
    assert any("fact_members.entity_id =" in s for s in read)


@pytest.mark.both_databases
def test_a_fact_retracted_between_a_walks_reads_neither_counts_nor_cuts_it(
    opener: Opener,
) -> None:
    """The walk reads a hop's newest fact ids, then their members (but for the last
    hop's, read with the page): a fact retracted in between is replaced by the next
    newest, so the page and ``complete`` are those of a walk after the retraction."""
    first = opener(hook=memstore.Ungated(), index=False)
    other = opener(hook=memstore.Ungated(), index=False)  # another process, in effect
    older_first = [link(first, "S", f"A{i}") for i in range(4)]
    newest = older_first[-1]
    retracted: list[str] = []

    def retract_once(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if not retracted and "fact_members.role" in statement:  # the members' read
            retracted.append(newest.id)
            other.retract(newest.id, "no longer true")

    event.listen(Engine, "before_cursor_execute", retract_once)
    try:
        hood = first.neighborhood("S", 2, max_facts=2)  # hop 1 is not the last
    finally:
        event.remove(Engine, "before_cursor_execute", retract_once)
    assert retracted == [newest.id]
    assert [f.id for f in hood.facts] == [older_first[2].id, older_first[1].id]
    assert hood.complete is False  # the oldest was left out


@pytest.mark.both_databases
@pytest.mark.parametrize("rounds", [1, 3])
def test_a_page_whose_facts_were_retracted_before_it_read_them_walks_again(
    opener: Opener, rounds: int
) -> None:
    """A walk stops at the page and one more; if all of those are retracted before the
    page reads them, the page walks again and shows the next ones, with a cursor. The
    third walk goes to the end, so the page then reads on past what was retracted."""
    first = opener(hook=memstore.Ungated(), index=False)
    other = opener(hook=memstore.Ungated(), index=False)  # another process, in effect
    newest_first = [link(first, "S", f"A{i}") for i in range(3 * rounds + 3)][::-1]
    retracted: list[str] = []
    busy: list[bool] = []  # the retractions' own statements do not retract

    def retract(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if busy or len(retracted) == 3 * rounds or "AS meta" not in statement:
            return  # "AS meta": the page's read of its facts
        busy.append(True)
        try:
            for fact in newest_first[len(retracted) : len(retracted) + 3]:
                other.retract(fact.id, "no longer true")
                retracted.append(fact.id)
        finally:
            busy.clear()

    event.listen(Engine, "before_cursor_execute", retract)
    try:
        page = first.neighborhood("S", 1, limit=2)
    finally:
        event.remove(Engine, "before_cursor_execute", retract)
    assert len(retracted) == 3 * rounds
    assert [f.id for f in page.facts] == [f.id for f in newest_first[3 * rounds :][:2]]
    assert page.next_cursor is not None
    last = first.neighborhood("S", 1, limit=2, cursor=page.next_cursor)
    assert [f.id for f in last.facts] == [newest_first[-1].id] and last.complete is True


@pytest.mark.both_databases
def test_a_fact_another_store_wrote_is_walked_without_reopening(opener: Opener) -> None:
    first = opener(hook=memstore.Ungated(), index=False)
    second = opener(hook=memstore.Ungated(), index=False)  # another process, in effect
    near = link(first, "S", "A")
    assert [f.id for f in first.neighborhood("S", 2).facts] == [near.id]
    far = link(second, "A", "B")
    hood = first.neighborhood("S", 2)
    assert [f.id for f in hood.facts] == [near.id, far.id]
    assert hood.distance[first.entity("B").id] == 2
    second.retract(near.id, "no longer true")  # the walk no longer passes through it
    assert first.neighborhood("S", 2).facts == []
    assert [f.id for f in first.neighborhood("A", 1).facts] == [far.id]


def _newest(fact_id: Any, attrs: dict[str, Any]) -> tuple[datetime, str]:
    return attrs["recorded_at"], str(fact_id)


def _random_store(store: Store, rng: random.Random) -> list[str]:
    """Facts of two or three of 14 entities (every fifth with one of them in a second
    role too), in two relations, some with a world time, some retracted; returns the
    entity names."""
    names = [f"E{i}" for i in range(14)]
    years = [None, datetime(2020, 1, 1, tzinfo=UTC), datetime(2022, 1, 1, tzinfo=UTC)]
    facts = []
    for i in range(45):
        members: list[Any] = rng.sample(names, rng.choice([2, 2, 3]))
        statement = f"Fact {i} of {', '.join(members)}."
        if i % 5 == 0:  # e.g. "E3 manages E3": one entity, two roles
            members.append((members[0], "entity", "also"))
        start, end = rng.choice(years), rng.choice(years)
        if start is not None and end is not None and end <= start:
            end = None
        facts.append(
            {
                "statement": statement,
                "members": members,
                "relation": rng.choice(["knows", "works_with"]),
                "evidence": [f"evidence {i}"],
                "valid_from": start,
                "valid_to": end,
            }
        )
    written = [f for f in store.add_facts(facts) if isinstance(f, FactPublic)]
    for fact in rng.sample(written, 5):
        store.retract(fact.id, "no longer true")
    return names


@pytest.fixture(params=[4, None], ids=["chunks-of-4", "default-chunks"])
def chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """IN lists of this many ids and bounded reads per statement: at 4 a hop's frontier
    and its facts take several statements."""
    if request.param is not None:
        monkeypatch.setattr(db, "IN_LIST_CHUNK", request.param)
        monkeypatch.setattr(graph, "UNION_READS", request.param)
    yield request.param or db.IN_LIST_CHUNK


@pytest.mark.both_databases
def test_neighborhood_answers_as_a_walk_of_the_whole_graph(plain: Store, chunk: int) -> None:
    rng = random.Random(26)
    names = _random_store(plain, rng)
    whole = plain.graph
    ids = {name: plain.entity(name).id for name in names}
    cases = [
        (rng.sample(names, rng.choice([1, 1, 2])), rng.choice([0, 1, 2, 3]),
         rng.choice([None, "knows"]),
         rng.choice([None, datetime(2021, 6, 1, tzinfo=UTC), datetime(2019, 1, 1, tzinfo=UTC)]),
         rng.choice([1, 3, 8, 20, 1000]))
        for _ in range(40)
    ]  # fmt: skip
    incomplete = untold = 0
    for seeds, hops, relation, as_of, max_facts in cases:
        want = whole.neighborhood(
            [ids[s] for s in seeds], hops, relation=relation, as_of=as_of,
            max_facts=max_facts, rank=_newest,
        )  # fmt: skip
        order = sorted(
            want.fact_distance,
            key=lambda f: (-want.fact_distance[f], *_newest(f, whole.fact_attrs(f))),
            reverse=True,
        )
        got: list[str] = []
        cursor = None
        while True:
            page = plain.neighborhood(
                seeds, hops, relation=relation, as_of=as_of, max_facts=max_facts,
                limit=7, cursor=cursor,
            )  # fmt: skip
            # the walk reads only what a page needs: ``complete`` is None (not known yet)
            # or the whole walk's, and the last page always tells
            last = page.next_cursor is None
            assert page.complete is want.complete or (page.complete is None and not last), (
                seeds, hops, relation, as_of, max_facts,
            )  # fmt: skip
            untold += page.complete is None
            assert {e: want.distance.get(e, 0) for e in page.distance} == page.distance
            got += [f.id for f in page.facts]
            cursor = page.next_cursor
            if cursor is None:
                break
        assert got == order, (seeds, hops, relation, as_of, max_facts)
        incomplete += not want.complete
    assert 0 < incomplete < len(cases)  # both kinds of walk were tried
    assert untold > 0  # and pages that stopped the walk early


def test_a_first_page_reads_the_facts_it_shows_and_one_more(plain: Store) -> None:
    """A walk stops reading once it has the page and one more: a first page of 5 near
    a seed with 60 facts (each leading to one more) reads the members of 6 facts, not
    the 120 within two hops; a page deeper in the walk reads further. The last hop's
    members come with the page: no walk goes on from them."""
    plain.add_facts(
        [{"statement": f"S knows A{i}.", "members": ["S", f"A{i}"], "evidence": ["S"]}
         for i in range(60)]
        + [{"statement": f"A{i} knows B{i}.", "members": [f"A{i}", f"B{i}"], "evidence": ["A"]}
           for i in range(60)]
    )  # fmt: skip

    def facts_read(work: Callable[[], Any]) -> int:
        """Fact ids the walk's member reads (``_GRAPH_ROWS``) asked for."""
        asked: list[Any] = []

        def grab(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
            if "fact_members.role" in statement and "facts.id IN" in statement:
                asked.append(parameters)

        event.listen(Engine, "before_cursor_execute", grab)
        try:
            work()
        finally:
            event.remove(Engine, "before_cursor_execute", grab)
        # each read binds the ids as one JSON array (``db.in_list``), first
        return sum(len(json.loads(p[0])) for p in asked)

    first: list[Any] = []
    assert facts_read(lambda: first.append(plain.neighborhood("S", 2, limit=5))) == 6
    assert len(first[0].facts) == 5 and first[0].complete is None
    cursor, pages = first[0].next_cursor, 1
    while pages < 12:  # the last page of hop 1
        cursor = plain.neighborhood("S", 2, limit=5, cursor=cursor).next_cursor
        pages += 1
    deep: list[Any] = []
    read = facts_read(lambda: deep.append(plain.neighborhood("S", 2, limit=5, cursor=cursor)))
    assert len(deep[0].facts) == 5
    assert all(f.statement.startswith("A") for f in deep[0].facts)  # hop 2's
    assert read == 60  # hop 1 whole (the frontier of hop 2); hop 2 is the last
    # hop 2 reads only what the page still lacks after hop 1, and one more, and no members
    plain.add_facts(
        [{"statement": f"T knows C{i}.", "members": ["T", f"C{i}"], "evidence": ["T"]}
         for i in range(3)]
        + [{"statement": f"C{i % 3} knows D{i}.", "members": [f"C{i % 3}", f"D{i}"],
            "evidence": ["C"]} for i in range(30)]
    )  # fmt: skip
    page: list[Any] = []
    assert facts_read(lambda: page.append(plain.neighborhood("T", 2, limit=5))) == 3
    facts, distance = page[0].facts, page[0].distance
    assert [f.statement[0] for f in facts] == ["T", "T", "T", "C", "C"]
    # the members of hop 2's facts, read with the page: a C one hop away, a D two
    assert sorted(distance[m.entity_id] for f in facts[3:] for m in f.members) == [1, 1, 2, 2]


@pytest.mark.both_databases
def test_a_frontier_is_one_merged_read_on_sqlite_and_bounded_reads_on_postgresql(
    plain: Store,
) -> None:
    """SQLite gets one ordered ``UNION ALL`` under one LIMIT, which its plan merges (no
    sort of every row read); PostgreSQL, whose planner would hash and sort that, one
    bounded read per entity."""
    for i in range(4):
        link(plain, "S", f"A{i}")
        link(plain, f"A{i}", f"B{i}")
    sent = statements_during(lambda: plain.neighborhood("S", 2))
    unions = [s for s in sent if "UNION ALL" in s]
    assert unions  # hop 1 has one entity; hop 2's frontier of four is a union
    engine = plain._scope.engine  # the test looks at the plan SQLite makes of it
    if engine.dialect.name == "sqlite":
        assert all(s.count("LIMIT") == 1 for s in unions)
        statement = graph._around_statement(4, False, False, True)
        params = {"namespace": "user:alice", "keep": 5}
        params |= {f"entity_{i}": plain.entity(f"A{i}").id for i in range(4)}
        with engine.connect() as connection:
            sql = str(
                statement.params(**params).compile(
                    connection, compile_kwargs={"literal_binds": True}
                )
            )
            plan = [row[3] for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + sql)]
        assert any("MERGE (UNION ALL)" in step for step in plan), plan
        assert not any("TEMP B-TREE" in step for step in plan), plan
    else:
        assert all(s.count("LIMIT") == 4 + 1 for s in unions)  # one a read, one in all


@pytest.mark.both_databases
def test_a_last_hop_fact_retracted_before_the_next_batch_neither_counts_nor_cuts_it(
    opener: Opener,
) -> None:
    """The last hop's members are read only before a further batch: a fact of the
    batch before, retracted in between, leaves the walk there, so the cut at
    ``max_facts`` keeps the next one instead."""
    first = opener(hook=memstore.Ungated(), index=False)
    other = opener(hook=memstore.Ungated(), index=False)  # another process, in effect
    newest_first = [link(first, "S", f"A{i}") for i in range(10)][::-1]
    page = first.neighborhood("S", 1, limit=2, max_facts=4)
    assert [f.id for f in page.facts] == [f.id for f in newest_first[:2]]
    retracted: list[str] = []

    def retract_once(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        # the members' read of the first batch of the next page's walk: the two of the
        # first page and the one after them
        if not retracted and "fact_members.role" in statement:
            retracted.append(newest_first[2].id)
            other.retract(newest_first[2].id, "no longer true")

    event.listen(Engine, "before_cursor_execute", retract_once)
    try:
        rest = first.neighborhood("S", 1, limit=2, max_facts=4, cursor=page.next_cursor)
    finally:
        event.remove(Engine, "before_cursor_execute", retract_once)
    assert retracted == [newest_first[2].id]
    assert [f.id for f in rest.facts] == [newest_first[3].id, newest_first[4].id]
    assert rest.complete is False and rest.next_cursor is None
