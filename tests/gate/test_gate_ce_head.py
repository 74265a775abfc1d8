"""The cross-encoder's head: lexical checks, the card format, and fitting it on dev rows."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from gate.backends.crossencoder import CrossEncoderBackend
from gate.backends.crossencoder.backend import MODEL_DIR
from gate.backends.crossencoder.head import HEAD_FEATURES, Head, head_features
from gate.backends.embedded.features import LEXICAL_CHECKS, lexical_checks
from gate.evidence import REMOVED


def checks(claim: str, context: str) -> dict[str, float]:
    return dict(zip(LEXICAL_CHECKS, lexical_checks(claim, context), strict=True))


def test_a_contracted_negation_is_a_negation() -> None:
    said = checks("Maya lives in Boston.", "Maya: I don\u2019t live in Boston anymore.")
    assert said["negation_mismatch"] == 1.0
    assert checks("Maya lives in Boston.", "Maya: I live in Boston.")["negation_mismatch"] == 0.0
    assert checks("Maya doesn't eat meat.", "Maya: I don't eat meat.")["negation_mismatch"] == 0.0


def test_numbers_and_names_the_context_never_mentions_are_counted() -> None:
    assert checks("Ana has two cats.", "Ana: I have two cats.")["numbers_missing"] == 0.0
    assert checks("Ana has 2 cats.", "Ana: I have two cats.")["numbers_missing"] == 0.0
    assert checks("Ana has three cats.", "Ana: I have two cats.")["numbers_missing"] > 0
    assert checks("Ana met Rui in Porto.", "Ana: I met Rui.")["names_missing"] > 0
    assert checks("Ana met Rui.", "Ana: I met Rui.")["lex_all_found"] == 1.0


def test_scrubbed_spans_and_an_empty_context_say_nothing() -> None:
    scrubbed = checks("Ana has two cats.", f"[e1] {REMOVED}")
    empty = checks("Ana has two cats.", "")
    assert scrubbed == empty
    assert empty["lex_recall"] == 0.0 and empty["negation_mismatch"] == 0.0


def head(coef: tuple[float, ...], intercept: float = 0.0) -> Head:
    n = len(HEAD_FEATURES)
    return Head((0.0,) * n, (1.0,) * n, coef, intercept)


def test_the_head_is_a_logistic_regression_over_standardised_features() -> None:
    n = len(HEAD_FEATURES)
    h = Head((1.0,) * n, (2.0,) * n, (0.5,) + (0.0,) * (n - 1), -0.25)
    x = [5.0, *([9.0] * (n - 1))]
    assert h.probability(x) == pytest.approx(1 / (1 + math.exp(-(-0.25 + 0.5 * 2.0))))
    assert Head.from_card(h.to_card()) == h


def test_a_card_whose_head_reads_other_features_is_refused() -> None:
    card = head((1.0,) * len(HEAD_FEATURES)).to_card()
    with pytest.raises(ValueError, match="this code computes"):
        Head.from_card({**card, "features": card["features"][::-1]})
    with pytest.raises(ValueError, match="scale <= 0"):
        Head.from_card({**card, "scale": [0.0] * len(HEAD_FEATURES)})
    with pytest.raises(ValueError, match="wrong number"):
        Head.from_card({**card, "coef": [1.0]})


def test_a_backend_with_a_head_reads_the_logit_and_the_checks() -> None:
    """A head that only reads ``names_missing`` (negatively) ranks a claim naming a
    stranger below the same claim without one, whatever the network says."""
    card = json.loads((MODEL_DIR / "verifier.json").read_text(encoding="utf-8"))
    only_names = tuple(-2.0 if f == "names_missing" else 0.0 for f in HEAD_FEATURES)
    backend = CrossEncoderBackend(card={**card, "head": head(only_names, 1.0).to_card()})
    context = "Ana: I met Rui at the market."
    known, stranger = backend.estimate_many(
        [("Ana met Rui.", context), ("Ana met Rui and Beatriz.", context)]
    )
    assert known == pytest.approx(1 / (1 + math.exp(-1.0)))
    assert stranger < known
    logit = backend.claim_logits([("Ana met Rui.", context)])[0]
    assert head_features(logit, "Ana met Rui.", context)[0] == logit


@pytest.mark.slow
def test_fit_head_writes_a_head_chosen_by_grouped_cross_validation(tmp_path: Path) -> None:
    from training.head import GRID, fit_head

    model = tmp_path / "model"
    shutil.copytree(MODEL_DIR, model)
    written = fit_head(model)
    assert written["c"] in GRID
    scores = written["cross_validated"][str(written["c"])]
    assert scores["agent_memory"]["rows"] == 238  # the dev split, never the test split
    assert scores["grounding"]["rows"] > 100
    best = max(v["agent_memory"]["auroc"] for v in written["cross_validated"].values())
    assert scores["agent_memory"]["auroc"] == best
    backend = CrossEncoderBackend(path=model)
    assert backend.head is not None and backend.head == Head.from_card(written)
    p = backend.estimate_many([("Ana met Rui.", "Ana: I met Rui at the market.")])[0]
    assert 0.0 < p < 1.0


def test_the_shipped_mix_model_loads_with_its_head_and_its_record() -> None:
    from gate import create_backend
    from gate.backends.crossencoder.backend import MIX_MODEL_DIR

    backend = create_backend("embedded-ce-mix")
    assert isinstance(backend, CrossEncoderBackend) and backend.head is not None
    card = backend.card
    assert card["training"]["pipeline"] == "python -m training.verifier"
    assert card["training"]["step"] <= card["training"]["total_steps"]
    assert card["head"]["fitted_on"].startswith("agent-memory dev + grounding dev")
    assert not any(p.startswith("/") for p in card["training"]["data"].values())
    size = sum(f.stat().st_size for f in MIX_MODEL_DIR.iterdir())
    assert size <= 100 * 2**20


def test_the_shipped_mix_model_tells_the_allergy_from_another() -> None:
    from gate import REFUSE_UNGROUNDED, Gate, VerdictStatus, create_backend

    gate = Gate(create_backend("embedded-ce-mix"), REFUSE_UNGROUNDED, deadline=120)
    evidence = ["User: just so you know, I'm allergic to peanuts."]
    assert gate.check("The user is allergic to peanuts.", evidence).status is (
        VerdictStatus.GROUNDED
    )
    assert not gate.check("The user is allergic to milk.", evidence).accepted
