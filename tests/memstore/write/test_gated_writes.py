"""Every write passes the grounding gate: the decision table end to end through the store."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from db_rows import row_counts
from samples import ALLERGY, allergy, works_at

import memstore
from gate import REFUSE_UNGROUNDED, Gate, GatePolicy, ScriptedBackend
from gate.evidence import REMOVED
from memstore import (
    ErrFactNotGrounded,
    FactPublic,
    FactStatus,
    InvalidInput,
    NotFound,
    RejectionPublic,
    Store,
)

pytestmark = pytest.mark.both_databases

DAY = timedelta(hours=24)


def scripted(p0: float, p1: float, **gate_options: object) -> Gate:
    """A gate that answers p0 and p1 and decides by the specification's table alone."""
    return Gate(ScriptedBackend.fixed(p0, p1), REFUSE_UNGROUNDED, **gate_options)  # type: ignore[arg-type]


def assert_invisible(store: Store, rejection_id: str) -> None:
    """A rejected fact is in no read: not by id, entity, neighbourhood or the graph."""
    with pytest.raises(NotFound):
        store.get_fact(rejection_id)
    with pytest.raises(NotFound):  # the rejected fact's new entity was never created
        store.entity("shellfish")
    try:
        hood = store.neighborhood("user", hops=3)
    except NotFound:  # nothing about the user was stored at all
        hood = None
    if hood is not None:
        assert all("shellfish" not in f.statement for f in hood.facts)
        everything = store.facts_about("user", statuses=[s.value for s in FactStatus])
        assert all("shellfish" not in f.statement for f in everything)
    assert rejection_id not in store.graph.facts()
    assert all("shellfish" not in store.get_fact(f).statement for f in store.graph.facts())


# -- the decision table, row by row, with scripted probabilities ------------------------

ACCEPTED_ROWS = [
    # (p0, p1, policy, verdict, status, confidence)
    (0.01, 0.99, None, "grounded", FactStatus.VERIFIED, None),
    (0.97, 0.98, None, "prior_sufficient", FactStatus.VERIFIED, 0.95),
    (0.97, 0.98, GatePolicy(prior_sufficient="flag"), "prior_sufficient", "unverified", 0.95),
    (0.30, 0.40, GatePolicy(reject_unsupported=False), "unsupported", "unverified", 0.40),
    # The default policy (three outcomes): what cannot be grounded is held, not refused.
    (0.05, 0.60, GatePolicy(), "insufficient_evidence", "unverified", 0.60),
    (0.01, 0.80, GatePolicy(), "grounded", "unverified", None),  # below verify_p1 0.9
]


@pytest.mark.parametrize(("p0", "p1", "policy", "verdict", "status", "confidence"), ACCEPTED_ROWS)
def test_accepted_rows_store_the_fact_with_the_gate_numbers(
    opener: Callable[..., Store],
    p0: float,
    p1: float,
    policy: GatePolicy | None,
    verdict: str,
    status: str,
    confidence: float | None,
) -> None:
    store = opener(gate=scripted(p0, p1), policy=policy)
    fact = store.add_fact(**allergy("peanuts"))
    assert (fact.verdict, fact.status, fact.p0, fact.p1) == (verdict, status, p0, p1)
    assert fact.required_bits is not None and fact.observed_bits is not None
    if confidence is None:  # grounded: min(stated, observed / required)
        confidence = min(0.95, fact.observed_bits / fact.required_bits)
    assert fact.confidence == pytest.approx(confidence)
    assert fact.next_check_at == fact.recorded_at + DAY
    [check] = store.verifications(fact.id)
    assert (check.kind, check.verdict, check.p1, check.status_after) == (
        "write",
        verdict,
        p1,
        status,
    )


REJECTED_ROWS = [
    # (p0, p1, policy, verdict)
    (0.50, 0.05, None, "contradicted"),
    (0.97, 0.98, GatePolicy(prior_sufficient="reject"), "prior_sufficient"),
    (0.30, 0.40, None, "unsupported"),
    (0.60, 0.55, None, "unsupported"),
    (0.05, 0.60, None, "insufficient_evidence"),
]


