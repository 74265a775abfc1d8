"""Search, dedup and the search index's outbox, on real LanceDB tables and the real
packaged MiniLM. The gate is off (``Ungated``): these tests are about recall and
consistency, not about verifier quality."""

from __future__ import annotations

import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pytest
import sqlalchemy as sa
from db_rows import rows as query_rows
from distractors import distractors
from lancedb.index import BTree
from samples import allergy, works_at
from workers import HashedWords

import memstore
from gate import REFUSE_UNGROUNDED
from gate.backends.embedded import shared_encoder
from memstore import InvalidInput, MemstoreError, Store
from memstore.index.embeddings import MiniLM
from memstore.index.lance import SCALAR_INDEXES, SearchIndex
from memstore.index.rows import CHUNKS, FACTS, ChunkDoc, Filter, Ranking, reciprocal_rank_fusion
from memstore.read.search import SHARED, Asked, asked_of
from memstore.write.duplicates import CANDIDATES, near_duplicates

NS = "user:alice"
PEANUTS = allergy("peanuts")
QUESTION = "what is the user allergic to?"


def open_store(data_dir: Path, index: Path, namespace: str = NS, **options: Any) -> Store:
    return memstore.open(data_dir, namespace, hook=memstore.Ungated(), index=index, **options)


@pytest.fixture
def indexed_store(data_dir: Path, tmp_path: Path) -> Iterator[Store]:
    """A store with a search index in ``tmp_path/index`` (SQLite or PostgreSQL)."""
    with open_store(data_dir, tmp_path / "index") as store:
        yield store


def index_ids(index: Path, table: str = FACTS) -> list[str]:
    """Every row id in an index table, read with LanceDB directly."""
    rows = lancedb.connect(index).open_table(table).to_arrow().column("id").to_pylist()
    return [str(r) for r in rows]


def sql_count(url: str, table: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())
    finally:
        engine.dispose()


# -- ten thousand facts -------------------------------------------------------


@pytest.fixture(scope="module")
def haystack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, str]]:
    """10,000 facts of one user (9,999 distractors and the peanut allergy) and a few
    of another user in the same index; returns the store and the peanut fact's id."""
    data_dir = tmp_path_factory.mktemp("haystack")
    items = list(distractors(9_999))
    items.insert(4_321, PEANUTS)
    with open_store(data_dir, data_dir / "index", near_duplicate=None) as store:
        for start in range(0, len(items), 1_000):
            store.add_facts(items[start : start + 1_000])
        with open_store(data_dir, data_dir / "index", "user:bob") as bob:
            bob.add_facts([allergy("shellfish"), works_at("Bob", "Globex")])
        [peanut] = store.facts_about("peanuts")
        yield store, peanut.id


@pytest.mark.slow
def test_the_peanut_allergy_comes_first_among_ten_thousand_facts(
    haystack: tuple[Store, str],
) -> None:
    store, peanut = haystack
    hits = store.search(QUESTION)
    assert hits[0].fact.id == peanut
    assert hits[0].vector_rank is not None and hits[0].text_rank is not None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) == 10


def test_a_paraphrase_with_no_shared_keyword_finds_it_by_meaning(
    haystack: tuple[Store, str],
) -> None:
    store, peanut = haystack
    hits = store.search("Which nuts must the user never eat?", 3, mode="vector")
    assert hits[0].fact.id == peanut
    assert hits[0].text_rank is None and hits[0].similarity is not None


def test_a_keyword_finds_it_by_full_text(haystack: tuple[Store, str]) -> None:
    store, peanut = haystack
    hits = store.search("peanuts", 3, mode="text")
    assert [h.fact.id for h in hits] == [peanut]
    assert hits[0].vector_rank is None and hits[0].text_rank == 1


def test_searches_from_many_threads_at_once_each_get_their_own_answer(
    haystack: tuple[Store, str],
) -> None:
    """Both sides of every search run on LanceDB's one event loop: searches from eight
    threads at once, for different facts, each find their own fact first, with the
    scores they get alone."""
    store, peanut = haystack
    expected = {q: (peanut, m) for q, m in [(QUESTION, "hybrid"), ("peanuts", "text")]}
    for fact in store.list_facts(limit=6).items:  # a statement finds itself by meaning
        expected[fact.statement] = (fact.id, "vector")

    def top(query: str) -> tuple[str, float, float | None]:
        best = store.search(query, 5, mode=expected[query][1])[0]
        return best.fact.id, best.score, best.similarity

    alone = {query: top(query) for query in expected}
    assert {query: found[0] for query, found in alone.items()} == {
        query: fact_id for query, (fact_id, _mode) in expected.items()
    }
    asked = [query for _ in range(4) for query in expected]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(top, asked))
    assert together == [alone[query] for query in asked]


def test_search_never_crosses_namespaces(haystack: tuple[Store, str]) -> None:
    store, _ = haystack
    for hit in store.search("shellfish allergy Globex", 50):
        assert hit.fact.namespace == NS
    with open_store(store.data_dir, store.data_dir / "index", "user:bob") as bob:  # type: ignore[operator]
        hits = bob.search(QUESTION)
        assert [h.fact.statement for h in hits] == [
            "The user is allergic to shellfish.",
            "Bob works at Globex.",
        ]


