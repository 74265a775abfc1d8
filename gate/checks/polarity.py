"""The polarity check: the evidence denies what the claim asserts, or says its
opposite (WordNet's antonyms); and a verb's objects said in another clause."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gate.checks.common import LIGHT, Finding, reports, shares_words, shortened
from gate.subjects import (
    CONTRAST,
    denied,
    quoted_denial,
)
from language.antonyms import opposites
from language.fields import fields, no_field_value, one_field
from language.parsing import Reading, denies, parse

if TYPE_CHECKING:  # spaCy loads numpy and torch, which a read of the store must not
    from spacy.tokens import Token


def mixed_findings(claim: Reading, sentences: list[Reading]) -> list[Finding]:
    """The claim's verb with an object the evidence says in another clause ("Leo
    struggles with factoring" from "I find factoring easy but I struggle with the
    quadratic formula"): no clause of that verb holds the claim's objects, one has
    objects of its own, and another clause of its sentence has the claim's. Held, also
    where the claim cites that other clause: "at home it's Portuguese" cited for "Ana
    speaks Portuguese at home" says the same in other words (a review's examples)."""
    if not claim.clauses or claim.root in LIGHT or reports(claim):
        return []
    own = claim.clauses[0]
    objects = {w for w, dep, _ in claim.slots if dep in _OBJECTS} & own.lemmas
    if not objects:
        return []
    for sentence in sentences:
        if any(objects <= c.lemmas for c in sentence.clauses if c.predicate == own.predicate):
            return []  # a clause of the verb says it of the claim's objects
    for sentence in sentences:
        theirs = {w for w, dep, _ in sentence.slots if dep in _OBJECTS}
        for clause in (c for c in sentence.clauses if c.predicate == own.predicate):
            missing = objects - clause.lemmas
            others = (clause.lemmas & theirs) - claim.lemmas
            elsewhere = frozenset().union(
                *(c.lemmas for c in sentence.clauses if c.predicate != own.predicate)
            )
            if missing and others and missing <= elsewhere:
                reason = (
                    f"the evidence has {sorted(missing)[0]} in another clause than "
                    f'"{own.predicate}": "{shortened(clause.text)}"'
                )
                return [Finding("mixed", "doubt", reason)]
    return []


#: Where a verb's object stands.
_OBJECTS = frozenset({"dobj", "pobj", "attr", "dative", "oprd"})


def polarity_findings(
    claim: Reading, about: Reading | None, sentences: list[Reading]
) -> list[Finding]:
    """The claim and the sentence it is about must agree on "not" (of the verb, or of a
    thing the claim names). Where the claim does not say "not", the evidence refutes it
    when every clause that holds the claim's words denies its verb, said of the claim's
    subject or of no one named ("No fever.", "I don't drink alcohol."), or when a contrast
    denies a word of the claim ("it's 21 Elm Street, not 12"); another "not" only holds."""
    if about is None:
        return []
    says_not = denies(claim, claim.lemmas)
    clause = None if says_not else denied(claim, sentences)
    if clause is not None:
        return [Finding("polarity", "refute", f'the evidence says "not": "{shortened(clause)}"')]
    if _crossed(claim, about):
        return [
            Finding(
                "polarity",
                "refute",
                f'the evidence sets "{about.contrasted[0]}" aside, not "{claim.contrasted[0]}": '
                f'"{shortened(about.text)}"',
            )
        ]
    if claim.contrasted and about.contrasted and not set(claim.contrasted) & set(about.contrasted):
        return [  # "not the car" against "not the bus": each sets aside its own
            Finding(
                "polarity",
                "doubt",
                f'the evidence sets "{about.contrasted[0]}" aside, the claim '
                f'"{claim.contrasted[0]}": "{shortened(about.text)}"',
            )
        ]
    if says_not == denies(about, claim.lemmas):
        return []
    if not says_not:
        contrasted = next((w for w in about.contrasted if w in claim.lemmas), None)
        if contrasted is not None:
            return [
                Finding(
                    "polarity",
                    "refute",
                    f'the evidence says "not {contrasted}": "{shortened(about.text)}"',
                )
            ]
    if says_not:
        return [
            Finding(
                "polarity",
                "refute",
                f'the claim says "not", the evidence does not: "{shortened(about.text)}"',
            )
        ]
    return [
        Finding(
            "polarity",
            "doubt",
            f'the evidence says "not" where the claim does not: "{shortened(about.text)}"',
        )
    ]


def cited_polarity(claim: Reading, quoted: list[Reading]) -> list[Finding]:
    """The words the claim cites deny what it asserts (``gate.subjects.quoted_denial``):
    refuted, whatever else the evidence says."""
    if not quoted or denies(claim, claim.lemmas):
        return []
    clause = quoted_denial(claim, quoted)
    if clause is None:
        return []
    return [Finding("polarity", "refute", f'the words it cites say "not": "{shortened(clause)}"')]


