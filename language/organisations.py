"""Organisations a speaker speaks for: "I'm the CTO at Brightwave" makes Brightwave the
speaker's, and in a conversation between people of different organisations (a sales
call, a vendor and a customer) their "we" and "our" mean it ("we use Datadog":
"Brightwave uses Datadog").

Only named organisations count (a proper noun after "at" or "for" where the speaker
works or has a role, or after "from" after their own name), and "we" is read so only
where two speakers or more have each named a different one (``sides``): between
friends or family "we" is the people present. The rewrite itself is
``language.speakers.resolve_first_plural``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from language.parsing import organisation_named, parse
from language.sentences import sentences

if TYPE_CHECKING:
    from spacy.tokens import Token

#: Words for a job: "I'm the CTO at Brightwave" names an employer; "a regular at
#: Starbucks", "a student at Harvard" or "a speaker at PyCon" do not.
JOBS = frozenset(
    """ceo cto cfo coo cio cmo cpo ciso vp president chair chairman chairwoman director
    manager head lead exec engineer developer programmer designer analyst recruiter consultant
    founder cofounder co-founder owner partner nurse doctor physician surgeon teacher
    professor lecturer researcher scientist architect administrator officer specialist
    coordinator representative rep associate accountant lawyer attorney editor writer
    reporter journalist producer executive clerk cashier barista chef cook waiter
    waitress pharmacist therapist technician mechanic electrician secretary assistant
    receptionist paralegal counsel economist strategist marketer salesperson trainer
    instructor tutor principal librarian employee staffer intern""".split()
)
#: Words that make a job past, future or someone else's ("a former engineer").
_NOT_NOW = re.compile(
    r"\b(?:no longer|former|formerly|ex|used to|previously|will|going to|"
    r"next (?:year|month|summer|week)|soon)\b",
    re.I,
)
#: Parts of an organisation's name before its head word ("St. Mary's Hospital").
_NAME_PARTS = frozenset("compound poss case".split())


def affiliation(sentence: str) -> str | None:
    """The organisation a first-person ``sentence`` says its speaker works for now, else
    None: "I work at Meridian Logistics", "I'm the CTO at Brightwave" (a job at a proper
    noun), "I work for Acme Corp." or "I'm Greg from CloudNine" (where the recogniser
    takes the name for an organisation, not a place or a person). Not a question, a
    quote, a denial, a past or future job, or a role that is no job ("a regular at
    Starbucks", "your account manager for Brightwave")."""
    text = sentence.replace("\u2019", "'")
    if text.rstrip().endswith("?") or re.search(r"[\"\u201c\u201d]", text):
        return None
    if not re.search(r"\b(?:I|I'm)\b", text) or _NOT_NOW.search(text):
        return None
    doc = parse(text)
    if any(t.dep_ == "neg" or t.lower_ in ("'ll", "wo") for t in doc):
        return None  # "I don't work for IBM anymore", "I'll be an intern at Google"
    for token in doc:
        if token.lower_ not in ("at", "for", "from") or token.dep_ != "prep":
            continue
        verb = token.head
        while verb.dep_ not in ("ROOT", "ccomp", "conj") and verb.head is not verb:
            verb = verb.head  # "the CTO at": the role's verb
        if verb.tag_ == "VBD" or not any(
            c.dep_ == "nsubj" and c.lower_ == "i" for c in verb.children
        ):
            continue
        objects = [c for c in token.children if c.dep_ == "pobj" and c.pos_ == "PROPN"]
        if len(objects) != 1:
            continue
        name = _name(objects[0])
        attrs = [c for c in verb.children if c.dep_ == "attr"]
        if verb.lemma_ == "work" and token.lower_ == "at":
            return name
        if verb.lemma_ == "work" and token.lower_ == "for":
            ok = organisation_named(text, name)
        elif verb.lemma_ == "be" and token.lower_ == "at":
            roles = [
                token.head,
                *attrs,
                *(c for a in attrs for c in a.children if c.dep_ == "appos"),
            ]
            ok = any(r.lemma_.lower() in JOBS for r in roles)  # "I'm Omar, head of ... at"
        elif verb.lemma_ == "be" and token.lower_ == "from":
            ok = any(a.pos_ == "PROPN" for a in attrs) and organisation_named(text, name)
        else:
            ok = False
        if ok:
            return name
    return None


def _name(head: Token) -> str:
    """The proper noun ``head`` with the words of its name before it ("St. Mary's
    Hospital") and a possessive that ends it ("McDonald's")."""
    first = head
    while parts := [c for c in first.children if c.dep_ in _NAME_PARTS and c.i < first.i]:
        first = min(parts, key=lambda t: t.i)
    last = head
    owned = [c for c in head.children if c.dep_ == "case" and c.i == head.i + 1]
    if owned:
        last = owned[0]
    return head.doc[first.i : last.i + 1].text


def sides(turns: Iterable[tuple[str, str]]) -> dict[str, tuple[str, int]]:
    """{speaker: (organisation, the turn that names it)} from (speaker, text) turns where
    two speakers or more each named their own organisation, a different one ("I'm the
    CTO at Brightwave", "I'm Greg from CloudNine"); else {}. A speaker's first naming
    counts; turns are counted from 0."""
    candidates = [
        (i, who, text) for i, (who, text) in enumerate(turns) if _MAY_AFFILIATE.search(text)
    ]
    if len({who for _, who, _ in candidates}) < 2:
        return {}  # nothing to parse: one side at most
    found: dict[str, tuple[str, int]] = {}
    for index, speaker, text in candidates:
        if speaker in found:
            continue
        for sentence in sentences(text):
            if org := affiliation(sentence):
                found[speaker] = (org, index)
                break
    if len({org.lower() for org, _ in found.values()}) < 2:
        return {}
    return found


#: Text that may say where its speaker works (what ``affiliation`` parses).
_MAY_AFFILIATE = re.compile(
    r"\bI(?:'m|\u2019m| am| work)\b.*\b(?:at|for|from) (?:the )?(?-i:[A-Z])", re.I
)
