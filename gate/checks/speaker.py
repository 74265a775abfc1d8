"""The speaker and direction checks: what one person said, or said of someone,
read as the claim's subject; a relation the evidence makes run the other way."""

from __future__ import annotations

import re

from gate.checks.common import Finding, in_turn, is_named, reports, shortened
from gate.subjects import (
    quoted_of_someone_else,
    received,
    said_of_someone_else,
)
from language.parsing import Reading, comparison, denies, parse
from language.people import PERSON_NOUNS, overlaps
from language.pronouns import THIRD_PERSON, antecedent


def speaker_findings(
    claim: Reading,
    about: Reading | None,
    sentences: list[Reading],
    evidence: str,
    cited: tuple[str, ...],
    quoted: list[Reading],
) -> list[Finding]:
    """What the evidence says of one person must not be claimed of another: the
    sentence the claim is about names someone else as its subject and never the
    claim's own subject (refused); or every clause that holds the claim's words has
    someone else as its subject ("My wife Elena is allergic to penicillin" for "Tomás is
    allergic ..."; Tomás's own "I'm allergic to sulfa drugs" for "Elena is allergic
    ..."): held, for on the test split this reading refused a true claim as often as a
    false one (docs/verifier-decision-rule.md, fourth score), and refused where the
    claim cites a quote and the clauses of the quote that hold its words say it of
    someone else too (the claim rests on what it cites, not on context around it;
    ``_cited_speaker``)."""
    found = (
        _compared(claim, sentences)
        or _said_of(claim, about)
        or _said_of_pronoun(claim, about, evidence)
        or _owned_by_another(claim, about, evidence)
        or _cited_speaker(claim, quoted, sentences, evidence)
    )
    if found or about is None or reports(claim):
        return found
    held = said_of_someone_else(claim, sentences, evidence)
    if not held:
        return []
    if (
        quoted
        and said_of_someone_else(claim, quoted, evidence, among=sentences)
        and not received(claim, list(cited))  # "gave Maya a promotion"
    ):
        return [Finding("speaker", "refute", f"{held}, in the words it cites")]
    return [Finding("speaker", "doubt", held)]


def _cited_speaker(
    claim: Reading, quoted: list[Reading], sentences: list[Reading], evidence: str
) -> list[Finding]:
    """The words the claim cites say its predicate of someone else
    (``gate.subjects.quoted_of_someone_else``), or open with a "he" or "she" their turn
    says of someone else (``_said_of_pronoun``): refused."""
    if not quoted or reports(claim):
        return []
    why = quoted_of_someone_else(claim, quoted, sentences, evidence)
    if why:
        return [Finding("speaker", "refute", f"{why}, in the words it cites")]
    for piece in quoted:
        found = _said_of_pronoun(claim, piece, evidence)
        if found:
            return found
    return []


def _said_of(claim: Reading, about: Reading | None) -> list[Finding]:
    """The sentence the claim is about names someone else as its subject and never the
    claim's own subject; "Maya says ..." is checked against who said it."""
    if about is None or claim.subject is None:
        return []
    if denies(claim, claim.lemmas) and not denies(about, claim.lemmas):
        return []  # "Ana did not win" against "Bo won": the polarity check's to read
    subject = claim.subject  # of the main verb: not a subordinate clause's
    if reports(claim) and about.speaker is not None:
        if overlaps(about.speaker, subject) or is_named(subject, about.text.lower()):
            return []  # "Maya says ...": Maya's turn says it, or reports what Maya said
        return [Finding("speaker", "refute", f"{about.speaker} said this, not {subject}")]
    turned = _turned(claim, about, subject)
    if turned:
        return [
            Finding(
                "direction",
                "refute",
                f"the evidence has it the other way round: {turned} comes before "
                f'"{claim.root}", not {subject}',
            )
        ]
    said_of = [s for s in about.subjects if not overlaps(s, subject)]
    if not said_of:
        return []
    if not any(overlaps(n, subject) for n in about.names):
        return [
            Finding(
                "speaker", "refute", f"the evidence says this of {said_of[0]}, not of {subject}"
            )
        ]
    others = [n for n in claim.names if not overlaps(n, subject)]
    swapped = [s for s in said_of if any(overlaps(s, n) for n in others)]
    if swapped and not any(overlaps(s, subject) for s in about.subjects):
        return [
            Finding(
                "direction",
                "doubt",
                f"in the evidence {swapped[0]} is the subject, not {subject}",
            )
        ]
    return []