def opposite_findings(claim: Reading, text: str, cites: list[Reading]) -> list[Finding]:
    """The words the claim cites say the opposite of one of its adjectives or verbs
    (``language.antonyms``: "easy" against "the hardest part"; "passed" against
    ``"status": "failed"``), not the word itself: refused. Only where the quote is one
    short statement (one clause, or one field of a record whose value is not 0 or false;
    "cheap but the flights were expensive" sets two things against each other) tied to
    the claim (``shares_words``), neither says "not" or compares ("smaller than"), and the
    opposite is said of what the claim's word is (``_same_side``, ``_said_of_it``)."""
    if claim.negations or "than" in claim.order:
        return []
    # an adjective the tagger read as a noun ("finds the subjunctive easy") is looked up
    wanted = [
        ("ADJ" if tag == "NOUN" else tag, lemma)
        for lemma, tag in zip(claim.order, claim.tags, strict=False)
    ]
    for quote in cites:
        field = one_field(quote.text)
        if (
            len(quote.tokens) > MAX_OPPOSED_WORDS
            or len(quote.clauses) > 1
            or len(fields(quote.text)) > 1
            or quote.negations
            or "than" in quote.order
            or CONTRAST.search(quote.text)  # "cheap, but the flights were expensive"
            or no_field_value(quote.text)  # "failed": 0, "closed": false
            or _BOUNDED.search(quote.text)
            or _BOUNDED.search(text)  # "closed after 22:00"
            or not shares_words(text, quote.text)
        ):
            continue
        said = set(quote.order) | {t.lower() for t in quote.tokens}
        flipped = [(tag, lemma, sorted(opposites(lemma, tag) & said)) for tag, lemma in wanted]
        flipped = [(tag, lemma, other) for tag, lemma, other in flipped if other]
        if len(flipped) != 1:
            continue  # none, or two pairs flipped ("the old office was farther"): the same
        _, lemma, other = flipped[0]
        if lemma in said or set(other) & set(claim.order):
            continue  # "an old man becomes younger" says both
        if _same_side(claim, lemma, quote, other[0], field) and (
            field or _said_of_it(claim, lemma, quote, other[0])
        ):
            reason = f'the words it cites say "{other[0]}", the opposite of "{lemma}"'
            return [Finding("polarity", "refute", reason)]
    return []


#: A bound in time, which an opposite word turns round ("open until 22:00" is "closed
#: after 22:00").
_BOUNDED = re.compile(r"\b(?:until|till|after|before|since|from)\b", re.I)


def _said_of_it(claim: Reading, word: str, quote: Reading, opposite: str) -> bool:
    """Whether, in the parse, the quote's opposite says what the claim's word says: not
    part of a name ("the Old Town"), not an adjective of a noun other than the subject
    or what it is ("has two older brothers"), not a verb of a governed clause, of the
    other voice ("was lent a laptop by IT") or with another object ("refused Globex's
    counteroffer" for "accepted Acme's offer")."""
    mine = next((t for t in parse(claim.text) if t.lemma_.lower() == word), None)
    theirs = next((t for t in parse(quote.text) if opposite in (t.lemma_.lower(), t.lower_)), None)
    if mine is None or theirs is None or theirs.pos_ == "PROPN":
        return False
    if theirs.dep_ == "amod" and theirs.head.dep_ not in ("nsubj", "nsubjpass", "attr", "ROOT"):
        return False
    if theirs.pos_ != "VERB":
        return True
    if theirs.dep_ in ("advcl", "pcomp", "xcomp", "acl", "relcl"):
        return False
    if mine.pos_ == "VERB" and _passive(mine) != _passive(theirs):
        return False  # ("is closed" is passive beside "open")
    ours = {c.lemma_.lower() for c in mine.children if c.dep_ == "dobj"}
    what = {c.lemma_.lower() for c in theirs.children if c.dep_ == "dobj"}
    return not (ours and what and not ours & what)


def _passive(verb: Token) -> bool:
    return any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)


def _same_side(claim: Reading, word: str, quote: Reading, opposite: str, field: bool) -> bool:
    """Whether the quote says ``opposite`` of what the claim says ``word`` of: the claim's
    words before ``word`` (its subject's side, owners aside; "the user" counts) are
    among the quote's before ``opposite``, unless the quote is one field of a record
    ("Tom is Maya's younger brother" is of Tom, not of "Maya ... older"); and, for a
    verb, none of them stand after the opposite, where the one it was done to stands
    ("The Red team lost to the Blue team": the Blue team won; "sells eggs to Ana")."""
    mine = _side(claim, word)
    low = [t.lower() for t in quote.tokens]
    at = quote.order.index(opposite) if opposite in quote.order else low.index(opposite)
    if not field and not mine & _content(quote, 0, at):
        return False
    verb = claim.tags[claim.order.index(word)] == "VERB"
    return not (verb and mine & _content(quote, at + 1))


def _side(reading: Reading, word: str) -> set[str]:
    return _content(reading, 0, reading.order.index(word))


def _content(reading: Reading, start: int, end: int | None = None) -> set[str]:
    """The content lemmas of ``reading``'s tokens from ``start`` to ``end`` ("user"
    counts), a word followed by "'s" (an owner, "Maya's brother") left out."""
    stop = len(reading.order) if end is None else end
    out = set()
    for i in range(start, stop):
        owner = i + 1 < len(reading.tokens) and reading.tokens[i + 1] in ("'s", "\u2019s")
        lemma = reading.order[i]
        if (lemma in reading.lemmas or lemma == "user") and not owner:
            out.add(lemma)
    return out


#: The most tokens a quote may have for an opposite word in it to refute: one short
#: statement (a long sentence says the opposite of other things too).
MAX_OPPOSED_WORDS = 20


def _crossed(claim: Reading, about: Reading) -> bool:
    """Whether the claim's contrast is the evidence's the other way round: what the
    claim sets aside the evidence holds, and what the evidence sets aside the claim
    holds ("on the 9th, not the 11th" against "on the 11th, not the 9th")."""
    return any(w in about.lemmas and w not in about.contrasted for w in claim.contrasted) and any(
        w in claim.lemmas and w not in claim.contrasted for w in about.contrasted
    )
