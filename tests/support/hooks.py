"""Write hooks that decide by a rule, not a model, for tests of the write path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memstore import Admission, Candidate, FactStatus


class ScriptedHook:
    """Decides by a callable, and records every candidate it was shown."""

    name = "scripted"

    def __init__(self, decide: Callable[[Candidate], Admission]) -> None:
        self.decide = decide
        self.seen: list[Candidate] = []

    def admit_many(self, candidates: Sequence[Candidate]) -> list[Admission]:
        self.seen.extend(candidates)
        return [self.decide(c) for c in candidates]


def admit(**numbers: Any) -> Admission:
    """Grounded and verified, with the ``numbers`` given (a confidence at least)."""
    return Admission(accepted=True, verdict="grounded", status=FactStatus.VERIFIED, **numbers)


def refuse(**numbers: Any) -> Admission:
    """Unsupported, with the ``numbers`` given (a reason, say); confidence 0 unless given."""
    numbers.setdefault("confidence", 0.0)
    return Admission(accepted=False, verdict="unsupported", status=FactStatus.UNVERIFIED, **numbers)
