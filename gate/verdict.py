"""The gate's answer for one claim (docs/design.md, Verdict)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field


class GateNumbers(BaseModel):
    """The numbers behind a decision (docs/design.md, Verdict), declared once: a Verdict,
    memstore's Admission and its stored facts, verifications and rejections all take
    them from here. None where the gate computed none (no evidence, a timeout, ...)."""

    p0: float | None = None
    p1: float | None = None
    required_bits: float | None = None
    observed_bits: float | None = None
    budget_gap: float | None = None


#: The numbers' names, in order.
GATE_NUMBERS = tuple(GateNumbers.model_fields)


class VerdictStatus(StrEnum):
    """Verdict names, in the order of the decision table (docs/design.md, Decision table)."""

    NO_EVIDENCE = "no_evidence"
    UNKNOWN_CITATION = "unknown_citation"
    VERIFIER_ERROR = "verifier_error"
    TIMEOUT = "timeout"
    CONTRADICTED = "contradicted"
    PRIOR_SUFFICIENT = "prior_sufficient"
    UNSUPPORTED = "unsupported"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    GROUNDED = "grounded"


Outcome = Literal["verified", "held", "refused"]


class _Decision(BaseModel):
    """A Verdict's fields before its numbers (a base, so the fields keep their order)."""

    model_config = ConfigDict(frozen=True)

    status: VerdictStatus
    accepted: bool
    flagged: bool = False
    confidence: float
    stated_confidence: float


class Verdict(GateNumbers, _Decision):
    """Whether a claim is grounded in its evidence, with the numbers behind the decision.

    ``accepted`` says whether a memory gate should store the claim; ``confidence``
    is the confidence to store it with. ``flagged`` marks an accepted claim that a
    reviewer should look at (``prior_sufficient`` under the ``flag`` policy).
    """

    model_config = ConfigDict(frozen=True)

    backend: str | None = None
    latency_ms: float | None = None
    cached: bool = False
    reason: str | None = None
    #: The check whose finding decided (``gate.checks.CHECKS``), if one did.
    check: str | None = None
    #: The standard deviations of p1 and p0 where the verifier estimated them by sampling
    #: (the ``sampling`` backend, the MCP host); None where it read them.
    p1_spread: float | None = None
    p0_spread: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> Outcome:
        """``verified``, ``held`` (stored, flagged ``unverified``) or ``refused``."""
        if not self.accepted:
            return "refused"
        return "held" if self.flagged or self.status in UNDECIDED else "verified"


#: Verdicts that reached no decision (the verifier failed): stored, never verified.
UNDECIDED = frozenset({VerdictStatus.TIMEOUT, VerdictStatus.VERIFIER_ERROR})