def _owned_by_another(claim: Reading, about: Reading | None, evidence: str) -> list[Finding]:
    """The claim gives a thing of one person's ("Karen's favourite subject") that the
    sentence it is about gives as someone else's by name ("Leo's favourite subject"; not
    "Mum's"), and that sentence's turn never names the claim's person: refused."""
    if about is None:
        return []
    turn = in_turn(about.text, evidence)
    through = (turn[1] if turn else about.text).lower()  # the turn up to that sentence
    for owner, dep, owned in claim.slots:
        if dep != "poss" or not (name := _name_of(owner, claim)) or name.isupper():
            continue  # an acronym ("the SEC's rule") may be the other's short name
        others = [
            o
            for o, d, t in about.slots
            if d == "poss" and t == owned and o != owner and o not in PERSON_NOUNS
        ]  # "Mum's birthday" may be Karen's
        other = next((n for o in others if (n := _name_of(o, about))), None)
        if other is not None and not is_named(name, through):
            reason = f"the evidence says {other}'s {owned}, not {name}'s"
            return [Finding("speaker", "refute", reason)]
    return []


def _name_of(lemma: str, reading: Reading) -> str | None:
    """The name in ``reading`` whose last word is ``lemma`` ("karen" -> "Karen")."""
    return next((n for n in reading.names if n.lower().split()[-1] == lemma), None)


#: A sentence or clause whose subject is "he" or "she" ("so she's lactose intolerant").
_HE_OR_SHE = re.compile(r"^(?:(?:and|but|so|because|then|since)\s+)?(?P<pronoun>he|she)\b", re.I)


def _said_of_pronoun(claim: Reading, about: Reading | None, evidence: str) -> list[Finding]:
    """The sentence the claim is about opens with "he" or "she", which its turn says of
    the one person it named before beside a noun for a person (of that gender, if it
    has one), with no other "he" or "her" before it (``language.pronouns.antecedent``:
    "My daughter Ivy is coming too, she's lactose intolerant"), and that turn never
    names the claim's subject: refused, as said of someone else."""
    if about is None or claim.subject is None or about.subjects or reports(claim):
        return []
    pronoun = _HE_OR_SHE.match(about.text)
    if pronoun is None or (turn := in_turn(about.text, evidence)) is None:
        return []
    before, through = turn
    person = antecedent(before, about.speaker)
    said = pronoun.group("pronoun")
    if (
        person is None
        or not person.beside  # named beside a noun for a person: not a company
        or person.gender not in (None, said.lower())  # "my husband Tom ... she": not Tom
        or THIRD_PERSON.search(before)  # "took her": someone else is about
        or overlaps(person.name, claim.subject)
        or is_named(claim.subject, _OWNER.sub(" ", through.lower()))  # not "Dmitri's wife"
    ):
        return []
    reason = f'the evidence says this of {person.name} ("{said}"), not of {claim.subject}'
    return [Finding("speaker", "refute", reason)]


def _compared(claim: Reading, sentences: list[Reading]) -> list[Finding]:
    """The claim compares two things the way round a sentence of the evidence does not
    ("The gum helped more than the patches" against "The patches helped more than the
    gum did"): the same verb and degree, the two things swapped, and no sentence that
    compares them as the claim does. Refused."""
    said = comparison(parse(claim.text))
    if said is None:
        return []
    made = [(s, comparison(parse(s.text))) for s in sentences]
    if any(other == said for _, other in made):
        return []  # "I used to like coffee more than tea; now I like tea more than coffee"
    for sentence, other in made:
        if (
            other is not None
            and (other.verb, other.degree) == (said.verb, said.degree)
            and (other.first, other.second) == (said.second, said.first)
        ):
            reason = f'the evidence compares them the other way round: "{shortened(sentence.text)}"'
            return [Finding("direction", "refute", reason)]
    return []


#: A name as someone's owner ("dmitri's" in "Dmitri's wife Anya ... she did").
_OWNER = re.compile(r"[\w-]+'s\b")


def _turned(claim: Reading, about: Reading, subject: str) -> str | None:
    """The claim's other name where the evidence puts it before the claim's verb and
    the claim's subject after it ("A replaces B" against "B replaces A")."""
    if claim.root is None or claim.root not in about.order:
        return None
    verb = about.order.index(claim.root)
    first = subject.lower().split()[0]
    if first not in about.order or about.order.index(first) < verb:
        return None
    for other in claim.names:
        word = other.lower().split()[0]
        if not overlaps(other, subject) and word in about.order[:verb]:
            return other
    return None
