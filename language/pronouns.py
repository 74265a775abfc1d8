"""He and she resolved to the one person a turn has just named as a subject.

"My wife Anya runs too, she did the Berlin marathon last year": "she" is Anya. A turn
that names one person as the subject of a clause (a name, or a name set beside a noun
for a person: "my best friend Chloe") or as an owner ("I'm Leo's mum", "Leo's test is
on Monday") and then says "he", "she", "him", "her", "his" or "hers" means that person;
where it names two or more, or none, or a person without a name ("Anna's husband", but
not the speaker's own "I'm Leo's mum"), or a noun for a person of the other gender ("my
husband Tom ... she"), the pronoun stays unresolved and the extractor leaves the
sentence alone. Roles come from spaCy's parser
(``language.parsing``); "they", "it" and "we" are never resolved (too often a group or
a thing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from language.parsing import parse

if TYPE_CHECKING:
    from spacy.tokens import Token

PRONOUNS = frozenset("he she him her his hers".split())
_FEMALE = frozenset(
    """wife mother mum mom daughter sister aunt niece grandmother grandma girlfriend
    fiancee fiancée stepmother stepdaughter stepsister lady woman girl""".split()
)
_MALE = frozenset(
    """husband father dad son brother uncle nephew grandfather grandpa boyfriend fiance
    fiancé stepfather stepson stepbrother man boy""".split()
)
_SHE = frozenset("she her hers".split())
#: Nouns for a person: where one is said without a name ("my dad"), "he" may be them.
_PERSON_NOUNS = (
    _FEMALE
    | _MALE
    | frozenset(
        """friend partner boss manager colleague coworker neighbour neighbor doctor
        teacher coach cousin kid child son baby parent roommate flatmate landlord tenant
        client customer lawyer nurse dentist vet plumber driver sibling""".split()
    )
)
_SUBJECT = frozenset({"nsubj", "nsubjpass"})


@dataclass(frozen=True, slots=True)
class Person:
    """Who a pronoun means, and the gender a noun beside the name gave (if any)."""

    name: str
    gender: Literal["he", "she"] | None = None


def antecedent(text: str, speaker: str | None = None) -> Person | None:
    """The one person ``text`` names as a subject (not ``speaker``), else None."""
    found: dict[str, Literal["he", "she"] | None] = {}
    unnamed = 0  # people said without a name ("my dad"): "he" may be one of them
    for token in parse(text):
        unnamed += _unnamed_person(token)
        if token.pos_ != "PROPN" or token.dep_ == "compound":
            continue
        first = token
        while first.dep_ == "conj" and first.head is not first:  # "Tom and Ana came"
            first = first.head
        head = first.head if first.dep_ == "appos" else None
        subject = first.dep_ in _SUBJECT or (head is not None and head.dep_ in _SUBJECT)
        if not subject and first.dep_ != "poss":  # "Leo's test", "I'm Leo's mum"
            continue
        name = _full_name(token)
        if speaker is not None and name.lower() == speaker.lower():
            continue
        noun = head.lemma_.lower() if head is not None else None
        found[name] = "she" if noun in _FEMALE else "he" if noun in _MALE else found.get(name)
    if len(found) != 1 or unnamed:
        return None
    [(name, gender)] = found.items()
    return Person(name, gender)


def _unnamed_person(token: Token) -> bool:
    """A noun for a person, said without a name ("my dad", "her boss")."""
    if token.pos_ != "NOUN" or token.lemma_.lower() not in _PERSON_NOUNS:
        return False
    named = any(c.dep_ in ("appos", "compound") and c.pos_ == "PROPN" for c in token.children)
    return not named and token.dep_ != "compound" and not _speaker_is(token)


def _speaker_is(token: Token) -> bool:
    """The noun says who the speaker is ("I'm Leo's mum"): no one else."""
    return token.dep_ == "attr" and any(
        c.dep_ in _SUBJECT and c.lower_ == "i" for c in token.head.children
    )


def resolve(clause: str, person: Person) -> str | None:
    """``clause`` with its third-person singular pronouns as ``person`` ("she's" ->
    "Anya is", "her card" -> "Anya's card"); None where a pronoun's gender is not the
    one ``antecedent`` found for the person."""
    name, gender = person.name, person.gender
    doc = parse(clause)
    said = {t.lower_ for t in doc if t.pos_ == "PRON"}
    if said & {"he", "him", "his"} and said & _SHE:
        return None  # both "he" and "she": two people, one of them not named
    out: list[str] = []
    for i, token in enumerate(doc):
        low = token.lower_
        text = token.text
        if low in PRONOUNS and token.pos_ == "PRON":
            if gender and (low in _SHE) != (gender == "she"):
                return None
            possessive = token.tag_ == "PRP$" or low == "hers"
            text = f"{name}'s" if possessive else name
        elif low in ("'s", "\u2019s") and i > 0 and doc[i - 1].lower_ in ("he", "she"):
            after = doc[i + 1] if i + 1 < len(doc) else None
            has = token.lemma_ == "have" or (after is not None and after.tag_ == "VBN")
            text = " has" if has else " is"
        out.append(text + token.whitespace_)
    return "".join(out)


def _full_name(token: Token) -> str:
    """The name with the words compounded onto it ("Mr Lefèvre")."""
    parts = [t for t in token.lefts if t.dep_ == "compound" and t.pos_ == "PROPN"]
    return " ".join([*(t.text for t in parts), token.text])