def test_filters_by_relation_and_entity(haystack: tuple[Store, str]) -> None:
    store, peanut = haystack
    hits = store.search("allergy", 20, relation="allergic_to")
    assert hits and all(h.fact.relation == "allergic_to" for h in hits)
    hits = store.search("food", 5, entity="user")
    assert hits and all(any(m.name == "user" for m in h.fact.members) for h in hits)
    assert store.search("food", 5, entity=["user", "peanuts"])[0].fact.id == peanut


# -- filters, statuses and expansion on a small store ---------------------------


@pytest.mark.both_databases
def test_statuses_filter_and_sql_has_the_last_word(indexed_store: Store) -> None:
    peanut = indexed_store.add_fact(PEANUTS)
    other = indexed_store.add_fact(allergy("cats"))
    indexed_store.retract(peanut.id, "the user corrected it")
    assert peanut.id not in [h.fact.id for h in indexed_store.search(QUESTION)]
    [hit] = indexed_store.search(QUESTION, statuses=["retracted"])
    assert hit.fact.id == peanut.id and hit.fact.status == "retracted"
    both = indexed_store.search(QUESTION, statuses=["retracted", "unverified"])
    assert {h.fact.id for h in both} == {peanut.id, other.id}


@pytest.mark.both_databases
def test_world_time_and_recorded_time_filters(indexed_store: Store) -> None:
    old = indexed_store.add_fact(
        works_at("Alice", "Acme", valid_from=datetime(2020, 1, 1), valid_to=datetime(2023, 1, 1))
    )
    new = indexed_store.add_fact(works_at("Alice", "Globex", valid_from=datetime(2023, 1, 1)))
    assert [
        h.fact.id for h in indexed_store.search("where does Alice work", as_of=datetime(2021, 6, 1))
    ] == [old.id]
    now = indexed_store.search("where does Alice work", as_of=datetime(2024, 6, 1))
    assert [h.fact.id for h in now] == [new.id]
    after = indexed_store.search("Alice works", recorded_after=new.recorded_at)
    assert [h.fact.id for h in after] == [new.id]
    before = indexed_store.search("Alice works", recorded_before=new.recorded_at)
    assert [h.fact.id for h in before] == [old.id]


@pytest.mark.both_databases
def test_expansion_adds_facts_one_hop_away_through_shared_entities(indexed_store: Store) -> None:
    peanut = indexed_store.add_fact(PEANUTS)
    snack = indexed_store.add_fact(
        statement="Peanuts are sold at the corner shop.",
        members=[("peanuts", "food", "product"), ("corner shop", "place", "seller")],
        evidence=["The corner shop sells peanuts."],
    )
    far = indexed_store.add_fact(
        statement="The corner shop opens at nine.",
        members=[("corner shop", "place", "business")],
        evidence=["Opening hours: nine."],
    )
    hits = indexed_store.search("allergic reaction", 1, mode="vector", expand=True)
    assert [h.fact.id for h in hits] == [peanut.id, snack.id]
    assert hits[1].via == peanut.id and hits[1].score < hits[0].score
    assert far.id not in [h.fact.id for h in hits]  # two hops away


def test_pages_by_offset_continue_one_ranking(indexed_store: Store) -> None:
    """By meaning alone (distinct statements: no ties), pages by ``offset`` are the
    slices of one long page. (Full-text ties fall either way between two windows.)"""
    foods = "peanuts sesame soy wheat mustard celery lupin milk eggs fish squid oats".split()
    indexed_store.add_facts([allergy(food) for food in foods])
    whole = [h.fact.id for h in indexed_store.search(QUESTION, 12, mode="vector")]
    pages = [indexed_store.search(QUESTION, 5, mode="vector", offset=n) for n in (0, 5, 10)]
    assert [len(p) for p in pages] == [5, 5, 2]
    assert len(set(whole)) == 12 and [h.fact.id for p in pages for h in p] == whole
    assert indexed_store.search(QUESTION, 5, offset=995) == []


def test_bad_search_input_names_the_field(indexed_store: Store) -> None:
    for kwargs, field in [
        ({"query": "  "}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": "3"}, "k"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "offset": -1}, "offset"),
        ({"query": "x", "k": 10, "offset": 991}, "offset"),
        ({"query": "x", "statuses": ["gone"]}, "statuses"),
        (
            {
                "query": "x",
                "recorded_after": datetime(2025, 1, 1),
                "recorded_before": datetime(2024, 1, 1),
            },
            "recorded_before",
        ),
    ]:
        with pytest.raises(InvalidInput) as err:
            indexed_store.search(**kwargs)
        assert err.value.field == field
    with pytest.raises(memstore.NotFound):
        indexed_store.search("x", entity="nobody we know")


def test_a_store_without_an_index_says_how_to_get_one(data_dir: Path) -> None:
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False) as store:
        store.add_fact(PEANUTS)  # writes work without an index
        with pytest.raises(MemstoreError, match="index="):
            store.search(QUESTION)


# -- evidence ---------------------------------------------------------------------


