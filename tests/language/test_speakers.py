"""First person read as its speaker."""

from __future__ import annotations

import pytest

from language import resolve_first_person, third_person


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I'm allergic to peanuts.", "Maya is allergic to peanuts."),
        ("I live in Leeds", "Maya lives in Leeds."),
        ("My manager is Priya Shah.", "Maya's manager is Priya Shah."),
        ("I don't eat fish.", "Maya doesn't eat fish."),
        ("I never fly.", "Maya never flies."),
        ("Tom called me.", "Tom called Maya."),
    ],
)
def test_first_person_becomes_the_speaker(sentence: str, expected: str) -> None:
    assert resolve_first_person(sentence, "Maya") == expected


def test_what_cannot_be_rewritten_is_refused() -> None:
    assert resolve_first_person("It was I.", "Maya") is None  # no verb after "I" to agree


@pytest.mark.parametrize(
    ("verb", "expected"),
    [("live", "lives"), ("go", "goes"), ("fly", "flies"), ("have", "has"), ("went", "went")],
)
def test_third_person(verb: str, expected: str) -> None:
    assert third_person(verb) == expected