@pytest.mark.parametrize(("p0", "p1", "policy", "verdict"), REJECTED_ROWS)
def test_rejected_rows_raise_and_leave_only_an_audit_row(
    opener: Callable[..., Store],
    p0: float,
    p1: float,
    policy: GatePolicy | None,
    verdict: str,
) -> None:
    store = opener(gate=scripted(p0, p1), policy=policy)
    before = row_counts(store.url)
    with pytest.raises(ErrFactNotGrounded) as err:
        store.add_fact(**allergy("shellfish"))
    rejection = err.value.rejection
    assert err.value.verdict == rejection.verdict == verdict
    assert (rejection.p0, rejection.p1) == (p0, p1)
    assert rejection.budget_gap == pytest.approx(rejection.required_bits - rejection.observed_bits)
    assert rejection.statement == "The user is allergic to shellfish."
    assert [e.text for e in rejection.evidence] == [ALLERGY]
    assert rejection.members[1] == {"name": "shellfish", "kind": "food", "role": "allergen"}
    assert rejection.namespace == "user:alice" and rejection.created_at is not None
    assert store.rejections() == [rejection] == [store.get_rejection(err.value.rejection_id)]
    after = row_counts(store.url)
    for table in ("facts", "entities", "fact_members", "citations", "verifications"):
        assert after[table] == before[table], table
    assert_invisible(store, rejection.id)


def test_no_evidence_is_bad_input_before_any_model_call(opener: Callable[..., Store]) -> None:
    backend = ScriptedBackend.fixed(0.01, 0.99)
    store = opener(gate=Gate(backend, REFUSE_UNGROUNDED))
    before = row_counts(store.url)
    with pytest.raises(InvalidInput) as err:
        store.add_fact(**works_at(evidence=[]))
    assert err.value.field == "evidence" and "ungated" in err.value.reason
    with pytest.raises(InvalidInput) as err:
        store.add_facts([works_at(), works_at(company="Initech", evidence=[])])
    assert err.value.field == "facts.1.evidence"
    with pytest.raises(InvalidInput) as err:
        store.remember("Alice works at Acme.", [], members=["Alice", "Acme"])
    assert err.value.field == "evidence"
    assert backend.batches == [] and row_counts(store.url) == before
    assert store.rejections() == []
    # Evidence cited by id is evidence; an ungated write needs none.
    stored = store.add_fact(**works_at())
    [cited] = stored.citations
    again = store.add_fact(
        **works_at(company="Initech", evidence=[], evidence_ids=[cited.evidence_id])
    )
    assert again.status == "verified"
    unchecked = store.add_fact(**works_at(company="Globex", evidence=[]), ungated=True)
    assert unchecked.status == "unverified"


def test_a_verifier_error_stores_pending_and_retries_soon(
    opener: Callable[..., Store],
) -> None:
    def broken(claim: str, context: str) -> float:
        raise RuntimeError("model server is down")

    store = opener(
        gate=Gate(ScriptedBackend(broken), REFUSE_UNGROUNDED), retry_after=timedelta(minutes=2)
    )
    fact = store.add_fact(**allergy("peanuts"))
    assert (fact.status, fact.verdict) == (FactStatus.PENDING, "verifier_error")
    assert fact.confidence == pytest.approx(0.95 * 0.5) and fact.p1 is None
    assert fact.next_check_at == fact.recorded_at + timedelta(minutes=2)
    assert "model server is down" in (store.verifications(fact.id)[0].reason or "")
    # Not checked, so not in memory's default reads; asked for by status, it is there.
    assert store.facts_about("user") == []
    assert [f.id for f in store.facts_about("user", statuses=["pending"])] == [fact.id]


def test_a_verifier_that_never_answers_cannot_hold_up_a_write(
    opener: Callable[..., Store],
) -> None:
    never = threading.Event()

    def hang(claim: str, context: str) -> float:
        never.wait()  # released only at the end of the test
        return 0.5

    deadline = 0.3
    store = opener(gate=Gate(ScriptedBackend(hang), REFUSE_UNGROUNDED, deadline=deadline))
    store.add_fact(**works_at(), ungated=True)  # open the database before timing
    started = time.perf_counter()
    fact = store.add_fact(**allergy("peanuts"))
    elapsed = time.perf_counter() - started
    never.set()
    assert (fact.status, fact.verdict) == (FactStatus.PENDING, "timeout")
    assert fact.confidence == pytest.approx(0.95 * 0.5)
    assert fact.next_check_at == fact.recorded_at  # never checked: due for re-verification now
    assert store.facts_about("user") == []
    # Deadline plus storage time; the backend alone would have waited forever.
    assert elapsed < deadline + 5.0


