"""Corrections that replace: "it's 21 Elm Street, not 12" rewrites the fact it corrects.

A user turn that sets a right value against a wrong one (``language.corrections``)
names no whole fact: the fact is one already remembered. A speaker corrects what they
said: among the active facts the speaker is a member of (about themselves, and
"<speaker> says ..."), newest first, the first whose statement holds the wrong value in
a place the right one can stand becomes a new candidate: that statement with the value
replaced ("Priya lives at 21 Elm Street, Leeds."), citing the correction and reading
the corrected fact's evidence as context, which it replaces once the gate admits it; the
extractor's reading of the clause that states the correction gives way to it. Where no
statement can take the new value in place of the old ("the day before yesterday, not
yesterday"), the extractor's reading of the correcting clause replaces the speaker's
fact that it says again with the old value. A correction that matches nothing the
speaker said changes nothing (the extractor's own reading of the sentence stands).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from language.corrections import (
    Correction,
    corrections,
    restates,
    rewrite,
    says_more,
    without_old,
)
from memstore.conversations.extractors import Candidate
from memstore.conversations.messages import Message
from memstore.conversations.storelike import StoreLike
from memstore.errors import NotFound
from memstore.schemas import FactPublic

#: At most this many of the speaker's active facts are read for the value corrected.
MAX_READ = 50


def pending(turns: Sequence[Message]) -> list[tuple[int, Correction]]:
    """The corrections in the user turns, with the index of the turn saying each."""
    return [
        (index, found)
        for index, turn in enumerate(turns)
        if turn.role == "user"
        for found in corrections(turn.content)
    ]


def corrected(
    store: StoreLike, turns: Sequence[Message], index: int, correction: Correction
) -> Candidate | None:
    """The candidate that rewrites the fact ``correction`` corrects, or None where no
    active fact holds its old value."""
    turn = turns[index]
    sentence = turn.content[correction.start : correction.end]
    for fact in _said_by(store, turn.speaker):
        if _denies(fact.statement, correction.old):
            continue  # "... on Tuesday, not Monday" said already: nothing to put right
        found = rewrite(fact.statement, correction)
        if found is None:
            continue
        context = _evidence(store, fact)
        reason = f'{turn.speaker} corrected it: "{short(sentence)}"'
        members = tuple(  # a member that was or held the old value holds the new (once)
            dict.fromkeys(
                (_put(name, found.removed, found.put), kind, role)
                for name, kind, role in ((m.name, m.kind, m.role) for m in fact.members)
            )
        )
        return Candidate(
            found.statement,
            members,
            index,
            sentence,
            fact.relation,
            context=context,
            replaces=((fact.id, reason),),
        )
    return None


def _put(name: str, removed: str, put: str) -> str:
    """A member's name that was the old value made the new one; one that holds an old
    value with a digit as a whole word, that word ("Flat 3B" -> "Flat 3C"): a word of a
    name without one may be another thing ("May Chen" is no month). Others as they are."""
    if name.lower() == removed.lower():
        return put
    if not any(c.isdigit() for c in removed):
        return name
    return re.sub(rf"(?<![\w-]){re.escape(removed)}(?![\w-])", put, name, flags=re.I)


def fuller(
    found: Candidate, candidates: Sequence[Candidate], turns: Sequence[Message], fix: Correction
) -> Candidate:
    """``found`` (the corrected fact rewritten), or the extractor's reading of the
    correcting clause without its old value where that says all the rewrite says and
    more ("our Datadog contract ends in May, not June" against the rewrite of "our
    contract ends in June"): the speaker's newest words, replacing what ``found`` does."""
    for candidate in candidates:
        if not within(candidate, turns, fix) or not sets_aside(candidate, fix):
            continue
        said = without_old(candidate.statement, fix)
        if said != candidate.statement and says_more(said, found.statement):
            return replace(
                candidate, statement=said, context=found.context, replaces=found.replaces
            )
    return found


def restated(
    store: StoreLike, turns: Sequence[Message], candidate: Candidate, correction: Correction
) -> Candidate | None:
    """Where no older statement can take the new value in place of the old ("the day
    before yesterday, not yesterday"), the extractor's reading of the correcting clause
    replaces the speaker's newest fact that it says again with the old value
    (``language.corrections.restates``), the part naming the old value left out; None
    where there is none."""
    turn = turns[candidate.message]
    for fact in _said_by(store, turn.speaker):
        if _denies(fact.statement, correction.old) or not restates(fact.statement, correction):
            continue
        sentence = turn.content[correction.start : correction.end]
        return replace(
            candidate,
            statement=without_old(candidate.statement, correction),
            context=_evidence(store, fact),
            replaces=((fact.id, f'{turn.speaker} corrected it: "{short(sentence)}"'),),
        )
    return None


def _evidence(store: StoreLike, fact: FactPublic) -> tuple[str, ...]:
    """The texts of the first evidence a fact cites: the context its correction reads."""
    return tuple(store.get_evidence(evidence_id).text for evidence_id in fact.evidence_ids[:2])


def _said_by(store: StoreLike, speaker: str) -> list[FactPublic]:
    """The active facts the speaker said, newest first: those naming them as the one who
    said it ("<speaker> says ..."), and, where no one is named so, those whose first
    member they are (what the extractor read from their own first person). "Tom says
    Priya drinks coffee" and "Tom's sister Priya ..." are Tom's to correct, not Priya's."""
    try:
        found = store.facts_about(speaker, limit=MAX_READ)
    except NotFound:
        return []
    own = speaker.lower()
    out = []
    for fact in found:
        sayers = [m.name.lower() for m in fact.members if m.role == "speaker"]
        first = fact.members[0].name.lower() if fact.members else None
        if (sayers and own in sayers) or (not sayers and first == own):
            out.append(fact)
    return out


def within(candidate: Candidate, turns: Sequence[Message], correction: Correction) -> bool:
    """Whether ``candidate`` is the extractor's reading of the clause that states
    ``correction`` (in its sentence, and holding the value corrected): the rewrite takes
    its place, whatever the gate then decides. Other clauses of the sentence stay."""
    content = turns[candidate.message].content
    at = content.find(candidate.quote)
    if at < 0 or not correction.start <= at < correction.end:
        return False
    return correction.old.lower() in candidate.quote.lower()


def sets_aside(candidate: Candidate, correction: Correction) -> bool:
    """Whether ``candidate`` says the correction as said: it sets the old value aside
    ("... on Tuesday, not Monday")."""
    return _denies(candidate.statement, correction.old)


def _denies(statement: str, value: str) -> bool:
    """Whether ``statement`` sets ``value`` aside ("... on Tuesday, not Monday")."""
    old = re.escape(value.lower())
    pattern = rf"\b(?:not|instead of|rather than)\s+(?:the\s+)?{old}(?!\w)"
    return re.search(pattern, statement.lower()) is not None


def short(text: str, most: int = 160) -> str:
    """``text`` on one line, cut to ``most`` characters (for a reason a person reads)."""
    said = " ".join(text.split())
    return said if len(said) <= most else said[: most - 1] + "\u2026"
