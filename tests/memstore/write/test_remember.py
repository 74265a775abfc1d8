"""Store.remember: an agent's text becomes claims, each written through the gate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from db_rows import row_counts

import memstore
from gate import REFUSE_UNGROUNDED, Claim, ClaimKind, Gate, GatePolicy, ScriptedBackend
from memstore import ClaimOutcome, InvalidInput, RememberReport, Store

pytestmark = pytest.mark.both_databases

ALICE = ("Alice", "person", "subject")
EVIDENCE = ["Alice works at Acme.", "Alice lives in Berlin."]


@pytest.fixture
def scripted_opener(
    opener: Callable[..., Store], scripted_backend: ScriptedBackend
) -> Callable[..., Store]:
    """Opens stores without a search index, gated by ``scripted_backend`` (``states``:
    tests/conftest.py) unless told otherwise."""

    def open_(**options: Any) -> Store:
        options.setdefault("gate", Gate(scripted_backend, REFUSE_UNGROUNDED))
        return opener(index=False, **options)

    return open_


def by_content(report: RememberReport) -> dict[str, ClaimOutcome]:
    return {c.content: c for c in report.claims}


def test_true_claims_are_stored_and_the_invented_one_is_rejected_into_the_audit_log(
    scripted_opener: Callable[..., Store], scripted_backend: ScriptedBackend
) -> None:
    store = scripted_opener()
    text = (
        "Alice works at Acme, and Alice lives in Berlin. Alice owns a boat. "
        "Is that everything? I think Alice might like jazz."
    )
    report = store.remember(text, EVIDENCE, members=[ALICE], relation="about")
    outcomes = by_content(report)
    assert list(outcomes) == [
        "Alice works at Acme.",
        "Alice lives in Berlin.",
        "Alice owns a boat.",
        "Is that everything?",
        "I think Alice might like jazz.",
    ]
    assert [f.statement for f in report.stored] == [
        "Alice works at Acme.",
        "Alice lives in Berlin.",
    ]
    assert all(f.verdict == "grounded" and f.status == "verified" for f in report.stored)
    assert [r.statement for r in report.rejected] == ["Alice owns a boat."]
    assert report.rejected[0].verdict == "unsupported"
    assert [c.kind for c in report.skipped] == [ClaimKind.QUESTION, ClaimKind.HEDGE]
    assert len(scripted_backend.batches) == 1  # every claim in one gate call

    boat = outcomes["Alice owns a boat."]
    assert (boat.stored, boat.skipped, boat.fact) == (False, False, None)
    assert text[boat.start : boat.end] == "Alice owns a boat"
    [logged] = store.rejections(text="boat")
    assert logged.id == boat.rejection.id  # type: ignore[union-attr]
    assert [m["name"] for m in logged.members] == ["Alice"]
    assert sorted(f.statement for f in store.facts_about("Alice")) == [
        "Alice lives in Berlin.",
        "Alice works at Acme.",
    ]
    assert all(f.relation == "about" for f in store.facts_about("Alice"))


def test_markers_cite_evidence_by_position_and_the_rest_stays_uncited_context(
    scripted_opener: Callable[..., Store],
) -> None:
    store = scripted_opener()
    report = store.remember("Alice lives in Berlin [2].", EVIDENCE, members=[ALICE])
    [fact] = report.stored
    cited = {store.get_evidence(c.evidence_id).text: c.cited for c in fact.citations}
    assert cited == {"Alice lives in Berlin.": True, "Alice works at Acme.": False}
    assert report.claims[0].citations == ["2"]


def test_a_citation_that_does_not_carry_the_claim_is_prior_sufficient_or_rejected(
    scripted_opener: Callable[..., Store],
) -> None:
    store = scripted_opener()
    text = "Alice lives in Berlin [1]."  # [1] is about Acme; [2], uncited, stays in p0's context
    kept = store.remember(text, EVIDENCE, members=[ALICE])
    assert [f.verdict for f in kept.stored] == ["prior_sufficient"]
    strict = GatePolicy(prior_sufficient="reject")
    other = store.remember(text, EVIDENCE, members=["Berlin"], policy=strict)
    assert other.stored == []
    assert [r.verdict for r in other.rejected] == ["prior_sufficient"]


def test_an_unknown_citation_is_rejected_and_logged_while_the_rest_is_stored(
    scripted_opener: Callable[..., Store],
) -> None:
    store = scripted_opener()
    text = "Alice works at Acme [1]. Alice works at Initech [3]."
    report = store.remember(text, EVIDENCE, members=[ALICE])
    assert [f.statement for f in report.stored] == ["Alice works at Acme."]
    [rejection] = report.rejected
    assert rejection.verdict == "unknown_citation"
    assert rejection.reason == "cited evidence not in the context: 3"
    assert [r.id for r in store.rejections(verdict="unknown_citation")] == [rejection.id]
    assert {store.get_evidence(i).text for i in rejection.evidence_ids} == set(EVIDENCE)


def test_an_unknown_citation_is_rejected_even_for_an_ungated_write(
    scripted_opener: Callable[..., Store],
) -> None:
    store = scripted_opener(gate=None, hook=memstore.Ungated())
    report = store.remember("Alice owns a boat. Alice works at Initech [ev:nope].", members=[ALICE])
    assert [(f.statement, f.verdict) for f in report.stored] == [("Alice owns a boat.", "ungated")]
    assert [r.verdict for r in report.rejected] == ["unknown_citation"]


def test_ev_markers_cite_stored_evidence_by_id(scripted_opener: Callable[..., Store]) -> None:
    store = scripted_opener()
    first = store.remember("Alice works at Acme.", ["Alice works at Acme."], members=[ALICE])
    evidence_id = first.stored[0].citations[0].evidence_id
    report = store.remember(f"Alice works at Acme [ev:{evidence_id}].", [], members=["Acme"])
    [fact] = report.stored
    assert [(c.evidence_id, c.cited) for c in fact.citations] == [(evidence_id, True)]
    assert [m.name for m in fact.members] == ["Acme"]


def test_members_may_be_chosen_per_claim(scripted_opener: Callable[..., Store]) -> None:
    store = scripted_opener()

    def members(claim: Claim) -> list[object]:
        place = "Acme" if "Acme" in claim.content else "Berlin"
        return [ALICE, (place, "place", "object")]

    report = store.remember(
        "Alice works at Acme. Alice lives in Berlin.", EVIDENCE, members=members
    )
    assert [[m.name for m in f.members] for f in report.stored] == [
        ["Alice", "Acme"],
        ["Alice", "Berlin"],
    ]


def test_a_hedge_lowers_the_stated_confidence_of_what_is_stored(
    scripted_opener: Callable[..., Store],
) -> None:
    store = scripted_opener()
    report = store.remember(
        "Alice probably works at Acme. Alice lives in Berlin.",
        ["Alice probably works at Acme.", "Alice lives in Berlin."],
        members=[ALICE],
    )
    assert [f.stated_confidence for f in report.stored] == [0.75, 0.95]


def test_a_text_already_remembered_is_answered_with_the_stored_facts(
    scripted_opener: Callable[..., Store], scripted_backend: ScriptedBackend
) -> None:
    store = scripted_opener()
    first = store.remember("Alice works at Acme.", EVIDENCE, members=[ALICE])
    again = store.remember("Alice works at Acme.", EVIDENCE, members=[ALICE])
    assert again.stored[0].id == first.stored[0].id
    assert again.stored[0].deduplicated
    assert len(scripted_backend.batches) == 1  # the second write did not reach the gate


def test_a_text_with_nothing_to_check_writes_nothing(
    scripted_opener: Callable[..., Store], scripted_backend: ScriptedBackend
) -> None:
    store = scripted_opener()
    before = row_counts(store.url)
    report = store.remember("Thanks! What else do you need?", EVIDENCE, members=[ALICE])
    assert report.stored == [] and report.rejected == [] and len(report.skipped) == 2
    assert row_counts(store.url) == before
    assert scripted_backend.batches == []


@pytest.mark.parametrize(
    ("arguments", "field", "reason"),
    [
        ({"text": ""}, "text", "must not be empty"),
        ({"text": 7}, "text", "must be a string, got int"),
        ({"evidence": 5}, "evidence", "must be a list of evidence texts"),
        ({"members": "Alice"}, "members", "must be a list of members, or a function of a claim"),
        ({"members": []}, "claims.0.members", "List should have at least 1 item"),
        (
            {"members": lambda claim: [""] if "Berlin" in claim.content else [ALICE]},
            "claims.1.members.0.name",
            "must not be empty",
        ),
        ({"evidence": ["   "]}, "claims.0.evidence.0", "text must not be blank"),
        ({"ungated": "yes"}, "ungated", "must be True or False"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(
    scripted_opener: Callable[..., Store],
    scripted_backend: ScriptedBackend,
    arguments: dict[str, object],
    field: str,
    reason: str,
) -> None:
    store = scripted_opener()
    before = row_counts(store.url)
    call: dict[str, object] = {
        "text": "Alice works at Acme. Alice lives in Berlin.",
        "evidence": EVIDENCE,
        "members": [ALICE],
        **arguments,
    }
    with pytest.raises(InvalidInput) as raised:
        store.remember(**call)  # type: ignore[arg-type]
    assert raised.value.field == field
    assert reason in raised.value.reason
    assert row_counts(store.url) == before
    assert scripted_backend.batches == []
