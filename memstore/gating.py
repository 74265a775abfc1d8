"""The grounding gate as the store's write hook: Candidate -> gate.Check, Verdict -> Admission."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gate import (
    Check,
    Citation,
    ContextItem,
    Gate,
    GatePolicy,
    Verdict,
    VerdictStatus,
    default_gate,
)
from memstore.admission import Admission, Candidate
from memstore.models import FactStatus

#: Verdicts that reached no decision: the fact is stored ``pending`` (out of default
#: reads) and re-checked soon.
UNVERIFIED_VERDICTS = frozenset({VerdictStatus.TIMEOUT, VerdictStatus.VERIFIER_ERROR})


class GateHook:
    """Admits facts the gate accepts; all candidates of a batch go through one gate call.

    ``gate`` None means ``load()`` (a configured gate, built when first needed), else
    the process-wide embedded gate, loaded on the first write: a store that only reads
    never loads a verifier. ``policy`` None means the gate's own thresholds.
    """

    name = "gate"

    def __init__(
        self,
        gate: Gate | None = None,
        policy: GatePolicy | None = None,
        *,
        load: Callable[[], Gate | None] | None = None,
        recheck: Callable[[], Gate | None] | None = None,
    ) -> None:
        self._gate = gate
        self._load = load
        self._recheck = recheck
        self.policy = policy

    @property
    def recheck_gate(self) -> Gate | None:
        """The gate re-verification uses, where one is configured
        (``hallucination.recheck_backend``); None: this hook's own."""
        return self._recheck() if self._recheck is not None else None

    @property
    def gate(self) -> Gate:
        if self._gate is None:
            self._gate = (self._load and self._load()) or default_gate()
        return self._gate

    def with_settings(self, gate: Gate | None = None, policy: GatePolicy | None = None) -> GateHook:
        """This hook with another gate and/or policy (the rest kept)."""
        return GateHook(
            gate or self._gate, policy or self.policy, load=self._load, recheck=self._recheck
        )

    def admit_many(self, candidates: Sequence[Candidate]) -> list[Admission]:
        checks = [to_check(c) for c in candidates]
        return [to_admission(v) for v in self.gate.check_many(checks, policy=self.policy)]


def to_check(candidate: Candidate) -> Check:
    """The gate's view of a candidate fact."""
    return Check(
        claim=candidate.statement,
        evidence=tuple(ContextItem(e.id, e.text) for e in candidate.evidence),
        citations=tuple(Citation(c.evidence_id, c.start, c.end) for c in candidate.citations),
        confidence=candidate.stated_confidence,
    )


def to_admission(verdict: Verdict) -> Admission:
    """What the store does with a verdict (docs/design.md, Decision table: store action)."""
    if not verdict.accepted:
        status = FactStatus.UNVERIFIED  # not stored; the rejection keeps the verdict
    elif verdict.status in UNVERIFIED_VERDICTS:
        status = FactStatus.PENDING  # not checked: stored, but out of default reads
    elif verdict.flagged:
        status = FactStatus.UNVERIFIED
    else:
        status = FactStatus.VERIFIED
    shared = {name: getattr(verdict, name) for name in _SHARED_FIELDS}
    return Admission(verdict=verdict.status.value, status=status, **shared)


#: Admission fields that carry a Verdict's value of the same name. ``status`` differs in
#: meaning (the stored fact's status, not the verdict's), so it is set above, not copied.
_SHARED_FIELDS = tuple(
    name for name in Admission.model_fields if name in Verdict.model_fields and name != "status"
)
