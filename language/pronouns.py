"""Pronouns resolved: he and she to the one person a turn has just named, "it" to the one
thing.

"My wife Anya runs too, she did the Berlin marathon last year": "she" is Anya. A turn
that names one person as the subject of a clause (a name, or a name set beside a noun
for a person: "my best friend Chloe") or as an owner ("I'm Leo's mum", "Leo's test is
on Monday") and then says "he", "she", "him", "her", "his" or "hers" means that person;
where it names two or more, or none, or a person without a name ("Anna's husband", but
not the speaker's own "I'm Leo's mum"), or a noun for a person of the other gender ("my
husband Tom ... she"), the pronoun stays unresolved and the extractor leaves the
sentence alone. Roles come from spaCy's parser
(``language.parsing``). An "it" that opens a clause is the one thing the sentence before
named ("I'm on the search migration. It should land on Thursday."), where it named one
(not a person, a time or a name) and the "it" stands for something ("It's raining", "it
was the cache that broke" do not). A "there" is the one place the turn named after a
preposition ("I'm joining from Osaka, I live there": in Osaka). "They" and "we" are never
resolved (too often a group).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from language.parsing import parse
from language.people import FEMALE, MALE, PERSON_NOUNS
from language.values import MONTHS, WEEKDAYS

if TYPE_CHECKING:
    from spacy.tokens import Token

PRONOUNS = frozenset("he she him her his hers".split())
#: Any of them in a text.
THIRD_PERSON = re.compile(r"\b(?:" + "|".join(sorted(PRONOUNS)) + r")\b", re.I)
_SHE = frozenset("she her hers".split())
_SUBJECT = frozenset({"nsubj", "nsubjpass"})


@dataclass(frozen=True, slots=True)
class Person:
    """Who a pronoun means, and the gender a noun beside the name gave (if any)."""

    name: str
    gender: Literal["he", "she"] | None = None
    #: Whether a noun for a person stands beside the name ("my best friend Chloe"): a
    #: person, then, not a company or a place.
    beside: bool = field(default=False, compare=False)


def antecedent(text: str, speaker: str | None = None) -> Person | None:
    """The one person ``text`` names as a subject (not ``speaker``), else None."""
    found: dict[str, Literal["he", "she"] | None] = {}
    people: set[str] = set()  # named beside a noun for a person
    unnamed = 0  # people said without a name ("my dad"): "he" may be one of them
    for token in parse(text):
        unnamed += _unnamed_person(token)
        if token.pos_ != "PROPN" or token.dep_ == "compound":
            continue
        first = token
        while first.dep_ == "conj" and first.head is not first:  # "Tom and Ana came"
            first = first.head
        head = _beside(first)
        subject = first.dep_ in _SUBJECT or (head is not None and head.dep_ in _SUBJECT)
        if not subject and first.dep_ != "poss":  # "Leo's test", "I'm Leo's mum"
            continue
        name = _full_name(token)
        if speaker is not None and name.lower() == speaker.lower():
            continue
        noun = head.lemma_.lower() if head is not None else None
        found[name] = "she" if noun in FEMALE else "he" if noun in MALE else found.get(name)
        if noun in PERSON_NOUNS:
            people.add(name)
    if len(found) != 1 or unnamed:
        return None
    [(name, gender)] = found.items()
    return Person(name, gender, beside=name in people)


def _unnamed_person(token: Token) -> bool:
    """A noun for a person, said without a name ("my dad", "her boss")."""
    if token.pos_ != "NOUN" or token.lemma_.lower() not in PERSON_NOUNS:
        return False
    named = any(c.dep_ in ("appos", "compound") and c.pos_ == "PROPN" for c in token.children)
    after = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    beside = _beside(after) if after is not None else None
    named = named or (beside is not None and beside.i == token.i)
    return not named and token.dep_ != "compound" and not _speaker_is(token)


def _beside(name: Token) -> Token | None:
    """The noun for a person a name is set beside: its head, where parsed as apposition
    ("my daughter Ivy"), or the person noun just before it where the parser made both
    subjects of one verb ("Tom's daughter Ivy is coming")."""
    if name.dep_ == "appos":
        return name.head
    before = name.doc[name.i - 1] if name.i > 0 else None
    if (
        before is not None
        and before.pos_ == "NOUN"
        and before.lemma_.lower() in PERSON_NOUNS
        and (
            (before.dep_ == name.dep_ and before.head.i == name.head.i)
            or (before.dep_ == "compound" and before.head.i == name.i)  # "Dmitri's wife Anya"
        )
    ):
        return before
    return None


def _speaker_is(token: Token) -> bool:
    """The noun says who the speaker is ("I'm Leo's mum"): no one else."""
    return token.dep_ == "attr" and any(
        c.dep_ in _SUBJECT and c.lower_ == "i" for c in token.head.children
    )


def resolve(clause: str, person: Person) -> str | None:
    """``clause`` with its third-person singular pronouns as ``person`` ("she's" ->
    "Anya is", "her card" -> "Anya's card"), those said before any other noun (one
    after may mean the noun: "she found a pit mix nobody wanted, ... her" keeps "her");
    None where a pronoun's gender is not the one ``antecedent`` found for the person."""
    name, gender = person.name, person.gender
    doc = parse(clause)
    said = {t.lower_ for t in doc if t.pos_ == "PRON"}
    if said & {"he", "him", "his"} and said & _SHE:
        return None  # both "he" and "she": two people, one of them not named
    out: list[str] = []
    own = set(name.split())
    other = False  # a noun said since the clause began: one a later pronoun may mean
    for i, token in enumerate(doc):
        low = token.lower_
        text = token.text
        if low in PRONOUNS and token.pos_ == "PRON" and not other:
            if gender and (low in _SHE) != (gender == "she"):
                return None
            possessive = token.tag_ == "PRP$" or low == "hers"
            text = f"{name}'s" if possessive else name
        elif low in ("'s", "\u2019s") and i > 0 and doc[i - 1].lower_ in ("he", "she"):
            after = doc[i + 1] if i + 1 < len(doc) else None
            has = token.lemma_ == "have" or (after is not None and after.tag_ == "VBN")
            text = " has" if has else " is"
        elif token.pos_ in ("NOUN", "PROPN") and token.text not in own:
            # "she found a pit mix nobody wanted, ... her": the mix, maybe
            other = other or token.lemma_.lower() not in _NOT_THINGS
        out.append(text + token.whitespace_)
    return "".join(out)