@pytest.mark.both_databases
def test_evidence_search_finds_the_chunk_and_skips_replaced_versions(
    indexed_store: Store, tmp_path: Path
) -> None:
    notes = " ".join(f"Note {i}: the weather was mild and the meeting ran long." for i in range(40))
    long_text = notes + " The user mentioned being allergic to peanuts since childhood. " + notes
    uri = (tmp_path / "chat.txt").as_uri()
    first = indexed_store.add_fact(PEANUTS | {"evidence": [{"text": long_text, "source": uri}]})
    [hit] = indexed_store.search_evidence("peanut allergy since childhood", 1)
    assert hit.evidence_id == first.evidence_ids[0] and hit.current and hit.version == 1
    assert "allergic to peanuts since childhood" in hit.text
    assert len(hit.text) < len(long_text) // 4  # a chunk, not the whole document
    assert long_text[hit.start : hit.end] == hit.text

    # The source's next version replaces the first one.
    second = indexed_store.add_fact(
        allergy("cashews")
        | {"evidence": [{"text": "The user is allergic to cashews.", "source": uri}]}
    )
    hits = indexed_store.search_evidence("peanut allergy since childhood", 5)
    assert first.evidence_ids[0] not in [h.evidence_id for h in hits]
    assert hits[0].evidence_id == second.evidence_ids[0]
    old = indexed_store.search_evidence("peanut allergy since childhood", 1, current_only=False)
    assert old[0].evidence_id == first.evidence_ids[0] and not old[0].current
    assert indexed_store.search_evidence("peanuts", 5, source="inline") == []


# -- dedup --------------------------------------------------------------------------


@pytest.mark.both_databases
def test_an_exact_duplicate_returns_the_live_fact(indexed_store: Store) -> None:
    first = indexed_store.add_fact(PEANUTS)
    again = indexed_store.add_fact(
        allergy("peanuts", statement="  the user is ALLERGIC to peanuts ", evidence=["other"])
    )
    assert again.id == first.id and again.deduplicated and not first.deduplicated
    assert sql_count(indexed_store.url, "facts") == 1
    # Other members: a different fact, even with the same words.
    other = indexed_store.add_fact(
        PEANUTS | {"members": [("user", "person", "patient"), ("peanut butter", "food", "x")]}
    )
    assert other.id != first.id and not other.deduplicated
    # A retracted fact is not live: the same fact can be remembered again.
    indexed_store.retract(first.id, "wrong")
    back = indexed_store.add_fact(PEANUTS)
    assert back.id != first.id and not back.deduplicated


@pytest.mark.both_databases
def test_duplicates_inside_one_batch_are_stored_once(indexed_store: Store) -> None:
    results = indexed_store.add_facts([PEANUTS, PEANUTS, allergy("cats")])
    assert results[0].id == results[1].id and results[1].deduplicated  # type: ignore[union-attr]
    assert sql_count(indexed_store.url, "facts") == 2


@pytest.mark.both_databases
def test_a_near_duplicate_is_reported_never_merged(indexed_store: Store) -> None:
    first = indexed_store.add_fact(PEANUTS)
    close = indexed_store.add_fact(PEANUTS | {"statement": "The user has a peanut allergy."})
    assert close.id != first.id and not close.deduplicated
    [near] = close.near_duplicates
    assert near.fact_id == first.id and near.similarity >= indexed_store.near_duplicate  # type: ignore[operator]
    # Same words, other members: not a duplicate of anything.
    bob = indexed_store.add_fact(
        PEANUTS
        | {
            "statement": "Bob has a peanut allergy.",
            "members": [("Bob", "person", "patient"), ("peanuts", "food", "allergen")],
        }
    )
    assert bob.near_duplicates == []
    assert sql_count(indexed_store.url, "facts") == 3
    # In one batch, the later fact reports the earlier one.
    batch = indexed_store.add_facts(
        [
            works_at("Carol", "Initech"),
            works_at("Carol", "Initech", statement="Carol is employed by Initech."),
        ]
    )
    assert [d.fact_id for d in batch[1].near_duplicates] == [batch[0].id]  # type: ignore[union-attr]


@pytest.mark.both_databases
def test_each_fact_of_a_batch_is_told_its_own_near_duplicates(indexed_store: Store) -> None:
    peanut = indexed_store.add_fact(PEANUTS)
    carol = indexed_store.add_fact(works_at("Carol", "Initech"))
    batch = indexed_store.add_facts(
        [
            works_at("Dave", "Initech", statement="Dave is employed by Initech."),
            PEANUTS | {"statement": "The user has a peanut allergy."},
            works_at("Carol", "Initech", statement="Carol is employed by Initech."),
            works_at("Dave", "Initech"),  # close to the first of the batch
        ]
    )
    found = [[d.fact_id for d in f.near_duplicates] for f in batch]  # type: ignore[union-attr]
    assert found == [[], [peanut.id], [carol.id], [batch[0].id]]


