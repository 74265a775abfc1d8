"""Recall for the next turn (``Store.recall``): the memories relevant to a query as a
compact block ready for a prompt, within a token budget.

One line per memory, best first: the statement, when it held, its confidence and
where it came from::

    - Maya lives in Lisbon. (since 2025-05-01; confidence 0.95; source: inline)
    - Maya works at Acme. (unverified; recorded 2025-06-02; confidence 0.50; source: crm://maya)

Where no memory reaches ``min_score``, the conversation turns stored as evidence that
do (at most ``MAX_TURNS``) are quoted instead, with who said them and when they were
stored, marked as what they are: what someone said, not a checked fact::

    - Ravi said: "Two months. Sorry, it's three." (a stored turn, recorded 2026-12-06)

Lines are added while the whole block stays within the budget, counted with the
WordPiece tokenizer of the packaged all-MiniLM-L6-v2 (the embedder's own, offline;
the model that reads the prompt may count a little differently); the first memory
that does not fit ends the block. Only memories whose relevance reaches
``min_score`` are recalled (``DEFAULT_MIN_SCORE`` below says where its value comes
from).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from datetime import datetime, time

from pydantic import BaseModel, Field
from sqlmodel import col, select
from tokenizers import Tokenizer

from memstore.defaults import DEFAULT_BUDGET_TOKENS, DEFAULT_K, DEFAULT_MIN_SCORE
from memstore.errors import NotFound
from memstore.index.handle import IndexHandle
from memstore.names import CONVERSATION_SOURCE
from memstore.read.search import search_evidence, search_facts
from memstore.schemas import EvidenceHit, EvidenceQuery, FactPublic, SearchHit, SearchQuery
from memstore.storage.scope import Scope
from memstore.storage.tables import Evidence, FactStatus

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "DEFAULT_K",
    "DEFAULT_MIN_SCORE",
    "TOKENIZER",
    "Recall",
    "count_tokens",
    "recall",
]

#: What counts a block's tokens.
TOKENIZER = "all-MiniLM-L6-v2 WordPiece"
#: Sources named per line; the rest are counted (``+2 more``).
MAX_SOURCES = 2
#: A source longer than this is cut, so one long URI cannot take the whole budget.
MAX_SOURCE_CHARS = 80
#: Stored turns a recall quotes where no memory reaches ``min_score``, each cut to
#: this many characters.
MAX_TURNS = 3
MAX_QUOTE_CHARS = 300
#: "Ravi: ..." A stored turn's speaker label.
_LABEL = re.compile(r"(?P<who>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,3}): (?=\S)")


class Recall(BaseModel):
    """What ``Store.recall`` answers: ``text``, the block for a prompt (empty when nothing
    relevant is remembered), and ``hits``, the memories it shows, best first (their ids
    are what ``supersede`` and ``retract`` take); ``turns``: the stored conversation
    turns it quotes where no memory reached ``min_score``. ``tokens``: the block's
    tokens, at most ``budget_tokens``; ``left_out``: relevant memories that did not fit."""

    query: str
    text: str
    hits: list[SearchHit]
    turns: list[EvidenceHit] = Field(default_factory=list)
    tokens: int
    budget_tokens: int
    left_out: int
    tokenizer: str = TOKENIZER


@functools.cache
def _tokenizer() -> Tokenizer:
    from gate.backends.embedded.backend import minilm_path

    tokenizer = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """How many tokens ``text`` is to ``TOKENIZER`` (no special tokens added)."""
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def recall(
    scope: Scope, handle: IndexHandle, q: SearchQuery, wanted: list[str], budget: int
) -> Recall:
    """The block of the memories that ``q`` finds (``search_facts``) within ``budget``
    tokens. An entity the store does not know yields an empty block: nothing is
    remembered about it."""
    try:
        hits = search_facts(scope, handle, q, wanted)
    except NotFound:
        if not q.entity:
            raise
        hits = []
    sources = _sources(scope, [h.fact for h in hits])
    lines: list[str] = []
    tokens = 0
    for hit in hits:  # WordPiece counts add up across the "\n" between lines: one pass each
        line = memory_line(hit.fact, sources.get(hit.fact.id, []))
        total = tokens + count_tokens(line)
        if total > budget:
            break
        lines.append(line)
        tokens = total
    shown = hits[: len(lines)]
    quoted: list[EvidenceHit] = []
    if not hits and not q.entity and q.statuses is None and q.as_of is None:
        for turn, line in _turn_lines(scope, handle, q):
            total = tokens + count_tokens(line)
            if total > budget:
                break
            lines.append(line)
            quoted.append(turn)
            tokens = total
    return Recall(
        query=q.query,
        text="\n".join(lines),
        hits=shown,
        turns=quoted,
        tokens=tokens,
        budget_tokens=budget,
        left_out=len(hits) - len(shown),
    )


def _turn_lines(scope: Scope, handle: IndexHandle, q: SearchQuery) -> list[tuple[EvidenceHit, str]]:
    """The stored conversation turns that match ``q`` (as ``search_evidence``, its
    ``min_score``), each with its line: who said it, what, when it was stored."""
    found = search_evidence(
        scope,
        handle,
        EvidenceQuery(  # every turn: a conversation's turns are not versions of one text
            query=q.query,
            k=MAX_TURNS,
            source=[CONVERSATION_SOURCE],
            min_score=q.min_score,
            current_only=False,
        ),
    )
    if not found:
        return []
    with scope.session() as session:
        rows = {
            e.id: e
            for e in session.exec(
                select(Evidence).where(
                    Evidence.namespace == scope.namespace,
                    col(Evidence.id).in_({t.evidence_id for t in found}),
                )
            ).all()
        }
    out = []
    for turn in found:
        row = rows.get(turn.evidence_id)
        if row is None:
            continue
        said = " ".join(row.text.split())
        label = _LABEL.match(said)
        who = label.group("who") if label else "Someone"
        words = said[label.end() :] if label else said
        if len(words) > MAX_QUOTE_CHARS:
            words = words[: MAX_QUOTE_CHARS - 3] + "..."
        when = f"{row.created_at:%Y-%m-%d}"
        out.append((turn, f'- {who} said: "{words}" (a stored turn, recorded {when})'))
    return out


def memory_line(fact: FactPublic, sources: list[str]) -> str:
    """``- statement (status; when; confidence; source)``; the status only when it is
    not ``verified``."""
    notes = [] if fact.status == FactStatus.VERIFIED else [str(fact.status)]
    notes.append(_when(fact))
    notes.append(f"confidence {fact.confidence:.2f}")
    if sources:
        shown = [_cut(s) for s in sources[:MAX_SOURCES]]
        more = len(sources) - len(shown)
        notes.append("source: " + ", ".join(shown) + (f" +{more} more" if more else ""))
    return f"- {' '.join(fact.statement.split())} ({'; '.join(notes)})"


def _when(fact: FactPublic) -> str:
    """When it held in the world (``valid_from`` / ``valid_to``), else when it was recorded."""
    start, end = fact.valid_from, fact.valid_to
    if start is not None and end is not None:
        return f"held {_moment(start)} to {_moment(end)}"
    if start is not None:
        return f"since {_moment(start)}"
    if end is not None:
        return f"until {_moment(end)}"
    return f"recorded {fact.recorded_at:%Y-%m-%d}"


def _moment(when: datetime) -> str:
    """A day, or a day and minute (UTC) where the time is not midnight."""
    return f"{when:%Y-%m-%d}" if when.time() == time(0) else f"{when:%Y-%m-%d %H:%M} UTC"


def _cut(source: str) -> str:
    return source if len(source) <= MAX_SOURCE_CHARS else source[: MAX_SOURCE_CHARS - 3] + "..."


def _sources(scope: Scope, facts: Iterable[FactPublic]) -> dict[str, list[str]]:
    """Per fact, the sources of the evidence it cites (all it was checked against when it
    cites none), each source once, in citation order."""
    cited = {
        f.id: [c.evidence_id for c in f.citations if c.cited]
        or [c.evidence_id for c in f.citations]
        for f in facts
    }
    wanted = {i for ids in cited.values() for i in ids}
    if not wanted:
        return {}
    with scope.session() as session:
        rows = session.exec(
            select(Evidence.id, Evidence.source).where(
                Evidence.namespace == scope.namespace, col(Evidence.id).in_(wanted)
            )
        ).all()
    source = dict(rows)
    return {
        fact_id: list(dict.fromkeys(source[i] for i in ids if i in source))
        for fact_id, ids in cited.items()
    }
