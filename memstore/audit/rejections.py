"""The rejection audit log: recording rejected facts (a session of the write path's
transaction), then reading them: a page, one, counts, an export to a file, and the
check that the hash chain is intact (``page``, ``get``, ``count``, ``export``,
``verify_chain``: one namespace's scope, inputs arrive checked)."""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import sqlalchemy as sa
from sqlmodel import Session, col, select

from memstore.audit import chain, labels
from memstore.errors import NotFound
from memstore.metadata import stored as stored_metadata
from memstore.names import normalize_key
from memstore.schemas import (
    EvidencePublic,
    LabelPublic,
    RejectionFilter,
    RejectionList,
    RejectionPublic,
)
from memstore.storage import cursors, db
from memstore.storage.cursors import RejectionPosition
from memstore.storage.scope import Scope
from memstore.storage.tables import (
    Entity,
    EntityAlias,
    Evidence,
    GateFields,
    LabelKind,
    Rejection,
    RejectionAttempt,
    RejectionEvidence,
    RejectionMember,
)

_EXPORT_PAGE = 500

#: CSV columns, in order; list and dict values are written as JSON.
CSV_COLUMNS = (
    "id",
    "namespace",
    "created_at",
    "verdict",
    "statement",
    "relation",
    "members",
    "stated_confidence",
    *(name for name in GateFields.model_fields if name != "verdict"),
    "reason",
    "attempts",
    "last_attempt_at",
    "evidence_ids",
    "citations",
    "evidence",
    "metadata",
    "chain_seq",
    "chain_hash",
    "labels",
)


def select_page(
    session: Session,
    namespace: str,
    where: RejectionFilter,
    *,
    order_by: str = "created_at",
    descending: bool = True,
    limit: int = 100,
    offset: int = 0,
    after: RejectionPosition | None = None,
) -> list[RejectionPublic]:
    """One page of matching rejections: ``offset`` rows skipped, or those after the row
    ``after`` names. The order: the column (NULL numbers last either way), then
    ``chain_seq`` (NULL, a row inserted behind the store's back, as the smallest on
    both databases), then id; by ``created_at`` (never NULL) it is the index's,
    ``(namespace, created_at, chain_seq)``."""
    column = col(getattr(Rejection, order_by))
    seq, row_id = col(Rejection.chain_seq), col(Rejection.id)
    if descending:
        keys = [column.desc(), seq.desc().nulls_last(), row_id.desc()]
    else:
        keys = [column.asc(), seq.asc().nulls_first(), row_id.asc()]
    nulls_last = [] if order_by == "created_at" else [column.is_(None)]
    found = select(Rejection).where(*conditions(session, namespace, where))
    if after is not None:
        found = found.where(_after(column, seq, row_id, after, descending))
    rows = session.exec(found.order_by(*nulls_last, *keys).offset(offset).limit(limit)).all()
    return hydrate(session, rows)


def _after(column: Any, seq: Any, row_id: Any, at: RejectionPosition, descending: bool) -> Any:
    """The rows that come after the row ``at`` in ``query``'s order."""

    def beyond(key: Any, value: Any) -> Any:
        here = sa.literal(value, key.type)
        return key < here if descending else key > here

    if at.chain_seq is None:  # NULL is the smallest chain_seq; ids break the tie
        later_seq = sa.and_(seq.is_(None), beyond(row_id, at.id))
        if not descending:
            later_seq = sa.or_(seq.is_not(None), later_seq)
    else:
        later_seq = beyond(seq, at.chain_seq)
        if descending:
            later_seq = sa.or_(later_seq, seq.is_(None))
    if at.value is None:  # among the NULL numbers, which come last
        return sa.and_(column.is_(None), later_seq)
    value = sa.literal(at.value, column.type)
    tied = sa.and_(column == value, later_seq)
    if column.name == "created_at":  # never NULL; the bound lets the index seek
        bound = column <= value if descending else column >= value
        return sa.and_(bound, sa.or_(beyond(column, at.value), tied))
    return sa.or_(column.is_(None), beyond(column, at.value), tied)


def count_rows(session: Session, namespace: str, where: RejectionFilter, by: str) -> dict[str, int]:
    """Matching rejections per verdict or per UTC day (``YYYY-MM-DD``), in key order."""
    key: Any = col(Rejection.verdict) if by == "verdict" else sa.func.date(Rejection.created_at)
    rows = session.exec(
        select(key, sa.func.count())
        .where(*conditions(session, namespace, where))
        .group_by(key)
        .order_by(key)
    ).all()
    return {str(k): int(n) for k, n in rows}


