"""Ten thousand plausible memories of an agent's user and the people around them,
the haystack for the search tests (deterministic: a seeded generator)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

FIRST = (
    "Alice Bob Carol Dan Erin Frank Grace Heidi Ivan Judy Ken Laura Mallory Nina Oscar "
    "Peggy Quentin Rupert Sybil Trent Uma Victor Wendy Xavier Yara Zoe"
).split()
LAST = "Smith Jones Garcia Chen Novak Rossi Silva Kim Okafor Larsen Weber Dubois".split()
CITIES = "Paris Berlin Osaka Lima Toronto Nairobi Oslo Madrid Austin Hanoi Porto Quito".split()
COMPANIES = "Acme Globex Initech Umbrella Hooli Stark Wayne Wonka Soylent Tyrell".split()
FOODS = "sushi tacos ramen pizza curry falafel paella dumplings pho risotto".split()
ALLERGENS = "shellfish|penicillin|cats|pollen|latex|bee stings|dust mites|eggs".split("|")
PETS = "a dog|a cat|two rabbits|a parrot|a goldfish|a tortoise".split("|")
LANGUAGES = "French German Japanese Spanish Swahili Portuguese Korean Italian".split()
HOBBIES = "hiking chess pottery climbing sailing painting running birdwatching".split()
BOOKS = "Dune|Emma|Beloved|Ulysses|Solaris|Middlemarch|Kindred|Hamlet".split("|")
MONTHS = "January February March April May June July August September October".split()


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


Made = tuple[str, list[tuple[str, str, str]], str]  # statement, members, relation


def _about_someone(rng: random.Random, n: int) -> Made:
    person = _person(rng)
    statement, others, relation = _said_of(rng, n, person)
    return statement, [(person, "person", "subject"), *others], relation


def _said_of(rng: random.Random, n: int, person: str) -> Made:
    kind = n % 10
    if kind == 0:
        city = rng.choice(CITIES)
        return f"{person} lives in {city}.", [(city, "city", "place")], "lives_in"
    if kind == 1:
        org = rng.choice(COMPANIES)
        return f"{person} works at {org}.", [(org, "org", "employer")], "works_at"
    if kind == 2:
        food = rng.choice(FOODS)
        return f"{person} loves {food}.", [(food, "food", "liked")], "likes"
    if kind == 3:
        pet = rng.choice(PETS)
        return f"{person} has {pet}.", [(pet, "animal", "pet")], "owns"
    if kind == 4:
        lang = rng.choice(LANGUAGES)
        return f"{person} speaks {lang}.", [(lang, "language", "spoken")], "speaks"
    if kind == 5:
        hobby = rng.choice(HOBBIES)
        return f"{person} took up {hobby} last year.", [(hobby, "activity", "hobby")], "hobby"
    if kind == 6:
        book = rng.choice(BOOKS)
        return f"{person} is reading {book}.", [(book, "book", "read")], "reads"
    if kind == 7:
        month = rng.choice(MONTHS)
        return f"{person}'s birthday is in {month}.", [(month, "month", "when")], "birthday"
    if kind == 8:
        # Other people's allergies: the hardest distractors for the allergy question.
        allergen = rng.choice(ALLERGENS)
        return (
            f"{person} is allergic to {allergen}.",
            [(allergen, "allergen", "allergen")],
            ("allergic_to"),
        )
    city = rng.choice(CITIES)
    return f"{person} visited {city} in {rng.choice(MONTHS)}.", [(city, "city", "place")], "visited"


def _about_the_user(rng: random.Random, n: int) -> Made:
    statement, others, relation = _user_did(rng, n)
    return statement, [("user", "person", "subject"), *others], relation


def _user_did(rng: random.Random, n: int) -> Made:
    kind = n % 5
    if kind == 0:
        food = rng.choice(FOODS)
        return (
            f"The user ordered {food} on {rng.choice(MONTHS)} {n % 28 + 1}.",
            [(food, "food", "ordered")],
            "ordered",
        )
    if kind == 1:
        person = _person(rng)
        return f"The user met {person} for coffee.", [(person, "person", "met")], "met"
    if kind == 2:
        city = rng.choice(CITIES)
        return f"The user plans a trip to {city}.", [(city, "city", "place")], "plans_trip"
    if kind == 3:
        hobby = rng.choice(HOBBIES)
        return f"The user wants to try {hobby}.", [(hobby, "activity", "hobby")], "wants"
    book = rng.choice(BOOKS)
    return f"The user finished reading {book}.", [(book, "book", "read")], "reads"


def distractors(count: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    """``count`` distinct facts (as add_facts items), one in ten about the user."""
    rng = random.Random(seed)
    seen: set[str] = set()
    n = 0
    while len(seen) < count:
        n += 1
        about_user = n % 10 == 0
        make = _about_the_user if about_user else _about_someone
        statement, others, relation = make(rng, n)
        if statement in seen:
            continue
        seen.add(statement)
        yield {
            "statement": statement,
            "members": others,
            "relation": relation,
            "evidence": [f"Conversation note: {statement}"],
        }
