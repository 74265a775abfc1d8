"""Keeps the LanceDB search index in line with SQL through the ``index_outbox`` table.

A change to a fact or an evidence row queues an outbox row in the same transaction
(``enqueue``). After the commit, ``sync`` reads the SQL state of the queued rows,
writes it to the index (by id, so a replay is harmless) and only then deletes the
outbox rows. A process killed in between leaves the rows queued; the next open
replays them.

The index holds only evidence that backs live memory (``live_ids``): evidence that
only rejections or retracted facts cite is left out. A queued row that SQL no longer
holds (an erase) is deleted, and the erase's own queued row (``OutboxKind.ERASURE``)
purges the index files of every copy (``SearchIndex.purge``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple

import sqlalchemy as sa
from sqlmodel import Session, col, func, select

from language.sentences import strip_span
from memstore.index.rows import CHUNKS, FACTS, ChunkDoc, FactDoc
from memstore.metadata import tokens
from memstore.storage import db
from memstore.storage.tables import (
    FIXED_SOURCES,
    OPEN_STATUSES,
    Citation,
    Erasure,
    Evidence,
    EvidenceSource,
    Fact,
    FactMember,
    FactStatus,
    IndexOutbox,
    OutboxKind,
    UTCDateTime,
    utcnow,
)

if TYPE_CHECKING:
    from memstore.index.embeddings import Matrix
    from memstore.index.lance import SearchIndex

#: Evidence is indexed in chunks of about this many characters, cut at sentence ends.
CHUNK_CHARS = 600
#: Queued rows applied in one index commit (per table): ``sync``'s default.
SYNC_BATCH = 256
#: The same for the elected applier (``memstore.index.writer``), which works through the
#: queue of every writer: fewer, larger commits (fewer versions, and maintenance runs,
#: per fact). At 100,000 facts on S3 here it applied 31-45 facts per second of work with
#: 256-row batches and 56 with these (one run each; embedding is most of its time).
APPLY_BATCH = 1024
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+|\n\s*\n")

Sessions = Callable[[], AbstractContextManager[Session]]


@dataclass(frozen=True)
class Rebuilt:
    """What ``rebuild`` wrote."""

    facts: int
    chunks: int


def enqueue(session: Session, namespace: str, kind: OutboxKind, ids: Iterable[str]) -> None:
    """Queue these rows for the index, inside the caller's transaction: one INSERT of
    plain rows, sent at once (the outbox references no table, so it needs no flush
    order)."""
    rows = outbox_rows(namespace, kind, ids)
    if rows:
        session.connection().execute(sa.insert(IndexOutbox), rows)


def outbox_rows(namespace: str, kind: OutboxKind, ids: Iterable[str]) -> list[dict[str, Any]]:
    """The outbox rows (plain, for ``db.insert_plain``) that queue these ids, once each."""
    now = utcnow()
    return [
        {"namespace": namespace, "kind": kind, "target_id": target, "created_at": now}
        for target in dict.fromkeys(ids)
    ]


def enqueue_source(session: Session, namespace: str, source: str) -> None:
    """Queue every stored version of ``source``: which one is current has changed."""
    versions = session.exec(
        select(Evidence.id).where(Evidence.namespace == namespace, Evidence.source == source)
    ).all()
    enqueue(session, namespace, OutboxKind.EVIDENCE, versions)


def pending(session: Session, namespace: str | None = None, kind: OutboxKind | None = None) -> int:
    """Queued outbox rows (of ``namespace`` and ``kind``, when given)."""
    query = select(func.count()).select_from(IndexOutbox)
    if namespace is not None:
        query = query.where(IndexOutbox.namespace == namespace)
    if kind is not None:
        query = query.where(IndexOutbox.kind == kind)
    return int(session.exec(query).one())


def behind(session: Session) -> float:
    """Seconds since the oldest change still queued (any namespace; the first by id)
    was queued: 0.0 when none is."""
    oldest = session.exec(
        select(IndexOutbox.created_at).order_by(col(IndexOutbox.id)).limit(1)
    ).first()
    return 0.0 if oldest is None else max(0.0, (utcnow() - oldest).total_seconds())


@dataclass
class Synced:
    """What ``sync`` applied: outbox rows, the facts and chunks they wrote, and the
    seconds it took."""

    rows: int = 0
    facts: int = 0
    chunks: int = 0
    seconds: float = 0.0


def sync(
    sessions: Sessions,
    index: SearchIndex,
    *,
    namespace: str | None = None,
    targets: Collection[str] | None = None,
    vectors: Mapping[str, Matrix] = {},
    progress: Callable[[int], None] | None = None,
    kind: OutboxKind | None = None,
    tally: Synced | None = None,
    batch: int = SYNC_BATCH,
    keep_going: Callable[[], bool] | None = None,
) -> Synced:
    """Apply queued outbox rows (of ``namespace`` / ``targets`` / ``kind`` when given) to the index;
    ``progress`` hears the rows applied so far after each batch, and ``tally`` gets each
    batch's counts added as it is done. ``batch``: rows per index commit. ``keep_going``:
    asked before each batch but the first; False stops (the rest stays queued).

    An index failure propagates with the rows still queued.
    """
    done = Synced()
    groups: list[Collection[str] | None] = [None]
    if targets is not None:
        groups = list(db.chunks(list(dict.fromkeys(targets))))
    for group in groups:
        while rows := _queued(sessions, namespace, group, kind, batch):
            if keep_going is not None and done.rows and not keep_going():
                return done
            began = time.perf_counter()
            fact_ids = list(dict.fromkeys(r.target_id for r in rows if r.kind == "fact"))
            evidence_ids = list(dict.fromkeys(r.target_id for r in rows if r.kind == "evidence"))
            erasures = [r.target_id for r in rows if r.kind == OutboxKind.ERASURE]
            # SQL is read inside the write turn: writers go in turn order, each with a
            # state at least as new as the one before it (a syncer that read first and
            # wrote last once left a re-verified fact's old status in the index).
            with index.writing():
                with sessions() as session:
                    facts = fact_docs(session, fact_ids)
                    chunks = chunk_docs(session, evidence_ids)
                    if erasures:  # what the erasures removed, whatever else is queued
                        for tombstone in session.exec(
                            select(Erasure).where(col(Erasure.id).in_(erasures))
                        ):
                            fact_ids += [i for i in tombstone.fact_ids if i not in fact_ids]
                            evidence_ids += [
                                e["id"] for e in tombstone.evidence if e["id"] not in evidence_ids
                            ]
                index.write_facts(facts, vectors)
                index.write_chunks(chunks)
                # Not live (rejected-only, retracted-only) or gone from SQL (erased): out.
                shown = {c.evidence_id for c in chunks}
                index.delete(CHUNKS, "evidence_id", [i for i in evidence_ids if i not in shown])
                written = {f.id for f in facts}
                index.delete(FACTS, "id", [i for i in fact_ids if i not in written])
                if erasures:
                    index.purge()  # an erase: no copy of the deleted rows may stay on disk
            with sessions() as session, session.begin():
                session.exec(
                    sa.delete(IndexOutbox).where(col(IndexOutbox.id).in_([r.id for r in rows]))
                )
            for counts in (done, tally) if tally is not None else (done,):
                counts.rows += len(rows)
                counts.facts += len(facts)
                counts.chunks += len(chunks)
                counts.seconds += time.perf_counter() - began
            if progress is not None:
                progress(done.rows)
    return done


class Queued(NamedTuple):
    """One queued outbox row, as ``_queued`` reads it."""

    id: int
    kind: str
    target_id: str


def _queued(
    sessions: Sessions,
    namespace: str | None,
    targets: Collection[str] | None,
    kind: OutboxKind | None = None,
    batch: int = SYNC_BATCH,
) -> list[Queued]:
    with sessions() as session:
        query = (  # plain rows, not ORM objects: a sync reads up to ``batch`` of them
            select(IndexOutbox.id, IndexOutbox.kind, IndexOutbox.target_id)
            .order_by(col(IndexOutbox.id))
            .limit(batch)
        )
        if namespace is not None:
            query = query.where(IndexOutbox.namespace == namespace)
        if kind is not None:
            query = query.where(IndexOutbox.kind == kind)
        if targets is not None:
            query = query.where(col(IndexOutbox.target_id).in_(list(targets)))
        return [Queued(int(i or 0), k, t) for i, k, t in session.exec(query).all()]


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
        # Queued erasures stay: the drain below purges the files of what they removed.
        session.exec(sa.delete(IndexOutbox).where(col(IndexOutbox.kind) != OutboxKind.ERASURE))
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
    drained = sync(sessions, index, progress=report)
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
                    metadata=tuple(tokens(row.meta)),
                )
            )
    return docs


def chunk_docs(session: Session, ids: Collection[str]) -> list[ChunkDoc]:
    """The index rows (chunks) of these evidence versions that back live memory
    (``live_ids``), each marked current or replaced."""
    docs: list[ChunkDoc] = []
    for chunk in db.chunks(list(dict.fromkeys(ids))):
        rows = list(session.exec(select(Evidence).where(col(Evidence.id).in_(chunk))).all())
        live = live_ids(session, rows)
        rows = [r for r in rows if r.id in live]
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
    found, or, for a source never fetched, its newest version; inline texts and
    conversation turns (``FIXED_SOURCES``) always."""
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
        if row.source in FIXED_SOURCES:  # each text its own: no newer version replaces it
            return True
        key = (row.namespace, row.source)
        return fetched[key] == row.id if key in fetched else newest.get(key) == row.version

    return {row.id for row in rows if current(row)}