@pytest.mark.both_databases
def test_near_duplicates_are_the_same_found_through_sql_or_through_the_index(
    indexed_store: Store,
) -> None:
    """A fact with an entity in few facts gets its candidates from SQL, one whose
    entities are each in many asks the index (``candidates=0``: every fact does). Both
    report the live fact with the same members, not one holding another member too, a
    retracted one, or the fact itself."""
    first = indexed_store.add_fact(works_at("Carol", "Initech"))
    employed = "Carol is employed by Initech."
    wider = indexed_store.add_fact(
        works_at("Carol", "Initech", statement=employed)
        | {"members": [*works_at("Carol", "Initech")["members"], ("Dave", "person", "peer")]}
    )
    gone = indexed_store.add_fact(
        works_at("Carol", "Initech", statement="Carol works for Initech.")
    )
    indexed_store.retract(gone.id, "wrong")
    probe = indexed_store.add_fact(works_at("Carol", "Initech", statement=employed))
    assert [d.fact_id for d in probe.near_duplicates] == [first.id]
    vectors = indexed_store._index.embed([probe.statement])
    threshold = indexed_store.near_duplicate
    assert threshold is not None
    for candidates in (CANDIDATES, 0):
        [found] = near_duplicates(
            indexed_store._scope, indexed_store._index, threshold, [probe], vectors, candidates
        )
        assert [d.fact_id for d in found] == [first.id], candidates
        assert found[0].statement == first.statement
    assert wider.id not in {d.fact_id for d in probe.near_duplicates}


def test_near_duplicate_reports_can_be_turned_off(data_dir: Path, tmp_path: Path) -> None:
    with open_store(data_dir, tmp_path / "index", near_duplicate=None) as store:
        store.add_fact(PEANUTS)
        assert (
            store.add_fact(
                PEANUTS | {"statement": "The user has a peanut allergy."}
            ).near_duplicates
            == []
        )
    with pytest.raises(InvalidInput) as err:
        open_store(data_dir, tmp_path / "index", near_duplicate=1.5)
    assert err.value.field == "near_duplicate"


# -- a pluggable embedder ---------------------------------------------------------------


def test_another_embedder_asks_for_a_rebuild_then_serves(data_dir: Path, tmp_path: Path) -> None:
    with open_store(data_dir, tmp_path / "index") as store:
        peanut = store.add_fact(PEANUTS)
        store.add_fact(works_at())
    with open_store(data_dir, tmp_path / "index", embedder=HashedWords()) as store:
        with pytest.raises(MemstoreError, match="reindex"):
            store.search(QUESTION)
        cats = store.add_fact(allergy("cats"))  # writes go on; the index catches up on rebuild
        rebuilt = store.reindex()
        assert (rebuilt.facts, rebuilt.chunks) == (3, 2)  # cats cites the peanut evidence
        assert store.search("peanuts allergic", 1, mode="vector")[0].fact.id == peanut.id
        assert store.search("cats", 1, mode="vector")[0].fact.id == cats.id
        assert store.index_backlog() == 0


def test_the_int8_minilm_is_another_embedder_and_finds_what_float32_finds(
    data_dir: Path, tmp_path: Path
) -> None:
    """``MiniLM("int8")``, the quantized graph: its own name in the index (vectors at
    cosine 0.99 of float32's are not mixed with them), the same hits once rebuilt."""
    with open_store(data_dir, tmp_path / "index") as store:
        peanut = store.add_fact(PEANUTS)
        store.add_fact(works_at())
        [float32] = store.search(QUESTION, 1, mode="vector")
    assert (MiniLM().name, MiniLM("int8").name) == ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8")
    with open_store(data_dir, tmp_path / "index", embedder=MiniLM("int8")) as store:
        with pytest.raises(MemstoreError) as err:
            store.search(QUESTION)
        assert "built with all-MiniLM-L6-v2 (384 dimensions), not all-MiniLM-L6-v2-int8" in str(
            err.value
        )
        store.reindex()
        [int8] = store.search(QUESTION, 1, mode="vector")
    assert int8.fact.id == float32.fact.id == peanut.id
    assert int8.relevance == pytest.approx(float32.relevance, abs=0.05)
    assert int8.relevance != float32.relevance  # quantized, not the same vectors
    with pytest.raises(ValueError, match="precision must be int8 or float32, not 'int4'"):
        MiniLM("int4")


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
def test_the_advice_to_rebuild_names_the_database_without_its_password(
    data_dir: Path, tmp_path: Path
) -> None:
    url = str(data_dir).replace("postgres@", "postgres:s3cret-pw@")  # trust auth ignores it
    assert "s3cret-pw" in url
    with open_store(url, tmp_path / "index") as store:
        store.add_fact(PEANUTS)
    with (
        open_store(url, tmp_path / "index", embedder=HashedWords()) as store,
        pytest.raises(MemstoreError, match="reindex") as err,
    ):
        store.search(QUESTION)
    assert "s3cret-pw" not in str(err.value) and "postgres:***@" in str(err.value)


# -- the outbox: crashes between SQL and LanceDB ------------------------------------------

