"""Organisations a speaker speaks for, and their "we" read as it."""

from __future__ import annotations

import pytest

from language.organisations import affiliation, sides
from language.speakers import as_said, resolve_first_plural


@pytest.mark.parametrize(
    ("sentence", "organisation"),
    [
        ("I'm the CTO at Brightwave, we're about 120 people.", "Brightwave"),
        ("I'm Greg from CloudNine.", "CloudNine"),
        ("I work at Meridian Logistics, 9 Harbour Road.", "Meridian Logistics"),
        ("I work for Google as an engineer.", "Google"),
        ("Hi, I'm Dana, I work as a nurse at St. Mary's Hospital in Leeds.", "St. Mary's Hospital"),
        ("I'm Omar, head of facilities at Norvik Labs.", "Norvik Labs"),
        ("I'm head of sales at McDonald's.", "McDonald's"),
    ],
)
def test_a_speaker_names_the_organisation_they_work_for(sentence: str, organisation: str) -> None:
    assert affiliation(sentence) == organisation


@pytest.mark.parametrize(
    "sentence",
    [
        "I'm from Leeds.",  # a place
        "I'm at Starbucks right now.",  # where they are
        "I worked at Google for years.",  # not now
        "I used to work at Datadog.",
        "My wife works at Google.",  # someone else
        "I'm a big fan of Radiohead.",
        "I'm for Bernie.",
        "I work at a bakery.",  # no name
        "I live in Paris.",
        "I'm Greg from Boston.",  # a place, as the recogniser reads it
        "I'm Jen from Marketing.",
        "I'm a regular at Starbucks.",  # no job
        "I'm a student at Harvard.",
        "I'm the maid of honor for Jessica.",
        "I'm your account manager for Brightwave.",  # the customer, not the employer
        "I work for Mom.",
        "I'm no longer the CTO at Brightwave.",
        "I'm a former engineer at Google.",
        "I don't work at Google.",
        "I'll be an intern at Google next summer.",
        "Do I work for Google?",
        'She said "I work at Google."',
    ],
)
def test_no_organisation_where_none_is_the_speakers(sentence: str) -> None:
    assert affiliation(sentence) is None


CALL = [
    ("Greg", "Hi Lena, thanks for taking the call. I'm Greg from CloudNine."),
    ("Lena", "Hi Greg. I'm the CTO at Brightwave, we're about 120 people."),
    ("Lena", "We use Datadog."),
]


def test_sides_are_read_where_people_of_different_organisations_talk() -> None:
    assert sides(CALL) == {"Greg": ("CloudNine", 0), "Lena": ("Brightwave", 1)}


@pytest.mark.parametrize(
    "turns",
    [
        [("Maya", "I work at Google."), ("Tom", "We went hiking.")],  # one side named
        [("Maya", "I work at Google."), ("Tom", "I work at Google too.")],  # the same one
        [("Maya", "I live in Leeds."), ("Tom", "I live in York.")],
    ],
)
def test_no_sides_between_friends_or_colleagues(turns: list[tuple[str, str]]) -> None:
    assert sides(turns) == {}


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("We use Datadog", "Brightwave uses Datadog."),
        ("we're about 120 people.", "Brightwave is about 120 people."),
        ("our contract ends in June.", "Brightwave's contract ends in June."),
        ("We don't use Slack.", "Brightwave doesn't use Slack."),
        ("We always pay on time.", "Brightwave always pays on time."),
        ("We can sign this week.", "Brightwave can sign this week."),
        ("That's a must for us.", "That's a must for Brightwave."),
    ],
)
def test_we_is_read_as_the_organisation(sentence: str, expected: str) -> None:
    assert resolve_first_plural(sentence, "Brightwave") == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "We should meet Tuesday.",  # the people talking
        "We met at a conference in 2019.",
        "We went to the beach last weekend.",
        "Our kids love the beach.",
        "Our call is at 3pm.",
        "We both love hiking.",
        "Most of us work remotely.",
        "We at Brightwave use Datadog.",
        "Thanks for having us.",
        "We had a great time.",  # "have" in the past
        "We need to talk.",
        "We ourselves use it.",
        "Can we make it 7?",
    ],
)
def test_we_that_may_be_the_people_themselves_is_not_rewritten(sentence: str) -> None:
    assert resolve_first_plural(sentence, "Brightwave") is None


def test_the_speakers_reading_takes_their_organisation_for_we() -> None:
    groups = (("Lena", "Brightwave"),)
    assert as_said("Lena: We use Datadog, and I like it.", groups) == (
        "Lena: Brightwave uses Datadog, and Lena likes it."
    )
    assert as_said("Tom: We use Datadog.", groups) == "Tom: We use Datadog."  # not Lena's
    assert as_said("Lena: We use Datadog.") == "Lena: We use Datadog."