def _full_name(token: Token) -> str:
    """The name with the words compounded onto it ("Mr Lefèvre")."""
    parts = [t for t in token.lefts if t.dep_ == "compound" and t.pos_ == "PROPN"]
    return " ".join([*(t.text for t in parts), token.text])


#: Nouns of time and place-holders that "it" does not stand for ("this morning").
_NOT_THINGS = frozenset(
    """morning afternoon evening night day week month year time moment minute hour today
    tomorrow yesterday weekend thing lot bit way kind sort""".split()
)
#: "It's raining", "it's been a while", "it's hard to say", "it's time to go": an "it"
#: that stands for nothing said before ("it's special to me" does: "to" before a noun).
_EMPTY_IT = re.compile(
    r"^it(?:'s|\s+is|\s+was|\s+will\s+be|\s+has\s+been)\s+(?:up\s+to|(?:\w+\s+)?(?:that|"
    r"for\s+\w+\s+to|to(?!\s+(?:me|you|him|her|us|them|it|my|your|his|our|their|the|a|an)\b)))\b"
    r"|^it(?:'s|\s+is|\s+was)\s+(?:been|raining|snowing|sunny|cold|hot|warm|late|early|"
    r"time|getting|going\s+to|about|like|not\s+like|fine|ok|okay|true)\b"
    # "It was the cache that broke": a cleft, its "it" stands for what follows
    r"|^it(?:'s|\s+is|\s+was)\s+(?:\S+\s+){1,4}?(?:that|who|which)\b",
    re.I,
)

