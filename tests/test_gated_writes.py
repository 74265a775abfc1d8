"""The grounding gate as the store's write hook, with the real embedded verifier."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import allergy

import memstore
from gate import Gate, ScriptedBackend
from gate.backends.embedded import EmbeddedBackend
from memstore import ErrFactNotGrounded, FactStatus, NotFound
from memstore.gating import GateHook


@pytest.fixture(scope="module")
def hook() -> GateHook:
    return GateHook(Gate(EmbeddedBackend()))


def test_a_grounded_fact_is_stored_verified(data_dir: Path, hook: GateHook) -> None:
    with memstore.open(data_dir, hook=hook) as store:
        fact = store.add_fact(**allergy("peanuts"))
        assert fact.status == FactStatus.VERIFIED and fact.verdict == "grounded"
        assert fact.p1 is not None and fact.p0 is not None and fact.p0 < 0.5 < fact.p1
        assert 0 < fact.confidence <= 0.95
        assert fact.backend is not None and fact.backend.startswith("embedded:")


def test_an_ungrounded_fact_is_rejected_and_audited(data_dir: Path, hook: GateHook) -> None:
    with memstore.open(data_dir, hook=hook) as store:
        with pytest.raises(ErrFactNotGrounded) as err:
            store.add_fact(**allergy("shellfish"))
        assert err.value.verdict == "unsupported"
        assert "(unsupported)" in str(err.value) and err.value.rejection_id
        with pytest.raises(NotFound):  # not even its entities were written
            store.facts_about("user")
        assert store.graph.to_dict()["facts"] == []


def test_a_verifier_that_never_answers_stores_unverified(data_dir: Path) -> None:
    never = threading.Event()

    def hang(claim: str, context: str) -> float:
        never.wait(30)
        return 0.5

    backend = ScriptedBackend(hang)
    with memstore.open(data_dir, hook=GateHook(Gate(backend, deadline=0.2))) as store:
        fact = store.add_fact(**allergy("peanuts"))
    never.set()
    assert fact.status == FactStatus.UNVERIFIED and fact.verdict == "timeout"
    assert fact.confidence == pytest.approx(0.95 * 0.5)
