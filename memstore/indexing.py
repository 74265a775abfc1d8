"""Keeps the LanceDB search index in line with SQL through the ``index_outbox`` table.

A change to a fact or an evidence row queues an outbox row in the same transaction
(``enqueue``). After the commit, ``sync`` reads the SQL state of the queued rows,
writes it to the index (by id, so a replay is harmless) and only then deletes the
outbox rows. A process killed in between leaves the rows queued; the next open
replays them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import pairwise

import sqlalchemy as sa
from sqlmodel import Session, col, func, select

from gate.evidence import strip_span
from memstore import db
from memstore.embeddings import Matrix
from memstore.models import (
    Evidence,
    EvidenceSource,
    Fact,
    FactMember,
    IndexOutbox,
    OutboxKind,
    UTCDateTime,
    utcnow,
)
from memstore.vectors import CHUNKS, FACTS, ChunkDoc, FactDoc, SearchIndex

#: Evidence is indexed in chunks of about this many characters, cut at sentence ends.
CHUNK_CHARS = 600
SYNC_BATCH = 256
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+|\n\s*\n")

Sessions = Callable[[], AbstractContextManager[Session]]


@dataclass(frozen=True)
class Rebuilt:
    """What ``rebuild`` wrote."""

    facts: int
    chunks: int


def enqueue(session: Session, namespace: str, kind: OutboxKind, ids: Iterable[str]) -> None:
    """Queue these rows for the index, inside the caller's transaction."""
    for target in dict.fromkeys(ids):
        session.add(IndexOutbox(namespace=namespace, kind=kind, target_id=target))


def enqueue_source(session: Session, namespace: str, source: str) -> None:
    """Queue every stored version of ``source``: which one is current has changed."""
    versions = session.exec(
        select(Evidence.id).where(Evidence.namespace == namespace, Evidence.source == source)
    ).all()
    enqueue(session, namespace, OutboxKind.EVIDENCE, versions)


def pending(session: Session, namespace: str | None = None) -> int:
    query = select(func.count()).select_from(IndexOutbox)
    if namespace is not None:
        query = query.where(IndexOutbox.namespace == namespace)
    return int(session.exec(query).one())


def sync(
    sessions: Sessions,
    index: SearchIndex,
    *,
    namespace: str | None = None,
    targets: Collection[str] | None = None,
    vectors: Mapping[str, Matrix] = {},
) -> int:
    """Apply queued outbox rows (of ``namespace`` / ``targets`` when given) to the index.

    Returns how many outbox rows were applied. An index failure propagates with the
    rows still queued.
    """
    return _drain(sessions, index, namespace=namespace, targets=targets, vectors=vectors).rows


@dataclass
class _Drained:
    rows: int = 0
    facts: int = 0
    chunks: int = 0


def _drain(
    sessions: Sessions,
    index: SearchIndex,
    *,
    namespace: str | None = None,
    targets: Collection[str] | None = None,
    vectors: Mapping[str, Matrix] = {},
    progress: Callable[[int], None] | None = None,
) -> _Drained:
    done = _Drained()
    groups: list[Collection[str] | None] = [None]
    if targets is not None:
        groups = list(db.chunks(list(dict.fromkeys(targets))))
    for group in groups:
        while rows := _queued(sessions, namespace, group):
            with sessions() as session:
                facts = fact_docs(session, [r.target_id for r in rows if r.kind == "fact"])
                chunks = chunk_docs(session, [r.target_id for r in rows if r.kind == "evidence"])
            index.write_facts(facts, vectors)
            index.write_chunks(chunks)
            with sessions() as session, session.begin():
                session.exec(
                    sa.delete(IndexOutbox).where(col(IndexOutbox.id).in_([r.id for r in rows]))
                )
            done.rows += len(rows)
            done.facts += len(facts)
            done.chunks += len(chunks)
            if progress is not None:
                progress(done.rows)
    return done


def _queued(
    sessions: Sessions, namespace: str | None, targets: Collection[str] | None
) -> list[IndexOutbox]:
    with sessions() as session:
        query = select(IndexOutbox).order_by(col(IndexOutbox.id)).limit(SYNC_BATCH)
        if namespace is not None:
            query = query.where(IndexOutbox.namespace == namespace)
        if targets is not None:
            query = query.where(col(IndexOutbox.target_id).in_(list(targets)))
        return list(session.exec(query).all())


def rebuild(
    sessions: Sessions, index: SearchIndex, progress: Callable[[int, int], None] | None = None
) -> Rebuilt:
    """Bring the whole index (every namespace) in line with SQL; safe to kill at any point.

    One transaction queues every fact and evidence row in the outbox (replacing what was
    queued), then the queue is drained as ``sync`` drains it: a process killed part way
    leaves the rest queued, and the next open (or ``sync``) finishes the job. The tables
    are dropped first only when their vectors cannot serve this embedder; otherwise a
    row whose text is unchanged keeps its vector. Rows SQL does not hold (an index kept
    beside an older database backup) are deleted at the end.
    """
    with sessions() as session, session.begin():
        session.exec(sa.delete(IndexOutbox))
        now = utcnow()
        for kind, model in ((OutboxKind.FACT, Fact), (OutboxKind.EVIDENCE, Evidence)):
            queue_all = sa.insert(IndexOutbox).from_select(
                ["namespace", "kind", "target_id", "created_at"],
                select(
                    col(model.namespace),
                    sa.literal(kind.value, sa.String),
                    col(model.id),
                    sa.literal(now, UTCDateTime),
                ).order_by(col(model.id)),
            )
            session.exec(queue_all)
        total = pending(session)
    if index.mismatch() is not None:
        index.reset()
    report = None if progress is None else (lambda done: progress(min(done, total), total))
    drained = _drain(sessions, index, progress=report)
    _prune(sessions, index)
    index.maintain()
    return Rebuilt(facts=drained.facts, chunks=drained.chunks)


