"""Per-request limits: how much one call may ask of the grounding gate and the store.

The gate's cost grows with the claims it checks and the evidence it reads, so one
request is bounded in both (the latency budget is per claim: docs/design.md, Latency
budget). Over a limit, nothing is checked or written: too many claims is InvalidInput
(HTTP 400), too much evidence is TooLarge (HTTP 413), each naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from memstore.errors import InvalidInput, TooLarge

#: Facts (or claims of ``remember``) one request may put through the gate.
DEFAULT_MAX_CLAIMS = 100
#: Characters of distinct evidence text one request may carry (inline or cited by id).
DEFAULT_MAX_EVIDENCE_CHARS = 100_000


class _Text(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str: ...


class _WithEvidence(Protocol):
    """A write's candidate as the limits read it (``memstore.write.hook.Candidate``)."""

    @property
    def evidence(self) -> Sequence[_Text]: ...


@dataclass(frozen=True, slots=True)
class Limits:
    """How much one request may carry; ``Store(limits=...)``, ``store:`` settings."""

    max_claims: int = DEFAULT_MAX_CLAIMS
    max_evidence_chars: int = DEFAULT_MAX_EVIDENCE_CHARS

    def __post_init__(self) -> None:
        for name in ("max_claims", "max_evidence_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"limits.{name}", "must be a whole number, at least 1")

    def check_claims(self, count: int, field: str, what: str = "facts") -> None:
        """Raise InvalidInput naming ``field`` if ``count`` claims are too many to check."""
        if count > self.max_claims:
            raise InvalidInput(
                field,
                f"at most {self.max_claims} {what} per call are checked by the gate, got "
                f"{count}; split them over several calls",
            )

    def check_texts(self, texts: Iterable[str], field: str) -> None:
        """Raise TooLarge naming ``field`` if the distinct ``texts`` are over the limit."""
        total = sum(len(text) for text in set(texts))
        if total > self.max_evidence_chars:
            raise TooLarge(field, self._too_much(total))

    def _too_much(self, total: int) -> str:
        return (
            f"one call may carry at most {self.max_evidence_chars} characters of evidence, "
            f"this one {total} or more; cite the passages that state the facts, or split the call"
        )

    def check_evidence(self, candidates: Iterable[_WithEvidence], field: str | None = None) -> None:
        """Raise TooLarge if the distinct evidence texts of ``candidates`` are over the limit.

        ``field`` names the evidence in the error; None: ``evidence`` for one candidate,
        ``facts.<i>.evidence`` (the fact that brings the total over) for several.
        """
        items = list(candidates)
        seen: set[str] = set()
        total = 0
        for i, candidate in enumerate(items):
            for item in candidate.evidence:
                if item.id not in seen:
                    seen.add(item.id)
                    total += len(item.text)
            if total > self.max_evidence_chars:
                where = field or ("evidence" if len(items) == 1 else f"facts.{i}.evidence")
                raise TooLarge(where, self._too_much(total))
