"""``embedded-ce``: the fine-tuned MiniLM cross-encoder shipped in the package."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from gate_samples import ALLERGY, OTHER_FOODS, REJECTED, repeatable_estimates, scrubbed_support
from safetensors import safe_open

import gate
from gate import REFUSE_UNGROUNDED, Gate, VerdictStatus
from gate.backends.crossencoder import CrossEncoderBackend
from gate.backends.crossencoder.backend import CARD, FROZEN, WEIGHTS
from gate.evidence import REMOVED


@pytest.fixture(scope="module")
def ce_backend() -> Iterator[CrossEncoderBackend]:
    with CrossEncoderBackend() as b:
        yield b


def test_the_issue_example(ce_backend: CrossEncoderBackend) -> None:
    grounded = Gate(ce_backend).check("The user is allergic to peanuts.", ALLERGY)
    assert grounded.status == VerdictStatus.GROUNDED and grounded.accepted
    assert grounded.backend.startswith("embedded-ce:minilm-ce+")
    verdict = Gate(ce_backend, REFUSE_UNGROUNDED).check(
        "The user is allergic to shellfish.", ALLERGY
    )
    assert verdict.status in REJECTED and not verdict.accepted


@pytest.mark.xfail(strict=True, reason="ce-1 misses this negation (issue 10 stays open)")
def test_a_denial_of_what_was_said_is_rejected(ce_backend: CrossEncoderBackend) -> None:
    verdict = Gate(ce_backend).check("The user has no food allergies.", ALLERGY)
    assert verdict.status in REJECTED and not verdict.accepted


def test_paraphrases_of_what_someone_said_are_supported(ce_backend: CrossEncoderBackend) -> None:
    """Issue 10's examples, which the first default (embedded-features) rejected."""
    supported = ce_backend.estimate_many(
        [
            ("Carol likes tea.", "[1] Carol: I love tea."),
            ("Bob works at Acme.", "[1] Bob: I have worked at Acme since 2019."),
        ]
    )
    assert min(supported) > 0.5, supported


def test_one_changed_detail_loses_the_support(ce_backend: CrossEncoderBackend) -> None:
    context = "[1] Bob: I have worked at Acme since 2019. My wife Dana teaches in Leeds."
    claims = (
        "Bob's wife teaches in Leeds.",
        "Bob works at Initech.",
        "Bob's wife teaches in Paris.",
    )
    true, employer, city = ce_backend.estimate_many([(claim, context) for claim in claims])
    assert true > 0.5 > max(employer, city), (true, employer, city)


@pytest.mark.xfail(
    strict=True, reason="ce-1 passes milk 0.94, eggs 0.97, tree nuts 0.91, pollen 0.98 (issue 10)"
)
def test_another_thing_than_the_one_said_is_not_supported(ce_backend: CrossEncoderBackend) -> None:
    """The memory store's commonest false fact: the right relation, the wrong object."""
    said = ce_backend.estimate("The user is allergic to peanuts.", ALLERGY[0])
    swapped = ce_backend.estimate_many(
        [(f"The user is allergic to {food}.", ALLERGY[0]) for food in OTHER_FOODS]
    )
    assert said > 0.5, said
    passed = {food: round(p, 2) for food, p in zip(OTHER_FOODS, swapped, strict=True) if p >= 0.5}
    assert not passed, passed


def test_another_drink_than_the_one_said_is_not_supported(ce_backend: CrossEncoderBackend) -> None:
    liked = ce_backend.estimate_many(
        [
            (f"Carol likes {drink}.", "[1] Carol: I love tea.")
            for drink in ("tea", "cocoa", "lemonade")
        ]
    )
    assert liked[0] > 0.5 > max(liked[1:]), liked


def test_probabilities_are_repeatable_and_batch_independent(
    ce_backend: CrossEncoderBackend,
) -> None:
    batched = repeatable_estimates(ce_backend, tolerance=1e-5)
    assert batched[1] > 0.5 > batched[2]  # a swapped employer loses support
    assert batched[3] < 0.5  # a changed number is not supported


@pytest.mark.xfail(strict=True, reason="ce-1 passes a false sentence after a true one it repeats")
def test_a_claim_is_as_supported_as_its_weakest_sentence(ce_backend: CrossEncoderBackend) -> None:
    context = "[1] Tom: I moved to Oslo in 2015. I teach chemistry at the university there."
    moved = "Tom moved to Oslo in 2015."
    claims = (moved, f"{moved} He teaches chemistry.", f"{moved} He teaches history.")
    one, both, wrong_second = ce_backend.estimate_many([(claim, context) for claim in claims])
    assert min(one, both) > 0.5 > wrong_second


def test_scrubbing_the_cited_sentence_removes_the_support(ce_backend: CrossEncoderBackend) -> None:
    p0, p1 = scrubbed_support(ce_backend)
    assert p0 < 0.5 < p1


def test_an_empty_context_gives_low_support(ce_backend: CrossEncoderBackend) -> None:
    p_empty, p_full = ce_backend.estimate_many(
        [("The user is allergic to peanuts.", f"[1] {REMOVED}"), (ALLERGY[0], ALLERGY[0])]
    )
    assert p_empty < 0.2 and p_full > 0.8


def test_the_shipped_model_is_small_and_described() -> None:
    card = json.loads(CARD.read_text())
    assert {"version", "base", "max_length", "calibration", "training", "dev"} <= set(card)
    assert card["training"]["command"].startswith("python -m training.crossencoder")
    assert WEIGHTS.stat().st_size <= 50 * 1024 * 1024
    with safe_open(str(WEIGHTS), "pt") as weights:
        names = set(weights.keys())
        assert weights.metadata()["version"] == card["version"]
    assert not names & set(FROZEN)  # the packaged word embeddings are not copied
    assert any(name.startswith("classifier.") for name in names)


def test_weights_for_another_network_are_refused(tmp_path: Path) -> None:
    from safetensors.torch import save_file
    from torch import zeros

    save_file({"classifier.weight": zeros(2, 8)}, str(tmp_path / WEIGHTS.name))
    (tmp_path / CARD.name).write_text(CARD.read_text())
    with pytest.raises(RuntimeError, match="does not fit the verifier"):
        CrossEncoderBackend(tmp_path)
    with pytest.raises(FileNotFoundError, match="make train-verifier"):
        CrossEncoderBackend(tmp_path / "empty")


def test_it_is_created_by_name() -> None:
    with gate.create_backend("embedded-ce") as ce_backend:
        assert isinstance(ce_backend, CrossEncoderBackend)
