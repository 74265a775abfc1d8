"""First person read as its speaker."""

from __future__ import annotations

import pytest

from language import resolve_first_person, third_person
from language.speakers import as_said


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I'm allergic to peanuts.", "Maya is allergic to peanuts."),
        ("I live in Leeds", "Maya lives in Leeds."),
        ("My manager is Priya Shah.", "Maya's manager is Priya Shah."),
        ("I don't eat fish.", "Maya doesn't eat fish."),
        ("I never fly.", "Maya never flies."),
        ("I last used it on Monday.", "Maya last used it on Monday."),  # "last": no verb
        ("I first met Tom in 2010.", "Maya first met Tom in 2010."),
        ("Tom called me.", "Tom called Maya."),
        ("I was thrilled.", "Maya was thrilled."),  # "I was" is no numeral
        ("Tom and I live in Hove.", "Tom and Maya live in Hove."),  # one of two subjects
        ("My sister and I are twins.", "Maya's sister and Maya are twins."),
        ("I did the shopping.", "Maya did the shopping."),
        # An emphatic "myself" adds no one ("... at Datadog Maya" would read as a name).
        (
            "I used to work at Datadog myself, so I know it.",
            "Maya used to work at Datadog, so Maya knows it.",
        ),
        ("I've been at the company six years myself.", "Maya has been at the company six years."),
        ("I hurt myself running.", "Maya hurt Maya running."),
        ("I live by myself.", "Maya lives alone."),
        ("I haven't read it yet.", "Maya hasn't read it yet."),
        # A verb that shares the subject agrees with it too; one under "can" or "does" not.
        ("I live in Hull and work at a bakery.", "Maya lives in Hull and works at a bakery."),
        ("I'm moving house and need a van.", "Maya is moving house and needs a van."),
        ("I don't smoke and rarely drink.", "Maya doesn't smoke and rarely drinks."),
        ("I was ill and have been off since.", "Maya was ill and has been off since."),
        ("I can swim and dive.", "Maya can swim and dive."),
        ("I don't smoke or drink.", "Maya doesn't smoke or drink."),
        ("I cook and he cleans.", "Maya cooks and he cleans."),
        ("Tom and I cook and clean.", "Tom and Maya cook and clean."),
        # "and I" opening a clause of its own is that clause's subject, not one of two.
        ("I live in York and I work at Acme.", "Maya lives in York and Maya works at Acme."),
        ("Tom is great, and I like him.", "Tom is great, and Maya likes him."),
        ("Ana and I went to Rome and I loved it.", "Ana and Maya went to Rome and Maya loved it."),
        ("Ana and I share a flat.", "Ana and Maya share a flat."),
        ("The dog and I walk every morning.", "The dog and Maya walk every morning."),
        ("Ana, Tom, and I are going hiking.", "Ana, Tom, and Maya are going hiking."),
        ("Tom called me and I ate.", "Tom called Maya and Maya ate."),
    ],
)
def test_first_person_becomes_the_speaker(sentence: str, expected: str) -> None:
    assert resolve_first_person(sentence, "Maya") == expected


def test_what_cannot_be_rewritten_is_refused() -> None:
    assert resolve_first_person("It was I.", "Maya") is None  # no verb after "I" to agree
    assert resolve_first_person("Type I diabetes runs in my family.", "Maya") is None


def test_a_name_is_never_read_as_a_pattern() -> None:
    assert resolve_first_person("I live here.", "C:\\data") == "C:\\data lives here."


@pytest.mark.parametrize(
    ("verb", "expected"),
    [
        ("live", "lives"),
        ("go", "goes"),
        ("fly", "flies"),
        ("have", "has"),
        ("went", "went"),
        ("is", "is"),
        ("need", "needs"),
    ],
)
def test_third_person(verb: str, expected: str) -> None:
    assert third_person(verb) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Maya: I've been vegetarian for ten years.",
            "Maya: Maya has been vegetarian for ten years.",
        ),
        (
            "User: My manager, Priya Shah, approved it.",
            "User: The user's manager, Priya Shah, approved it.",
        ),
        (
            "Tom: I still eat fish.\nMaya: I don't.",
            "Tom: Tom still eats fish.\nMaya: Maya doesn't.",
        ),
        ("User: Can you remind me?", "User: Can you remind me?"),  # a question: as written
        ('User: "I quit," Bob told me.', 'User: "I quit," Bob told me.'),  # someone else's I
        ("Maya: Bob said: I owe Alice $10.", "Maya: Bob said: I owe Alice $10."),
        ("Update: I moved to Oslo.", "Update: I moved to Oslo."),  # a label, no speaker
        ("Q: Where do I live?", "Q: Where do I live?"),
        ("Maya: Type I diabetes runs in my family.", "Maya: Type I diabetes runs in my family."),
        ("System: I am a helpful assistant.", "System: I am a helpful assistant."),
        ("I live in Leeds.", "I live in Leeds."),  # not a turn: whose "I" is unknown
    ],
)
def test_turns_are_read_as_said(text: str, expected: str) -> None:
    assert as_said(text) == expected
