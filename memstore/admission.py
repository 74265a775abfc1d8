"""The write hook: every fact passes one ``WriteHook`` before it becomes memory.

The store builds a ``Candidate`` (the statement, its stated confidence, the
evidence texts with ids, and what is cited) and asks the hook for an
``Admission``: store it (with which status and confidence) or reject it. The
grounding gate is one such hook; ``Ungated`` admits everything and says so.
Hooks run outside any database transaction and never see storage objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from gate.verdict import GateNumbers
from memstore.errors import MemstoreError
from memstore.models import FactStatus, GateFields


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
