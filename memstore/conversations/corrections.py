"""Corrections that replace: "it's 21 Elm Street, not 12" rewrites the fact it corrects.

A user turn that sets a right value against a wrong one (``language.corrections``)
names no whole fact: the fact is one already remembered. A speaker corrects what they
said: among the active facts the speaker is a member of (about themselves, and
"<speaker> says ..."), newest first, the first whose statement holds the wrong value in
a place the right one can stand becomes a new candidate: that statement with the value
replaced ("Priya lives at 21 Elm Street, Leeds."), citing the correction and reading
the corrected fact's evidence as context, which it replaces once the gate admits it. A
correction that matches no remembered fact changes nothing (the extractor's own reading
of the sentence stands).
"""

from __future__ import annotations

from collections.abc import Sequence

from language.corrections import Correction, corrections, substitute
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
        statement = substitute(fact.statement, correction)
        if statement is None:
            continue
        context = tuple(
            store.get_evidence(evidence_id).text for evidence_id in fact.evidence_ids[:2]
        )
        reason = f'{turn.speaker} corrected it: "{_short(sentence)}"'
        return Candidate(
            statement,
            tuple((m.name, m.kind, m.role) for m in fact.members),
            index,
            sentence,
            fact.relation,
            context=context,
            replaces=((fact.id, reason),),
        )
    return None


def _said_by(store: StoreLike, speaker: str) -> list[FactPublic]:
    """The active facts the speaker is a member of (what they said of themselves, and
    "<speaker> says ..."), newest first."""
    try:
        return list(store.facts_about(speaker, limit=MAX_READ))
    except NotFound:
        return []


def within(candidate: Candidate, turns: Sequence[Message], correction: Correction) -> bool:
    """Whether ``candidate`` was read from the sentence that states ``correction``."""
    content = turns[candidate.message].content
    at = content.find(candidate.quote)
    return at >= 0 and correction.start <= at < correction.end


def _short(text: str, most: int = 160) -> str:
    said = " ".join(text.split())
    return said if len(said) <= most else said[: most - 1] + "\u2026"