# -- the real embedded verifier on real sentences ---------------------------------------


def test_done_when_shellfish_is_never_verified_and_peanuts_is(data_dir: Path) -> None:
    """The default gate, three outcomes: the wrong allergen is held (stored
    ``unverified``, out of the verified reads, with the reason in words); the verifier
    alone (the specification's table) refuses it into the audit log."""
    evidence = ["User: I'm allergic to peanuts."]
    with memstore.open(data_dir, namespace="user:alice") as store:  # the default gate
        held = store.add_fact(**allergy("shellfish", evidence=evidence))
        assert held.status == FactStatus.UNVERIFIED and held.verdict == "unsupported"
        assert held.p1 is not None and held.p0 is not None and held.budget_gap is not None
        [check] = store.verifications(held.id)
        assert check.reason == "the evidence says peanuts, not shellfish"
        assert store.facts_about("user", statuses=["verified"]) == []

        fact = store.add_fact(**allergy("peanuts", evidence=evidence))
        assert (fact.status, fact.verdict) == (FactStatus.VERIFIED, "grounded")
        assert fact.observed_bits is not None and fact.required_bits is not None
        assert fact.confidence == pytest.approx(min(0.95, fact.observed_bits / fact.required_bits))
        assert [f.id for f in store.facts_about("user", statuses=["verified"])] == [fact.id]

    with memstore.open(data_dir, namespace="user:bob", policy=REFUSE_UNGROUNDED) as store:
        with pytest.raises(ErrFactNotGrounded) as err:
            store.add_fact(**allergy("shellfish", evidence=evidence))
        [listed] = store.rejections()
        assert listed.id == err.value.rejection_id and listed.verdict == "unsupported"
        assert listed.backend is not None and listed.backend.startswith("embedded:")
        assert_invisible(store, listed.id)


def test_the_embedded_gate_verifies_and_holds_a_batch(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace="user:alice") as store:
        results = store.add_facts([allergy("peanuts"), allergy("shellfish"), allergy("milk")])
    assert [r.status for r in results] == ["verified", "unverified", "unverified"]
    assert [r.statement for r in results] == [
        "The user is allergic to peanuts.",
        "The user is allergic to shellfish.",
        "The user is allergic to milk.",
    ]


# -- batches --------------------------------------------------------------------------


def test_a_batch_is_one_model_call_and_each_item_stands_alone(
    opener: Callable[..., Store],
) -> None:
    backend = ScriptedBackend(
        lambda claim, context: 0.02 if REMOVED in context else (0.99 if "peanut" in claim else 0.1)
    )
    store = opener(gate=Gate(backend, REFUSE_UNGROUNDED))
    results = store.add_facts(
        [allergy("peanuts"), allergy("shellfish"), works_at(statement="Alice likes peanuts.")]
    )
    assert len(backend.batches) == 1
    stored, rejected, liked = results
    assert isinstance(stored, FactPublic) and stored.verdict == "grounded"
    assert isinstance(rejected, RejectionPublic) and rejected.verdict == "unsupported"
    assert isinstance(liked, FactPublic)
    assert {f.id for f in store.facts_about("user")} == {stored.id}
    assert [r.id for r in store.rejections()] == [rejected.id]


def test_a_bad_item_fails_the_batch_before_anything_is_checked_or_written(
    opener: Callable[..., Store],
) -> None:
    backend = ScriptedBackend.fixed(0.01, 0.99)
    store = opener(gate=Gate(backend))
    before = row_counts(store.url)
    with pytest.raises(InvalidInput) as err:
        store.add_facts([allergy("peanuts"), allergy("milk", statement="  ")])
    assert err.value.field == "facts.1.statement"
    with pytest.raises(InvalidInput) as err:
        store.add_facts([allergy("peanuts"), allergy("milk", citations=[{"evidence": "nope"}])])
    assert err.value.field == "facts.1.citations.0.evidence"
    for bad in ("a fact", {"statement": "x"}, 42):
        with pytest.raises(InvalidInput) as err:
            store.add_facts(bad)  # type: ignore[arg-type]
        assert err.value.field == "facts"
    assert row_counts(store.url) == before and backend.batches == []
    assert store.add_facts([]) == [] and backend.batches == []


