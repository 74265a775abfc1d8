"""The decision table (docs/design.md, Decision table): thresholds, and p0/p1 -> verdict.

Three outcomes: **verified** (accepted, not flagged), **held** (accepted and flagged:
stored ``unverified``, never shown as verified) and **refused** (not accepted). A
check that refutes the claim refuses it whatever the verifier says; a check in doubt,
or a verifier below ``verify_p1``, holds it (docs/verifier-decision-rule.md, Three
outcomes), unless the claim is said as the evidence writes it: a record's field (the
``fields`` check: "Order 88213 status: shipped." from a tool's JSON), or a sentence with
its speaker's correction put in (``corrected``: "Yuki is in Flat 3C." from "I'm in Flat
3B." and "It's 3C, not 3B.").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gate.budget import DEFAULT_EPS, budget
from gate.verdict import Verdict, VerdictStatus

if TYPE_CHECKING:
    from gate.checks import Finding

DEFAULT_CONTRADICTION_THRESHOLD = 0.2
DEFAULT_MIN_P1 = 0.5
DEFAULT_FLAG_THRESHOLD_BITS = 2.0
DEFAULT_TIMEOUT_REDUCTION = 0.5
#: The p1 a fact needs to be verified rather than held, fitted on the agent-memory
#: train and dev rows (docs/verifier-decision-rule.md, Three outcomes).
DEFAULT_VERIFY_P1 = 0.9
#: Below this p1, a thing put in another's place ("allergic to shellfish" where the
#: evidence says peanuts) is refused rather than held: the highest p1 at which the two
#: together were false at least 9 times in 10 on public NLI pairs (same rule).
DEFAULT_REFUTE_SWAP_P1 = 0.3

#: The largest standard deviation of a sampled p1 or p0 (the ``sampling`` backend, the
#: MCP host) the gate verifies or refuses on regardless; past it, a fact whose outcome
#: could change within that spread is held. Five YES of five samples give 0.92 +/- 0.10;
#: two of two give 0.83 +/- 0.19.
DEFAULT_MAX_SPREAD = 0.12

PriorSufficientAction = Literal["store", "flag", "reject"]


class GatePolicy(BaseModel):
    """Thresholds of the decision table. All probabilities in [0, 1]."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    eps: float = Field(default=DEFAULT_EPS, gt=0.0, lt=0.5)
    contradiction_threshold: float = Field(default=DEFAULT_CONTRADICTION_THRESHOLD, ge=0.0, le=1.0)
    min_p1: float = Field(default=DEFAULT_MIN_P1, ge=0.0, le=1.0)
    flag_threshold_bits: float = Field(default=DEFAULT_FLAG_THRESHOLD_BITS, ge=0.0)
    timeout_reduction: float = Field(default=DEFAULT_TIMEOUT_REDUCTION, ge=0.0, le=1.0)
    prior_sufficient: PriorSufficientAction = "store"
    #: False (the default) holds the facts of rows 4-5 (stored, flagged: ``unverified``);
    #: True refuses them, as the gate did before three outcomes. Contradictions and
    #: refuting checks refuse either way.
    reject_unsupported: bool = False
    #: A grounded fact below this p1 is held, not verified.
    verify_p1: float = Field(default=DEFAULT_VERIFY_P1, ge=0.0, le=1.0)
    #: A thing swapped for another (the ``things`` check) below this p1 is refused.
    refute_swap_p1: float = Field(default=DEFAULT_REFUTE_SWAP_P1, ge=0.0, le=1.0)
    #: Read the claim beside its evidence with the checks of ``gate.checks``.
    checks: bool = True
    #: A verdict the verifier's sampled numbers would make verified or refused is held
    #: when one's standard deviation is over this and the outcome could change within
    #: it: too few samples back it.
    max_spread: float = Field(default=DEFAULT_MAX_SPREAD, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _ordered(self) -> GatePolicy:
        if self.contradiction_threshold > self.min_p1:
            raise ValueError("contradiction_threshold must not exceed min_p1")
        return self


#: The specification's decision table alone, as the gate decided before three
#: outcomes: what the verifier cannot ground is refused, no checks read the claim, and
#: a grounded fact is verified at any p1. For callers (and tests) that pin the table's
#: rows to a scripted verifier.
REFUSE_UNGROUNDED = GatePolicy(reject_unsupported=True, checks=False, verify_p1=0.0)


def decide(
    p0: float,
    p1: float,
    stated: float,
    policy: GatePolicy,
    findings: Sequence[Finding] = (),
    *,
    spread: tuple[float, float] = (0.0, 0.0),
) -> Verdict:
    """Rows 2-6 of the decision table for valid probabilities p0, p1 and tau = ``stated``,
    with the checks' ``findings``: a refuting one refuses, a doubtful one holds.
    ``spread``: the standard deviations of sampled p1 and p0; one over
    ``policy.max_spread`` holds a verdict that the numbers within it could change
    (``_unsure``)."""
    verdict = _judged(p0, p1, stated, policy, findings)
    s1, s0 = spread
    if s1 <= 0.0 and s0 <= 0.0:
        return verdict
    verdict = verdict.model_copy(update={"p1_spread": s1, "p0_spread": s0})
    return _unsure(verdict, p0, p1, spread, stated, policy, findings)


def _judged(
    p0: float, p1: float, stated: float, policy: GatePolicy, findings: Sequence[Finding]
) -> Verdict:
    """``decide`` for numbers taken as exact."""
    verdict = _decide(p0, p1, stated, policy)
    refute = next((f for f in findings if f.effect == "refute"), None)
    doubt = next((f for f in findings if f.effect == "doubt"), None)
    if refute is None and p1 < policy.refute_swap_p1:
        refute = next((f for f in findings if f.check == "things"), None)
    if refute is not None:
        return refused(verdict, refute)
    if not verdict.accepted:
        return verdict
    if doubt is not None:  # the check's reason says more than "the verifier is unsure"
        return _held(verdict, doubt.reason, doubt.check)
    if verdict.flagged:
        return verdict
    stated = any(f.check in _AS_WRITTEN and f.effect == "support" for f in findings)
    if p1 < policy.verify_p1 and not stated:  # said as written, it needs no model
        return _held(
            verdict,
            f"the verifier is unsure: p1 {p1:.2f}, a verified fact needs {policy.verify_p1:.2f}",
        )
    support = next((f for f in findings if f.effect == "support"), None)
    if support is not None and verdict.reason is None:
        return verdict.model_copy(update={"reason": support.reason, "check": support.check})
    return verdict


#: Checks whose support verifies a grounded claim below ``verify_p1``: a record's field
#: as written, a sentence with its speaker's correction put in.
_AS_WRITTEN = frozenset({"fields", "corrected"})


def _unsure(
    verdict: Verdict,
    p0: float,
    p1: float,
    spread: tuple[float, float],
    stated: float,
    policy: GatePolicy,
    findings: Sequence[Finding],
) -> Verdict:
    """``verdict`` held when a sampled estimate's spread is over ``policy.max_spread`` and
    the outcome differs somewhere within one spread of the numbers. Held verdicts, a
    check's refusal, and refusals under ``reject_unsupported`` (hold nothing) stay."""
    if verdict.outcome == "held" or (not verdict.accepted and verdict.check is not None):
        return verdict
    if not verdict.accepted and policy.reject_unsupported:
        return verdict
    s1, s0 = (s if s > policy.max_spread else 0.0 for s in spread)
    if s1 == 0.0 and s0 == 0.0:
        return verdict
    outcomes = {
        _judged(_clip(p0 + d0), _clip(p1 + d1), stated, policy, findings).outcome
        for d1 in (-s1, 0.0, s1)
        for d0 in (-s0, 0.0, s0)
    }
    if len(outcomes) == 1:
        return verdict
    unsure = " and ".join(
        f"{name} {p:.2f} +/- {s:.2f}" for name, p, s in (("p1", p1, s1), ("p0", p0, s0)) if s
    )
    why = (
        f"the verifier is unsure: {unsure} from its sampled answers could change the "
        f"decision, and the gate decides on a spread of at most {policy.max_spread:.2f} "
        "(more samples would narrow it)"
    )
    if verdict.accepted:
        return _held(verdict, why)
    return verdict.model_copy(
        update={
            "status": VerdictStatus.INSUFFICIENT_EVIDENCE,
            "accepted": True,
            "flagged": True,
            "confidence": min(stated, p1),
            "reason": why,
        }
    )


def _clip(p: float) -> float:
    return min(1.0, max(0.0, p))


def refused(verdict: Verdict, refute: Finding) -> Verdict:
    """``verdict`` refused by a check's finding, whatever the verifier said (or if it
    said nothing: a timeout or an error): the finding's reason, its check's name."""
    # "Never mentions" is evidence missing (unsupported), not evidence against.
    absent = refute.check == "names"
    return verdict.model_copy(
        update={
            "status": VerdictStatus.UNSUPPORTED if absent else VerdictStatus.CONTRADICTED,
            "accepted": False,
            "flagged": False,
            "confidence": 0.0,
            "reason": refute.reason,
            "check": refute.check,
        }
    )


def _held(verdict: Verdict, reason: str, check: str | None = None) -> Verdict:
    """``verdict`` held: stored, flagged, at no more than its p1."""
    confidence = min(verdict.confidence, verdict.p1 if verdict.p1 is not None else 1.0)
    return verdict.model_copy(
        update={"flagged": True, "confidence": confidence, "reason": reason, "check": check}
    )


def _decide(p0: float, p1: float, stated: float, policy: GatePolicy) -> Verdict:
    b = budget(p0, p1, stated, policy.eps)
    numbers: dict[str, Any] = {
        "p0": p0,
        "p1": p1,
        "required_bits": b.required_bits,
        "observed_bits": b.observed_bits,
        "budget_gap": b.budget_gap,
        "stated_confidence": stated,
    }

    def reject(status: VerdictStatus, reason: str) -> Verdict:
        return Verdict(status=status, accepted=False, confidence=0.0, reason=reason, **numbers)

    def unsupported(status: VerdictStatus, reason: str) -> Verdict:
        if policy.reject_unsupported:
            return reject(status, reason)
        return Verdict(
            status=status,
            accepted=True,
            flagged=True,
            confidence=min(stated, p1),
            reason=reason,
            **numbers,
        )

    if p1 < policy.contradiction_threshold and p1 < p0:
        return reject(VerdictStatus.CONTRADICTED, "the evidence makes the claim less likely")
    if p0 >= stated and p1 >= policy.min_p1:
        action = policy.prior_sufficient
        if action == "reject":
            return reject(VerdictStatus.PRIOR_SUFFICIENT, "the claim did not need the evidence")
        return Verdict(
            status=VerdictStatus.PRIOR_SUFFICIENT,
            accepted=True,
            flagged=action == "flag",
            confidence=min(stated, p1),
            reason="the claim is as likely without the cited evidence",
            **numbers,
        )
    if p1 <= p0 or p1 < policy.min_p1:
        return unsupported(
            VerdictStatus.UNSUPPORTED,
            f"the evidence does not support the claim: p1 {p1:.2f}, a verified fact "
            f"needs {max(policy.min_p1, policy.verify_p1):.2f}"
            if p1 < policy.min_p1
            else "the claim is no likelier with the evidence than without it "
            f"(p1 {p1:.2f}, p0 {p0:.2f})",
        )
    if b.budget_gap > policy.flag_threshold_bits:
        return unsupported(
            VerdictStatus.INSUFFICIENT_EVIDENCE,
            f"the evidence supports the claim less than its stated confidence {stated:.2f} "
            f"needs ({b.budget_gap:.2f} bits short)",
        )
    confidence = stated if b.required_bits == 0 else min(stated, b.observed_bits / b.required_bits)
    return Verdict(status=VerdictStatus.GROUNDED, accepted=True, confidence=confidence, **numbers)


def degraded(status: VerdictStatus, stated: float, policy: GatePolicy, reason: str) -> Verdict:
    """Row 1: the verifier failed or timed out. Store, unverified, with reduced confidence."""
    return Verdict(
        status=status,
        accepted=True,
        confidence=stated * policy.timeout_reduction,
        stated_confidence=stated,
        reason=reason,
    )


def no_model_call(status: VerdictStatus, stated: float, reason: str) -> Verdict:
    """Row 0: rejected before any model call (no evidence, unknown citation)."""
    return Verdict(
        status=status, accepted=False, confidence=0.0, stated_confidence=stated, reason=reason
    )
