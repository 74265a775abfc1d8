"""The embedded default verifier: the real packaged MiniLM and the shipped calibration."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from gate_samples import ALLERGY, OTHER_FOODS, REJECTED, repeatable_estimates, scrubbed_support

import gate
from gate import REFUSE_UNGROUNDED, VerdictStatus
from gate.backends.embedded import Calibration, EmbeddedBackend
from gate.backends.embedded.backend import PARAMS_PATH
from gate.backends.embedded.features import FEATURES, segments, split
from gate.evidence import REMOVED


@pytest.fixture(scope="module")
def embedded_backend() -> Iterator[EmbeddedBackend]:
    with EmbeddedBackend() as b:
        yield b


def test_the_issue_example_with_the_default_gate() -> None:
    """Done-when of issue 3, through the process-wide default gate, in three outcomes:
    what was said is verified; the wrong allergen and the denial are never verified,
    and each says why in words."""
    grounded = gate.verify_claim("The user is allergic to peanuts.", ALLERGY)
    assert grounded.status == VerdictStatus.GROUNDED and grounded.outcome == "verified"
    assert grounded.backend.startswith("embedded:")
    swapped = gate.verify_claim("The user is allergic to shellfish.", ALLERGY)
    assert swapped.outcome != "verified" and swapped.check == "things"
    assert swapped.reason == "the evidence says peanuts, not shellfish"
    denied = gate.verify_claim("The user has no food allergies.", ALLERGY)
    assert denied.outcome != "verified" and denied.reason


def test_the_embedded_verifier_alone_refuses_the_issue_example() -> None:
    """The verifier, without the checks (the specification's table alone)."""
    for claim in ("The user is allergic to shellfish.", "The user has no food allergies."):
        verdict = gate.verify_claim(claim, ALLERGY, policy=REFUSE_UNGROUNDED)
        assert verdict.status in REJECTED, (claim, verdict)
        assert not verdict.accepted


#: Other things than the peanuts said, none of them in the cross-encoder's training
#: vocabulary (perturb._THINGS): unseen object swaps.


def test_the_default_gate_never_verifies_another_thing_than_the_one_said() -> None:
    """The memory store's commonest false fact: the right relation, the wrong object.
    The verifier alone refuses each; the default gate never verifies one."""
    for food in OTHER_FOODS:
        claim = f"The user is allergic to {food}."
        alone = gate.verify_claim(claim, ALLERGY, policy=REFUSE_UNGROUNDED)
        assert not alone.accepted, (food, alone)
        verdict = gate.verify_claim(claim, ALLERGY)
        assert verdict.outcome != "verified", (food, verdict)
    assert gate.verify_claim("The user is allergic to peanuts.", ALLERGY).outcome == "verified"


def test_probabilities_are_repeatable_and_batch_independent(
    embedded_backend: EmbeddedBackend,
) -> None:
    batched = repeatable_estimates(embedded_backend, tolerance=1e-6)
    supported, swapped = batched[1], batched[2]
    assert supported > swapped  # a swapped employer loses support
    assert batched[3] < 0.5  # a changed number is not supported


def test_scrubbing_the_cited_sentence_removes_the_support(
    embedded_backend: EmbeddedBackend,
) -> None:
    p0, p1 = scrubbed_support(embedded_backend)
    assert p0 < 0.5 < p1


def test_contexts_lose_their_tags_and_scrubbed_spans() -> None:
    context = f"[m1] {REMOVED} I live in Lisbon.\n\n[m2] {REMOVED}"
    assert segments(context) == ["I live in Lisbon."]
    assert split("A claim.", f"[1] {REMOVED}").segments == ()


def test_an_empty_context_gives_low_support(embedded_backend: EmbeddedBackend) -> None:
    p_empty, p_full = embedded_backend.estimate_many(
        [("The user is allergic to peanuts.", f"[1] {REMOVED}"), (ALLERGY[0], ALLERGY[0])]
    )
    assert p_empty < 0.2 < 0.8 < p_full


def test_the_shipped_calibration_matches_the_features() -> None:
    params = json.loads(PARAMS_PATH.read_text())
    assert tuple(params["features"]) == FEATURES
    assert len(params["coef"]) == len(params["mean"]) == len(params["scale"]) == len(FEATURES)
    assert set(params["scores"]) == {"fit", "check"}


def test_a_calibration_for_other_features_is_refused() -> None:
    params = json.loads(PARAMS_PATH.read_text())
    params["features"] = [*params["features"][:-1], "something_else"]
    with pytest.raises(ValueError, match="fitted on features"):
        Calibration(params)


def test_backends_by_name() -> None:
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        gate.create_backend("nope")
    assert set(gate.BACKENDS) == {
        "embedded",
        "embedded-ce",
        "embedded-ce-mix",
        "hf-causal",
        "hf-nli",
        "openai",
        "sampling",
    }


def test_the_int8_encoder_as_an_option_scores_repeatably_and_alike() -> None:
    """``precision="int8"``: the quantized graph, its own model name (a cached verdict
    of the float32 model is not reused), estimates that do not depend on the batch, and
    the same decisions on the issue's example."""
    backend = gate.create_backend("embedded", precision="int8")
    assert isinstance(backend, EmbeddedBackend)
    assert backend.model == "all-MiniLM-L6-v2-int8+lr-1"
    assert backend.encoder.precision == "int8"
    batched = repeatable_estimates(backend, tolerance=1e-6)
    assert batched[1] > batched[2] and batched[3] < 0.5
    p0, p1 = scrubbed_support(backend)
    assert p0 < 0.5 < p1
    check = gate.Gate(backend, REFUSE_UNGROUNDED)
    assert check.check("The user is allergic to peanuts.", ALLERGY).accepted
    assert not check.check("The user is allergic to shellfish.", ALLERGY).accepted