def live_ids(session: Session, rows: Collection[Evidence]) -> set[str]:
    """Which of these evidence rows back live memory: a fact cites them whose newest
    version (along its supersession chain) is not retracted.

    Evidence that only rejections cite belongs to the audit log, and a retracted
    fact's evidence leaves with it, unless another live fact cites it too. A URI
    source counts as one: when a live fact cites any version of it, every version
    does (history rows name the older versions they checked).
    """
    live: set[str] = set()
    for namespace in {r.namespace for r in rows}:
        mine = [r for r in rows if r.namespace == namespace]
        versions: dict[str, str] = {r.id: r.source for r in mine}
        sources = sorted({r.source for r in mine} - FIXED_SOURCES)
        for chunk in db.chunks(sources):
            for evidence_id, source in session.exec(
                select(Evidence.id, Evidence.source).where(
                    Evidence.namespace == namespace, col(Evidence.source).in_(chunk)
                )
            ):
                versions[evidence_id] = source
        backed: set[str] = set()
        superseded: dict[str, set[str]] = {}  # citing fact -> evidence ids
        for chunk in db.chunks(sorted(versions)):
            for evidence_id, fact_id, status in session.exec(
                select(Citation.evidence_id, Citation.fact_id, Fact.status)
                .join(Fact, col(Fact.id) == Citation.fact_id)
                .where(Citation.namespace == namespace, col(Citation.evidence_id).in_(chunk))
            ):
                if status in OPEN_STATUSES:
                    backed.add(evidence_id)
                elif status == FactStatus.SUPERSEDED:
                    superseded.setdefault(fact_id, set()).add(evidence_id)
        for fact_id in _live_facts(session, superseded):
            backed |= superseded[fact_id]
        backed_sources = {versions[e] for e in backed} - FIXED_SOURCES
        live.update(r.id for r in mine if r.id in backed or (r.source in backed_sources))
    return live


def _live_facts(session: Session, fact_ids: Collection[str]) -> set[str]:
    """Which of these facts are live: open, or superseded by a chain that ends open."""
    statuses: dict[str, tuple[str, str | None]] = {}
    asked: set[str] = set()
    todo = set(fact_ids)
    while todo:
        asked |= todo
        for chunk in db.chunks(sorted(todo)):
            for fact_id, status, newer in session.exec(
                select(Fact.id, Fact.status, Fact.superseded_by_id).where(col(Fact.id).in_(chunk))
            ):
                statuses[fact_id] = (status, newer)
        todo = {
            newer
            for status, newer in statuses.values()
            if status == FactStatus.SUPERSEDED and newer is not None and newer not in asked
        }

    def live(fact_id: str) -> bool:
        seen: set[str] = set()
        current: str | None = fact_id
        while current is not None and current not in seen:
            seen.add(current)
            status, newer = statuses.get(current, (FactStatus.RETRACTED.value, None))
            if status in OPEN_STATUSES:
                return True
            current = newer if status == FactStatus.SUPERSEDED else None
        return False

    return {f for f in fact_ids if live(f)}


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