def iterate(session: Session, namespace: str, where: RejectionFilter) -> Iterator[RejectionPublic]:
    """Every matching rejection, oldest first, read page by page (each page starts
    where the last ended, so a page costs the same at the end as at the start)."""
    after = None
    while True:
        page = select_page(
            session, namespace, where, descending=False, limit=_EXPORT_PAGE, after=after
        )
        yield from page
        if len(page) < _EXPORT_PAGE:
            return
        after = RejectionPosition(page[-1].created_at, page[-1].chain_seq, page[-1].id)


def conditions(session: Session, namespace: str, where: RejectionFilter) -> list[Any]:
    """SQL conditions for a filter; always confined to ``namespace``."""
    found: list[Any] = [col(Rejection.namespace) == namespace]
    if where.since is not None:
        found.append(col(Rejection.created_at) >= where.since)
    if where.until is not None:
        found.append(col(Rejection.created_at) < where.until)
    if where.verdict is not None:
        found.append(col(Rejection.verdict).in_(where.verdict))
    if where.min_gap is not None:
        found.append(col(Rejection.budget_gap) >= where.min_gap)
    if where.max_gap is not None:
        found.append(col(Rejection.budget_gap) <= where.max_gap)
    if where.text is not None:
        found.append(
            sa.func.lower(col(Rejection.statement)).contains(where.text.lower(), autoescape=True)
        )
    if where.relation is not None:
        found.append(col(Rejection.relation) == where.relation)
    if where.source is not None:
        found.append(
            col(Rejection.id).in_(
                select(RejectionEvidence.rejection_id)
                .join(Evidence, col(Evidence.id) == RejectionEvidence.evidence_id)
                .where(RejectionEvidence.namespace == namespace, Evidence.source == where.source)
            )
        )
    if where.entity is not None:
        keys = _entity_keys(session, namespace, where.entity)
        found.append(
            col(Rejection.id).in_(
                select(RejectionMember.rejection_id).where(
                    RejectionMember.namespace == namespace, col(RejectionMember.key).in_(keys)
                )
            )
        )
    return found


def _entity_keys(session: Session, namespace: str, name: str) -> list[str]:
    """The name's key plus every alias key of the stored entity it names, if any."""
    key = normalize_key(name)
    aliases = session.exec(
        select(EntityAlias.key)
        .join(Entity, col(Entity.id) == EntityAlias.entity_id)
        .where(
            EntityAlias.namespace == namespace,
            col(EntityAlias.entity_id).in_(
                select(EntityAlias.entity_id).where(
                    EntityAlias.namespace == namespace, EntityAlias.key == key
                )
            ),
        )
    ).all()
    return sorted({key, *aliases})


def hydrate(session: Session, rows: Sequence[Rejection]) -> list[RejectionPublic]:
    """Public rejections with the evidence texts they were checked against and how often
    the write was refused (``attempts``, the last at ``last_attempt_at``)."""
    ids = sorted({e for r in rows for e in r.evidence_ids})
    texts: dict[str, EvidencePublic] = {}
    for chunk in db.chunks(ids):
        for ev in session.exec(select(Evidence).where(col(Evidence.id).in_(chunk))).all():
            texts[ev.id] = EvidencePublic.model_validate(ev, from_attributes=True)
    repeats = attempts(session, rows)
    return [
        RejectionPublic(
            **r.model_dump(exclude={"meta", "fingerprint"}),
            metadata=stored_metadata(r.meta),
            evidence=[texts[e] for e in r.evidence_ids if e in texts],
            attempts=repeats[r.id][0],
            last_attempt_at=repeats[r.id][1],
        )
        for r in rows
    ]


def attempts(session: Session, rows: Sequence[Rejection]) -> dict[str, tuple[int, datetime]]:
    """Per rejection: how often the write was refused (itself and the attempts counted
    on it) and when last (read by namespace and id: the attempts' index leads with the
    namespace)."""
    found = {r.id: (1, r.created_at) for r in rows}
    namespaces = sorted({r.namespace for r in rows})
    for chunk in db.chunks(sorted({r.id for r in rows})):
        query = (
            select(
                RejectionAttempt.rejection_id,
                sa.func.count(),
                sa.func.max(RejectionAttempt.created_at),
            )
            .where(col(RejectionAttempt.namespace).in_(namespaces))
            .where(col(RejectionAttempt.rejection_id).in_(chunk))
            .group_by(col(RejectionAttempt.rejection_id))
        )
        for rejection_id, count, last in session.exec(query):
            found[rejection_id] = (1 + count, last)
    return found


