"""Superseding closes world time (bi-temporal reads): ``as_of`` before a correction finds
the old fact, after it the new one; through Python and REST, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from db_rows import row_counts
from rest_bodies import ALICE
from rest_server import ALICE_KEY, KEYS, serving
from samples import works_at
from workers import HashedWords

import memstore
from hypergraph import holds_at
from memstore import FactStatus, InvalidInput, Store
from memstore.config import load_settings
from memstore.rest import create_app

pytestmark = pytest.mark.both_databases

QUESTION = "where does Alice work"
TICK = timedelta(microseconds=1)


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


@pytest.fixture
def hashed_store(data_dir: Path, tmp_path: Path) -> Iterator[Store]:
    """An ungated store with a search index (a small real embedder, for speed)."""
    with memstore.open(
        data_dir,
        "user:alice",
        hook=memstore.Ungated(),
        index=tmp_path / "index",
        embedder=HashedWords(),
    ) as store:
        yield store


def about(store: Store, when: datetime) -> list[str]:
    """Ids of Alice's facts valid at ``when``, by ``facts_about`` and by ``search``,
    which must agree."""
    by_entity = [f.id for f in store.facts_about("Alice", as_of=when)]
    by_search = sorted(h.fact.id for h in store.search(QUESTION, as_of=when))
    assert sorted(by_entity) == by_search
    return by_entity


def test_a_correction_closes_the_old_facts_world_time_where_it_starts(hashed_store: Store) -> None:
    old = hashed_store.add_fact(**works_at())
    new = hashed_store.supersede(old.id, **works_at(company="Globex"))
    old_now = hashed_store.get_fact(old.id)
    # No valid_from: the correction holds from the moment it was made.
    assert new.valid_from == old_now.valid_to == old_now.superseded_at == new.recorded_at
    assert old_now.valid_from is None
    start = new.valid_from
    assert start is not None
    assert about(hashed_store, start - TICK) == [old.id]
    assert about(hashed_store, start) == [new.id]
    assert about(hashed_store, start + timedelta(days=1)) == [new.id]
    # Reads without as_of, and explicit statuses, are as before.
    assert [f.id for f in hashed_store.facts_about("Alice")] == [new.id]
    assert [f.id for f in hashed_store.facts_about("Alice", statuses=["superseded"])] == [old.id]
    # A fact superseded before world time was closed (no valid_to) stays out of
    # default as_of reads rather than seeming to hold forever beside its correction.
    engine = sa.create_engine(hashed_store.url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE facts SET valid_to = NULL WHERE id = :id"), {"id": old.id})
    engine.dispose()
    hashed_store.reindex()
    assert about(hashed_store, start - TICK) == []


def test_a_correction_with_its_own_start(hashed_store: Store) -> None:
    old = hashed_store.add_fact(**works_at(valid_from=at(2020)))
    new = hashed_store.supersede(old.id, **works_at(company="Globex", valid_from=at(2023)))
    assert new.valid_from == hashed_store.get_fact(old.id).valid_to == at(2023)
    assert about(hashed_store, at(2019)) == []
    assert about(hashed_store, at(2021)) == [old.id]
    assert about(hashed_store, at(2023) - TICK) == [old.id]
    assert about(hashed_store, at(2023)) == [new.id]
    assert about(hashed_store, at(2030)) == [new.id]


def test_an_old_fact_that_ended_earlier_keeps_its_end(hashed_store: Store) -> None:
    old = hashed_store.add_fact(**works_at(valid_from=at(2020), valid_to=at(2022)))
    new = hashed_store.supersede(old.id, **works_at(company="Globex", valid_from=at(2023)))
    assert hashed_store.get_fact(old.id).valid_to == at(2022)
    assert about(hashed_store, at(2021)) == [old.id]
    assert about(hashed_store, at(2022)) == []
    assert about(hashed_store, at(2024)) == [new.id]


def test_a_correction_of_the_past_replaces_the_old_fact_over_all_its_world_time(
    hashed_store: Store,
) -> None:
    old = hashed_store.add_fact(**works_at(valid_from=at(2022)))
    new = hashed_store.supersede(old.id, **works_at(company="Globex", valid_from=at(2020)))
    old_now = hashed_store.get_fact(old.id)
    assert old_now.valid_from == old_now.valid_to == at(2022)  # an empty validity
    for year in (2021, 2022, 2023, 2030):
        assert about(hashed_store, at(year)) == [new.id]
    assert about(hashed_store, at(2019)) == []


def test_a_correction_that_ended_already_needs_a_start(hashed_store: Store) -> None:
    old = hashed_store.add_fact(**works_at())
    before = row_counts(hashed_store.url)
    with pytest.raises(InvalidInput, match="valid_from") as err:
        hashed_store.supersede(old.id, **works_at(company="Globex", valid_to=at(2020)))
    assert err.value.field == "valid_to"
    assert row_counts(hashed_store.url) == before
    assert hashed_store.get_fact(old.id).status == FactStatus.UNVERIFIED


def test_rest_search_as_of_sees_the_version_valid_then(data_dir: Path, tmp_path: Path) -> None:
    settings = load_settings(
        store={"url": str(data_dir), "index": str(tmp_path / "index")},
        server={"api_keys": KEYS},
        hallucination={"enabled": False},
    )
    app = create_app(settings)
    fact = works_at(evidence=["Alice: I have worked at Acme since March."])
    fact["members"] = [["Alice", "person", "employee"], ["Acme", "org", "employer"]]
    with serving(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        client.headers["Authorization"] = f"Bearer {ALICE_KEY}"
        old = client.post(f"{ALICE}/facts", json=fact)
        assert old.status_code == 201, old.text
        correction = {
            **fact,
            "statement": "Alice works at Globex.",
            "valid_from": "2023-01-01T00:00:00Z",
        }
        correction["members"] = [["Alice", "person", "employee"], ["Globex", "org", "employer"]]
        new = client.post(f"{ALICE}/facts/{old.json()['id']}/supersede", json=correction)
        assert new.status_code == 201, new.text

        def found(when: str) -> list[str]:
            got = client.get(f"{ALICE}/search", params={"q": QUESTION, "as_of": when})
            assert got.status_code == 200, got.text
            return [h["fact"]["id"] for h in got.json()]

        assert found("2022-06-01T00:00:00Z") == [old.json()["id"]]
        assert found("2023-06-01T00:00:00Z") == [new.json()["id"]]


# -- one rule: hypergraph.holds_at, and every read that mirrors it ------------------------


@pytest.mark.parametrize(
    ("valid_from", "valid_to", "as_of", "holds"),
    [
        (None, None, at(2020), True),
        (at(2020), None, at(2020), True),  # the start belongs to the validity
        (at(2020), None, at(2020) - TICK, False),
        (None, at(2022), at(2022) - TICK, True),
        (None, at(2022), at(2022), False),  # the end does not
        (at(2020), at(2022), at(2020), True),
        (at(2020), at(2022), at(2022), False),
        (at(2020), at(2020), at(2020), False),  # an empty validity holds nowhere
    ],
)
def test_holds_at_is_half_open(
    valid_from: datetime | None, valid_to: datetime | None, as_of: datetime, holds: bool
) -> None:
    assert holds_at(valid_from, valid_to, as_of) is holds


def test_every_read_answers_as_holds_at(hashed_store: Store) -> None:
    """SQL (``facts_about``), the search index (``search``) and the graph
    (``neighborhood``) agree with ``holds_at`` at each edge: at the start, at the end,
    a tick either side, with either end open."""
    spans: dict[str, tuple[datetime | None, datetime | None]] = {}
    for company, start, end in [
        ("Always", None, None),
        ("Since", at(2020), None),
        ("Until", None, at(2022)),
        ("Between", at(2020), at(2022)),
    ]:
        fact = hashed_store.add_fact(**works_at(company=company, valid_from=start, valid_to=end))
        spans[fact.id] = (start, end)
    for when in (at(2020) - TICK, at(2020), at(2020) + TICK, at(2022) - TICK, at(2022)):
        expected = sorted(i for i, (start, end) in spans.items() if holds_at(start, end, when))
        by_sql = sorted(f.id for f in hashed_store.facts_about("Alice", as_of=when))
        by_index = sorted(h.fact.id for h in hashed_store.search(QUESTION, as_of=when))
        by_graph = sorted(f.id for f in hashed_store.neighborhood("Alice", as_of=when).facts)
        assert by_sql == by_index == by_graph == expected, when
    assert len(hashed_store.facts_about("Alice", as_of=at(2020))) == 4
    assert len(hashed_store.facts_about("Alice", as_of=at(2022))) == 2
