"""Ten thousand plausible memories of an agent's user and the people around them,
the haystack for the search tests (deterministic: a seeded generator)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
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
#: One kind of fact: (what the thing is drawn from, the sentence, the thing's kind and
#: role, the relation). ``{x}`` is the thing; ``{month}``, where the sentence has one, is
#: drawn after it; ``{day}`` is the fact's number folded into a month.
Kind = tuple[Sequence[str] | Callable[[random.Random], str], str, str, str, str]

#: What is said of someone else, by the fact's number modulo 10.
SAID_OF: tuple[Kind, ...] = (
    (CITIES, "{person} lives in {x}.", "city", "place", "lives_in"),
    (COMPANIES, "{person} works at {x}.", "org", "employer", "works_at"),
    (FOODS, "{person} loves {x}.", "food", "liked", "likes"),
    (PETS, "{person} has {x}.", "animal", "pet", "owns"),
    (LANGUAGES, "{person} speaks {x}.", "language", "spoken", "speaks"),
    (HOBBIES, "{person} took up {x} last year.", "activity", "hobby", "hobby"),
    (BOOKS, "{person} is reading {x}.", "book", "read", "reads"),
    (MONTHS, "{person}'s birthday is in {x}.", "month", "when", "birthday"),
    # Other people's allergies: the hardest distractors for the allergy question.
    (ALLERGENS, "{person} is allergic to {x}.", "allergen", "allergen", "allergic_to"),
    (CITIES, "{person} visited {x} in {month}.", "city", "place", "visited"),
)
#: What the user did, by the fact's number modulo 5.
USER_DID: tuple[Kind, ...] = (
    (FOODS, "The user ordered {x} on {month} {day}.", "food", "ordered", "ordered"),
    (_person, "The user met {x} for coffee.", "person", "met", "met"),
    (CITIES, "The user plans a trip to {x}.", "city", "place", "plans_trip"),
    (HOBBIES, "The user wants to try {x}.", "activity", "hobby", "wants"),
    (BOOKS, "The user finished reading {x}.", "book", "read", "reads"),
)


def _fact(rng: random.Random, n: int, subject: str, kind: Kind) -> Made:
    """The ``n``-th fact, of ``kind``, about ``subject`` (a person's name or "user")."""
    pool, sentence, thing_kind, role, relation = kind
    thing = pool(rng) if callable(pool) else rng.choice(pool)
    month = rng.choice(MONTHS) if "{month}" in sentence else ""
    statement = sentence.format(person=subject, x=thing, month=month, day=n % 28 + 1)
    return statement, [(subject, "person", "subject"), (thing, thing_kind, role)], relation


def _about_someone(rng: random.Random, n: int) -> Made:
    return _fact(rng, n, _person(rng), SAID_OF[n % 10])


def _about_the_user(rng: random.Random, n: int) -> Made:
    return _fact(rng, n, "user", USER_DID[n % 5])


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
