"""Listing memories (issue 27, goal 6; mem0's ``get_all``): ``Store.list_facts`` pages
through a namespace's facts by (recorded_at, id) with opaque cursors, filtered like
search, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from samples import works_at

import memstore
from memstore import AsyncStore, InvalidInput, NotFound, Store
from memstore.schemas import FactPage


def read_all(store: Store, **filters: Any) -> list[str]:
    """Every fact id the listing gives, page by page (5 a page)."""
    found: list[str] = []
    page = store.list_facts(limit=5, **filters)
    while True:
        found += [f.id for f in page.items]
        if page.next_cursor is None:
            return found
        page = store.list_facts(limit=5, cursor=page.next_cursor, **filters)


def in_sql_order(url: str, ids: list[str]) -> list[str]:
    """``ids`` in the listing's order, as SQL sorts them: (recorded_at, id)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT id, recorded_at FROM facts ORDER BY recorded_at, id")
            ).all()
    finally:
        engine.dispose()
    wanted = set(ids)
    return [fact_id for fact_id, _ in rows if fact_id in wanted]


@pytest.mark.both_databases
def test_pages_give_every_fact_once_while_facts_are_added(store: Store) -> None:
    first = store.add_facts([works_at(f"P{i}", f"Co {i}") for i in range(12)])
    tied = [f.id for f in first[3:8]]  # one recording time: the id decides their order
    engine = sa.create_engine(store.url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE facts SET recorded_at = :at WHERE id IN :ids").bindparams(
                    sa.bindparam("ids", expanding=True)
                ),
                {"at": first[3].recorded_at.replace(tzinfo=None), "ids": tied},
            )
    finally:
        engine.dispose()
    seen: list[str] = []
    page = store.list_facts(limit=5)
    seen += [f.id for f in page.items]
    assert page.next_cursor is not None
    page = store.list_facts(limit=5, cursor=page.next_cursor)
    seen += [f.id for f in page.items]
    later = store.add_facts([works_at(f"Q{i}", f"Firm {i}") for i in range(6)])
    order = in_sql_order(store.url, [f.id for f in [*first, *later]])
    erased = page.items[-1].id
    store.erase(erased, "gone between two pages")  # the cursor's own fact
    while page.next_cursor is not None:
        page = store.list_facts(limit=5, cursor=page.next_cursor)
        seen += [f.id for f in page.items]
    assert len(seen) == len(set(seen)) == 18
    assert seen == order
    assert read_all(store) == [i for i in order if i != erased]


def test_a_full_last_page_has_no_next_cursor(store: Store) -> None:
    assert store.list_facts() == FactPage(items=[], next_cursor=None)
    stored = store.add_facts([works_at(f"P{i}", f"Co {i}") for i in range(4)])
    page = store.list_facts(limit=4)
    assert [f.id for f in page.items] == [f.id for f in stored] and page.next_cursor is None
    page = store.list_facts(limit=3)
    assert len(page.items) == 3 and page.next_cursor is not None
    rest = store.list_facts(limit=3, cursor=page.next_cursor)
    assert [f.id for f in rest.items] == [stored[3].id] and rest.next_cursor is None


