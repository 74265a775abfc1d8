"""A write the verifier did not check is stored ``pending``, never admitted (review of
issue 24, item 2): a timeout or a verifier error keeps the fact, due for re-verification,
but out of every default read (facts_about, search, the neighborhood, the hypergraph,
duplicate checks) until re-verification checks it with the real embedded verifier.

Stuck verifiers are made deterministic: they hold until the gate cancels them."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from samples import allergy

import memstore
from gate import CallControl, Gate, ModelLock, VerifierBackend
from gate.backends.embedded import EmbeddedBackend, shared_encoder
from memstore import FactPublic, FactStatus, Store

pytestmark = pytest.mark.both_databases

#: Generous bounds for the real verifier on a loaded machine.
PATIENCE_S = 60.0


class Stuck(VerifierBackend):
    """Never answers: holds until the gate gives up on the call (then stops)."""

    name = "stuck"
    deterministic = False

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        assert control is not None
        while not control.cancelled:
            time.sleep(0.005)
        control.check()
        return []


class Locked(VerifierBackend):
    """Answers ``grounded`` once it holds its model lock (which a test may hold)."""

    name = "locked"
    deterministic = False

    def __init__(self) -> None:
        self.lock = ModelLock()

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        with self.lock.hold(control):
            return [0.97 for _ in pairs]


def stuck() -> Gate:
    return Gate(Stuck(), deadline=0.2, deadline_per_claim=0.0)


def ids(facts: Sequence[FactPublic]) -> list[str]:
    return [f.id for f in facts]


def hit_ids(patient_store: Store, query: str, **options: object) -> list[str]:
    return [h.fact.id for h in patient_store.search(query, **options)]  # type: ignore[arg-type]


@pytest.fixture
def patient_store(data_dir: Path, tmp_path: Path) -> Iterator[Store]:
    """A store whose own gate is the real embedded verifier, with a generous deadline."""
    real = Gate(EmbeddedBackend(shared_encoder()), deadline=PATIENCE_S, lock_wait=PATIENCE_S)
    index = tmp_path / "index"
    with memstore.open(data_dir, namespace="user:alice", gate=real, index=index) as opened:
        opened.add_fact(**allergy("milk"), ungated=True)  # a fact default reads do return
        yield opened


def test_a_timed_out_write_is_pending_and_out_of_every_default_read(patient_store: Store) -> None:
    [visible] = patient_store.facts_about("user")
    fact = patient_store.add_fact(**allergy("peanuts"), gate=stuck())
    assert (fact.status, fact.verdict) == (FactStatus.PENDING, "timeout")
    assert fact.confidence == pytest.approx(0.95 * 0.5)
    assert fact.next_check_at == fact.recorded_at  # due for re-verification at once
    assert patient_store.get_fact(fact.id).status == FactStatus.PENDING  # stored, by id
    # Not in default reads, search, the neighborhood or the hypergraph ...
    assert ids(patient_store.facts_about("user")) == [visible.id]
    assert ids(patient_store.facts_about("peanuts")) == []
    assert fact.id not in hit_ids(patient_store, "allergic to peanuts")
    assert ids(patient_store.neighborhood("user").facts) == [visible.id]
    assert fact.id not in patient_store.graph
    # ... but asked for by status, it is there.
    assert ids(patient_store.facts_about("user", statuses=["pending"])) == [fact.id]
    assert hit_ids(patient_store, "allergic to peanuts", statuses=["pending"]) == [fact.id]
    numbers = patient_store.stats()
    assert numbers.facts == {"unverified": 1, "pending": 1}
    assert numbers.due_for_reverification == 1
    # The same fact written again is checked, not answered with the unchecked one.
    again = patient_store.add_fact(**allergy("peanuts"))
    assert again.id != fact.id and not again.deduplicated
    assert again.status == FactStatus.VERIFIED
    assert fact.id not in [n.fact_id for n in again.near_duplicates]


def test_a_write_that_waited_past_lock_wait_is_pending_not_searchable(patient_store: Store) -> None:
    backend = Locked()
    backend.lock.acquire()  # another call holds the model for the whole write
    try:
        fact = patient_store.add_fact(**allergy("peanuts"), gate=Gate(backend, lock_wait=0.3))
    finally:
        backend.lock.release()
    assert (fact.status, fact.verdict) == (FactStatus.PENDING, "timeout")
    assert "busy" in (patient_store.verifications(fact.id)[0].reason or "")
    assert fact.id not in hit_ids(patient_store, "allergic to peanuts")
    assert fact.id not in ids(patient_store.facts_about("user"))


def test_a_verifier_error_is_pending_too(patient_store: Store) -> None:
    class Broken(VerifierBackend):
        name = "broken"

        def estimate_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            raise RuntimeError("model server is down")

    fact = patient_store.add_fact(**allergy("peanuts"), gate=Gate(Broken()))
    assert (fact.status, fact.verdict) == (FactStatus.PENDING, "verifier_error")
    assert fact.next_check_at == fact.recorded_at + patient_store.reverify_policy().retry_after
    assert fact.id not in ids(patient_store.facts_about("user"))


def test_reverification_decides_pending_facts_with_the_real_verifier(patient_store: Store) -> None:
    true = patient_store.add_fact(**allergy("peanuts"), gate=stuck())
    false = patient_store.add_fact(**allergy("shellfish"), gate=stuck())  # peanut evidence only
    assert {true.status, false.status} == {FactStatus.PENDING}
    # Checked again while the verifier is still stuck: both stay pending, retried later.
    again = patient_store.reverify(gate=stuck())
    assert {(c.outcome, c.status_after) for c in again.checks} == {("error", "pending")}
    assert again.still_pending == 2 and again.summary()["still_pending"] == 2
    assert patient_store.get_fact(true.id).check_failures == 1
    assert ids(patient_store.facts_about("peanuts")) == []
    # With the real embedded verifier: the true fact is verified; the false one is held
    # (stored ``unverified``, with the reason in words), never verified.
    patient_store.mark_due([true.id, false.id])
    report = patient_store.reverify()
    checks = {c.fact_id: c for c in report.checks}
    assert (checks[true.id].status_before, checks[true.id].status_after) == ("pending", "verified")
    assert (checks[false.id].status_before, checks[false.id].status_after) == (
        "pending",
        "unverified",
    )
    assert checks[false.id].reason == "the evidence says peanuts, not shellfish"
    assert report.still_pending == 0
    verified, held = patient_store.get_fact(true.id), patient_store.get_fact(false.id)
    assert verified.status == FactStatus.VERIFIED and verified.verified_at is not None
    assert held.verified_at is None and held.confidence < 0.5
    # The verified fact is now in memory: reads, search, neighborhood and hypergraph.
    assert ids(patient_store.facts_about("peanuts")) == [true.id]
    assert true.id in hit_ids(patient_store, "allergic to peanuts")
    assert (
        true.id in ids(patient_store.neighborhood("user").facts) and true.id in patient_store.graph
    )
    # The held one is read as unverified, and left out where only verified facts are asked.
    assert ids(patient_store.facts_about("shellfish")) == [false.id]
    assert ids(patient_store.facts_about("shellfish", statuses=["verified"])) == []
    assert patient_store.stats().facts.get("pending", 0) == 0
