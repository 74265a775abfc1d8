"""A backend whose answers come from a callable: for tests and for users' own rules.

Like httpx's MockTransport: it stands in for the model, never for the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gate.backends.base import CallControl, VerifierBackend
from gate.evidence import REMOVED

RECORDED_BATCHES = 1_000


class ScriptedBackend(VerifierBackend):
    """Answers each (claim, context) with ``handler(claim, context)``; records every batch."""

    name = "scripted"

    def __init__(
        self,
        handler: Callable[[str, str], float],
        *,
        model: str = "handler",
        deterministic: bool = True,
    ) -> None:
        self.handler = handler
        self.model = model
        self.deterministic = deterministic
        #: The most recent batches asked (bounded, so long-running use does not grow memory).
        self.batches: list[list[tuple[str, str]]] = []

    @classmethod
    def fixed(cls, p0: float, p1: float) -> ScriptedBackend:
        """p0 for scrubbed contexts (they hold the removal marker), p1 otherwise."""
        return cls(lambda _claim, context: p0 if REMOVED in context else p1, model=f"{p0}/{p1}")

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        self.batches.append(list(pairs))
        del self.batches[:-RECORDED_BATCHES]
        out = []
        for claim, context in pairs:
            if control is not None:
                control.check()  # the gate gave up: stop before the next pair
            out.append(self.handler(claim, context))
        return out