def test_aliases_naming_one_entity_twice_fail_before_the_gate(
    opener: Callable[..., Store],
) -> None:
    backend = ScriptedBackend.fixed(0.01, 0.99)
    store = opener(gate=Gate(backend))
    store.add_fact(**works_at(person="Robert"), ungated=True)
    store.add_alias("Robert", "Bob")
    fact = works_at(members=[("Robert", "person", "employee"), ("Bob", "person", "employee")])
    with pytest.raises(InvalidInput) as err:
        store.add_facts([allergy("peanuts"), fact])
    assert err.value.field == "facts.1.members.1" and backend.batches == []


# -- settings per store and per call, and explicit ungated writes -----------------------


def test_per_call_settings_override_the_store(opener: Callable[..., Store]) -> None:
    store = opener(gate=scripted(0.97, 0.98))
    assert store.add_fact(**allergy("peanuts")).verdict == "prior_sufficient"
    with pytest.raises(ErrFactNotGrounded):
        store.add_fact(**allergy("milk"), policy=GatePolicy(prior_sufficient="reject"))
    fact = store.add_fact(**allergy("eggs"), gate=scripted(0.01, 0.99))
    assert fact.verdict == "grounded" and fact.backend == "scripted:0.01/0.99"
    assert store.add_fact(**allergy("soy")).verdict == "prior_sufficient"  # store settings kept


def test_an_ungated_write_is_explicit_and_recorded(opener: Callable[..., Store]) -> None:
    backend = ScriptedBackend.fixed(0.5, 0.05)  # would reject everything
    store = opener(gate=Gate(backend))
    fact = store.add_fact(**allergy("shellfish"), ungated=True)
    assert (fact.verdict, fact.status, fact.p1, fact.next_check_at) == (
        "ungated",
        FactStatus.UNVERIFIED,
        None,
        None,
    )
    assert store.verifications(fact.id)[0].verdict == "ungated"
    assert backend.batches == []
    [batch] = store.add_facts([allergy("milk")], ungated=True)
    assert isinstance(batch, FactPublic) and batch.verdict == "ungated"
    with memstore.open(store.url, namespace="user:alice", hook=memstore.Ungated()) as off:
        assert off.add_fact(**allergy("eggs")).verdict == "ungated"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"gate": "no-such-backend"}, "gate"),
        ({"gate": 3}, "gate"),
        ({"policy": {"min_p1": 0.4}}, "policy"),
        ({"hook": memstore.Ungated(), "policy": GatePolicy()}, "hook"),
        ({"hook": object()}, "hook"),
        ({"recheck_after": timedelta(0)}, "recheck_after"),
        ({"retry_after": 60}, "retry_after"),
    ],
)
def test_bad_store_gate_settings_name_the_field(
    data_dir: Path, options: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        memstore.open(data_dir, **options)  # type: ignore[arg-type]
    assert err.value.field == field


def test_bad_call_gate_settings_name_the_field(data_dir: Path) -> None:
    with memstore.open(data_dir, gate=scripted(0.01, 0.99)) as store:
        for options, field in [
            ({"ungated": True, "policy": GatePolicy()}, "ungated"),
            ({"ungated": "yes"}, "ungated"),
            ({"gate": "no-such-backend"}, "gate"),
        ]:
            with pytest.raises(InvalidInput) as err:
                store.add_fact(**allergy("peanuts"), **options)
            assert err.value.field == field
        assert row_counts(store.url)["facts"] == 0
    with memstore.open(data_dir, hook=memstore.Ungated()) as store:
        with pytest.raises(InvalidInput) as err:
            store.add_fact(**allergy("peanuts"), policy=GatePolicy())
        assert err.value.field == "policy"
        fact = store.add_fact(**allergy("peanuts"), gate=scripted(0.01, 0.99))
        assert fact.verdict == "grounded"


def test_a_rejected_supersession_leaves_the_old_fact_alone(
    opener: Callable[..., Store],
) -> None:
    store = opener(gate=scripted(0.01, 0.99))
    old = store.add_fact(**allergy("peanuts"))
    with pytest.raises(ErrFactNotGrounded):
        store.supersede(old.id, **allergy("shellfish"), gate=scripted(0.5, 0.05))
    assert store.get_fact(old.id).status == FactStatus.VERIFIED
    new = store.supersede(old.id, **allergy("tree nuts"))
    assert store.get_fact(old.id).status == FactStatus.SUPERSEDED and new.verdict == "grounded"