CRASH = textwrap.dedent(
    """
    import os, signal, sys
    import memstore
    from memstore.index.lance import SearchIndex

    data_dir, index, when = sys.argv[1], sys.argv[2], sys.argv[3]
    real = SearchIndex.write_chunks

    def crash(self, docs):
        if when == "after_index_write":
            real(self, docs)  # facts and chunks are in LanceDB; the outbox is not cleared
        os.kill(os.getpid(), signal.SIGKILL)

    store = memstore.open(data_dir, "user:alice", hook=memstore.Ungated(), index=index)
    store.add_fact(
        statement="The user is allergic to peanuts.",
        members=[("user", "person", "patient"), ("peanuts", "food", "allergen")],
        evidence=["User: just so you know, I'm allergic to peanuts."],
    )
    if when == "before_index_write":
        SearchIndex.write_facts = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
    else:
        SearchIndex.write_chunks = crash
    store.add_facts([
        {
            "statement": f"Alice met friend number {i}.",
            "members": ["Alice", f"friend {i}"],
            "evidence": [f"Diary: met friend {i} today."],
        }
        for i in range(20)
    ])
    print("not killed")
    """
)


@pytest.mark.both_databases
@pytest.mark.parametrize("when", ["before_index_write", "after_index_write"])
def test_a_writer_killed_between_sql_and_the_index_is_repaired_at_open(
    data_dir: Path, tmp_path: Path, when: str
) -> None:
    index = tmp_path / "index"
    done = subprocess.run(
        [sys.executable, "-c", CRASH, str(data_dir), str(index), when],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    with open_store(data_dir, index) as store:
        url = store.url
        assert sql_count(url, "index_outbox") == 0  # replayed at open
        facts = index_ids(index)
        assert len(facts) == len(set(facts)) == sql_count(url, "facts") == 21  # none lost, no twins
        chunks = index_ids(index, CHUNKS)
        assert len(chunks) == len(set(chunks)) == sql_count(url, "evidence") == 21
        hits = store.search("Alice met friend number 7", 1)
        assert hits[0].fact.statement == "Alice met friend number 7."
        assert store.search(QUESTION, 1)[0].fact.statement == "The user is allergic to peanuts."


@pytest.mark.both_databases
def test_outbox_ids_are_never_reused(data_dir: Path) -> None:
    """A syncer deletes what it applied by id: a reused id would delete a newer change."""
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False) as store:
        store.add_fact(PEANUTS)  # queued for the index, not applied
        engine = sa.create_engine(store.url)
        try:
            with engine.begin() as conn:  # read, then deleted as a syncer does once applied
                first = list(conn.execute(sa.text("SELECT id FROM index_outbox")).scalars())
                conn.execute(sa.text("DELETE FROM index_outbox"))
            store.add_fact(works_at())
            with engine.begin() as conn:
                later = list(conn.execute(sa.text("SELECT id FROM index_outbox")).scalars())
        finally:
            engine.dispose()
        assert min(later) > max(first)


def test_an_open_with_a_long_queue_says_it_is_replaying_it(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    index = tmp_path / "index"
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False) as store:
        store.add_facts([works_at(f"Person {i}") for i in range(4)])  # queued, not applied
    monkeypatch.setattr(memstore.store, "REPLAY_NOTICE_AT", 5)
    with caplog.at_level(logging.WARNING, logger="memstore"), open_store(data_dir, index) as store:
        assert store.index_backlog() == 0
        assert len(index_ids(index)) == 4
    assert "applying 8 queued search-index changes" in caplog.text  # 4 facts, 4 evidence rows


@pytest.mark.both_databases
def test_an_open_applies_only_its_own_namespaces_queue(data_dir: Path, tmp_path: Path) -> None:
    """Another namespace's backlog is never replayed by this namespace's open: the first
    request to a new namespace does not wait for a busy one's index writes."""
    index = tmp_path / "index"
    with memstore.open(data_dir, "busy", hook=memstore.Ungated(), index=False) as busy:
        busy.add_facts([works_at(f"Person {i}") for i in range(30)])  # queued, not applied
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), index=False) as own:
        own.add_fact(PEANUTS)
    with open_store(data_dir, index) as store:  # NS: its own 2 changes applied, not busy's 60
        assert store.index_backlog() == 0
        assert sql_count(store.url, "index_outbox") == 60
        assert store.search(QUESTION, 1)[0].fact.statement == "The user is allergic to peanuts."
    with open_store(data_dir, index, "busy") as busy:  # its own open catches it up
        assert busy.index_backlog() == 0
        assert sql_count(busy.url, "index_outbox") == 0
        assert len(index_ids(index)) == 31


@pytest.mark.both_databases
def test_an_open_applies_every_namespaces_queued_erasures(data_dir: Path, tmp_path: Path) -> None:
    """An erasure left queued purges the erased text at the next open of any namespace:
    it must not wait for its own namespace to be opened again."""
    index = tmp_path / "index"
    with open_store(data_dir, index, "busy") as busy:
        erased = busy.add_fact(PEANUTS)
        assert index_ids(index) == [erased.id]
    with memstore.open(data_dir, "busy", hook=memstore.Ungated(), index=False) as busy:
        busy.erase(erased.id, "asked to forget")  # queued for the index, not applied
        busy.add_fact(works_at("Zoe"))  # busy's own change: left to busy
    with open_store(data_dir, index) as store:
        assert index_ids(index) == []
        kinds = [kind for (kind,) in query_rows(store.url, "SELECT kind FROM index_outbox")]
        assert "erasure" not in kinds and len(kinds) == 4  # busy's other changes: busy's