@pytest.mark.both_databases
def test_filters_select_what_search_would(store: Store) -> None:
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    acme = store.add_fact(works_at(metadata={"team": "red"}, valid_from=t0))
    bob = store.add_fact(works_at("Bob", "Acme", metadata={"team": "blue"}))
    tea = store.add_fact(
        statement="Alice likes tea.",
        members=[("Alice", "person", "fan"), ("tea", "drink", "liked")],
        relation="likes",
        evidence=["Alice: I like tea."],
    )
    moved = store.supersede(
        acme.id, works_at(company="Globex", valid_from=t0 + timedelta(days=100))
    )
    gone = store.add_fact(works_at("Cy", "Initech"))
    store.retract(gone.id, "a test")

    def listed(**filters: Any) -> list[str]:
        return read_all(store, **filters)

    assert listed() == [bob.id, tea.id, moved.id]
    assert listed(entity="Alice") == [tea.id, moved.id]
    assert listed(entity=["Alice", "tea"]) == [tea.id]
    assert listed(entity="acme") == [bob.id]  # names match as entities do
    assert listed(relation="likes") == [tea.id]
    assert listed(metadata={"team": "red"}) == [moved.id]  # the correction kept it
    assert listed(statuses=["superseded"]) == [acme.id]
    assert listed(statuses="retracted") == [gone.id]
    assert listed(as_of=t0 + timedelta(days=10), entity="Alice", relation="works_at") == [acme.id]
    assert listed(recorded_after=tea.recorded_at) == [tea.id, moved.id]
    assert listed(recorded_before=tea.recorded_at) == [bob.id]
    with pytest.raises(NotFound, match="nobody"):
        store.list_facts(entity="nobody")


@pytest.mark.parametrize(
    ("arguments", "field", "why"),
    [
        ({"cursor": "not a cursor!"}, "cursor", "not a cursor this store gave out"),
        ({"cursor": "AAAA"}, "cursor", "not a cursor this store gave out"),
        ({"cursor": ""}, "cursor", "at least 1 character"),
        ({"cursor": "A" * 513}, "cursor", "at most 512 characters"),
        ({"cursor": 7}, "cursor", "valid string"),
        ({"limit": 0}, "limit", "greater than or equal to 1"),
        ({"limit": 1001}, "limit", "less than or equal to 1000"),
        ({"limit": True}, "limit", "valid integer"),
        ({"limit": "5"}, "limit", "valid integer"),
        ({"statuses": ["forgotten"]}, "statuses", "'forgotten' is not one of"),
        ({"entity": ""}, "entity.0", "must not be empty"),
        ({"metadata": {"a b": 1}}, "metadata", "key 'a b'"),
        ({"recorded_after": datetime(2026, 1, 2), "recorded_before": datetime(2026, 1, 1)},
         "recorded_before", "must be after recorded_after"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_field(
    store: Store, arguments: dict[str, Any], field: str, why: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        store.list_facts(**arguments)
    assert err.value.field == field and why in err.value.reason


def test_a_cursor_is_refused_when_edited_or_used_for_another_listing(
    store: Store, tmp_path: Path
) -> None:
    store.add_facts([works_at(f"P{i}", f"Co {i}") for i in range(3)])
    cursor = store.list_facts(limit=1).next_cursor
    assert cursor is not None
    middle = len(cursor) // 2
    edited = cursor[:middle] + ("B" if cursor[middle] != "B" else "C") + cursor[middle + 1 :]
    for bad in (edited, cursor[:-6], cursor + "AAAA"):
        with pytest.raises(InvalidInput, match="cursor: is not a cursor this store gave out"):
            store.list_facts(limit=1, cursor=bad)
    with pytest.raises(InvalidInput, match="cursor: belongs to another listing"):
        store.list_facts(limit=1, cursor=cursor, relation="works_at")
    with (
        memstore.open(tmp_path / "memdata", "user:bob", hook=memstore.Ungated()) as bob,
        pytest.raises(InvalidInput, match="cursor: belongs to another listing"),
    ):
        bob.list_facts(limit=1, cursor=cursor)
    # Page size and time bounds are no part of the listing (the CLI's "7d" moves on).
    assert len(store.list_facts(limit=2, cursor=cursor).items) == 2
    later = store.list_facts(limit=2, cursor=cursor, recorded_after=datetime(2020, 1, 1))
    assert len(later.items) == 2


def test_the_async_store_lists_too(tmp_path: Path) -> None:
    async def main() -> list[str]:
        async with await AsyncStore.open(
            tmp_path / "mem", hook=memstore.Ungated(), index=False
        ) as store:
            await store.add_fact(works_at(metadata={"k": "v"}))
            page = await store.list_facts(metadata={"k": "v"})
            return [f.statement for f in page.items]

    assert anyio.run(main) == ["Alice works at Acme."]
