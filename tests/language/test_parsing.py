"""Clauses read by language.parsing: who each verb's subject is, what its "not" denies,
and what a contrast ("21, not 12") sets aside."""

from __future__ import annotations

import pytest

from language.parsing import Clause, comparison, parse, read


def clauses(text: str) -> tuple[Clause, ...]:
    return read(parse(text)).clauses


@pytest.mark.parametrize(
    ("text", "agents"),
    [
        ("I'm allergic to penicillin.", ("I",)),
        ("My wife Elena is allergic to penicillin.", ("Elena",)),
        ("My husband ordered a monitor arm.", ("my husband",)),
        ("Priya's dad ordered a monitor arm.", ("Priya's dad",)),
        ("The user's sister Marta lives in Braga.", ("Marta",)),
        ("The user lives in Leeds.", ("the user",)),
        ("She lives in Edinburgh.", ("she",)),
        ("Maya and Tom are vegan.", ("Maya", "Tom")),
        ("Grace works until 6 on Sundays.", ("Grace",)),
        ("The cat sleeps all day.", ()),
    ],
)
def test_the_main_clause_says_who_its_subject_is(text: str, agents: tuple[str, ...]) -> None:
    assert clauses(text)[0].agents == agents


def test_each_verb_has_its_own_clause_and_a_conjunct_keeps_its_subject() -> None:
    said, insured = clauses("He said she is insured with AXA.")
    assert (said.agents, insured.agents) == (("he",), ("she",))
    assert "insure" in insured.lemmas and "insure" not in said.lemmas
    eat, drink = clauses("I eat everything but don't drink alcohol.")
    assert drink.agents == ("I",) and drink.denied and not eat.denied


@pytest.mark.parametrize(
    ("text", "denied"),
    [
        ("No fever.", True),
        ("No one was hurt.", True),
        ("I don't drink alcohol.", True),
        ("I'm no longer vegetarian.", True),
        ("I never eat meat.", True),
        ("I still eat fish, just not meat.", False),  # a thing's denial, not the verb's
        ("I have no car.", False),
        ("Oh no, I forgot the dinner.", False),
        ("It's 21 Elm Street, not 12.", False),  # a contrast
    ],
)
def test_a_clause_is_denied_by_a_not_of_its_own_verb(text: str, denied: bool) -> None:
    assert clauses(text)[0].denied is denied


@pytest.mark.parametrize(
    ("text", "contrasted"),
    [
        ("It's 21 Elm Street, not 12.", ("12",)),
        ("It's June 27, not June 20.", ("20",)),
        ("The cough started four weeks ago, not three.", ("three",)),
        ("The surgery was on my right knee, not the left.", ("left",)),
        ("He approved it, but only for me, not for Ruth.", ("ruth",)),
        ("Not now.", ()),
    ],
)
def test_a_contrast_denies_only_what_it_sets_aside(text: str, contrasted: tuple[str, ...]) -> None:
    assert read(parse(text)).contrasted == contrasted


@pytest.mark.parametrize(
    ("text", "predicate"),
    [
        ("Noah is vegetarian.", "vegetarian"),
        ("Tomás has a fever.", "fever"),
        ("No fever.", "fever"),
        ("The project adopted six principles.", "adopt"),
    ],
)
def test_the_predicate_is_the_verb_or_what_be_and_have_take(text: str, predicate: str) -> None:
    assert clauses(text)[0].predicate == predicate


def test_a_passive_subject_is_marked() -> None:
    assert clauses("Bogart was ranked the greatest star.")[0].passive
    assert not clauses("The institute ranked Bogart the greatest star.")[0].passive


@pytest.mark.parametrize(
    ("text", "verb", "unrealised"),
    [
        ("The landlord should repair the boiler.", "repair", True),
        ("Omar needs to renew his passport.", "renew", True),
        ("I'm going to sell the van.", "sell", True),
        ("If the parcel arrives, call me.", "arrive", True),
        ("The landlord repaired the boiler.", "repair", False),
        ("Omar renewed his passport last week.", "renew", False),
    ],
)
def test_a_verb_said_as_wanted_needed_or_possible_is_unrealised(
    text: str, verb: str, unrealised: bool
) -> None:
    assert (verb, unrealised) in read(parse(text)).verbs


def test_a_verb_someone_had_to_do_is_done() -> None:
    assert ("cancel", False) in read(parse("I had to cancel the trip because of the strike.")).verbs


@pytest.mark.parametrize(
    ("text", "compared"),
    [
        ("The patches helped more than the gum did.", ("help", "more", "patch", "gum")),
        ("Maya runs faster than Tom.", ("run", "fast", "maya", "tom")),
        ("I like tea more than coffee.", ("like", "more", "tea", "coffee")),
        ("I run faster than him.", None),  # a pronoun: who is read elsewhere
        ("Tea is nice.", None),
    ],
)
def test_a_comparison_names_what_it_compares(text: str, compared: tuple | None) -> None:
    found = comparison(parse(text))
    assert (found and (found.verb, found.degree, found.first, found.second)) == compared