# -- reindex and the approximate vector index -----------------------------------------------


def test_memstore_reindex_rebuilds_a_lost_index(data_dir: Path) -> None:
    with memstore.open(data_dir, NS, hook=memstore.Ungated()) as store:
        peanut = store.add_fact(PEANUTS)
        other = store.add_fact(works_at())
    index = data_dir / "index"
    for table in (FACTS, CHUNKS):
        lancedb.connect(index).drop_table(table)
    cli = Path(sys.executable).with_name("memstore")
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [str(cli), "--store", str(data_dir), "reindex"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "reindexing" in done.stderr  # the progress bar
    assert str(index) in done.stdout and "│ 2 " in done.stdout
    assert sorted(index_ids(index)) == sorted([peanut.id, other.id])
    found = subprocess.run(
        [str(cli), "search", QUESTION, "--store", str(data_dir), "-n", NS, "-k", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert found.returncode == 0 and "The user is allergic to peanuts." in found.stdout


def test_reindex_after_restoring_an_older_backup_drops_what_sql_lost(tmp_path: Path) -> None:
    data_dir = tmp_path / "memdata"
    with memstore.open(data_dir, NS, hook=memstore.Ungated()) as store:
        kept = store.add_fact(PEANUTS)
        source, backup = (
            sqlite3.connect(data_dir / "memstore.db"),
            sqlite3.connect(tmp_path / "b.db"),
        )
        with backup:
            source.backup(backup)
        source.close()
        backup.close()
        lost = store.add_fact(works_at())  # written after the backup
    assert not (data_dir / "memstore.db-wal").exists()  # closed cleanly: all in the file
    (tmp_path / "b.db").replace(data_dir / "memstore.db")
    index = data_dir / "index"
    assert sorted(index_ids(index)) == sorted([kept.id, lost.id])  # the index kept both
    with memstore.open(data_dir, NS, hook=memstore.Ungated()) as store:
        rebuilt = store.reindex()
        assert (rebuilt.facts, rebuilt.chunks) == (1, 1)
        assert index_ids(index) == [kept.id]
        assert len(index_ids(index, CHUNKS)) == 1
        assert [h.fact.id for h in store.search("Alice works at Acme", 5)] == [kept.id]


def test_filtered_search_stays_exact_once_the_vector_index_exists(
    data_dir: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    others = list(distractors(600))
    with open_store(data_dir, index, "user:bob", near_duplicate=None, vector_index_at=500) as bob:
        bob.add_facts([*others[:300], PEANUTS])
    with open_store(data_dir, index, near_duplicate=None, vector_index_at=500) as store:
        store.add_facts(others[300:])
        assert len(index_ids(index)) >= 500
        store.reindex()  # a rebuild ends with maintenance, which builds the vector index
        table = lancedb.connect(index).open_table(FACTS)
        assert any(ix.columns == ["vector"] for ix in table.list_indices())
        # The peanut fact is Bob's: Alice's search must not see it, with the index or not.
        hits = store.search(QUESTION, 50, mode="vector")
        assert all(h.fact.namespace == NS for h in hits)
        assert "peanuts" not in " ".join(h.fact.statement for h in store.search(QUESTION, 50))
        # The index picks the candidates; their scores are exact (the quantized ones are not).
        query = shared_encoder().encode([QUESTION])[QUESTION]
        stored = {
            row["id"]: np.asarray(row["vector"])
            for row in table.search().select(["id", "vector"]).limit(None).to_arrow().to_pylist()
        }
        for hit in hits:
            exact = float(query @ stored[hit.fact.id])
            assert hit.similarity == pytest.approx(exact, abs=1e-5)
            assert hit.relevance == pytest.approx(max(0.0, exact), abs=1e-5)
    with open_store(data_dir, index, "user:bob", near_duplicate=None, vector_index_at=500) as bob:
        assert bob.search(QUESTION, 1, mode="vector")[0].fact.statement == PEANUTS["statement"]


def test_evidence_of_a_rejection_stays_in_the_audit_log_not_in_search(indexed_store: Store) -> None:
    with pytest.raises(memstore.ErrFactNotGrounded) as refused:
        indexed_store.add_fact(
            allergy("peanuts", evidence=["The weather is nice."]),
            gate="embedded",
            policy=REFUSE_UNGROUNDED,
        )
    assert indexed_store.search_evidence("weather", 1) == []
    [shown] = indexed_store.get_rejection(refused.value.rejection.id).evidence
    assert shown.text == "The weather is nice."


@pytest.mark.parametrize(
    "query", ['"quoted', "a:b OR c", "(paren", "*", "AND NOT", "' OR 1=1 --", "\\", "🥜 nuts"]
)
def test_odd_queries_and_quoted_filters_are_taken_literally(
    indexed_store: Store, query: str
) -> None:
    fact = indexed_store.add_fact(PEANUTS | {"relation": "it's an allergy"})
    hits = indexed_store.search(query, 5, relation="it's an allergy")
    assert [h.fact.id for h in hits] == [fact.id]
    assert indexed_store.search(query, 5, relation="it''s an allergy") == []


def scalar_indexes(index: Path, table: str) -> dict[str, str]:
    """Per column of ``table`` with a scalar index (not text, not vector), its kind."""
    found = lancedb.connect(index).open_table(table).list_indices()
    kinds = {"BTree": "btree", "Bitmap": "bitmap", "LabelList": "label_list"}
    return {ix.columns[0]: kinds.get(ix.index_type, ix.index_type) for ix in found
            if ix.columns not in (["text"], ["vector"])}  # fmt: skip


def chunk(n: int) -> ChunkDoc:
    said = f"Note {n}: the meeting moved to room {n}."
    created = datetime(2026, 1, 1, tzinfo=UTC)
    return ChunkDoc(f"e{n}:0", NS, f"e{n}", "inline", 1, "current", 0, len(said), said, created)


@pytest.mark.parametrize("keep", [timedelta(0), timedelta(days=1)])
def test_maintenance_removes_the_versions_older_than_it_keeps(
    tmp_path: Path, keep: timedelta
) -> None:
    uri = str(tmp_path / "index")
    index = SearchIndex(uri, MiniLM(), keep_versions=keep)
    for n in range(5):
        index.write_chunks([chunk(n)])  # a commit (a version, a fragment) each
    written = len(lancedb.connect(uri).open_table(CHUNKS).list_versions())
    index.maintain()
    table = lancedb.connect(uri).open_table(CHUNKS)
    assert table.count_rows() == 5
    versions = len(table.list_versions())
    data_files = len(list((tmp_path / "index" / f"{CHUNKS}.lance" / "data").iterdir()))
    if keep:  # every version is younger than a day: all stay, the compaction's added
        assert versions > written
        assert data_files == 6  # the five written and the one they were compacted into
    else:  # at most the compaction's own version stays beside the last
        assert versions <= 2 < written
        assert data_files == 1


def test_maintenance_builds_the_vector_index_again_past_its_delta_limit(tmp_path: Path) -> None:
    index = SearchIndex(str(tmp_path / "index"), MiniLM(), vector_index_at=300, max_vector_deltas=2)
    index.write_chunks([chunk(n) for n in range(300)])
    table = lancedb.connect(tmp_path / "index", read_consistency_interval=timedelta(0)).open_table(
        CHUNKS
    )

    def deltas() -> int:
        [vector] = [ix for ix in table.list_indices() if ix.columns == ["vector"]]
        stats = table.index_stats(vector.name)
        assert stats is not None and stats.num_unindexed_rows == 0
        return stats.num_indices

    index.maintain()  # builds the vector index
    counts = [deltas()]
    for n in range(300, 303):  # new rows each time: a delta index each, up to the limit
        index.write_chunks([chunk(n)])
        index.maintain()
        counts.append(deltas())
    assert counts == [1, 2, 1, 2]  # a third delta: built again over every row
    query = index.embed(["Note 301: the meeting moved to room 301."])[0]
    [nearest] = index.by_vectors(CHUNKS, [(query, f"namespace = '{NS}'")], 1)
    assert nearest.ids == ["e301:0"]


def test_a_new_index_has_a_scalar_index_on_every_column_its_filters_read(
    data_dir: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    with open_store(data_dir, index) as store:
        store.add_fact(works_at())
    for table in (FACTS, CHUNKS):
        assert scalar_indexes(index, table) == SCALAR_INDEXES[table]
    # Every equality or membership filter of a table reads an indexed column (time
    # ranges are scanned).
    facts = Filter("ns", statuses=["active"], relation="works_at", entity_ids=["e1"],
                   exclude_ids=["f1"], metadata={"team": "core"})  # fmt: skip
    chunks = Filter("ns", statuses=["active"], sources=["chat"], exclude_ids=["c1"])
    for table, every in ((FACTS, facts), (CHUNKS, chunks)):
        where = every.sql(table)
        columns = re.findall(r"array_has\((\w+)", where)
        columns += re.findall(r"(\w+) (?:=|IN|NOT IN) ", where)
        assert len(columns) == where.count(" AND ") + 1  # one column per condition
        assert set(columns) <= set(SCALAR_INDEXES[table])


def test_an_index_made_before_its_scalar_indexes_gets_them_at_maintenance_not_on_open(
    data_dir: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    with open_store(data_dir, index) as store:
        fact = store.add_fact(works_at())
    table = lancedb.connect(index).open_table(FACTS)
    for column in ("id", "namespace", "status", "entity_ids"):  # as an older release made it
        table.drop_index(f"{column}_idx")
    table.create_index("namespace", config=BTree())  # an older release's kind
    before = table.version
    with open_store(data_dir, index) as store:
        reopened = lancedb.connect(index).open_table(FACTS)
        assert reopened.version == before  # a reader's open writes nothing
        assert [h.fact.id for h in store.search("Acme", 1, entity=["Acme"])] == [fact.id]
        store.reindex()  # ends with the index's maintenance
        assert scalar_indexes(index, FACTS) == SCALAR_INDEXES[FACTS]
        latest = lancedb.connect(index).open_table(FACTS).list_indices()
        on_namespace = [ix.index_type for ix in latest if ix.columns == ["namespace"]]
        assert on_namespace == ["Bitmap"]  # the B-tree was dropped, not kept beside
        # Filters read the indexed rows and the rows written since, which are scanned.
        later = store.add_fact(works_at("Bob"))
        peanuts = store.add_fact(allergy("peanuts"))
        for mode in ("hybrid", "vector", "text"):
            acme = store.search("works at Acme", 5, mode=mode, entity=["Acme"])
            assert sorted(h.fact.id for h in acme) == sorted([fact.id, later.id]), mode
            bob = store.search("works at Acme", 5, mode=mode, entity=["Bob", "Acme"])
            assert [h.fact.id for h in bob] == [later.id], mode
            allergic = store.search("allergic peanuts", 5, mode=mode, relation="allergic_to")
            assert [h.fact.id for h in allergic] == [peanuts.id], mode
        assert store.search("works at Acme", 5, statuses=["retracted"]) == []


def test_rows_a_side_scores_the_same_share_a_rank_in_the_fusion() -> None:
    # The full-text side lists a tie (b and c, scored alike) in an order of its own.
    text = Ranking(["a", "b", "c", "d"], [3.0, 2.0, 2.0, 1.0])
    turned = Ranking(["a", "c", "b", "d"], [3.0, 2.0, 2.0, 1.0])
    fused, fused_turned = reciprocal_rank_fusion([text]), reciprocal_rank_fusion([turned])
    assert fused == fused_turned
    assert fused["b"] == fused["c"] == 1 / 62 and fused["d"] == 1 / 64
    # Without scores, each row has its own rank.
    assert reciprocal_rank_fusion([Ranking(["a", "b"], [])]) == {"a": 1 / 61, "b": 1 / 62}


# -- a name many facts share ------------------------------------------------------

#: Short things Priya said, each a fact about her that says little else: embedded, each
#: is mostly her name, so by meaning each is nearer any question about her than the one
#: fact that answers it.
REACTIONS = [
    "Priya is thrilled.",
    "Priya says it was great.",
    "Priya agrees.",
    "Priya says he is.",
    "Priya has heard of that one.",
    "Priya says they're fine.",
    "Priya is so proud.",
    "Priya loved it.",
    "Priya can't wait.",
    "Priya is jealous.",
    "Priya says wow.",
    "Priya says same here.",
]


def said_by(person: str, statement: str, *others: str) -> dict[str, object]:
    return {
        "statement": statement,
        "members": [(person, "person", "speaker"), *((o, "thing", "object") for o in others)],
        "evidence": [f"{person}: {statement}"],
    }


def test_a_question_about_someone_finds_what_it_asks_not_what_says_least(
    indexed_store: Store,
) -> None:
    """Priya has more facts than a page of hits: the question is also read without her
    name, among her facts, so what it asks about ranks first."""
    indexed_store.add_facts([said_by("Priya", s) for s in REACTIONS])
    answer = indexed_store.add_fact(said_by("Priya", "Priya was promoted to head of radiology."))
    indexed_store.add_fact(said_by("Tom", "Tom was promoted to team lead."))
    for mode in ("hybrid", "vector"):
        hits = indexed_store.search("What new job did Priya get at the hospital?", 3, mode=mode)
        assert hits[0].fact.id == answer.id, mode


def test_a_question_about_two_people_asks_it_of_the_rarely_named_one_too(
    indexed_store: Store,
) -> None:
    """Tom is in one fact, Priya in many: what is asked of Priya is asked among Tom's
    facts too, so his answer is not outranked by hers."""
    indexed_store.add_facts([said_by("Priya", s) for s in REACTIONS])
    indexed_store.add_fact(said_by("Priya", "Priya baked a chocolate cake for the party."))
    tom = indexed_store.add_fact(said_by("Tom", "Tom loved the chocolate cake."))
    assert indexed_store.search("Did Tom like Priya's cake?", 3)[0].fact.id == tom.id


def test_only_names_many_facts_share_are_asked_without(indexed_store: Store) -> None:
    """``asked_of``: a name with fewer facts than ``SHARED`` stays in the query (it picks
    its facts out by itself); a shared one is asked without, the other names kept; a
    query left asking nothing is not asked."""
    indexed_store.add_facts([said_by("Priya", s) for s in REACTIONS[: SHARED - 1]])
    scope = indexed_store._scope
    assert asked_of(scope, "What job did Priya get?") is None
    indexed_store.add_fact(said_by("Priya", "Priya speaks Tamil.", "Tamil"))
    priya = indexed_store.entity("Priya").id
    asked = asked_of(scope, "What job did PRIYA'S brother get?")
    assert asked == Asked("What job did brother get?", ((priya, "What job did brother get?"),))
    asked = asked_of(scope, "Does Priya speak Tamil?")  # Tamil: one fact names it
    tamil = indexed_store.entity("Tamil").id
    assert asked == Asked("Does speak Tamil?", ((priya, "Does speak Tamil?"),), (tamil,))
    assert asked_of(scope, "Who is Priya?") is None  # nothing asked but who she is
    assert asked_of(scope, "What job did priya get?") is None  # a name has its capital
