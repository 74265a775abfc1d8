"""Recall for the next turn (``Store.recall``): the memories relevant to a query as a
compact block ready for a prompt, within a token budget.

One line per memory, best first: the statement, when it held, its confidence and
where it came from::

    - Maya lives in Lisbon. (since 2025-05-01; confidence 0.95; source: inline)
    - Maya works at Acme. (unverified; recorded 2025-06-02; confidence 0.50; source: crm://maya)

Lines are added while the whole block stays within the budget, counted with the
WordPiece tokenizer of the packaged all-MiniLM-L6-v2 (the embedder's own, offline;
the model that reads the prompt may count a little differently); the first memory
that does not fit ends the block. Only memories whose relevance reaches
``min_score`` are recalled (``DEFAULT_MIN_SCORE`` below says where its value comes
from).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime, time

from pydantic import BaseModel
from sqlmodel import col, select
from tokenizers import Tokenizer

from memstore.defaults import DEFAULT_BUDGET_TOKENS, DEFAULT_K, DEFAULT_MIN_SCORE
from memstore.errors import NotFound
from memstore.index.handle import IndexHandle
from memstore.read.search import search_facts
from memstore.schemas import FactPublic, SearchHit, SearchQuery
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


class Recall(BaseModel):
    """What ``Store.recall`` answers: ``text``, the block for a prompt (empty when nothing
    relevant is remembered), and ``hits``, the memories it shows, best first (their ids
    are what ``supersede`` and ``retract`` take). ``tokens``: the block's tokens, at
    most ``budget_tokens``; ``left_out``: relevant memories that did not fit."""

    query: str
    text: str
    hits: list[SearchHit]
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
    return Recall(
        query=q.query,
        text="\n".join(lines),
        hits=shown,
        tokens=tokens,
        budget_tokens=budget,
        left_out=len(hits) - len(shown),
    )


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
