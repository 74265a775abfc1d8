"""audit_trace: each step against the context and earlier entailed steps; the answer
against the steps alone. A ScriptedBackend plays a verifier that knows a few rules."""

from __future__ import annotations

import pytest

from gate import (
    REFUSE_UNGROUNDED,
    ContextItem,
    Gate,
    ScriptedBackend,
    StepStatus,
    VerdictStatus,
    audit_trace,
)
from gate.trace import STEP_ID_PREFIX, STEP_STATUS

#: conclusion -> the premises that entail it (all lowercase, no full stop).
RULES = {
    "ana attends the tuesday meeting": ("ana chairs the board", "the board meets on tuesday"),
    "ana is busy on tuesday": ("ana attends the tuesday meeting",),
}
#: claim -> the statement that contradicts it.
CONTRADICTIONS = {"the board meets on friday": "the board meets on tuesday"}


def reasons(claim: str, context: str) -> float:
    """Stated in the context: 0.97; follows by a rule: 0.96; contradicted: 0.02; else 0.1."""
    key, text = claim.rstrip(".!?").lower(), context.lower()
    if key in text:
        return 0.97
    if key in RULES and all(premise in text for premise in RULES[key]):
        return 0.96
    if key in CONTRADICTIONS and CONTRADICTIONS[key] in text:
        return 0.02
    return 0.1


@pytest.fixture
def scripted_backend() -> ScriptedBackend:
    """Overrides the shared one (tests/conftest.py): ``scripted_gate`` reasons by RULES."""
    return ScriptedBackend(reasons)


CONTEXT = ["Ana chairs the board.", "The board meets on Tuesday."]
SOUND = ["Ana chairs the board.", "Ana attends the Tuesday meeting.", "Ana is busy on Tuesday."]


def statuses(report: object) -> list[StepStatus]:
    return [s.status for s in report.steps]  # type: ignore[attr-defined]


def test_a_sound_trace_is_entailed_step_by_step_in_one_verifier_call(
    scripted_gate: Gate, scripted_backend: ScriptedBackend
) -> None:
    report = audit_trace(SOUND, CONTEXT, gate=scripted_gate)
    assert statuses(report) == [StepStatus.ENTAILED] * 3
    assert report.answer.index == 2 and report.answer.text == SOUND[-1]
    assert report.answer_follows and report.ok
    assert len(scripted_backend.batches) == 1


def test_a_step_only_counts_as_a_premise_once_it_is_entailed(
    scripted_gate: Gate, scripted_backend: ScriptedBackend
) -> None:
    context = ["Ana chairs the board."]  # nothing says when the board meets
    report = audit_trace(SOUND, context, gate=scripted_gate)
    # Step 3 follows from step 2, but step 2 is not in the context, so step 3 is not either.
    assert statuses(report) == [
        StepStatus.ENTAILED,
        StepStatus.NOT_IN_CONTEXT,
        StepStatus.NOT_IN_CONTEXT,
    ]
    assert (
        len(scripted_backend.batches) == 2
    )  # the steps after step 2 were checked again without it
    # The answer check sees the steps only: as reasoning, step 3 does follow from step 2.
    assert report.answer_follows
    assert not report.ok


def test_a_contradicted_step_is_reported_with_its_reason(scripted_gate: Gate) -> None:
    steps = ["Ana chairs the board.", "The board meets on Friday.", "Ana is busy on Tuesday."]
    report = audit_trace(steps, CONTEXT, gate=scripted_gate)
    assert statuses(report)[:2] == [StepStatus.ENTAILED, StepStatus.CONTRADICTED]
    [verdict] = report.steps[1].verdicts
    assert verdict.status is VerdictStatus.CONTRADICTED
    assert report.steps[1].reason.startswith('"The board meets on Friday." contradicted')
    assert report.failed_steps[0].index == 1


def test_a_step_is_as_bad_as_its_worst_claim(scripted_gate: Gate) -> None:
    steps = ["Ana chairs the board, and the board meets on Friday.", "Ana chairs the board."]
    report = audit_trace(steps, CONTEXT, gate=scripted_gate)
    assert [v.status for v in report.steps[0].verdicts] == [
        VerdictStatus.GROUNDED,
        VerdictStatus.CONTRADICTED,
    ]
    assert report.steps[0].status is StepStatus.CONTRADICTED


def test_an_answer_that_does_not_follow_from_the_steps_is_caught_even_if_the_context_says_it(
    scripted_gate: Gate, scripted_backend: ScriptedBackend
) -> None:
    context = [*CONTEXT, "Ana is busy on Tuesday."]
    steps = ["Ana chairs the board.", "The board meets on Tuesday."]
    report = audit_trace(steps, context, answer="Ana is busy on Tuesday.", gate=scripted_gate)
    assert statuses(report) == [StepStatus.ENTAILED, StepStatus.ENTAILED]
    assert report.answer.index == -1
    assert report.answer.status is StepStatus.NOT_IN_CONTEXT
    assert not report.answer_follows and not report.ok
    answer_contexts = [
        c for claim, c in scripted_backend.batches[0] if claim == "Ana is busy on Tuesday."
    ]
    assert answer_contexts  # checked, against the steps and nothing else:
    for context_text in answer_contexts:
        assert "[1]" not in context_text and "[2]" not in context_text
        assert f"[{STEP_ID_PREFIX}1]" in context_text


