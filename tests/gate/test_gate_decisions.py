"""Every row of the decision table (docs/design.md, Decision table), through a real Gate."""

from __future__ import annotations

from typing import Any

import pytest

from gate import (
    REFUSE_UNGROUNDED,
    Citation,
    ContextItem,
    Gate,
    GatePolicy,
    ScriptedBackend,
    Verdict,
    VerdictStatus,
    budget,
)

EVIDENCE = ["User: just so you know, I'm allergic to peanuts."]


def check(p0: float, p1: float, confidence: float = 0.95, **policy: Any) -> Verdict:
    gate = Gate(ScriptedBackend.fixed(p0, p1), GatePolicy(**policy))
    return gate.check("The user is allergic to peanuts.", EVIDENCE, confidence=confidence)


def test_row0_no_evidence_needs_no_model_call() -> None:
    backend = ScriptedBackend.fixed(0.1, 0.9)
    gate = Gate(backend)
    for evidence in ([], [""], ["   "]):
        verdict = gate.check("claim", evidence)
        assert verdict.status == VerdictStatus.NO_EVIDENCE and not verdict.accepted
    assert backend.batches == []


def test_row0_unknown_citation_needs_no_model_call() -> None:
    backend = ScriptedBackend.fixed(0.1, 0.9)
    verdict = Gate(backend).check(
        "claim", [ContextItem("e1", "text")], citations=[Citation("e1"), Citation("e9")]
    )
    assert verdict.status == VerdictStatus.UNKNOWN_CITATION and not verdict.accepted
    assert "e9" in (verdict.reason or "")
    assert backend.batches == []


def test_row1_backend_error_stores_with_reduced_confidence() -> None:
    def broken(claim: str, context: str) -> float:
        raise RuntimeError("model exploded")

    verdict = Gate(ScriptedBackend(broken), REFUSE_UNGROUNDED).check(
        "claim", EVIDENCE, confidence=0.8
    )
    assert verdict.status == VerdictStatus.VERIFIER_ERROR
    assert verdict.accepted and verdict.confidence == pytest.approx(0.4)
    assert "model exploded" in (verdict.reason or "")


def test_row2_contradicted() -> None:
    verdict = check(p0=0.5, p1=0.01)
    assert verdict.status == VerdictStatus.CONTRADICTED and not verdict.accepted
    # The bare SPEC rule would have passed it: KL sees plenty of "evidence".
    assert verdict.observed_bits is not None and verdict.required_bits is not None
    assert verdict.observed_bits > verdict.required_bits


def test_row2_needs_p1_below_p0() -> None:
    # p1 under the contradiction threshold, but the evidence did not lower belief.
    assert check(p0=0.05, p1=0.1).status == VerdictStatus.UNSUPPORTED


def test_row3_prior_sufficient_store_flag_reject() -> None:
    stored = check(p0=0.97, p1=0.9)
    assert stored.status == VerdictStatus.PRIOR_SUFFICIENT
    assert stored.accepted and not stored.flagged and stored.confidence == 0.9
    flagged = check(p0=0.97, p1=0.99, prior_sufficient="flag")
    assert flagged.accepted and flagged.flagged and flagged.confidence == 0.95
    rejected = check(p0=0.97, p1=0.99, prior_sufficient="reject")
    assert rejected.status == VerdictStatus.PRIOR_SUFFICIENT and not rejected.accepted


def test_row4_unsupported_is_held_by_default_and_refused_on_request() -> None:
    assert check(p0=0.6, p1=0.6).status == VerdictStatus.UNSUPPORTED  # p1 <= p0
    held = check(p0=0.2, p1=0.4)  # p1 < min_p1
    assert held.status == VerdictStatus.UNSUPPORTED and held.outcome == "held"
    assert held.accepted and held.flagged and held.confidence <= 0.4
    assert (
        held.reason
        == "the evidence does not support the claim: p1 0.40, a verified fact needs 0.90"
    )
    refused = check(p0=0.2, p1=0.4, reject_unsupported=True)
    assert refused.status == VerdictStatus.UNSUPPORTED and refused.outcome == "refused"


def test_row5_insufficient_evidence() -> None:
    verdict = check(p0=0.01, p1=0.6)
    assert verdict.status == VerdictStatus.INSUFFICIENT_EVIDENCE and verdict.outcome == "held"
    assert "0.95" in (verdict.reason or "")  # the stated confidence it falls short of
    assert verdict.budget_gap is not None and verdict.budget_gap > 2.0
    refused = check(p0=0.01, p1=0.6, reject_unsupported=True)
    assert refused.status == VerdictStatus.INSUFFICIENT_EVIDENCE and not refused.accepted
    # A looser flag threshold lets the same numbers through.
    assert check(p0=0.01, p1=0.6, flag_threshold_bits=10.0).status == VerdictStatus.GROUNDED


def test_row6_grounded_confidence_is_observed_over_required() -> None:
    verdict = check(p0=0.3, p1=0.9, confidence=0.95)
    b = budget(0.3, 0.9, 0.95)
    assert verdict.status == VerdictStatus.GROUNDED and verdict.accepted
    assert verdict.confidence == pytest.approx(min(0.95, b.observed_bits / b.required_bits))
    assert verdict.p0 == 0.3 and verdict.p1 == 0.9
    assert verdict.budget_gap == pytest.approx(b.budget_gap)


def test_row6_strong_evidence_keeps_the_stated_confidence() -> None:
    assert check(p0=0.1, p1=0.999, confidence=0.9).confidence == 0.9


def test_policy_is_validated() -> None:
    with pytest.raises(ValueError, match="contradiction_threshold"):
        GatePolicy(contradiction_threshold=0.6, min_p1=0.5)
    with pytest.raises(ValueError, match="prior_sufficient"):
        GatePolicy(prior_sufficient="maybe")  # type: ignore[arg-type]
