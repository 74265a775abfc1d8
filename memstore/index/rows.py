"""What the search index holds and how it is asked, without LanceDB, Arrow or numpy:
the table names, a fact's and an evidence chunk's rows, the filter every query
carries (a WHERE clause over the index's columns), one side's ranking and their
fusion. ``memstore.index.lance`` keeps them in LanceDB; the modules that only name them
(and every command that never searches) need not import it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memstore.metadata import tokens

if TYPE_CHECKING:
    from memstore.index.embeddings import Matrix

FACTS = "facts"
CHUNKS = "evidence_chunks"
#: Rows a table holds before it gets an approximate vector index (below it, exact search).
DEFAULT_VECTOR_INDEX_AT = 50_000


@dataclass(frozen=True)
class FactDoc:
    """What the index holds of a fact (its vector is of ``text``)."""

    id: str
    namespace: str
    status: str
    relation: str | None
    entity_ids: tuple[str, ...]
    text: str
    recorded_at: datetime
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    #: The fact's metadata as ``key=value`` tokens (``memstore.metadata.tokens``).
    metadata: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChunkDoc:
    """A slice ``[start, end)`` of one evidence version. ``status``: current or replaced."""

    id: str
    namespace: str
    evidence_id: str
    source: str
    version: int
    status: str
    start: int
    end: int
    text: str
    created_at: datetime


@dataclass(frozen=True)
class Filter:
    """A WHERE clause over index columns; the namespace is never optional."""

    namespace: str
    statuses: Sequence[str] | None = None
    relation: str | None = None
    entity_ids: Sequence[str] = ()
    #: Rows with at least one of these entities (``entity_ids``: with each of them).
    any_entity_ids: Sequence[str] = ()
    as_of: datetime | None = None
    #: With ``as_of``: statuses whose rows count only with a closed world time (valid_to).
    closed_statuses: Sequence[str] = ()
    recorded_after: datetime | None = None
    recorded_before: datetime | None = None
    sources: Sequence[str] = ()
    exclude_ids: Sequence[str] = ()
    #: Facts whose metadata holds each of these keys and values.
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def sql(self, table: str) -> str:
        time_column = "recorded_us" if table == FACTS else "created_us"
        parts = [f"namespace = {quote(self.namespace)}"]
        if self.statuses is not None:
            parts.append(f"status IN ({quoted(self.statuses)})")
        if self.relation is not None:
            parts.append(f"relation = {quote(self.relation)}")
        parts += [f"array_has(entity_ids, {quote(e)})" for e in self.entity_ids]
        if self.any_entity_ids:
            some = " OR ".join(f"array_has(entity_ids, {quote(e)})" for e in self.any_entity_ids)
            parts.append(f"({some})")
        parts += [f"array_has(metadata, {quote(t)})" for t in tokens(self.metadata)]
        if self.as_of is not None:  # hypergraph.holds_at, on the index's columns
            at = micros(self.as_of)
            parts.append(f"(valid_from_us IS NULL OR valid_from_us <= {at})")
            parts.append(f"(valid_to_us IS NULL OR valid_to_us > {at})")
            if self.closed_statuses:
                closed = quoted(self.closed_statuses)
                parts.append(f"(status NOT IN ({closed}) OR valid_to_us IS NOT NULL)")
        if self.recorded_after is not None:
            parts.append(f"{time_column} >= {micros(self.recorded_after)}")
        if self.recorded_before is not None:
            parts.append(f"{time_column} < {micros(self.recorded_before)}")
        if self.sources:
            parts.append(f"source IN ({quoted(self.sources)})")
        if self.exclude_ids:
            parts.append(f"id NOT IN ({quoted(self.exclude_ids)})")
        return " AND ".join(parts)


@dataclass(frozen=True)
class Ranking:
    """One side of a hybrid query: ids best first, with the side's own score."""

    ids: list[str]
    scores: list[float]
    #: The rows' stored vectors, in order, where the side read them (the full-text side,
    #: so a hit it alone found gets its similarity to the query without another read).
    vectors: Matrix | None = None


def reciprocal_rank_fusion(rankings: Iterable[Ranking], k: int = 60) -> dict[str, float]:
    """score(id) = sum over rankings of 1 / (k + rank), ranks from 1 (Cormack et al. 2009).
    Rows a side scores the same share the best rank among them: the order the side
    lists a tie in (a full-text index's, which varies from one build to the next) does
    not decide the fused order."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        rank, previous = 0, None
        scored = len(ranking.scores) == len(ranking.ids)  # else each row its own rank
        for position, item in enumerate(ranking.ids, start=1):
            score = ranking.scores[position - 1] if scored else position
            if position == 1 or score != previous:
                rank, previous = position, score
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused


def micros(when: datetime | None) -> int | None:
    """``when`` as microseconds since the epoch (a naive time is UTC), the index's time
    columns."""
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1_000_000)


def quote(value: str) -> str:
    """``value`` as a SQL string literal in a filter."""
    return "'" + value.replace("'", "''") + "'"


def quoted(values: Iterable[str]) -> str:
    """``values`` as a comma-separated list of SQL string literals (for ``IN``)."""
    return ", ".join(quote(v) for v in values)
