"""He and she: the one person a turn has just named as a subject or an owner."""

from __future__ import annotations

import pytest

from language.pronouns import (
    Person,
    antecedent,
    place,
    resolve,
    resolve_it,
    resolve_there,
    thing,
)


@pytest.mark.parametrize(
    ("before", "person"),
    [
        ("My sister Noor moved out. ", Person("Noor", "she")),
        ("Kofi called this morning. ", Person("Kofi")),
        ("Kofi and Ama called. ", None),  # two people
        ("I called Kofi. ", None),  # named, but not as a subject
        ("Maya likes tea. ", None),  # the speaker herself
        ("I moved to Leeds. ", None),  # no person
        ("Sarah met my dad. ", None),  # "he" may be the dad, whose name is not given
        ("My dad called. ", None),
        ("Hi, I'm Leo's mum. Sorry, ", Person("Leo")),  # an owner; the mum is the speaker
        ("Leo's test is on Monday. ", Person("Leo")),
        ("Anna's husband called. ", None),  # "he" may be the husband
    ],
)
def test_the_antecedent_is_the_one_subject_named(before: str, person: Person | None) -> None:
    assert antecedent(before, speaker="Maya") == person


def test_a_name_the_parser_made_a_second_subject_is_the_noun_beside_it() -> None:
    """Parsed with "daughter" and "Ivy" both subjects of "coming" ("Tom's daughter Ivy
    is coming"): Ivy is the daughter, and a "she" after it means her."""
    before = "Sure. Tom's daughter Ivy is coming too, "
    assert antecedent(before, speaker="Tom") == Person("Ivy", "she")
    assert antecedent("Sure. Tom's daughter is coming too, ", speaker="Tom") is None


def test_a_person_noun_the_parser_made_part_of_the_name_is_beside_it() -> None:
    """Parsed with "husband" a compound of "Idris" ("Lea's husband Idris swims too"):
    Idris is the husband, named beside the noun."""
    before = "Mondays and Fridays. Lea's husband Idris swims too, "
    assert antecedent(before, speaker="Lea") == Person("Idris", "he", beside=True)


@pytest.mark.parametrize(
    ("clause", "person", "resolved"),
    [
        ("she's a pilot.", Person("Noor", "she"), "Noor is a pilot."),
        ("He's been to Oslo twice.", Person("Kofi"), "Kofi has been to Oslo twice."),
        ("her flat is in Hove.", Person("Noor"), "Noor's flat is in Hove."),
        ("I met him at work.", Person("Kofi"), "I met Kofi at work."),
        ("he is a nurse.", Person("Noor", "she"), None),  # the other gender
        ("She is his boss.", Person("Anna"), None),  # "she" and "his": two people
        ("She lost her card.", Person("Anya"), "Anya lost Anya's card."),
        # "her" after another noun may mean it (the dog): left as said
        (
            "She adopted a pit mix and walks her daily.",
            Person("Dana", "she"),
            "Dana adopted a pit mix and walks her daily.",
        ),
    ],
)
def test_pronouns_become_the_name(clause: str, person: Person, resolved: str | None) -> None:
    assert resolve(clause, person) == resolved


@pytest.mark.parametrize(
    ("before", "named"),
    [
        ("I'm on the search reindex migration. ", "the search reindex migration"),
        ("I bought a new phone for my mom. ", "the new phone"),  # "a" is "the"; a mom no thing
        ("I went to a support group yesterday and ", "the support group"),  # a time no thing
        ("I finished the report on the new pricing. ", None),  # two things
        ("I took a photo of the lake yesterday. ", None),  # "it" may mean either
        ("Yeah, I painted that lake sunrise last year! ", "the lake sunrise"),
        ("I met Tom. ", None),  # a name: a person, maybe
        ("Sorry, it was November 17, not the 18th. ", None),  # a date is no thing
        ("I took six photos. ", None),  # nor a number of them
        ("", None),
    ],
)
def test_it_is_the_one_thing_just_named(before: str, named: str | None) -> None:
    assert thing(before) == named


@pytest.mark.parametrize(
    ("clause", "resolved"),
    [
        ("It should land on Thursday.", "the report should land on Thursday."),
        ("it's in the garage.", "the report is in the garage."),
        ("It's raining again.", None),  # an "it" that stands for nothing said
        ("It's hard to say.", None),
        ("It's special to me.", "the report is special to me."),  # "to" before a noun
        ("It's up to you.", None),
        ("It was the cache that broke.", None),  # a cleft
        ("I liked it.", None),  # not the clause's opening "it"
        ("IT-2291 is down.", None),  # a code, not "it"
        ("It was the 17th, not the 18th.", None),  # a correction's "it" is the value
    ],
)
def test_an_opening_it_becomes_the_thing(clause: str, resolved: str | None) -> None:
    assert resolve_it(clause, "the report") == resolved


@pytest.mark.parametrize(
    ("before", "where"),
    [
        ("I'm joining from Osaka,", ("in", "Osaka")),
        ("I'm a senior engineer at Stripe, on the billing team.", ("at", "Stripe")),
        ("I moved to Lisbon in March and", ("in", "Lisbon")),  # a month is no place
        ("I went to Leeds and York.", None),  # two places
        ("I work from home.", None),  # no name
    ],
)
def test_there_is_the_one_place_just_named(before: str, where: tuple[str, str] | None) -> None:
    assert place(before) == where


def test_a_there_becomes_the_place_and_there_is_stays() -> None:
    assert resolve_there("I live there.", ("in", "Osaka")) == "I live in Osaka."
    assert resolve_there("I've been there four years.", ("at", "Stripe")) == (
        "I've been at Stripe four years."
    )
    assert resolve_there("There is a gym nearby.", ("in", "Osaka")) is None


def test_a_name_beside_a_noun_for_a_person_is_a_person() -> None:
    friend = antecedent("And my best friend Chloe is the maid of honour. ", speaker="Amelia")
    assert friend == Person("Chloe") and friend.beside
    company = antecedent("Yes! Google called on Monday. ", speaker="Maya")
    assert company == Person("Google") and not company.beside
