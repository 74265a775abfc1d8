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

from language.parsing import parse
from language.sentences import sentences

#: Verbs whose "at" or "for" names where the speaker works ("be" with a role: "I'm the
#: CTO at Brightwave"; not "I'm at Starbucks").
_WORKING = frozenset("work be intern volunteer consult".split())
#: Parts of an organisation's name before its head word ("St. Mary's Hospital").
_NAME_PARTS = frozenset("compound poss case".split())


def affiliation(sentence: str) -> str | None:
    """The organisation a first-person ``sentence`` says its speaker belongs to ("I'm the
    CTO at Brightwave", "I work for Acme Corp.", "I'm Greg from CloudNine"), else None.
    The name must be a proper noun in the parse, after "at" or "for" where the speaker
    works or has a role, or after "from" where the speaker gives their own name ("I'm
    from Leeds" is a place; "I'm at Starbucks" is where they are)."""
    if not re.search(r"\b(?:I|I'm)\b", sentence):
        return None
    doc = parse(sentence)
    for token in doc:
        if token.lower_ not in ("at", "for", "from") or token.dep_ != "prep":
            continue
        verb = token.head
        while verb.dep_ not in ("ROOT", "ccomp", "conj") and verb.head is not verb:
            verb = verb.head  # "the CTO at": the role's verb
        if verb.lemma_ not in _WORKING or verb.tag_ == "VBD":
            continue  # "I worked at Google": not now
        if not any(c.dep_ == "nsubj" and c.lower_ == "i" for c in verb.children):
            continue
        attrs = [c for c in verb.children if c.dep_ == "attr"]
        if verb.lemma_ == "be" and not attrs:
            continue  # "I'm at Starbucks", "I'm for it": no role
        if token.lower_ == "from" and not any(a.pos_ == "PROPN" for a in attrs):
            continue
        objects = [c for c in token.children if c.dep_ == "pobj" and c.pos_ == "PROPN"]
        if len(objects) != 1:
            continue
        head = objects[0]
        first = head
        while True:
            parts = [c for c in first.children if c.dep_ in _NAME_PARTS and c.i < first.i]
            if not parts:
                break
            first = min(parts, key=lambda t: t.i)
        name = doc[first.i : head.i + 1].text
        if name[:1].isupper():
            return name
    return None


def sides(turns: Iterable[tuple[str, str]]) -> dict[str, tuple[str, int]]:
    """{speaker: (organisation, the turn that names it)} from (speaker, text) turns where
    two speakers or more each named their own organisation, a different one ("I'm the
    CTO at Brightwave", "I'm Greg from CloudNine"); else {}. A speaker's first naming
    counts; turns are counted from 0."""
    found: dict[str, tuple[str, int]] = {}
    for index, (speaker, text) in enumerate(turns):
        if speaker in found or not _MAY_AFFILIATE.search(text):
            continue
        for sentence in sentences(text):
            if org := affiliation(sentence):
                found[speaker] = (org, index)
                break
    if len({org.lower() for org, _ in found.values()}) < 2:
        return {}
    return found


#: Text that may say where its speaker works (what ``affiliation`` parses).
_MAY_AFFILIATE = re.compile(r"\bI(?:'m| am| work)\b.*\b(?:at|for|from)\b")