def test_the_last_step_as_answer_is_checked_against_the_steps_before_it_only(
    scripted_gate: Gate,
) -> None:
    report = audit_trace(["Ana chairs the board."], CONTEXT, gate=scripted_gate)
    assert statuses(report) == [StepStatus.ENTAILED]  # in the context
    assert report.answer.verdicts[0].status is VerdictStatus.NO_EVIDENCE  # no steps before it
    assert not report.answer_follows


@pytest.mark.parametrize(
    "step",
    ["Maybe the board meets on Tuesday.", "When does the board meet?", "Please ask Ana."],
)
def test_a_step_that_states_nothing_is_unverifiable(scripted_gate: Gate, step: str) -> None:
    report = audit_trace(["Ana chairs the board.", step], CONTEXT, gate=scripted_gate)
    assert statuses(report) == [StepStatus.ENTAILED, StepStatus.UNVERIFIABLE]
    assert report.steps[1].claims == () and report.steps[1].verdicts == ()
    assert "nothing checkable" in report.steps[1].reason
    assert report.answer.status is StepStatus.UNVERIFIABLE and not report.answer_follows


def test_a_failing_verifier_makes_steps_unverifiable_not_wrong() -> None:
    def broken(claim: str, context: str) -> float:
        raise RuntimeError("verifier down")

    report = audit_trace(SOUND, CONTEXT, gate=Gate(ScriptedBackend(broken), REFUSE_UNGROUNDED))
    assert {s.status for s in report.steps} == {StepStatus.UNVERIFIABLE}
    assert report.steps[0].verdicts[0].status is VerdictStatus.VERIFIER_ERROR
    assert report.answer.status is StepStatus.UNVERIFIABLE


def test_steps_may_cite_context_items_by_id(scripted_gate: Gate) -> None:
    items = [ContextItem("minutes", "The board meets on Tuesday."), ContextItem("x", "Unrelated.")]
    report = audit_trace(["The board meets on Tuesday [ev:minutes]."], items, gate=scripted_gate)
    assert report.steps[0].claims[0].citations == ("minutes",)
    assert report.steps[0].status is StepStatus.ENTAILED


def test_every_gate_verdict_has_a_step_status() -> None:
    assert set(STEP_STATUS) == set(VerdictStatus)
    assert STEP_STATUS[VerdictStatus.PRIOR_SUFFICIENT] is StepStatus.ENTAILED
    assert STEP_STATUS[VerdictStatus.INSUFFICIENT_EVIDENCE] is StepStatus.NOT_IN_CONTEXT
    assert STEP_STATUS[VerdictStatus.TIMEOUT] is StepStatus.UNVERIFIABLE


def test_summary_and_feedback(scripted_gate: Gate) -> None:
    steps = ["Ana chairs the board.", "The board meets on Friday."]
    report = audit_trace(steps, CONTEXT, answer="Ana is busy on Tuesday.", gate=scripted_gate)
    assert report.summary() == (
        "2 steps: 1 entailed, 1 contradicted, 0 not_in_context, 0 unverifiable; "
        "the answer does not follow from the steps"
    )
    feedback = report.as_feedback()
    assert feedback.startswith('Step 2 is contradicted: "The board meets on Friday."')
    # The values check reads the answer beside the steps: they give Friday, not Tuesday.
    assert "The answer does not follow from the steps (not in context)" in feedback
    assert "the evidence gives Friday but not Tuesday" in feedback
    clean = audit_trace(SOUND, CONTEXT, gate=scripted_gate)
    assert clean.as_feedback().startswith("Every step is supported")


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"steps": []}, ValueError, "steps: must not be empty"),
        ({"steps": "Ana chairs the board."}, TypeError, "steps: must be a list of strings"),
        ({"steps": ["Ana chairs the board.", " "]}, ValueError, "steps[1]: must not be empty"),
        ({"steps": ["Ana chairs the board.", 7]}, TypeError, "steps[1]: must be a string"),
        ({"answer": ""}, ValueError, "answer: must not be empty"),
        ({"context": 5}, TypeError, "context: must be a list of strings or ContextItems"),
        ({"gate": object()}, TypeError, "gate: must be a gate.Gate"),
        (
            {"context": [ContextItem("step:1", "x")]},
            ValueError,
            "context[0]: ids starting 'step:' are kept for steps",
        ),
    ],
)
def test_bad_input_names_the_field_and_the_reason(
    scripted_gate: Gate,
    scripted_backend: ScriptedBackend,
    arguments: dict[str, object],
    error: type[Exception],
    message: str,
) -> None:
    call: dict[str, object] = {
        "steps": SOUND,
        "context": CONTEXT,
        "gate": scripted_gate,
        **arguments,
    }
    with pytest.raises(error) as raised:
        audit_trace(**call)  # type: ignore[arg-type]
    assert str(raised.value).startswith(message)
    assert scripted_backend.batches == []
