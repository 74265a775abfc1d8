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


def test_the_speakers_reading_takes_their_organisation_for_we() -> None:
    groups = (("Lena", "Brightwave"),)
    assert as_said("Lena: We use Datadog, and I like it.", groups) == (
        "Lena: Brightwave uses Datadog, and Lena likes it."
    )
    assert as_said("Tom: We use Datadog.", groups) == "Tom: We use Datadog."  # not Lena's
    assert as_said("Lena: We use Datadog.") == "Lena: We use Datadog."
