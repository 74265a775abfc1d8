"""Reads of the audit log: rejected facts (a page, one, counts, an export to a file)
and the check that its hash chain is intact. Inputs arrive checked."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from memstore import audit, cursors, labels, rejections
from memstore.errors import NotFound
from memstore.models import LabelKind, Rejection
from memstore.schemas import RejectionFilter, RejectionList, RejectionPublic
from memstore.scope import Scope


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
        rows = rejections.query(
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
        return rejections.hydrate(session, [row])[0]


def count(scope: Scope, query: RejectionFilter, by: str) -> dict[str, int]:
    """How many rejections match ``query``, grouped ``by`` verdict or day."""
    with scope.session() as session:
        return rejections.count(session, scope.namespace, query, by)


def export(scope: Scope, query: RejectionFilter, dest: str | Path | TextIO, format: str) -> int:
    """Write every matching rejection, with the human labels on it, to ``dest`` (a path,
    replaced atomically, or an open text file) in ``format``; returns how many."""
    with scope.session() as session:
        said = labels.by_target(session, scope.namespace, LabelKind.FALSE_REJECTION)
        rows = rejections.iterate(session, scope.namespace, query)
        if not isinstance(dest, str | Path):
            return rejections.write(rows, dest, format, said)
        return write_atomically(Path(dest), lambda out: rejections.write(rows, out, format, said))


def verify_chain(scope: Scope, span: tuple[int, int] | None = None) -> audit.ChainReport:
    """Walk the namespace's rejection and verification rows (all, or positions ``span``)
    and report any tampering: ``report.ok`` is False when a row was edited, inserted or
    deleted behind the store's back, ``report.problems`` names each; ``report.head``,
    kept elsewhere, detects a chain rewritten wholesale."""
    with scope.session() as session:
        return audit.verify(session, scope.namespace, span)


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
