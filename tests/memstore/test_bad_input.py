"""Bad input raises InvalidInput naming the field, and writes nothing."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from db_rows import row_counts
from samples import works_at

from memstore import InvalidInput, Store
from memstore.storage.tables import MAX_EVIDENCE_CHARS, MAX_STATEMENT_CHARS

BAD_FACTS: list[tuple[str, dict[str, Any], str, str]] = [
    ("empty statement", {"statement": ""}, "statement", "must not be empty"),
    ("blank statement", {"statement": " \n\t "}, "statement", "must not be empty"),
    ("NUL in statement", {"statement": "a\x00b"}, "statement", "NUL"),
    (
        "oversize statement",
        {"statement": "x" * (MAX_STATEMENT_CHARS + 1)},
        "statement",
        "at most",
    ),
    ("no members", {"members": []}, "members", "at least 1"),
    ("blank member name", {"members": ["  "]}, "members.0.name", "must not be empty"),
    ("member as a pair", {"members": [("Alice", "employee")]}, "members.0", "(name, kind, role)"),
    (
        "repeated member",
        {"members": ["Alice", "alice"]},
        "members",
        "repeats item 0",
    ),
    ("confidence above 1", {"confidence": 1.5}, "confidence", "less than or equal to 1"),
    ("confidence below 0", {"confidence": -0.1}, "confidence", "greater than or equal to 0"),
    ("confidence NaN", {"confidence": float("nan")}, "confidence", "finite"),
    (
        "valid_to before valid_from",
        {"valid_from": "2024-02-01T00:00:00Z", "valid_to": "2024-01-01T00:00:00Z"},
        "valid_to",
        "after valid_from",
    ),
    # Times that leave datetime's range once converted to UTC (OverflowError before).
    (
        "valid_from past the year 9999 in UTC",
        {"valid_from": "9999-12-31T23:59:59-14:00"},
        "valid_from",
        "out of range",
    ),
    (
        "valid_to before the year 1 in UTC",
        {"valid_to": "0001-01-01T00:00:00+14:00"},
        "valid_to",
        "out of range",
    ),
    (
        "oversize evidence",
        {"evidence": ["x" * (MAX_EVIDENCE_CHARS + 1)]},
        "evidence.0.text",
        "at most",
    ),
    ("blank evidence", {"evidence": ["   "]}, "evidence.0", "must not be blank"),
    (
        "a URL dressed as inline evidence",
        {"evidence": [{"text": "Zoe works at Acme.", "source": "inline:file:///etc/passwd"}]},
        "evidence.0.source",
        "exactly 'inline'",
    ),
    ("unknown evidence id", {"evidence_ids": ["nope"]}, "evidence_ids.0", "no evidence 'nope'"),
    (
        "citation index out of range",
        {"citations": [{"evidence": 3}]},
        "citations",
        "cites evidence[3]",
    ),
    (
        "citation to unknown id",
        {"citations": [{"evidence": "nope"}]},
        "citations.0.evidence",
        "no evidence",
    ),
    (
        "citation span past the end",
        {"citations": [{"evidence": 0, "start": 0, "end": 10_000}]},
        "citations.0.end",
        "past the end",
    ),
    (
        "citation span reversed",
        {"citations": [{"evidence": 0, "start": 5, "end": 2}]},
        "citations.0",
        "end must be greater than start",
    ),
    (
        "citation quote not in evidence",
        {"citations": [{"evidence": 0, "quote": "shellfish"}]},
        "citations.0.quote",
        "not in the cited evidence",
    ),
    ("unknown field", {"colour": "red"}, "colour", "Extra inputs"),
]


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [case[1:] for case in BAD_FACTS],
    ids=[case[0] for case in BAD_FACTS],
)
def test_bad_fact_names_the_field_and_writes_nothing(
    store: Store, change: dict[str, Any], field: str, reason: str
) -> None:
    store.add_fact(**works_at("Zoe"))
    before = row_counts(store.url)
    graph_before = store.graph.to_dict()
    with pytest.raises(InvalidInput) as err:
        store.add_fact(**works_at(**change))
    assert err.value.field == field
    assert reason in str(err.value)
    assert row_counts(store.url) == before
    assert store.graph.to_dict() == graph_before


def test_fact_and_fields_together(store: Store) -> None:
    with pytest.raises(InvalidInput, match="not both"):
        store.add_fact(works_at(), statement="x")


def test_not_a_mapping(store: Store) -> None:
    with pytest.raises(InvalidInput, match="expected a FactCreate or a mapping"):
        store.add_fact(["Alice works at Acme."])  # type: ignore[arg-type]


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_retract_needs_a_reason(store: Store, reason: Any) -> None:
    fact = store.add_fact(**works_at())
    with pytest.raises(InvalidInput) as err:
        store.retract(fact.id, reason=reason)
    assert err.value.field == "reason"
    assert store.get_fact(fact.id).status == "unverified"


@pytest.mark.parametrize("hops", [-1, 11, 1.5, True])
def test_bad_hops(store: Store, hops: Any) -> None:
    store.add_fact(**works_at())
    with pytest.raises(InvalidInput) as err:
        store.neighborhood("Alice", hops=hops)
    assert err.value.field == "hops"


@pytest.mark.parametrize("entities", [None, 5, ["Alice", None], {"name": "Alice"}])
def test_bad_neighborhood_seeds(store: Store, entities: Any) -> None:
    store.add_fact(**works_at())
    with pytest.raises(InvalidInput) as err:
        store.neighborhood(entities)
    assert err.value.field == "entities"


def test_bad_status_filter(store: Store) -> None:
    store.add_fact(**works_at())
    with pytest.raises(InvalidInput, match="'deleted' is not one of") as err:
        store.facts_about("Alice", statuses=["deleted"])
    assert err.value.field == "statuses"


def test_blank_entity_name(store: Store) -> None:
    with pytest.raises(InvalidInput) as err:
        store.facts_about("  ")
    assert err.value.field == "entity"


def test_statuses_may_come_from_a_generator(store: Store) -> None:
    """Validated and used from one reading: a generator is not emptied by the check."""
    fact = store.add_fact(works_at())
    assert [
        f.id for f in store.facts_about("Alice", statuses=(s for s in ["verified", "unverified"]))
    ] == [fact.id]
    assert [
        h.fact.id
        for h in store.search("Alice", 5, statuses=(s for s in ["verified", "unverified"]))
    ] == [fact.id]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.neighborhood(""), "entities"),  # its parameter, not the resolver's
        (lambda s: s.entity(""), "name"),
        (lambda s: s.rejections(offset=2**63), "offset"),  # past SQLite's integers
        (lambda s: s.mark_due(0), "fact_ids"),
        (lambda s: s.facts_about("Alice", statuses=7), "statuses"),
        (lambda s: s.export_rejections(None), "dest"),
        (lambda s: s.reindex(progress=0), "progress"),
    ],
    ids=["neighborhood", "entity", "offset", "mark_due", "statuses", "export", "reindex"],
)
def test_found_by_fuzzing_named_fields(store: Store, call: Any, field: str) -> None:
    store.add_fact(works_at())
    with pytest.raises(InvalidInput) as err:
        call(store)
    assert err.value.field == field


LATE = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-14)))
EARLY = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14)))


@pytest.mark.parametrize("when", [LATE, EARLY], ids=["late", "early"])
@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s, t: s.search("Alice", as_of=t), "as_of"),
        (lambda s, t: s.search("Alice", recorded_after=t), "recorded_after"),
        (lambda s, t: s.search_evidence("Acme", recorded_before=t), "recorded_before"),
        (lambda s, t: s.facts_about("Alice", as_of=t), "as_of"),
        (lambda s, t: s.neighborhood("Alice", as_of=t), "as_of"),
        (lambda s, t: s.rejections(since=t), "since"),
        (lambda s, t: s.count_rejections(until=t), "until"),
        (lambda s, t: s.export_rejections(io.StringIO(), format="csv", since=t), "since"),
    ],
    ids=[
        "search",
        "recorded_after",
        "evidence",
        "facts_about",
        "neighborhood",
        "rejections",
        "counts",
        "export",
    ],
)
def test_a_time_out_of_range_in_utc_names_the_field(
    store: Store, call: Any, field: str, when: datetime
) -> None:
    """An aware time a UTC conversion takes past year 9999 or before year 1 (OverflowError
    before) is InvalidInput naming the parameter."""
    store.add_fact(works_at())
    with pytest.raises(InvalidInput) as err:
        call(store, when)
    assert err.value.field == field
    assert "out of range" in err.value.reason