def _prune(sessions: Sessions, index: SearchIndex) -> None:
    """Delete index rows of facts and evidence that SQL does not hold.

    The index is listed before SQL is asked, and SQL never deletes these rows, so a
    row another process indexes meanwhile is never taken for a leftover.
    """
    for table, model, column in ((FACTS, Fact, "id"), (CHUNKS, Evidence, "evidence_id")):
        listed = index.ids(table, column)
        gone: set[str] = set()
        with sessions() as session:
            for chunk in db.chunks(sorted(listed)):
                held = set(session.exec(select(model.id).where(col(model.id).in_(chunk))).all())
                gone.update(i for i in chunk if i not in held)
        index.delete(table, column, sorted(gone))


def fact_docs(session: Session, ids: Collection[str]) -> list[FactDoc]:
    """The index rows of these facts as SQL holds them now (missing ids are skipped)."""
    docs: list[FactDoc] = []
    for chunk in db.chunks(list(dict.fromkeys(ids))):
        members: dict[str, list[str]] = {}
        for fact_id, entity_id in session.exec(
            select(FactMember.fact_id, FactMember.entity_id)
            .where(col(FactMember.fact_id).in_(chunk))
            .order_by(col(FactMember.fact_id), col(FactMember.position))
        ).all():
            members.setdefault(fact_id, []).append(entity_id)
        for row in session.exec(select(Fact).where(col(Fact.id).in_(chunk))).all():
            docs.append(
                FactDoc(
                    id=row.id,
                    namespace=row.namespace,
                    status=row.status,
                    relation=row.relation,
                    entity_ids=tuple(members.get(row.id, ())),
                    text=row.statement,
                    recorded_at=row.recorded_at,
                    valid_from=row.valid_from,
                    valid_to=row.valid_to,
                )
            )
    return docs


def chunk_docs(session: Session, ids: Collection[str]) -> list[ChunkDoc]:
    """The index rows (chunks) of these evidence versions, each marked current or replaced."""
    docs: list[ChunkDoc] = []
    for chunk in db.chunks(list(dict.fromkeys(ids))):
        rows = list(session.exec(select(Evidence).where(col(Evidence.id).in_(chunk))).all())
        current = current_ids(session, rows)
        for row in rows:
            status = "current" if row.id in current else "replaced"
            for n, (start, end) in enumerate(chunk_spans(row.text)):
                docs.append(
                    ChunkDoc(
                        id=f"{row.id}:{n}",
                        namespace=row.namespace,
                        evidence_id=row.id,
                        source=row.source,
                        version=row.version,
                        status=status,
                        start=start,
                        end=end,
                        text=row.text[start:end],
                        created_at=row.created_at,
                    )
                )
    return docs


def current_ids(session: Session, rows: Collection[Evidence]) -> set[str]:
    """Which of these rows are what their source holds now: the version the last fetch
    found, or, for a source never fetched (inline text included), its newest version."""
    fetched: dict[tuple[str, str], str] = {}
    newest: dict[tuple[str, str], int] = {}
    for namespace in {r.namespace for r in rows}:
        sources = list({r.source for r in rows if r.namespace == namespace})
        for chunk in db.chunks(sources):
            for source, evidence_id in session.exec(
                select(EvidenceSource.source, EvidenceSource.evidence_id).where(
                    EvidenceSource.namespace == namespace,
                    col(EvidenceSource.source).in_(chunk),
                    col(EvidenceSource.evidence_id).is_not(None),
                )
            ).all():
                fetched[(namespace, source)] = str(evidence_id)
            for source, version in session.exec(
                select(Evidence.source, func.max(Evidence.version))
                .where(Evidence.namespace == namespace, col(Evidence.source).in_(chunk))
                .group_by(col(Evidence.source))
            ).all():
                newest[(namespace, source)] = version

    def current(row: Evidence) -> bool:
        key = (row.namespace, row.source)
        return fetched[key] == row.id if key in fetched else newest.get(key) == row.version

    return {row.id for row in rows if current(row)}


def chunk_spans(text: str, size: int = CHUNK_CHARS) -> list[tuple[int, int]]:
    """``[start, end)`` slices of ``text`` of at most about ``size`` characters, cut after
    sentence ends where possible, with surrounding whitespace trimmed."""
    cuts = [0, *(m.end() for m in _SENTENCE_END.finditer(text)), len(text)]
    pieces: list[tuple[int, int]] = []
    for start, end in pairwise(cuts):
        while end - start > size:  # a sentence longer than a chunk: cut at a space
            cut = text.rfind(" ", start + size // 2, start + size)
            cut = cut + 1 if cut > start else start + size
            pieces.append((start, cut))
            start = cut
        if end > start:
            pieces.append((start, end))
    spans: list[tuple[int, int]] = []
    for start, end in pieces:
        if spans and end - spans[-1][0] <= size:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return [t for t in (strip_span(text, s, e) for s, e in spans) if t[1] > t[0]]
