"""The write hook: every fact passes one ``WriteHook`` before it becomes memory.

The store builds a ``Candidate`` (the statement, its stated confidence, the
evidence texts with ids, and what is cited) and asks the hook for an
``Admission``: store it (with which status and confidence) or reject it. The
grounding gate is one such hook (``GateHook``: Candidate -> ``gate.Check``, Verdict
-> Admission); ``Ungated`` admits everything and says so. Which hook decides a call
is here too: the store's, one call's gate settings, or none (``store_hook``,
``call_hook``, ``reverify_hook``). Hooks run outside any database transaction and
never see storage objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

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
from gate.verdict import GateNumbers
from memstore.errors import InvalidInput, MemstoreError
from memstore.limits import Limits
from memstore.schemas import ClaimCheck
from memstore.storage.tables import FactStatus, GateFields


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One evidence text in a candidate's context."""

    id: str
    text: str
    source: str = "inline"


@dataclass(frozen=True, slots=True)
class CitedSpan:
    """A cited piece of evidence; ``start``/``end`` are None when the whole text is cited."""

    evidence_id: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact waiting for admission. No citations means all evidence counts as cited."""

    namespace: str
    statement: str
    stated_confidence: float
    evidence: tuple[EvidenceItem, ...]
    citations: tuple[CitedSpan, ...] = ()


class _Decided(BaseModel):
    """Admission's fields before the gate numbers (a base, so the fields keep the order
    they had when Admission was a dataclass)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    accepted: bool
    verdict: str
    status: FactStatus
    confidence: float


class Admission(GateNumbers, _Decided):
    """A hook's decision with the numbers behind it (names as in the gate's Verdict).

    Fields go by keyword or, as when Admission was a dataclass, by position in this
    order: accepted, verdict, status, confidence, p0, p1, required_bits, observed_bits,
    budget_gap, backend, latency_ms, reason.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: str | None = None
    latency_ms: float | None = None
    reason: str | None = None

    def __init__(self, *args: Any, **fields: Any) -> None:
        names = list(type(self).model_fields)
        if len(args) > len(names):
            raise TypeError(f"Admission takes at most {len(names)} positional arguments")
        for name, value in zip(names, args, strict=False):
            if name in fields:
                raise TypeError(f"Admission got {name!r} both by position and by keyword")
            fields[name] = value
        super().__init__(**fields)

    def gate_fields(self) -> dict[str, Any]:
        """The numbers under the ``GateFields`` column names (facts, history, rejections)."""
        return {name: getattr(self, name) for name in GateFields.model_fields}


@runtime_checkable
class WriteHook(Protocol):
    """Decides, for a batch of candidates, which become memory."""

    name: str

    def admit_many(self, candidates: Sequence[Candidate]) -> list[Admission]:
        """One Admission per candidate, in order. Must not raise for a single bad item."""
        ...


def answers(hook: WriteHook, candidates: Sequence[Candidate]) -> list[Admission]:
    """The hook's answer for each candidate, in order; MemstoreError when it gives
    another number of answers than it was asked for."""
    admissions = list(hook.admit_many(candidates))
    if len(admissions) != len(candidates):
        raise MemstoreError(
            f"write hook {hook.name!r} returned {len(admissions)} answers "
            f"for {len(candidates)} facts"
        )
    return admissions


class Ungated:
    """Admits every fact unchecked, recorded as verdict ``ungated``, status ``unverified``."""

    name = "ungated"
    verdict = "ungated"

    def admit_many(self, candidates: Sequence[Candidate]) -> list[Admission]:
        return [
            Admission(
                accepted=True,
                verdict=self.verdict,
                status=FactStatus.UNVERIFIED,
                confidence=c.stated_confidence,
                backend=None,
                reason="written with the grounding gate off",
            )
            for c in candidates
        ]


# -- the grounding gate as a write hook ----------------------------------------------

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
    """The gate's view of a candidate fact. Its evidence goes by place (1, 2, ...), not
    by id: a new text's id is random, and the same fact with the same evidence must ask
    the verifier the same question (the verdict cache, a client's model answering over
    several rounds); citations are renamed with it."""
    place = {e.id: str(i) for i, e in enumerate(candidate.evidence, start=1)}
    return Check(
        claim=candidate.statement,
        evidence=tuple(ContextItem(place[e.id], e.text) for e in candidate.evidence),
        citations=tuple(
            # an id not among the evidence stays unknown (never a place's number)
            Citation(place.get(c.evidence_id, f"?{c.evidence_id}"), c.start, c.end)
            for c in candidate.citations
        ),
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


# -- which hook decides a call ---------------------------------------------------------


def gate_of(gate: Gate | str | None) -> Gate | None:
    """A ``gate.Gate`` from a gate or a backend name (None: the default gate)."""
    if gate is None or isinstance(gate, Gate):
        return gate
    if isinstance(gate, str):
        try:
            return Gate(gate)
        except (ValueError, ImportError) as exc:
            raise InvalidInput("gate", str(exc)) from None
    raise InvalidInput("gate", f"must be a gate.Gate or a backend name, got {type(gate).__name__}")


def policy_of(policy: GatePolicy | None) -> GatePolicy | None:
    """A ``gate.GatePolicy``, or None for the gate's own."""
    if policy is None or isinstance(policy, GatePolicy):
        return policy
    raise InvalidInput("policy", f"must be a gate.GatePolicy, got {type(policy).__name__}")


