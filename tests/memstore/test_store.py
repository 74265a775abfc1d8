"""Store round trips on real SQLite files: write, read, reopen, supersede, retract, history."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from db_rows import row_counts
from samples import works_at

import memstore
from memstore import FactCreate, FactStatus, InvalidInput, NotFound, Store

pytestmark = pytest.mark.both_databases


def test_round_trip(store: Store) -> None:
    fact = store.add_fact(**works_at())
    assert fact.statement == "Alice works at Acme."
    assert fact.namespace == "user:alice"
    assert fact.relation == "works_at"
    assert [(m.name, m.kind, m.role) for m in fact.members] == [
        ("Alice", "person", "employee"),
        ("Acme", "org", "employer"),
    ]
    assert fact.stated_confidence == 0.95
    assert fact.recorded_at.tzinfo is not None
    assert store.get_fact(fact.id) == fact
    assert [f.id for f in store.facts_about("Acme")] == [fact.id]


def test_write_records_the_hook_decision(store: Store) -> None:
    fact = store.add_fact(**works_at())
    # No gate yet: the write is recorded as ungated, never silently as verified.
    assert fact.verdict == "ungated"
    assert fact.status == FactStatus.UNVERIFIED
    assert fact.confidence == fact.stated_confidence
    [check] = store.verifications(fact.id)
    assert (check.kind, check.verdict, check.status_after) == ("write", "ungated", "unverified")
    assert check.evidence_ids == fact.evidence_ids


def test_accepts_a_fact_create_or_a_mapping(store: Store) -> None:
    a = store.add_fact(FactCreate.model_validate(works_at("Ann")))
    b = store.add_fact(works_at("Ben"))
    assert {a.statement, b.statement} == {"Ann works at Acme.", "Ben works at Acme."}


def test_reopen_gives_the_same_facts_and_graph(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace="user:alice", hook=memstore.Ungated()) as store:
        f1 = store.add_fact(**works_at())
        f2 = store.add_fact(
            statement="Acme is based in Berlin.",
            members=[("Acme", "org", "company"), ("Berlin", "place", "city")],
            relation="based_in",
            evidence=["Acme GmbH, Torstrasse 1, Berlin"],
        )
        f3 = store.add_fact(
            statement="Bob met Carol at Acme.",
            members=[
                ("Bob", "person", "host"),
                ("Carol", "person", "guest"),
                ("acme", "org", "place"),
            ],
            evidence=["Bob: had coffee with Carol at the Acme office."],
        )
        store.retract(f3.id, reason="Bob corrected himself")
        before_graph = store.graph.to_dict()
        before_facts = [store.get_fact(f.id) for f in (f1, f2, f3)]
    with memstore.open(data_dir, namespace="user:alice", hook=memstore.Ungated()) as store:
        assert store.graph.to_dict() == before_graph
        assert [store.get_fact(f.id) for f in (f1, f2, f3)] == before_facts
        assert set(store.graph.facts()) == {f1.id, f2.id}


def test_evidence_is_stored_once_per_content_hash(store: Store) -> None:
    text = "Alice: I have worked at Acme since March."
    a = store.add_fact(**works_at(evidence=[text]))
    b = store.add_fact(
        statement="Alice started at Acme in March.",
        members=[("Alice", "person", "employee"), ("Acme", "org", "employer")],
        evidence=[text],
    )
    assert a.evidence_ids == b.evidence_ids
    assert row_counts(store.url)["evidence"] == 1


def test_cite_existing_evidence_by_id(store: Store) -> None:
    first = store.add_fact(**works_at())
    [evidence_id] = first.evidence_ids
    second = store.add_fact(
        statement="Alice has worked at Acme since March.",
        members=["Alice", "Acme"],
        citations=[{"evidence": evidence_id, "quote": "since March"}],
    )
    [cite] = second.citations
    assert cite.evidence_id == evidence_id and cite.cited
    text = "Alice: I have worked at Acme since March."
    assert text[cite.start : cite.end] == "since March"


def test_citations_spans_quotes_and_context(store: Store) -> None:
    said = "User: just so you know, I'm ALLERGIC   to peanuts."
    fact = store.add_fact(
        statement="Alice is allergic to peanuts.",
        members=["Alice"],
        evidence=[said, "User: I live in Lisbon."],
        citations=[{"evidence": 0, "quote": "allergic to peanuts"}],
    )
    cited, context = fact.citations
    assert cited.cited and said[cited.start : cited.end] == "ALLERGIC   to peanuts"
    assert not context.cited and context.start is None


def test_no_citations_means_all_evidence_is_cited(store: Store) -> None:
    fact = store.add_fact(**works_at(evidence=["one text", "another text"]))
    assert [c.cited for c in fact.citations] == [True, True]
    assert all(c.start is None for c in fact.citations)


def test_supersede_keeps_the_old_row_and_links_both(store: Store) -> None:
    old = store.add_fact(**works_at())
    new = store.supersede(old.id, **works_at(company="Globex"))
    old_now = store.get_fact(old.id)
    assert old_now.status == FactStatus.SUPERSEDED
    assert old_now.superseded_by_id == new.id and old_now.superseded_at is not None
    assert new.supersedes_id == old.id
    assert old_now.statement == old.statement  # never updated in place
    assert [f.id for f in store.facts_about("Alice")] == [new.id]
    assert store.facts_about("Acme") == []
    assert [f.id for f in store.facts_about("Acme", statuses=["superseded"])] == [old.id]
    assert old.id not in store.graph and new.id in store.graph
    assert [f.id for f in store.history(old.id)] == [old.id, new.id]
    assert [f.id for f in store.history(new.id)] == [old.id, new.id]


def test_a_chain_of_supersessions(store: Store) -> None:
    a = store.add_fact(**works_at())
    b = store.supersede(a.id, **works_at(company="Globex"))
    c = store.supersede(b.id, **works_at(company="Initech"))
    assert [f.id for f in store.history(b.id)] == [a.id, b.id, c.id]
    assert [f.status for f in store.history(a.id)] == ["superseded", "superseded", "unverified"]


def test_cannot_supersede_twice(store: Store) -> None:
    a = store.add_fact(**works_at())
    store.supersede(a.id, **works_at(company="Globex"))
    before = row_counts(store.url)
    with pytest.raises(InvalidInput, match="superseded") as err:
        store.supersede(a.id, **works_at(company="Initech"))
    assert err.value.field == "old_id"
    assert row_counts(store.url) == before


def test_retract_is_a_soft_delete(store: Store) -> None:
    fact = store.add_fact(**works_at())
    gone = store.retract(fact.id, reason="  the user asked to forget it ")
    assert gone.status == FactStatus.RETRACTED
    assert gone.retraction_reason == "the user asked to forget it"
    assert gone.retracted_at is not None
    assert store.facts_about("Alice") == []
    assert fact.id not in store.graph
    assert store.get_fact(fact.id).statement == fact.statement
    assert [f.id for f in store.facts_about("Alice", statuses=["retracted"])] == [fact.id]
    with pytest.raises(InvalidInput, match="retracted"):
        store.retract(fact.id, reason="again")
    with pytest.raises(InvalidInput, match="retracted"):
        store.supersede(fact.id, **works_at())


def test_facts_about_filters_relation_and_world_time(store: Store) -> None:
    t = datetime(2022, 1, 1, tzinfo=UTC)
    moved = {
        "relation": "based_in",
        "evidence": ["Acme moved from Berlin to Munich on 1 January 2022."],
    }
    berlin = store.add_fact(
        statement="Acme was based in Berlin.", members=["Acme", "Berlin"], valid_to=t, **moved
    )
    munich = store.add_fact(
        statement="Acme is based in Munich.", members=["Acme", "Munich"], valid_from=t, **moved
    )
    timeless = store.add_fact(**works_at())
    assert {f.id for f in store.facts_about("Acme", relation="based_in")} == {berlin.id, munich.id}
    # A naive as_of is taken as UTC; facts without validity bounds are always valid.
    in_2021 = store.facts_about("Acme", as_of=datetime(2021, 6, 1))
    assert [f.id for f in in_2021] == [timeless.id, berlin.id]  # newest first
    assert [f.id for f in store.facts_about("Acme", relation="based_in", as_of=t)] == [munich.id]
    hood = store.neighborhood("Acme", relation="based_in", as_of=datetime(2021, 6, 1))
    assert [f.id for f in hood.facts] == [berlin.id]


def test_neighborhood(store: Store) -> None:
    f1 = store.add_fact(**works_at())
    f2 = store.add_fact(**works_at("Bob"))
    f3 = store.add_fact(
        statement="Bob lives in Paris.",
        members=["Bob", "Paris"],
        relation="lives_in",
        evidence=["Bob: Paris has been home for years."],
    )
    one = store.neighborhood("alice")
    assert {e.name for e in one.entities} == {"Alice", "Acme"}
    assert [f.id for f in one.facts] == [f1.id]
    three = store.neighborhood("Alice", hops=3)
    assert {e.name for e in three.entities} == {"Alice", "Acme", "Bob", "Paris"}
    assert {f.id for f in three.facts} == {f1.id, f2.id, f3.id}
    assert three.distance[store.entity("Paris").id] == 3
    only_work = store.neighborhood("Alice", hops=3, relation="works_at")
    assert {e.name for e in only_work.entities} == {"Alice", "Acme", "Bob"}


def test_get_unknown_fact_and_entity(store: Store) -> None:
    with pytest.raises(NotFound, match="no fact 'nope'"):
        store.get_fact("nope")
    with pytest.raises(NotFound, match="no entity 'Zed'"):
        store.facts_about("Zed")
    with pytest.raises(NotFound):
        store.history("nope")


def test_closed_store_says_how_to_recover(data_dir: Path) -> None:
    store = memstore.open(data_dir, hook=memstore.Ungated())
    store.close()
    store.close()  # idempotent
    with pytest.raises(memstore.MemstoreError, match=r"open it again"):
        store.get_fact("x")


def test_the_same_text_twice_in_one_fact_is_one_evidence_row(store: Store) -> None:
    fact = store.add_fact(**works_at(evidence=["same words", "same words"]))
    assert len(fact.evidence_ids) == 1
    assert row_counts(store.url)["evidence"] == 1


def test_a_changed_source_adds_a_version(store: Store) -> None:
    source = "file:///notes/alice.txt"
    first = store.add_fact(**works_at(evidence=[{"text": "Alice: Acme.", "source": source}]))
    second = store.add_fact(
        **works_at(company="Globex", evidence=[{"text": "Alice: Globex now.", "source": source}])
    )
    assert first.evidence_ids != second.evidence_ids
    engine = sa.create_engine(store.url)
    with engine.connect() as conn:
        versions = conn.execute(
            sa.text("SELECT version, text FROM evidence WHERE source = :s ORDER BY version"),
            {"s": source},
        ).all()
    engine.dispose()
    assert versions == [(1, "Alice: Acme."), (2, "Alice: Globex now.")]


@pytest.mark.both_databases
def test_stats_count_one_namespace(store: Store, data_dir: Path) -> None:
    kept = store.add_fact(
        statement="Alice likes tea.", members=["Alice", "tea"], evidence=["Alice: I like tea."]
    )
    store.add_fact(statement="Alice owns a bike.", members=["Alice", "bike"], evidence=["bike"])
    store.retract(kept.id, "she switched to coffee")
    with memstore.open(data_dir, "user:bob", hook=memstore.Ungated(), index=False) as bob:
        bob.add_fact(statement="Bob likes tea.", members=["Bob", "tea"], evidence=["tea"])
        assert bob.stats().facts == {"unverified": 1}
    numbers = store.stats()
    assert numbers.namespace == "user:alice"
    assert numbers.facts == {"retracted": 1, "unverified": 1}
    assert (numbers.entities, numbers.evidence, numbers.rejections) == (3, 2, {})
    # A URL store without MEMSTORE_INDEX_URI has no index: its changes wait in the outbox.
    assert (numbers.index_backlog == 0) == (store.index_uri is not None)
