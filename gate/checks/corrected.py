"""The corrected check: a value the evidence itself sets aside ("not X", "X,
sorry, Y"), and the claim that keeps it."""

from __future__ import annotations

import re

from gate.checks.common import Finding, in_turn, plain_text, shortened, turn_label_at
from language.clauses import without_pleasantry
from language.corrections import corrections, restatements, rewrite
from language.parsing import Reading
from language.people import fold, name_words, overlaps
from language.pronouns import resolve_it, thing


def set_aside_findings(
    claim: Reading, text: str, evidence: str, sentences: list[Reading], cited: tuple[str, ...]
) -> list[Finding]:
    """Refuted where the claim holds a value the evidence corrects ("The migration lands
    on Thursday." against "... lands on Wednesday, not Thursday."): the correction ties
    to the claim (``language.corrections.rewrite``), the correcting sentence shares a
    word with the claim besides the value and its subject (a value taken back in one
    turn, ``language.corrections.restatements``, is tied by its unit), and it is said of
    the claim's subject (by them, or naming them: Ines correcting her flight says
    nothing of Tom's), or the claim cites the correcting words themselves. An earlier
    sentence that states the old value does not save the claim. Left to the other
    checks: a claim with a "not" of its own ("... on 2.2.9 but not on 2.3.1"), and a
    correction of who ("Elena is allergic, not Tomás" says nothing else of Tomás)."""
    if _DENYING.search(text):
        return []
    fixes = corrections(evidence) if _CORRECTING.search(evidence) else []
    who = _who(claim)
    named = set().union(*(name_words(w) for w in who))  # "Omar" is in all Omar says
    for fix in [*fixes, *restatements(evidence)]:
        redone = rewrite(text, fix)
        if redone is None or any(overlaps(w, redone.removed) for w in who):
            continue
        removed = redone.removed.lower()
        words = {w for w in claim.lemmas if w not in removed and fold(w) not in named}
        correcting = [s for s in sentences if s.text in evidence[fix.start : fix.end]]
        tied = fix.how == "restated"  # the same unit, taken back in one turn: tied as said
        cites = any(
            _overlaps_span(evidence, quote, fix.start, fix.end)
            and not _shares_outside(claim, redone.removed, evidence, quote, fix.start, fix.end)
            for quote in cited
        )
        if cites or any((tied or words & s.lemmas) and _of(who, s) for s in correcting):
            said = shortened(evidence[fix.start : fix.end])
            return [
                Finding("corrected", "refute", f'the evidence sets "{fix.old}" aside: "{said}"')
            ]
    return []


def _shares_outside(
    claim: Reading, removed: str, evidence: str, quote: str, start: int, end: int
) -> bool:
    """Whether the part of ``quote`` outside ``start:end`` (the correction) has a word of
    the claim's other than the value it sets aside ("The meeting is in room 4, not room 2.
    Room 2 is for the workshop." for "The workshop is in room 2.")."""
    at = evidence.find(quote)
    inside = evidence[max(at, start) : min(end, at + len(quote))]
    outside = evidence[at : at + len(quote)].replace(inside, " ")
    words = set(re.findall(r"[a-z]{3,}", outside.lower())) - set(removed.lower().split())
    return bool(words & {w for w in claim.lemmas if len(w) > 2})


def _overlaps_span(evidence: str, quote: str, start: int, end: int) -> bool:
    """Whether ``quote`` (where it first stands in the evidence) overlaps ``start:end``."""
    at = evidence.find(quote) if quote.strip() else -1
    return at >= 0 and at < end and at + len(quote) > start


def _of(who: list[str], sentence: Reading) -> bool:
    """Whether ``sentence`` may be said of the claim's subject: no one is named as it,
    its speaker is the subject (or owns it: "Tom's flight"), or it names them."""
    if not who:
        return True
    owner = who[0].split("'s ")[0]
    if sentence.speaker is not None and overlaps(owner, sentence.speaker):
        return True
    return bool(name_words(owner) - _ARTICLES & name_words(sentence.text))


_ARTICLES = frozenset({"the", "a", "an"})


def _who(claim: Reading) -> list[str]:
    """Whom the claim is about: its named subject, or its first clause's."""
    agents = claim.clauses[0].agents if claim.clauses else ()
    return [w for w in (claim.subject, *agents) if w]


def corrected_findings(claim: str, evidence: str, sentences: list[Reading]) -> list[Finding]:
    """Support where the claim is a sentence of the evidence with a value its speaker
    corrected put in ("Yuki is in Flat 3B." and "It's 3C, not 3B." give "Yuki is in Flat
    3C."), rewritten as the conversation's corrections rewrite (``language.corrections``),
    word for word; an "it" that opens the sentence read as the thing the one before
    named, a greeting that opens it left out ("Hi, ..."), and "Ana says ..." as what Ana
    said, where Ana made the correction."""
    fixes = corrections(evidence) if _CORRECTING.search(evidence) else []
    if not fixes:
        return []
    says = _SAYS.match(claim)  # "Ana says ...": what Ana said, if she corrected it
    said_as = [_with_it(without_pleasantry(s.text), evidence) for s in sentences]
    for fix in fixes:
        speaker = turn_label_at(evidence, fix.start)
        wanted = {plain_text(claim)}
        if says and speaker and says.group("who") == speaker.group("speaker"):
            wanted.add(plain_text(claim[says.end() :]))
        for text in said_as:
            redone = rewrite(text, fix)
            if redone is not None and plain_text(redone.statement) in wanted:
                said = shortened(evidence[fix.start : fix.end])
                return [
                    Finding(
                        "corrected",
                        "support",
                        f'the evidence corrects "{redone.removed}" to "{redone.put}": "{said}"',
                    )
                ]
    return []


def _with_it(sentence: str, evidence: str) -> str:
    """``sentence`` with an "it" that opens it as the one thing the sentence before it
    in its turn named (``language.pronouns.thing``, as the extractor reads it)."""
    if not _IT.match(sentence) or (turn := in_turn(sentence, evidence)) is None:
        return sentence
    named = thing(turn[0])
    it = resolve_it(sentence, named) if named else None
    return it[0].upper() + it[1:] if it else sentence


#: "Ana says ..." (the extractor's way of giving a speaker's words).
_SAYS = re.compile(r"(?P<who>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3}) says (?=\S)")
_IT = re.compile(r"[Ii]t\b")
#: Words a correction is said with (``language.corrections`` reads which).
_CORRECTING = re.compile(r"\bnot\b|\binstead\b|\brather than\b", re.I)
#: A claim that denies or contrasts something itself.
_DENYING = re.compile(r"\bnot\b|n't\b|\bnever\b|\bno\b|\binstead\b|\brather than\b", re.I)
