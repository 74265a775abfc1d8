"""Reasoning-trace audit: is each step grounded, and does the answer follow from the steps?

``audit_trace`` judges every step against the context plus the steps already
found ENTAILED, then checks, independently, whether the final answer follows from
the steps alone (that check never sees the context).

Gate verdicts map to step statuses as follows:

==========================================  ================
gate verdict                                step status
==========================================  ================
``grounded``, ``prior_sufficient``          ENTAILED
``contradicted``                            CONTRADICTED
``unsupported``, ``insufficient_evidence``  NOT_IN_CONTEXT
``no_evidence``, ``unknown_citation``       NOT_IN_CONTEXT
``verifier_error``, ``timeout``             UNVERIFIABLE
a step that states nothing (a question,     UNVERIFIABLE
an instruction, a pleasantry, a hedge)
==========================================  ================

A step may hold several claims (``gate.claims``); its status is the worst of its
claims' statuses, in the order CONTRADICTED, NOT_IN_CONTEXT, UNVERIFIABLE, ENTAILED.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from gate.claims import Claim, check_text, extract_claims, strip_citations
from gate.engine import Check, Gate, default_gate
from gate.evidence import ContextItem
from gate.outputs import claim_check, context_items
from gate.verdict import Verdict, VerdictStatus

#: Id prefix of earlier steps when they serve as evidence ("step:1" is the first step).
STEP_ID_PREFIX = "step:"


class StepStatus(StrEnum):
    """A reasoning step's standing against its evidence."""

    ENTAILED = "entailed"
    CONTRADICTED = "contradicted"
    NOT_IN_CONTEXT = "not_in_context"
    UNVERIFIABLE = "unverifiable"


#: The gate verdict -> step status table of the module docstring.
STEP_STATUS: dict[VerdictStatus, StepStatus] = {
    VerdictStatus.GROUNDED: StepStatus.ENTAILED,
    VerdictStatus.PRIOR_SUFFICIENT: StepStatus.ENTAILED,
    VerdictStatus.CONTRADICTED: StepStatus.CONTRADICTED,
    VerdictStatus.UNSUPPORTED: StepStatus.NOT_IN_CONTEXT,
    VerdictStatus.INSUFFICIENT_EVIDENCE: StepStatus.NOT_IN_CONTEXT,
    VerdictStatus.NO_EVIDENCE: StepStatus.NOT_IN_CONTEXT,
    VerdictStatus.UNKNOWN_CITATION: StepStatus.NOT_IN_CONTEXT,
    VerdictStatus.VERIFIER_ERROR: StepStatus.UNVERIFIABLE,
    VerdictStatus.TIMEOUT: StepStatus.UNVERIFIABLE,
}
_SEVERITY = (
    StepStatus.CONTRADICTED,
    StepStatus.NOT_IN_CONTEXT,
    StepStatus.UNVERIFIABLE,
    StepStatus.ENTAILED,
)


@dataclass(frozen=True, slots=True)
class StepResult:
    """One audited step (or the answer): its status and the verdict of each claim.

    ``claims`` are the step's checkable claims and ``verdicts`` theirs, in order;
    a step with no checkable claim has neither and is UNVERIFIABLE.
    """

    index: int
    text: str
    status: StepStatus
    claims: tuple[Claim, ...]
    verdicts: tuple[Verdict, ...]

    @property
    def reason(self) -> str:
        """Why the step has its status, in words."""
        if not self.claims:
            return "the step states nothing checkable (a question, instruction or hedge)"
        worst = [
            f'"{c.content}" {v.status.value}' + (f": {v.reason}" if v.reason else "")
            for c, v in zip(self.claims, self.verdicts, strict=True)
            if STEP_STATUS[v.status] is self.status
        ]
        return "; ".join(worst)


@dataclass(frozen=True, slots=True)
class TraceReport:
    """The audit of a reasoning trace.

    ``steps``: each step against the context and the earlier entailed steps.
    ``answer``: the final answer against the steps only (``answer.index`` is -1
    for an explicit ``answer=``). ``answer_follows``: whether that check entailed it.
    """

    steps: tuple[StepResult, ...]
    answer: StepResult

    @property
    def answer_follows(self) -> bool:
        return self.answer.status is StepStatus.ENTAILED

    @property
    def ok(self) -> bool:
        """Every step is entailed and the answer follows from the steps."""
        return self.answer_follows and all(s.status is StepStatus.ENTAILED for s in self.steps)

    @property
    def failed_steps(self) -> list[StepResult]:
        return [s for s in self.steps if s.status is not StepStatus.ENTAILED]

    def summary(self) -> str:
        """One line: status counts and whether the answer follows."""
        counts = ", ".join(
            f"{sum(s.status is status for s in self.steps)} {status.value}" for status in StepStatus
        )
        follows = "follows" if self.answer_follows else "does not follow"
        return f"{len(self.steps)} steps: {counts}; the answer {follows} from the steps"

    def as_feedback(self) -> str:
        """A message an agent can act on: each step that is not entailed, and the answer."""
        if self.ok:
            return "Every step is supported by the context and the answer follows from them."
        lines = [
            f"Step {s.index + 1} is {s.status.value.replace('_', ' ')}: {s.reason}"
            for s in self.failed_steps
        ]
        if not self.answer_follows:
            lines.append(
                f"The answer does not follow from the steps "
                f"({self.answer.status.value.replace('_', ' ')}): {self.answer.reason}"
            )
        lines.append("Revise the steps above so each rests on the context, then re-derive.")
        return "\n".join(lines)


