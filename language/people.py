"""Words for people: nouns that name a person by a relation ("my wife", "her boss"), with
the gender some of them give, and the labels of turns that name a role, not a person."""

from __future__ import annotations

import re
import unicodedata

FEMALE = frozenset(
    """wife mother mum mom daughter sister aunt niece grandmother grandma girlfriend
    fiancee fiancée stepmother stepdaughter stepsister lady woman girl""".split()
)
MALE = frozenset(
    """husband father dad son brother uncle nephew grandfather grandpa boyfriend fiance
    fiancé stepfather stepson stepbrother man boy""".split()
)
#: Nouns for a person: said without a name ("my dad"), "he" may be them.
PERSON_NOUNS = (
    FEMALE
    | MALE
    | frozenset(
        """friend partner boss manager colleague coworker neighbour neighbor doctor
        teacher coach cousin kid child son baby parent roommate flatmate landlord tenant
        client customer lawyer nurse dentist vet plumber driver sibling""".split()
    )
)
#: Turn labels that name a role, not who it is ("user: I ..." may be Maya).
ROLES = frozenset("user assistant system tool human ai bot agent developer".split())


def is_role(label: str) -> bool:
    """Whether a turn's label names a role ("User", "assistant"), not a person."""
    return label.strip().lower() in ROLES


def fold(text: str) -> str:
    """``text`` without accents ("Vázquez" -> "Vazquez")."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def overlaps(a: str, b: str) -> bool:
    """Whether two names share a word ("Helga" and "Helga Lindqvist", "@maya" and
    "Maya"), accents folded."""
    return bool(name_words(a) & name_words(b))


def name_words(name: str) -> set[str]:
    """The words of a name, lower case, accents folded ("Vázquez" -> {"vazquez"})."""
    return set(re.findall(r"[a-z0-9]+", fold(name.lower())))