_CORRECTING = re.compile(r"[,;]\s*not\b|\binstead of\b|\brather than\b", re.I)


def thing(before: str) -> str | None:
    """The one thing the last sentence of ``before`` names, for an "it" that opens the
    next clause ("I'm on the search reindex migration. It should land on Thursday.": "the
    search reindex migration"), else None: none, or two or more (a person, a time or a
    name is no thing; "a", "that" become "the")."""
    doc = parse(before.strip())
    sentences = list(doc.sents)
    if not sentences:
        return None
    found = [
        chunk
        for chunk in sentences[-1].noun_chunks
        if chunk.root.pos_ == "NOUN"
        and chunk.root.lemma_.lower() not in _NOT_THINGS | PERSON_NOUNS
        and chunk.root.dep_ != "npadvmod"
        and not any(t.like_num or any(c.isdigit() for c in t.text) for t in chunk)
    ]  # a date or a number ("the 18th") is a value, not a thing
    if len(found) != 1:
        return None  # none, or two: "a photo of the lake ... it" may be either
    span = found[0]
    words = [t.text_with_ws for t in span]
    if span[0].lower_ in ("a", "an", "that", "this"):
        words[0] = "the "
    return "".join(words).strip()


def resolve_it(clause: str, named: str) -> str | None:
    """``clause`` with the "it" that opens it as ``named`` ("It should land on Thursday"
    -> "the search reindex migration should land on Thursday"); None where it opens
    with no such "it", or with one that stands for nothing ("It's raining")."""
    text = clause.strip()
    if _EMPTY_IT.match(text) or _CORRECTING.search(text):
        return None  # "it's 17, not 18": the "it" of a correction is the value
    match = re.match(r"[Ii]t(?:'s|\s+is)\b|[Ii]t(?=\s)", text)
    if match is None:
        return None
    said = match.group(0).lower()
    head = f"{named} is" if said in ("it's", "it is") else named
    return head + text[match.end() :]


#: Prepositions that place something ("in Leeds", "at Stripe", "from Osaka").
_PLACING = frozenset({"in", "at", "from", "to", "near"})
#: "there" that stands for a place: not "there is ..." (which places nothing).
_THERE = re.compile(r"\bthere\b(?!\s*(?:'s|is|are|was|were|will|would|has|have|had)\b)", re.I)


def place(before: str) -> tuple[str, str] | None:
    """The one place ``before`` names after a preposition ("at Stripe", "from Osaka"),
    for a "there" that follows, with the preposition to say it with ("in" for "from" and
    "to": "I'm joining from Osaka, I live there" lives in Osaka); None where it names
    none or several (a month or a day is no place)."""
    found: dict[str, str] = {}
    for token in parse(before.strip()):
        placed = token
        while placed.dep_ == "conj" and placed.head.i != placed.i:  # "to Leeds and York"
            placed = placed.head
        prep = placed.head
        if (
            token.pos_ != "PROPN"
            or placed.dep_ != "pobj"
            or prep.lower_ not in _PLACING
            or token.lower_ in MONTHS
            or token.lower_ in WEEKDAYS
        ):
            continue
        name = " ".join([*(c.text for c in token.lefts if c.dep_ == "compound"), token.text])
        found[name] = prep.lower_ if prep.lower_ in ("in", "at") else "in"
    if len(found) != 1:
        return None
    [(named, said_with)] = found.items()
    return said_with, named


def resolve_there(clause: str, where: tuple[str, str]) -> str | None:
    """``clause`` with its one "there" as the place ``where`` ("I live there" -> "I live
    in Osaka"); None where it has none, or only the "there" of "there is"."""
    if len(_THERE.findall(clause)) != 1:
        return None
    prep, name = where
    return _THERE.sub(f"{prep} {name}", clause, count=1)