def write(
    rows: Iterable[RejectionPublic],
    out: TextIO,
    fmt: str,
    labels: Mapping[str, Sequence[LabelPublic]] | None = None,
) -> int:
    """Write rejections as JSON lines or CSV, each with the human labels on it (``labels``
    by rejection id; written as a list of kind, labelled_by, note, created_at and id);
    return how many."""
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    if fmt == "csv":
        writer.writeheader()
    written = 0
    for row in rows:
        data = row.model_dump(mode="json")
        data["labels"] = [
            label.model_dump(mode="json", exclude={"namespace", "target_id"})
            for label in (labels or {}).get(row.id, ())
        ]
        if fmt == "jsonl":
            out.write(json.dumps(data, ensure_ascii=False) + "\n")
        else:
            writer.writerow(_csv_row(data))
        written += 1
    return written


def _csv_row(data: dict[str, Any]) -> dict[str, Any]:
    """A rejection's cells: evidence cut to id, source and text, lists and dicts as JSON,
    text made safe for spreadsheets."""
    data["evidence"] = [
        {"id": e["id"], "source": e["source"], "text": e["text"]} for e in data["evidence"]
    ]
    return {
        k: json.dumps(v, ensure_ascii=False) if isinstance(v, list | dict) else csv_cell(v)
        for k, v in data.items()
    }


#: A text cell starting with one of these is a formula to a spreadsheet (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """``value`` safe to open in a spreadsheet: text that would start a formula gets a
    leading ``'`` (so ``=HYPERLINK(...)`` shows as text). Numbers are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


# -- reads of one namespace's log (the Store's rejection calls) ----------------------


def page(
    scope: Scope,
    query: RejectionFilter,
    order_by: str,
    descending: bool,
    limit: int,
    offset: int,
    cursor: str | None = None,
) -> RejectionList:
    """One page of the rejections that match ``query``: ``offset`` rows in, or after
    the row ``cursor`` names (then with a ``next_cursor`` when more follow)."""
    listing = {
        "read": "rejections",
        "order_by": order_by,
        "descending": descending,
        **query.model_dump(mode="json", exclude={"since", "until"}),
    }
    read = cursors.listing(scope.namespace, listing)
    after = cursors.rejections_start(cursor, order_by, read)
    with scope.session() as session:
        rows = select_page(
            session,
            scope.namespace,
            query,
            order_by=order_by,
            descending=descending,
            limit=limit + 1,
            offset=offset,
            after=after,
        )
    more = len(rows) > limit
    return RejectionList(rows[:limit], cursors.after_rejections(rows[:limit], more, order_by, read))


def get(scope: Scope, rejection_id: str) -> RejectionPublic:
    """A rejection by id, or NotFound."""
    with scope.session() as session:
        row = session.get(Rejection, rejection_id) if isinstance(rejection_id, str) else None
        if row is None or row.namespace != scope.namespace:
            raise NotFound("rejection", str(rejection_id), scope.namespace)
        return hydrate(session, [row])[0]


def count(scope: Scope, query: RejectionFilter, by: str) -> dict[str, int]:
    """How many rejections match ``query``, grouped ``by`` verdict or day."""
    with scope.session() as session:
        return count_rows(session, scope.namespace, query, by)


def export(scope: Scope, query: RejectionFilter, dest: str | Path | TextIO, format: str) -> int:
    """Write every matching rejection, with the human labels on it, to ``dest`` (a path,
    replaced atomically, or an open text file) in ``format``; returns how many."""
    with scope.session() as session:
        said = labels.by_target(session, scope.namespace, LabelKind.FALSE_REJECTION)
        rows = iterate(session, scope.namespace, query)
        if not isinstance(dest, str | Path):
            return write(rows, dest, format, said)
        return write_atomically(Path(dest), lambda out: write(rows, out, format, said))


def verify_chain(scope: Scope, span: tuple[int, int] | None = None) -> chain.ChainReport:
    """Walk the namespace's rejection and verification rows (all, or positions ``span``)
    and report any tampering: ``report.ok`` is False when a row was edited, inserted or
    deleted behind the store's back, ``report.problems`` names each; ``report.head``,
    kept elsewhere, detects a chain rewritten wholesale."""
    with scope.session() as session:
        return chain.verify(session, scope.namespace, span)


def write_atomically(path: Path, write: Callable[[TextIO], int]) -> int:
    """Write a text file via a temporary file in the same folder, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            written = write(out)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return written
