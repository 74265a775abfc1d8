"""Tamper evidence: rejection and verification rows form one hash chain per namespace.

Each audited row gets the next sequence number of its namespace, the previous
row's hash (``chain_prev``) and ``chain_hash = sha256(prev, table, row content)``;
``audit_heads`` holds the namespace's last sequence number and hash. ``verify``
walks the chain and names every row that was edited, inserted or deleted.

This catches changes made behind the library's back (SQL consoles, scripts,
restores of partial backups). Someone who can rewrite every later hash and the
head can forge a consistent chain; anchor ``ChainReport.head`` somewhere else
(a log line, a ticket) to catch that too.

An erase (``Store.erase``) removes audit rows for good. Its tombstone (an
``erasures`` row, itself the next link) keeps each removed row's position, previous
hash and hash in ``links``: the walk takes those links in the removed rows' place, so
the chain still verifies, and editing or deleting the tombstone breaks it.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import Session, SQLModel, col, select

from memstore.storage.tables import AuditHead, Erasure, Rejection, RejectionAttempt, Verification

GENESIS = "0" * 64
HASH_VERSION = "v1"
_PAGE = 1000

AuditRow = Rejection | Verification | Erasure | RejectionAttempt
#: Audited tables by name, the name being part of each row's hash.
TABLES: dict[str, type[AuditRow]] = {
    "rejections": Rejection,
    "verifications": Verification,
    "erasures": Erasure,
    "rejection_attempts": RejectionAttempt,
}
_CHAIN_COLUMNS = frozenset({"chain_prev", "chain_hash"})
#: Columns added to audited tables after hashing began. They count only when set, so
#: rows written before a column existed keep their hashes.
_LATER_COLUMNS = frozenset({"verdict_before", "duration_ms", "meta", "fingerprint"})


def row_hash(prev: str, table: str, content: Mapping[str, Any]) -> str:
    """The chain hash of a row: its predecessor's hash, its table and its columns."""
    row = {
        k: _canonical(v)
        for k, v in content.items()
        if k not in _CHAIN_COLUMNS and not (k in _LATER_COLUMNS and v is None)
    }
    payload = json.dumps(
        [HASH_VERSION, prev, table, row], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _canonical(value: Any) -> Any:
    """One spelling per value, whatever the database hands back (REAL 1 vs 1.0, naive UTC)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return repr(float(value))
    if isinstance(value, datetime):
        aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return aware.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    return str(value)


def append(session: Session, row: AuditRow) -> None:
    """Give ``row`` (not yet inserted, all its columns set) the next link of its chain.

    Must run inside the write transaction that inserts the row. The head row's
    UPDATE serializes concurrent writers of a namespace (a row lock on PostgreSQL,
    the write lock on SQLite); a race on the very first link is an IntegrityError
    the store retries.
    """
    append_many(session, [row])


def append_many(session: Session, rows: Sequence[AuditRow]) -> None:
    """Give ``rows`` (of one namespace, not yet inserted) the next links, in order: one
    head UPDATE for all of them, as ``append`` does for one."""
    if not rows:
        return
    seq, prev = _claim(session, {row.namespace for row in rows}, len(rows))
    for row in rows:
        seq += 1
        row.chain_seq = seq
        row.chain_prev = prev
        row.chain_hash = prev = row_hash(prev, row.__tablename__, row.model_dump())
    _set_head(session, rows[0].namespace, prev)


def insert_plain(session: Session, table: str, rows: Sequence[dict[str, Any]]) -> None:
    """Link ``rows`` (plain rows of the audited ``table``, one namespace, every column
    set: ``db.plain_row``) into the chain, in order, and insert them with one
    executemany. They hash as the same rows built as objects would. Only for a table
    whose field names are its column names (``verifications``; not ``rejections``,
    whose ``meta`` field is the ``metadata`` column)."""
    if not rows:
        return
    columns = SQLModel.metadata.tables[table].c
    if any(name not in columns for name in rows[0]):
        raise ValueError(f"plain rows of {table} must be keyed by column name")
    seq, prev = _claim(session, {row["namespace"] for row in rows}, len(rows))
    for row in rows:
        seq += 1
        row["chain_seq"] = seq
        row["chain_prev"] = prev
        row["chain_hash"] = prev = row_hash(prev, table, row)
    _set_head(session, rows[0]["namespace"], prev)
    session.connection().execute(sa.insert(TABLES[table]), list(rows))


def _claim(session: Session, namespaces: set[str], count: int) -> tuple[int, str]:
    """Move the namespace's head ``count`` links on; the sequence number and hash the
    first new link follows."""
    if len(namespaces) != 1:
        raise ValueError("audit rows of one append must share a namespace")
    [namespace] = namespaces
    # Rows still pending go in before the head's lock is taken, as an ORM statement
    # would flush them: writers then lock in one order (rows first, the head last).
    if session.autoflush:
        session.flush()
    run = session.connection().execute  # Core, not an ORM bulk UPDATE: a third the time
    head = run(_CLAIM, {"head_namespace": namespace, "links": count}).first()
    if head is not None:
        return head[0] - count, head[1]
    # The first link; two writers racing here: one fails its unique key and is retried.
    run(sa.insert(AuditHead).values(namespace=namespace, seq=count, hash=GENESIS))
    return 0, GENESIS


def _set_head(session: Session, namespace: str, last: str) -> None:
    session.connection().execute(_SET_HEAD, {"head_namespace": namespace, "last": last})


#: The head's two statements, built once. RETURNING: PostgreSQL, and SQLite from 3.35.
_CLAIM = (
    sa.update(AuditHead)
    .where(col(AuditHead.namespace) == sa.bindparam("head_namespace"))
    .values(seq=AuditHead.seq + sa.bindparam("links"))
    .returning(col(AuditHead.seq), col(AuditHead.hash))
)
_SET_HEAD = (
    sa.update(AuditHead)
    .where(col(AuditHead.namespace) == sa.bindparam("head_namespace"))
    .values(hash=sa.bindparam("last"))
)


@dataclass(frozen=True, slots=True)
class ErasedLink:
    """A removed audit row, as its tombstone keeps it: enough to link, no content."""

    id: str
    chain_seq: int
    chain_prev: str
    chain_hash: str


def erased_link(table: str, row: Rejection | Verification | RejectionAttempt) -> dict[str, Any]:
    """What a tombstone keeps of an audit row it removes (see ``Erasure.links``)."""
    return {
        "table": table,
        "id": row.id,
        "seq": row.chain_seq,
        "prev": row.chain_prev,
        "hash": row.chain_hash,
    }


@dataclass(frozen=True, slots=True)
class ChainProblem:
    """One break in the chain: ``kind`` is ``edited``, ``inserted`` or ``deleted``."""

    kind: str
    seq: int | None
    table: str | None
    row_id: str | None
    detail: str


@dataclass(slots=True)
class ChainReport:
    """The result of walking a namespace's audit chain."""

    namespace: str
    rows: int = 0
    head: str = GENESIS
    problems: list[ChainProblem] = field(default_factory=list)
    #: The positions walked (first, last); None: the whole chain.
    span: tuple[int, int] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(session: Session, namespace: str, span: tuple[int, int] | None = None) -> ChainReport:
    """Walk the audited rows of ``namespace`` in chain order and report each break: the
    whole chain, or only positions ``span`` (first, last; a row's neighbourhood, which
    checks its content, its link to the row before and the next row's link to it)."""
    report = ChainReport(namespace, span=span)
    for table, model in TABLES.items():
        outside = select(model).where(model.namespace == namespace, col(model.chain_seq).is_(None))
        for stray in cast("list[AuditRow]", session.exec(outside).all()):
            report.problems.append(
                ChainProblem("inserted", None, table, stray.id, "row is outside the chain")
            )
    first, last_asked = span if span is not None else (1, None)
    expected: int = first
    prev: str | None = GENESIS if first == 1 else None  # None: the row before is not read
    rows = _in_chain_order(session, namespace, first, last_asked)
    for seq, group in itertools.groupby(rows, key=lambda r: r[0]):
        # Of rows sharing a sequence number, the one that hashes and links right is the
        # original; the others were inserted.
        links = sorted(
            (
                (table, row, _hashes(table, row), prev is None or row.chain_prev == prev)
                for _, table, row in group
            ),
            key=lambda link: (not link[2], not link[3]),
        )
        (table, row, hashes, linked), extra = links[0], links[1:]
        report.rows += 1 + len(extra)
        for other_table, other, _, _ in extra:
            report.problems.append(
                ChainProblem("inserted", seq, other_table, other.id, f"repeats position {seq}")
            )
        if seq > expected:
            missing = f"{expected}" if seq == expected + 1 else f"{expected}-{seq - 1}"
            report.problems.append(
                ChainProblem("deleted", seq, table, row.id, f"rows {missing} are missing before it")
            )
        elif not linked:
            report.problems.append(
                ChainProblem(
                    "edited", seq, table, row.id, "does not link to the row before it (replaced?)"
                )
            )
        if not hashes:
            report.problems.append(
                ChainProblem("edited", seq, table, row.id, "content does not match its hash")
            )
        expected, prev = seq + 1, row.chain_hash or ""
    head = session.get(AuditHead, namespace)
    last = expected - 1
    head_seq, head_hash = (head.seq, head.hash) if head is not None else (0, GENESIS)
    report.head = head_hash
    if last_asked is not None and head_seq > last_asked:  # the head is past the span
        if last < last_asked:
            report.problems.append(
                ChainProblem(
                    "deleted", last_asked, None, None, f"rows {expected}-{last_asked} are missing"
                )
            )
        return report
    if head_seq > last:
        report.problems.append(
            ChainProblem("deleted", head_seq, None, None, f"rows {last + 1}-{head_seq} are missing")
        )
    elif head_seq < last:
        report.problems.append(
            ChainProblem("inserted", last, None, None, f"rows after {head_seq} were appended")
        )
    elif prev is not None and head_hash != prev:
        report.problems.append(
            ChainProblem("edited", last, None, None, "the last row is not the recorded head")
        )
    return report


def _hashes(table: str, row: AuditRow | ErasedLink) -> bool:
    """Whether the row's content still produces its stored hash (an erased row has no
    content left; its tombstone's own hash vouches for the link)."""
    if isinstance(row, ErasedLink):
        return True
    return row.chain_hash == row_hash(row.chain_prev or "", table, row.model_dump())


def _in_chain_order(
    session: Session, namespace: str, first: int = 1, last: int | None = None
) -> Iterator[tuple[int, str, AuditRow | ErasedLink]]:
    """Rows of every audited table and the links of erased rows at positions ``first``
    to ``last`` (None: the end), merged by sequence number, read in pages."""
    streams: list[Iterator[tuple[int, str, AuditRow | ErasedLink]]] = [
        _paged(session, namespace, table, model, first, last) for table, model in TABLES.items()
    ]
    erased = _erased(session, namespace)
    streams.append(
        item for item in erased if first <= item[0] and (last is None or item[0] <= last)
    )
    yield from heapq.merge(*streams, key=lambda item: item[0])


def _erased(session: Session, namespace: str) -> Iterator[tuple[int, str, ErasedLink]]:
    """The links that tombstones keep of erased rows, by sequence number."""
    found: list[tuple[int, str, ErasedLink]] = []
    for links in session.exec(select(Erasure.links).where(Erasure.namespace == namespace)):
        for link in links or ():
            try:
                seq = int(link["seq"])
                kept = ErasedLink(str(link["id"]), seq, str(link["prev"]), str(link["hash"]))
            except (KeyError, TypeError, ValueError):
                continue  # a mangled tombstone fails its own hash check
            found.append((seq, str(link.get("table")), kept))
    yield from sorted(found, key=lambda item: item[0])


def _paged(
    session: Session,
    namespace: str,
    table: str,
    model: type[AuditRow],
    first: int = 1,
    last: int | None = None,
) -> Iterator[tuple[int, str, AuditRow | ErasedLink]]:
    after: int | None = first - 1 if first > 1 else None  # from 1: any position, even < 1
    while True:
        query = select(model).where(model.namespace == namespace, col(model.chain_seq).isnot(None))
        if after is not None:
            query = query.where(col(model.chain_seq) > after)
        if last is not None:
            query = query.where(col(model.chain_seq) <= last)
        page = cast(
            "list[AuditRow]", session.exec(query.order_by(col(model.chain_seq)).limit(_PAGE)).all()
        )
        for row in page:
            yield int(row.chain_seq or 0), table, row
        if len(page) < _PAGE:
            return
        after = int(page[-1].chain_seq or 0)