def store_hook(
    gate: Gate | str | None, policy: GatePolicy | None, hook: WriteHook | None
) -> WriteHook:
    """A store's write hook: the given hook, or the grounding gate with its settings."""
    if hook is None:
        return GateHook(gate_of(gate), policy_of(policy))
    if gate is not None or policy is not None:
        raise InvalidInput("hook", "give a write hook or gate settings (gate, policy), not both")
    if not isinstance(hook, WriteHook):
        raise InvalidInput(
            "hook", f"must be a WriteHook (with admit_many), got {type(hook).__name__}"
        )
    return hook


def call_hook(
    hook: WriteHook, gate: Gate | str | None, policy: GatePolicy | None, ungated: bool
) -> WriteHook:
    """The write hook of one call: the store's ``hook``, or it with per-call gate settings."""
    if not isinstance(ungated, bool):
        raise InvalidInput("ungated", "must be True or False")
    if ungated:
        if gate is not None or policy is not None:
            raise InvalidInput("ungated", "an ungated write takes no gate or policy")
        return Ungated()
    if gate is None and policy is None:
        return hook
    if isinstance(hook, GateHook):
        return hook.with_settings(gate_of(gate), policy_of(policy))
    if gate is None:
        raise InvalidInput("policy", "this store's write hook is not the gate; pass gate= too")
    return GateHook(gate_of(gate), policy_of(policy))


def reverify_hook(hook: WriteHook, gate: Gate | str | None, policy: GatePolicy | None) -> GateHook:
    """The gate re-verification uses: the store's (or its configured recheck gate), with
    per-run settings if given."""
    if isinstance(hook, GateHook):
        if gate is None and policy is None:
            recheck = hook.recheck_gate  # a stronger verifier configured for rechecks
            return hook if recheck is None else hook.with_settings(recheck)
        return hook.with_settings(gate_of(gate), policy_of(policy))
    return GateHook(gate_of(gate), policy_of(policy))


def caches(hook: WriteHook) -> bool:
    """Whether the hook's gate keeps the verifier's answers (``Gate.caches``)."""
    return isinstance(hook, GateHook) and hook.gate.caches


def check_claim(hook: WriteHook, limits: Limits, check: ClaimCheck) -> Verdict:
    """The gate's verdict on a claim, from a store with this write hook: its own gate,
    or the process-wide embedded gate when its writes are not gated."""
    gate = hook.gate if isinstance(hook, GateHook) else default_gate()
    policy = hook.policy if isinstance(hook, GateHook) else None
    texts = [item.text for item in check.evidence]
    limits.check_texts(texts, "evidence")
    return gate.check(check.claim, texts, confidence=check.confidence, policy=policy)


def admit(hook: WriteHook, candidates: list[Candidate]) -> list[Admission]:
    """The hook's answer for each candidate, in order."""
    if not candidates:
        return []
    return answers(hook, candidates)
