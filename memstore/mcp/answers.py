"""The Store's records as the tools' answers (``memstore.mcp.models``): a stored fact or
the gate's refusal as ``Remembered``, a fact as a ``Memory``, a search hit as a
``RecalledFact``, and the fact ``remember`` and ``supersede`` hand the Store."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from gate import Verdict, VerdictStatus
from gate.verdict import GATE_NUMBERS
from memstore.conversations.conversation import CandidateOutcome
from memstore.mcp.models import (
    CandidateSummary,
    ClaimVerdict,
    Member,
    Memory,
    RecalledFact,
    Rejection,
    Remembered,
)
from memstore.schemas import FactPublic, RejectionPublic, SearchHit

#: Evidence texts in ``audit_rejections`` are cut to this many characters.
EVIDENCE_PREVIEW = 500

#: What to do about a refusal, by the gate's verdict.
HINTS: dict[str, str] = {
    VerdictStatus.NO_EVIDENCE: "Pass the source text the fact comes from as evidence.",
    VerdictStatus.CONTRADICTED: "The evidence contradicts the statement; do not remember it.",
    VerdictStatus.UNSUPPORTED: (
        "The evidence does not support the statement: quote the passage that states it, "
        "or do not remember it."
    ),
    VerdictStatus.INSUFFICIENT_EVIDENCE: (
        "The evidence supports the statement only partly: quote the passage that states "
        "it, or state a lower confidence if the evidence only suggests it."
    ),
    VerdictStatus.PRIOR_SUFFICIENT: (
        "The statement does not depend on the evidence; memory keeps facts that the "
        "evidence grounds."
    ),
}


_Shown = TypeVar("_Shown", bound=BaseModel)


def shown(model: type[_Shown], source: object, **given: Any) -> _Shown:
    """``model`` with ``given`` and, for each of its other fields, ``source``'s attribute of
    that name (a nested model from attributes too: a ``MemberPublic`` as a ``Member``)."""
    same = {name: getattr(source, name) for name in model.model_fields if name not in given}
    return model.model_validate(same | given, from_attributes=True)


def _numbers(source: Any) -> dict[str, Any]:
    return {name: getattr(source, name) for name in GATE_NUMBERS}


def stored(fact: FactPublic) -> Remembered:
    """A write the gate let through (verdict, status, confidence, duplicates and the
    gate's numbers: the fact's own)."""
    return shown(
        Remembered,
        fact,
        stored=True,
        fact_id=fact.id,
        reason=fact.status_reason,
        rejection_id=None,
        hint=None,
    )


def refused(rejection: RejectionPublic) -> Remembered:
    """A write the gate refused: the verdict, why, and what to do about it."""
    return Remembered(
        stored=False,
        verdict=rejection.verdict,
        rejection_id=rejection.id,
        reason=rejection.reason,
        hint=HINTS.get(rejection.verdict),
        **_numbers(rejection),
    )


def candidate(outcome: CandidateOutcome) -> CandidateSummary:
    """What became of one fact extracted from a conversation."""
    found = outcome.fact or outcome.rejection
    return shown(
        CandidateSummary,
        outcome,
        verdict=None if found is None else found.verdict,
        p1=None if found is None else found.p1,
        fact_id=None if outcome.fact is None else outcome.fact.id,
        rejection_id=None if outcome.rejection is None else outcome.rejection.id,
        reason=outcome.rejection.reason
        if outcome.rejection is not None
        else (outcome.fact.status_reason if outcome.fact is not None else None),
    )


def fact_input(
    statement: str,
    members: list[Member],
    evidence: list[str],
    relation: str | None,
    confidence: float,
    metadata: dict[str, Any] | None,
) -> dict[str, Any]:
    """The fact ``remember`` and ``supersede`` write (no metadata: none given, so a
    correction keeps the old version's)."""
    fact: dict[str, Any] = {
        "statement": statement,
        "members": [m.model_dump() for m in members],
        "evidence": evidence,
        "relation": relation,
        "confidence": confidence,
    }
    if metadata is not None:
        fact["metadata"] = metadata
    return fact


def memory(fact: FactPublic) -> Memory:
    return shown(Memory, fact, fact_id=fact.id)


def recalled(hit: SearchHit) -> RecalledFact:
    """The hit's fact as ``memory`` shows it, with the hit's score, relevance, similarity."""
    return shown(RecalledFact, hit, **memory(hit.fact).model_dump())


def claim_verdict(verdict: Verdict) -> ClaimVerdict:
    return shown(ClaimVerdict, verdict, status=verdict.status.value)


def rejection(refusal: RejectionPublic) -> Rejection:
    """A refusal of the audit log, its evidence cut to ``EVIDENCE_PREVIEW`` characters."""
    return shown(
        Rejection,
        refusal,
        rejection_id=refusal.id,
        members=[
            Member(name=m["name"], kind=m.get("kind", "entity"), role=m.get("role", "member"))
            for m in refusal.members
        ],
        evidence=[e.text[:EVIDENCE_PREVIEW] for e in refusal.evidence],
    )
