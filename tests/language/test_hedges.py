"""language.hedges: what says a thing is only supposed, as said and as a claim keeps it."""

from __future__ import annotations

import pytest

from language.hedges import KEPT, hedge


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("I think it's IT-2305.", "I think"),
        ("Omar thinks it's IT-2305.", "Omar thinks"),  # the first person read as said
        ("The user guesses it was Tuesday.", "The user guesses"),
        ("Maybe 140 guests.", "Maybe"),
        ("Omar is not sure about the tag.", "not sure"),
        ("Omar lives in Leeds.", None),
        ("Think of a number.", None),  # a verb of belief with no one believing
    ],
)
def test_hedge_names_what_hedges_a_text(text: str, said: str | None) -> None:
    assert hedge(text) == said


def test_a_claim_that_keeps_its_hedge_is_told_apart() -> None:
    assert KEPT.search("Hamid thinks he saw Pixel behind the bakery.")
    assert KEPT.search("The user is considering a move to Lyon.")
    assert KEPT.search("The service will be suspended if the invoice is unpaid.")
    assert not KEPT.search("Omar's asset tag is IT-2305.")
