"""Questions put to a database without a namespace's Store.

The fronts ask them before (or beside) opening a store, and keep SQL out of their
own code: whether a SQLite store exists at a location (``missing_sqlite_store``),
which namespaces hold anything (``namespaces_in_use``), which hold facts to re-check
(``namespaces_to_recheck``), and whether the database answers at all
(``DatabaseProbe``, the REST API's health check).
"""

from __future__ import annotations

import threading
from pathlib import Path

import sqlalchemy as sa
from sqlmodel import Session, col, select

from memstore.errors import StorageError
from memstore.storage import db
from memstore.storage.tables import (
    OPEN_STATUSES,
    Erasure,
    Evidence,
    Fact,
    Rejection,
    ReverifyPolicyRow,
)

#: Tables whose rows put a namespace in use: facts, the audit log, evidence, a
#: re-verification policy, an erasure's tombstone.
_NAMESPACED = tuple(
    str(model.__tablename__) for model in (Fact, Rejection, Evidence, ReverifyPolicyRow, Erasure)
)


def missing_sqlite_store(url: str) -> Path | None:
    """Where a SQLite store should be but is not: the data directory (holding no
    database file) or the database file. None when it exists, when it lives in memory,
    and for a database server's URL, which is not checked."""
    if "://" not in url:
        data_dir = Path(url).expanduser()
        return None if (data_dir / db.SQLITE_FILENAME).is_file() else data_dir
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return None  # opening it reports the bad URL
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):  # a SQLite URI filename: left to SQLite
        return None
    path = Path(database).expanduser()
    return None if path.is_file() else path


def namespaces_in_use(store_url: str, namespace: str) -> list[str] | None:
    """None when ``namespace`` holds anything in the database at ``store_url`` (or the
    database cannot tell: no tables yet); else every namespace that does, sorted (an
    empty list: the store holds nothing yet). One indexed lookup per table when it is
    in use; the list is read only when it is not."""
    url = db.database_url(store_url)[0]
    engine = db.create_engine(url)
    try:
        with engine.connect() as conn:
            for table in _NAMESPACED:
                used = conn.execute(
                    sa.text(f"SELECT 1 FROM {table} WHERE namespace = :ns LIMIT 1"),
                    {"ns": namespace},
                ).first()
                if used is not None:
                    return None
            union = " UNION ".join(f"SELECT DISTINCT namespace FROM {t}" for t in _NAMESPACED)
            return sorted(str(ns) for ns in conn.execute(sa.text(union)).scalars())
    except sa.exc.SQLAlchemyError:
        return None  # not migrated yet, or unreadable: the open says what is wrong
    finally:
        engine.dispose()


def namespaces_to_recheck(store_url: str) -> list[str]:
    """Every namespace of the database at ``store_url`` (a data directory or URL, as
    ``Settings.store.url`` holds it) with open facts the gate looks after.

    The schema must be current (open a Store there first). Raises StorageError,
    ``cannot read <url>: <why>``, when the database fails.
    """
    url = db.database_url(store_url)[0]
    engine = db.create_engine(url)
    try:
        with Session(engine) as session:
            return namespaces_with_checks(session)
    except sa.exc.SQLAlchemyError as exc:
        raise StorageError(f"cannot read {url}: {exc}") from exc
    finally:
        engine.dispose()


class DatabaseProbe:
    """Asks the database of a store whether it answers, on an engine of its own
    (created on first use, thread-safe)."""

    def __init__(self, store_url: str) -> None:
        self._url = db.database_url(store_url)[0]
        self._engine: sa.Engine | None = None
        self._lock = threading.Lock()

    def ping(self) -> None:
        """Raise if the database does not answer ``SELECT 1``."""
        with self._lock:
            if self._engine is None:
                self._engine = db.create_engine(self._url)
            engine = self._engine
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))

    def close(self) -> None:
        """Dispose of the engine (a later ``ping`` makes a new one)."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None


def namespaces_with_checks(session: Session) -> list[str]:
    """Every namespace with open facts the gate looks after (across the database)."""
    return list(
        session.exec(
            select(Fact.namespace)
            .where(col(Fact.status).in_(OPEN_STATUSES), col(Fact.next_check_at).is_not(None))
            .distinct()
            .order_by(col(Fact.namespace))
        ).all()
    )
