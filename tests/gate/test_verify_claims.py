"""verify_claims: per-claim verdicts, grounding profiles, citation integrity, feedback.

The first tests run real verifiers: the embedded default (``gate.default_gate()``,
the issue's "done when") and the ``embedded-ce`` cross-encoder. The rest use a
ScriptedBackend so each profile and report rule is tested without a model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import pytest
from scripted import states

import gate
from gate import (
    REFUSE_UNGROUNDED,
    ClaimKind,
    ContextItem,
    Gate,
    GroundingProfile,
    ScriptedBackend,
    VerdictStatus,
    verify_claims,
)
from gate.evidence import REMOVED
from gate.outputs import UNVERIFIED_MARK

# -- real verifiers: the "done when" -------------------------------------------------

EIFFEL = [
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the "
    "tower. It was completed in 1889 as the entrance arch to the 1889 World's Fair.",
    "The tower is 330 metres tall, about the same height as an 81-storey building, and is "
    "the tallest structure in Paris.",
]
TRUE_START = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris. "
    "It was completed in 1889 as the entrance to the World's Fair."
)
INVENTED = "The tower was sold to a Belgian bank in 1925."
TRUE_END = "The tower is 330 metres tall, and it is the tallest structure in Paris."
PARAGRAPH = f"{TRUE_START} {INVENTED} {TRUE_END}"


@pytest.fixture(scope="module", params=["default", "embedded-ce"])
def real_gate(request: pytest.FixtureRequest) -> Gate:
    """The process-wide default gate (embedded verifier), and the cross-encoder."""
    if request.param == "default":
        return gate.default_gate()
    return Gate(request.param, deadline=60.0)


def test_one_invented_sentence_among_true_ones_is_flagged_and_stripped(real_gate: Gate) -> None:
    report = verify_claims(
        PARAGRAPH, EIFFEL, profile=GroundingProfile.STRIP_UNSUPPORTED, gate=real_gate
    )
    assert [r.claim.content for r in report.unsupported] == [INVENTED]
    assert len(report.results) == 5  # the last sentence is two claims
    assert len(report.supported) == 4
    assert report.output == f"{TRUE_START} {TRUE_END}"
    assert report.text == PARAGRAPH


def test_the_invented_half_of_a_compound_sentence_is_flagged_alone(real_gate: Gate) -> None:
    text = "The tower is 330 metres tall, and it was sold to a Belgian bank in 1925."
    report = verify_claims(text, EIFFEL, profile="hedge", gate=real_gate)
    assert [r.claim.content for r in report.unsupported] == [
        "It was sold to a Belgian bank in 1925."
    ]
    assert [r.claim.content for r in report.supported] == ["The tower is 330 metres tall."]
    assert report.output == (
        "The tower is 330 metres tall, and it was sold to a Belgian bank in 1925 [unverified]."
    )


# -- a scripted verifier: the context states the claim word for word, or not -------------------
# (``scripted_gate`` and ``scripted_backend``: tests/conftest.py)

CONTEXT = ["Paris is in France. The Louvre is in Paris.", "Rome is in Italy."]
TEXT = "Paris is in France [1]. The Louvre is in Berlin [1]. Rome is in Italy [2]."


def test_audit_only_reports_and_leaves_the_text_alone(scripted_gate: Gate) -> None:
    report = verify_claims(TEXT, CONTEXT, gate=scripted_gate)
    assert report.profile is GroundingProfile.AUDIT_ONLY
    assert [r.claim.content for r in report.unsupported] == ["The Louvre is in Berlin."]
    assert [r.claim.content for r in report.supported] == [
        "Paris is in France.",
        "Rome is in Italy.",
    ]
    assert [r.verdict.status for r in report.results] == [
        VerdictStatus.GROUNDED,
        VerdictStatus.UNSUPPORTED,  # the names check: the evidence never mentions Berlin
        VerdictStatus.GROUNDED,
    ]
    assert report.results[1].verdict.reason == "the evidence never mentions Berlin"
    assert report.output == TEXT
    assert not report.blocked and not report.ok


def test_strict_block_blocks_when_any_claim_is_unsupported(scripted_gate: Gate) -> None:
    report = verify_claims(TEXT, CONTEXT, profile="strict_block", gate=scripted_gate)
    assert report.blocked
    assert report.output is None
    assert report.text == TEXT


def test_strict_block_passes_a_fully_supported_text_unchanged(scripted_gate: Gate) -> None:
    text = "Paris is in France [1]. Rome is in Italy [2]."
    report = verify_claims(text, CONTEXT, profile=GroundingProfile.STRICT_BLOCK, gate=scripted_gate)
    assert not report.blocked
    assert report.output == text
    assert report.ok


def test_strip_unsupported_removes_the_unsupported_sentence(scripted_gate: Gate) -> None:
    report = verify_claims(TEXT, CONTEXT, profile="strip_unsupported", gate=scripted_gate)
    assert report.output == "Paris is in France [1]. Rome is in Italy [2]."
    assert report.text == TEXT
    assert not report.blocked


def test_hedge_marks_the_unsupported_clause_before_its_full_stop(scripted_gate: Gate) -> None:
    report = verify_claims(TEXT, CONTEXT, profile="hedge", gate=scripted_gate)
    assert report.output == (
        "Paris is in France [1]. The Louvre is in Berlin [1]"
        + UNVERIFIED_MARK
        + ". Rome is in Italy [2]."
    )


def test_a_half_invented_sentence_is_hedged_at_its_clause_and_stripped_whole(
    scripted_gate: Gate,
) -> None:
    text = (
        "Rome is in Italy. Paris is in France, and the Louvre is in Berlin. The Louvre is in Paris."
    )
    hedged = verify_claims(text, CONTEXT, profile="hedge", gate=scripted_gate)
    assert hedged.output == (
        "Rome is in Italy. Paris is in France, and the Louvre is in Berlin [unverified]. "
        "The Louvre is in Paris."
    )
    stripped = verify_claims(text, CONTEXT, profile="strip_unsupported", gate=scripted_gate)
    assert stripped.output == "Rome is in Italy. The Louvre is in Paris."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Findings:\n- Paris is in France\n- The Louvre is in Berlin\n- Rome is in Italy\n",
            "Findings:\n- Paris is in France\n- Rome is in Italy\n",
        ),
        (
            "Findings:\n- Paris is in France\n- The Louvre is in Berlin",
            "Findings:\n- Paris is in France",
        ),
        (
            "Paris is in France.\nThe Louvre is in Berlin.\nRome is in Italy.",
            "Paris is in France.\nRome is in Italy.",
        ),
    ],
)
def test_strip_takes_a_list_item_or_line_with_its_line_break(
    scripted_gate: Gate, text: str, expected: str
) -> None:
    report = verify_claims(text, CONTEXT, profile="strip_unsupported", gate=scripted_gate)
    assert report.output == expected


def test_non_evidence_sentences_are_skipped_kept_and_never_sent_to_the_verifier(
    scripted_gate: Gate, scripted_backend: ScriptedBackend
) -> None:
    text = (
        "Great question! Here is the answer:\nParis is in France. Is Rome nice? "
        "I think the Louvre might be in Berlin. Please check a map."
    )
    report = verify_claims(text, CONTEXT, profile="strip_unsupported", gate=scripted_gate)
    assert [r.claim.content for r in report.results] == ["Paris is in France."]
    assert [c.kind for c in report.skipped] == [
        ClaimKind.PLEASANTRY,
        ClaimKind.HEADING,
        ClaimKind.QUESTION,
        ClaimKind.HEDGE,
        ClaimKind.INSTRUCTION,
    ]
    assert {claim for batch in scripted_backend.batches for claim, _ in batch} == {
        "Paris is in France."
    }
    assert report.output == text


def test_all_claims_go_to_the_verifier_in_one_batch(
    scripted_gate: Gate, scripted_backend: ScriptedBackend
) -> None:
    report = verify_claims(TEXT, CONTEXT, gate=scripted_gate)
    assert len(scripted_backend.batches) == 1
    claims = {r.claim.content for r in report.results}
    assert {claim for claim, _ in scripted_backend.batches[0]} == claims
    assert len(scripted_backend.batches[0]) == 2 * len(claims)  # p1 and p0 for each


def test_a_hedged_claim_is_checked_at_its_lower_stated_confidence(scripted_gate: Gate) -> None:
    report = verify_claims(
        "Rome is probably in Italy. Rome is in Italy.", CONTEXT, gate=scripted_gate
    )
    assert [r.verdict.stated_confidence for r in report.results] == [0.75, 0.95]


def test_citations_pick_what_is_scrubbed_for_p0(
    scripted_gate: Gate, scripted_backend: ScriptedBackend
) -> None:
    verify_claims("Rome is in Italy [2].", CONTEXT, gate=scripted_gate)
    contexts = [context for _, context in scripted_backend.batches[0]]
    assert any(REMOVED in c and CONTEXT[0] in c and CONTEXT[1] not in c for c in contexts)


def test_context_items_keep_their_ids(
    scripted_gate: Gate, scripted_backend: ScriptedBackend
) -> None:
    items = [ContextItem("doc-a", "Paris is in France."), ContextItem("doc-b", "Rome is in Italy.")]
    report = verify_claims("Rome is in Italy [ev:doc-b].", items, gate=scripted_gate)
    assert report.results[0].supported
    assert [(f.kind, f.evidence_id) for f in report.findings] == [("orphan_id", "doc-a")]
    assert report.results[0].claim.citations == ("doc-b",)
    scrubbed = [c for _, c in scripted_backend.batches[0] if REMOVED in c]
    assert scrubbed == [f"[doc-a] Paris is in France.\n\n[doc-b] {REMOVED}"]


# -- citation integrity --------------------------------------------------------------------------


def test_an_unknown_id_is_a_finding_and_makes_the_claim_unsupported(scripted_gate: Gate) -> None:
    report = verify_claims(
        "Paris is in France [3]. Rome is in Italy [2].", CONTEXT, gate=scripted_gate
    )
    unknown = [f for f in report.findings if f.kind == "unknown_id"]
    assert [(f.evidence_id, f.claim) for f in unknown] == [("3", 0)]
    assert report.results[0].verdict.status is VerdictStatus.UNKNOWN_CITATION
    assert [r.claim.content for r in report.unsupported] == ["Paris is in France."]


def test_a_quote_missing_from_the_cited_evidence_is_unsupported_whatever_the_verifier_says() -> (
    None
):
    believes_all = Gate(ScriptedBackend.fixed(p0=0.01, p1=0.99))
    context = ['The memo says "profits fell slightly" in May.', "Profits fell sharply in June."]
    text = 'The memo says "profits fell sharply" [1].'
    report = verify_claims(text, context, gate=believes_all)
    [result] = report.results
    assert result.verdict.status is VerdictStatus.GROUNDED
    assert not result.supported
    [finding] = result.findings
    assert finding.kind == "quote_not_found" and finding.evidence_id == "1"
    assert "profits fell sharply" in result.reason


def test_a_quote_found_in_the_cited_evidence_passes_despite_case_space_and_curly_quotes() -> None:
    believes_all = Gate(ScriptedBackend.fixed(p0=0.01, p1=0.99))
    context = ["Other text.", 'The memo says "Profits  fell\nslightly" in May.']
    text = "The memo says \u201cprofits fell slightly\u201d [1, 2]."
    report = verify_claims(text, context, gate=believes_all)
    assert report.results[0].supported
    assert not report.findings


def test_orphan_ids_are_reported_only_when_the_text_cites_something(scripted_gate: Gate) -> None:
    context = [*CONTEXT, "Berlin is in Germany."]
    cited = verify_claims(
        "Paris is in France [1]. Berlin is in Germany [3].", context, gate=scripted_gate
    )
    assert [(f.kind, f.evidence_id, f.claim) for f in cited.findings] == [("orphan_id", "2", None)]
    assert cited.ok  # an orphan is reported, but it is no problem
    assert "[2]" not in cited.as_feedback()
    uncited = verify_claims(
        "Paris is in France. Berlin is in Germany.", context, gate=scripted_gate
    )
    assert uncited.findings == ()
    assert uncited.ok


def test_an_empty_context_supports_nothing(scripted_gate: Gate) -> None:
    report = verify_claims("Paris is in France.", [], profile="strict_block", gate=scripted_gate)
    assert [r.verdict.status for r in report.results] == [VerdictStatus.NO_EVIDENCE]
    assert report.blocked


# -- a verifier that fails ---------------------------------------------------------------


def fails_on_tuesday(claim: str, context: str) -> float:
    return math.nan if "Tuesday" in claim else states(claim, context)


@pytest.mark.parametrize(
    ("profile", "output"),
    [
        ("strict_block", "Paris is in France. The Louvre opens on Tuesday."),
        ("strip_unsupported", "Paris is in France. The Louvre opens on Tuesday."),
        ("hedge", "Paris is in France. The Louvre opens on Tuesday [unverified]."),
    ],
)
def test_an_unverified_claim_never_blocks_or_strips_but_is_hedged(
    profile: str, output: str
) -> None:
    text = "Paris is in France. The Louvre opens on Tuesday."
    report = verify_claims(
        text,
        CONTEXT,
        profile=profile,
        gate=Gate(ScriptedBackend(fails_on_tuesday), REFUSE_UNGROUNDED),
    )
    [unverified] = report.unverified
    assert unverified.verdict.status is VerdictStatus.VERIFIER_ERROR
    assert report.unsupported == []
    assert not report.blocked and not report.ok
    assert report.output == output


# -- the report as feedback -----------------------------------------------------------------------


def test_summary_and_feedback_name_each_problem(scripted_gate: Gate) -> None:
    text = "Paris is in France [1]. The Louvre is in Berlin [1]. Rome is in Italy [7]."
    report = verify_claims(text, CONTEXT, gate=scripted_gate)
    assert report.summary() == (
        "3 claims checked: 1 supported, 2 unsupported, 0 unverified; 0 skipped; 2 citation findings"
    )
    feedback = report.as_feedback()
    assert (
        '1. "The Louvre is in Berlin." (characters 24-51): unsupported: '
        "the evidence never mentions Berlin"
    ) in feedback
    assert '2. "Rome is in Italy." (characters 53-73): unknown_citation' in feedback
    assert "[7] is cited by claim 3 but no evidence has that id" in feedback
    assert "evidence [2] is never cited" in feedback
    assert "Paris is in France" not in feedback
    blocked = verify_claims(text, CONTEXT, profile="strict_block", gate=scripted_gate)
    assert blocked.summary().endswith("(blocked)")


def test_feedback_for_a_clean_text_says_so(scripted_gate: Gate) -> None:
    report = verify_claims("Paris is in France. Rome is in Italy.", CONTEXT, gate=scripted_gate)
    assert report.as_feedback() == "All 2 checked claims are supported by the evidence."


# -- bad input ---------------------------------------------------------------------------


@pytest.fixture
def call(scripted_gate: Gate, scripted_backend: ScriptedBackend) -> Iterator[Callable[..., object]]:
    def call_(text: object = TEXT, context: object = CONTEXT, **options: object) -> object:
        options.setdefault("gate", scripted_gate)
        return verify_claims(text, context, **options)  # type: ignore[arg-type]

    yield call_
    assert scripted_backend.batches == []  # bad input never reaches the verifier


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"text": ""}, ValueError, "text: must not be empty"),
        ({"text": "  \n"}, ValueError, "text: must not be empty"),
        ({"text": 42}, TypeError, "text: must be a string, got int"),
        ({"profile": "loud"}, ValueError, "profile: unknown profile 'loud'; choose one of strict_"),
        ({"profile": 3}, TypeError, "profile: must be a GroundingProfile, got int"),
        ({"context": {"1": "x"}}, TypeError, "context: must be a list of strings or ContextItems"),
        (
            {"context": ["x", 3]},
            TypeError,
            "context[1]: must be a string or a ContextItem, got int",
        ),
        (
            {"context": [ContextItem("2", "x"), "y"]},
            ValueError,
            "context[1]: evidence id '2' is used twice",
        ),
        ({"gate": "embedded"}, TypeError, "gate: must be a gate.Gate, got str"),
    ],
)
def test_bad_input_names_the_field_and_the_reason(
    call: Callable[..., object],
    arguments: dict[str, object],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error) as raised:
        call(**arguments)
    assert str(raised.value).startswith(message)


def test_profile_names_are_case_insensitive(scripted_gate: Gate) -> None:
    assert verify_claims(TEXT, CONTEXT, profile="HEDGE", gate=scripted_gate).profile is (
        GroundingProfile.HEDGE
    )