def audit_trace(
    steps: Sequence[str],
    context: str | Sequence[str | ContextItem],
    *,
    answer: str | None = None,
    gate: Gate | None = None,
) -> TraceReport:
    """Audit reasoning ``steps`` against ``context``; see the module docstring.

    The answer is ``answer``, or else the last step. Step k is checked against the
    context plus the steps before it that were ENTAILED (as evidence items
    ``step:1``, ``step:2``, ...). The answer is checked against all steps but itself,
    and nothing else; citation markers in it are ignored there. Gate calls: one
    for all steps and the answer when every step is entailed, plus one more after
    each step that is not (the steps after it are re-checked without it).
    """
    texts = _steps(steps)
    if answer is not None:
        check_text("answer", answer)
    items = context_items(context)
    for i, item in enumerate(items):
        if item.id.startswith(STEP_ID_PREFIX):
            raise ValueError(f"context[{i}]: ids starting {STEP_ID_PREFIX!r} are kept for steps")
    if gate is None:
        gate = default_gate()
    elif not isinstance(gate, Gate):
        raise TypeError(f"gate: must be a gate.Gate, got {type(gate).__name__}")
    claims = [[c for c in extract_claims(t) if c.is_evidence] for t in texts]
    answer_text = texts[-1] if answer is None else answer
    premises = texts[:-1] if answer is None else texts
    answer_claims = claims[-1] if answer is None else _evidence_claims(answer)
    answer_checks = [
        Check(c.content, _as_evidence(premises, range(len(premises))), (), c.confidence)
        for c in answer_claims
    ]
    results: list[StepResult] = []
    answer_verdicts: list[Verdict] | None = None  # None until the answer's check has run
    while len(results) < len(texts):
        first = len(results)
        entailed = [r.index for r in results if r.status is StepStatus.ENTAILED]
        checks: list[Check] = []
        for k in range(first, len(texts)):
            evidence = items + _as_evidence(texts, [*entailed, *range(first, k)])
            checks.extend(claim_check(c, evidence) for c in claims[k])
        batch = checks if answer_verdicts is not None else [*checks, *answer_checks]
        verdicts = gate.check_many(batch) if batch else []
        if answer_verdicts is None:
            answer_verdicts = verdicts[len(checks) :]
        position = 0
        for k in range(first, len(texts)):
            own = verdicts[position : position + len(claims[k])]
            position += len(claims[k])
            results.append(_result(k, texts[k], claims[k], own))
            if results[-1].status is not StepStatus.ENTAILED:
                break  # later steps assumed this one as a premise: check them again
    index = len(texts) - 1 if answer is None else -1
    return TraceReport(
        steps=tuple(results),
        answer=_result(index, answer_text, answer_claims, answer_verdicts or []),
    )


def _steps(steps: Sequence[str]) -> list[str]:
    if isinstance(steps, str) or not isinstance(steps, Sequence):
        raise TypeError(f"steps: must be a list of strings, got {type(steps).__name__}")
    if not steps:
        raise ValueError("steps: must not be empty")
    for i, step in enumerate(steps):
        check_text(f"steps[{i}]", step)
    return list(steps)


def _evidence_claims(text: str) -> list[Claim]:
    return [c for c in extract_claims(text) if c.is_evidence]


def _as_evidence(texts: Sequence[str], indexes: Sequence[int] | range) -> tuple[ContextItem, ...]:
    return tuple(
        ContextItem(f"{STEP_ID_PREFIX}{i + 1}", strip_citations(texts[i])) for i in sorted(indexes)
    )


def _result(index: int, text: str, claims: list[Claim], verdicts: Sequence[Verdict]) -> StepResult:
    if not claims:
        status = StepStatus.UNVERIFIABLE
    else:
        found = {STEP_STATUS[v.status] for v in verdicts}
        status = next(s for s in _SEVERITY if s in found)
    return StepResult(index, text, status, tuple(claims), tuple(verdicts))
