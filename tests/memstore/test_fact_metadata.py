"""Metadata on facts (issue 27, goal 6): the caller's keys and values go in with every
write, come back with every read, carry over a correction that brings none, stay out
of the gate, leave nothing behind an erase, and filter reads by JSON equality in SQL
(SQLite and PostgreSQL) and in the search index."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from db_rows import files_holding, sql_holding
from samples import works_at

import memstore
from memstore import ErrFactNotGrounded, InvalidInput, Store
from memstore.metadata import MAX_METADATA_CHARS, MAX_METADATA_KEY_CHARS, MAX_METADATA_KEYS, token

EVERY_KIND = {"user": "alice", "turn": 3, "score": 0.25, "pinned": True, "team": None}


def ids(facts: Sequence[Any]) -> list[str]:
    return [f.id for f in facts]


@pytest.fixture
def indexed_store(data_dir: Path, tmp_path: Path) -> Iterator[Store]:
    """An ungated store with a search index (in ``tmp_path`` for PostgreSQL too)."""
    with memstore.open(
        data_dir, "user:alice", hook=memstore.Ungated(), index=tmp_path / "index"
    ) as opened:
        yield opened


# -- writes and reads ----------------------------------------------------------------


@pytest.mark.both_databases
def test_metadata_comes_back_from_every_read(indexed_store: Store) -> None:
    store = indexed_store
    fact = store.add_fact(works_at(metadata=EVERY_KIND))
    assert fact.metadata == EVERY_KIND
    assert list(fact.metadata) == sorted(EVERY_KIND)  # one key order on every backend
    assert store.get_fact(fact.id).metadata == EVERY_KIND
    assert store.facts_about("Alice")[0].metadata == EVERY_KIND
    [hit] = store.search("Where does Alice work?", 1)
    assert hit.fact.metadata == EVERY_KIND
    assert store.list_facts().items[0].metadata == EVERY_KIND
    assert isinstance(store.get_fact(fact.id).metadata["turn"], int)
    assert isinstance(store.get_fact(fact.id).metadata["pinned"], bool)
    plain = store.add_fact(works_at("Bob", "Initech"))
    assert plain.metadata == {} and store.get_fact(plain.id).metadata == {}


def test_every_write_that_creates_a_fact_takes_metadata(store: Store) -> None:
    stored = store.add_facts(
        [works_at("Bob", "Initech", metadata={"n": 1}), works_at("Cy", "Globex")]
    )
    assert [f.metadata for f in stored] == [{"n": 1}, {}]
    report = store.remember(
        "Dana works at Umbrella. Dana lives in Oslo.",
        ["Dana: I work at Umbrella and live in Oslo."],
        members=["Dana"],
        metadata={"session": "s-9"},
    )
    assert len(report.stored) == 2
    assert all(f.metadata == {"session": "s-9"} for f in report.stored)


@pytest.mark.both_databases
def test_a_correction_keeps_the_old_metadata_unless_it_brings_its_own(store: Store) -> None:
    first = store.add_fact(works_at(metadata={"source": "chat", "turn": 1}))
    kept = store.supersede(first.id, works_at(company="Globex"))
    assert kept.metadata == {"source": "chat", "turn": 1}
    own = store.supersede(kept.id, works_at(company="Initech", metadata={"turn": 7}))
    assert own.metadata == {"turn": 7}
    null = store.supersede(own.id, works_at(company="Hooli", metadata=None))  # as left out
    assert null.metadata == {"turn": 7}
    cleared = store.supersede(null.id, works_at(company="Umbrella", metadata={}))
    assert cleared.metadata == {}
    assert [v.metadata for v in store.history(cleared.id)] == [
        {"source": "chat", "turn": 1},
        {"source": "chat", "turn": 1},
        {"turn": 7},
        {"turn": 7},
        {},
    ]


def test_a_conversation_passes_its_metadata_to_every_fact(words_store: Store) -> None:
    boston = [{"role": "user", "name": "Maya", "content": "I live in Boston."}]
    lisbon = [{"role": "user", "name": "Maya", "content": "I moved to Lisbon in May."}]
    porto = [{"role": "user", "name": "Maya", "content": "I moved to Porto in June."}]
    [first] = words_store.remember_conversation(boston, metadata={"session": "s1"}).candidates
    assert first.fact is not None and first.fact.metadata == {"session": "s1"}
    [moved] = words_store.remember_conversation(lisbon).candidates  # no metadata of its own
    assert moved.outcome == "superseded" and moved.fact is not None
    assert moved.fact.metadata == {"session": "s1"}
    [again] = words_store.remember_conversation(porto, metadata={"session": "s3"}).candidates
    assert again.outcome == "superseded" and again.fact is not None
    assert again.fact.metadata == {"session": "s3"}
    with pytest.raises(InvalidInput) as bad:
        words_store.remember_conversation(porto, metadata={"session": ["s4"]})
    assert bad.value.field == "metadata"


# -- metadata is not evidence ----------------------------------------------------------


def test_metadata_is_not_evidence_and_the_audit_log_keeps_it(words_store: Store) -> None:
    """The rule verifier reads statement words in the evidence; metadata that states the
    fact word for word grounds nothing."""
    note = {"note": "Alice is allergic to peanuts", "user": "alice"}
    with pytest.raises(ErrFactNotGrounded) as refused:
        words_store.add_fact(
            statement="Alice is allergic to peanuts.",
            members=["Alice"],
            evidence=["Alice: I like tea."],
            metadata=note,
        )
    rejection = refused.value.rejection
    assert rejection.metadata == note
    assert words_store.get_rejection(rejection.id).metadata == note
    lines = io.StringIO()
    words_store.export_rejections(lines, format="jsonl")
    assert json.loads(lines.getvalue())["metadata"] == note
    table = io.StringIO()
    words_store.export_rejections(table, format="csv")
    header, row = table.getvalue().splitlines()[:2]
    assert "metadata" in header.split(",") and '""user"": ""alice""' in row
    assert words_store.verify_audit_chain().ok


def test_the_audit_chain_catches_edited_rejection_metadata(words_store: Store) -> None:
    with pytest.raises(ErrFactNotGrounded) as refused:
        words_store.add_fact(
            statement="Alice is allergic to shellfish.",
            members=["Alice"],
            evidence=["Alice: I like tea."],
            metadata={"user": "alice"},
        )
    engine = sa.create_engine(words_store.url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE rejections SET metadata = :m WHERE id = :id"),
                {"m": json.dumps({"user": "mallory"}), "id": refused.value.rejection_id},
            )
    finally:
        engine.dispose()
    report = words_store.verify_audit_chain()
    assert [p.kind for p in report.problems] == ["edited"]


# -- filters ---------------------------------------------------------------------------


@pytest.mark.both_databases
def test_a_filter_matches_json_values_key_by_key(store: Store) -> None:
    """Exact JSON equality: numbers by value, true is not 1, the text "1" is not 1, null
    is a key that holds null (not a missing key); every given key must match."""
    facts = {
        name: store.add_fact(works_at(name, f"{name} Corp", metadata=meta))
        for name, meta in [
            ("Ann", {"user": "ann", "n": 1, "flag": True, "gone": None}),
            ("Ben", {"user": "ben", "n": 1.0, "flag": 1}),
            ("Cat", {"user": "cat", "n": "1", "flag": False}),
            ("Dan", {}),
        ]
    }

    def listed(**wanted: Any) -> list[str]:
        found = [f.id for f in store.list_facts(metadata=wanted).items]
        return [name for name, fact in facts.items() if fact.id in found]

    assert listed(user="ann") == ["Ann"]
    assert listed(user="ANN") == []
    assert listed(n=1) == ["Ann", "Ben"]
    assert listed(n=1.0) == ["Ann", "Ben"]
    assert listed(n="1") == ["Cat"]
    assert listed(flag=True) == ["Ann"]
    assert listed(flag=1) == ["Ben"]
    assert listed(flag=False) == ["Cat"]
    assert listed(gone=None) == ["Ann"]
    assert listed(user="ann", n=1) == ["Ann"]
    assert listed(user="ann", n=2) == []
    assert listed(nothing="here") == []
    assert listed() == ["Ann", "Ben", "Cat", "Dan"]
    about = store.facts_about("Ben", metadata={"flag": 1})
    assert ids(about) == [facts["Ben"].id]
    assert store.facts_about("Ben", metadata={"flag": True}) == []


@pytest.mark.both_databases
def test_search_filters_by_metadata_in_the_index(indexed_store: Store) -> None:
    """The filter reaches the index, so a match ranked far below other facts is found."""
    store = indexed_store
    others = [works_at(f"Person {i}", "Acme", metadata={"team": "red"}) for i in range(40)]
    store.add_facts(others)
    blue = store.add_fact(works_at("Zed", "Acme", metadata={"team": "blue", "level": 2}))
    hits = store.search("Person works at Acme", 3, metadata={"team": "blue"})
    assert [h.fact.id for h in hits] == [blue.id]
    assert store.search("Person works at Acme", 3, metadata={"level": 2.0})[0].fact.id == blue.id
    assert store.search("works at Acme", 5, metadata={"team": "green"}) == []
    hits = store.search("Zed", 5, mode="text", metadata={"team": "blue"}, expand=True)
    assert [h.fact.id for h in hits] == [blue.id]  # the red facts share Acme, not the filter
    assert len(store.search("Person", 5, mode="text", metadata={"team": "red"})) == 5


def test_the_index_holds_one_token_per_key_and_value() -> None:
    assert token("n", 1) == token("n", 1.0) == "n=1"
    assert token("n", 1.5) == "n=1.5"
    assert token("flag", True) == "flag=true" != token("flag", 1)
    assert token("s", "1") == 's="1"' != token("s", 1)
    assert token("gone", None) == "gone=null"


# -- bad input -------------------------------------------------------------------------


BAD_METADATA = [
    ("not an object", "must be an object"),
    (["user", "alice"], "must be an object"),
    ({"bad key": 1}, "key 'bad key'"),
    ({"-flag": 1}, "key '-flag'"),
    ({"": 1}, "key ''"),
    ({"k" * (MAX_METADATA_KEY_CHARS + 1): 1}, "ASCII letters"),
    ({"user": ["alice"]}, "value of 'user' must be a string, a number, true, false or null"),
    ({"user": {"name": "alice"}}, "value of 'user'"),
    ({"n": float("nan")}, "value of 'n' must be a finite number"),
    ({"n": float("inf")}, "finite"),
    ({"n": 2**63}, "out of range"),
    ({"s": "a\x00b"}, "NUL"),
    ({"s": "a\ud800b"}, "valid Unicode text"),  # a lone surrogate
    ({f"k{i}": i for i in range(MAX_METADATA_KEYS + 1)}, f"at most {MAX_METADATA_KEYS} keys"),
    ({"s": "x" * MAX_METADATA_CHARS}, f"at most {MAX_METADATA_CHARS} characters"),
]


@pytest.mark.parametrize(("bad", "why"), BAD_METADATA)
def test_bad_metadata_is_refused_naming_the_field(store: Store, bad: Any, why: str) -> None:
    with pytest.raises(InvalidInput) as err:
        store.add_fact(works_at(metadata=bad))
    assert err.value.field == "metadata" and why in err.value.reason
    with pytest.raises(InvalidInput) as err:
        store.add_facts([works_at("Bob", "Initech"), works_at(metadata=bad)])
    assert err.value.field == "facts.1.metadata"
    for read in (
        lambda: store.list_facts(metadata=bad),
        lambda: store.search("Alice", metadata=bad),
        lambda: store.facts_about("Alice", metadata=bad),
        lambda: store.remember("Alice works at Acme.", ["x"], members=["Alice"], metadata=bad),
    ):
        with pytest.raises(InvalidInput) as err:
            read()
        assert err.value.field == "metadata" and why in err.value.reason
    assert store.stats().facts == {}


# -- erase -----------------------------------------------------------------------------


MARKER = "zq-7731-marker"


def test_erase_leaves_no_byte_of_the_metadata(tmp_path: Path) -> None:
    data = tmp_path / "memdata"
    with memstore.open(data, "user:alice", hook=memstore.Ungated()) as store:
        store.add_facts([works_at(f"P{i}", f"Co {i}") for i in range(10)])
        old = store.add_fact(works_at(metadata={"secret": MARKER}))
        new = store.supersede(old.id, works_at(company="Globex"))  # carries it over
        store.retract(new.id, "moved on")  # the index row is rewritten: more copies
        assert sql_holding(store.url, MARKER) == ["facts.metadata", "facts.metadata"]
        assert files_holding(data, MARKER)
        store.erase(new.id, "the user asked to forget it")
        assert sql_holding(store.url, MARKER) == []
        assert files_holding(data, MARKER) == []
        assert len(store.list_facts().items) == 10
