"""Engines and schema migration. The one place that knows SQL dialect differences."""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from pydantic_core import PydanticUndefined
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.visitors import InternalTraversal
from sqlmodel import Session, SQLModel

from memstore.defaults import IN_LIST_CHUNK as IN_LIST_CHUNK
from memstore.storage.locks import FileLease, Lease, Lock, SoleLease, file_lock

if TYPE_CHECKING:
    from alembic.config import Config

SQLITE_FILENAME = "memstore.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000


def migrations_dir() -> Path:
    """Alembic scripts: inside the package when installed from a wheel, else the checkout's."""
    packaged = Path(__file__).resolve().parent.parent / "_migrations"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "migrations"


def database_url(path_or_url: str | Path) -> tuple[str, Path | None]:
    """Map ``open()``'s argument to a SQLAlchemy URL and the data directory (None for a URL)."""
    text = str(path_or_url)
    if "://" in text:
        return text, None
    data_dir = Path(text).expanduser()
    data_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(data_dir / SQLITE_FILENAME).resolve()}", data_dir


def flush_in_table_order(session: Session) -> None:
    """Flush the session's new rows a table at a time, parents first, each table's rows
    in the order of their unique key. The tables have foreign keys but no ORM
    relationships, so one flush would not order their INSERTs; a flush per table
    sends its rows as one statement; and writers that insert new keys in one order
    cannot deadlock on each other's (PostgreSQL locks a new key until commit). A flush
    in the middle of a transaction (a new version of a URI source counts the versions
    before it) splits that order; a deadlock it allows is retried (``Scope``)."""
    order = _table_order()
    pending = sorted(session.new, key=lambda row: (order[row.__table__.name], _key(row)))
    for row in pending:
        session.expunge(row)
    for _, rows in itertools.groupby(pending, key=lambda row: row.__table__.name):
        session.add_all(rows)
        session.flush()
    session.flush()  # changed rows, when nothing was new


def insert_plain(session: Session, rows: Mapping[Any, Sequence[dict[str, Any]]]) -> None:
    """Insert plain rows (model class to rows keyed by field name, as ``plain_row``
    makes them, every row of a table with the same keys), one executemany per table: no
    ORM objects, which take several times longer to build and flush. Tables and rows go
    in ``flush_in_table_order``'s order (a table without a unique key keeps the rows'
    order: citations are read back in id order); the rows they reference must be
    flushed already."""
    order = _table_order()
    run = session.connection().execute
    for model, values in sorted(rows.items(), key=lambda item: order[item[0].__tablename__]):
        if values:
            names = _unique_columns(model.__table__)
            renamed = _renamed_columns(model)
            if renamed:  # a field whose column has another name (``Fact.meta``)
                values = [{renamed.get(k, k): v for k, v in row.items()} for row in values]
            run(
                sa.insert(model),
                sorted(values, key=lambda row: tuple(str(row[name]) for name in names)),
            )


def dicts(result: sa.Result[Any]) -> list[dict[str, Any]]:
    """A result's rows as plain dicts keyed by column label: zipped with the labels once
    read, four times as fast as ``dict()`` of each ``RowMapping`` (0.2 against 0.8 ms for
    a page of 100 fact rows here)."""
    keys = list(result.keys())
    return [dict(zip(keys, row, strict=True)) for row in result]


def plain_row(model: Any, **values: Any) -> dict[str, Any]:
    """A new row of the table ``model`` as a plain dict for ``insert_plain``: every field
    of the model, unset ones at their defaults, the keys ``model_dump`` would give."""
    row = dict(values)
    for name, default, factory in _defaults(model):
        if name not in row:
            row[name] = factory() if factory is not None else default
    return row


@cache
def _defaults(model: Any) -> tuple[tuple[str, Any, Any], ...]:
    """Each field of ``model`` with its default and default factory (one of them None)."""
    return tuple(
        (name, None if field.default is PydanticUndefined else field.default, field.default_factory)
        for name, field in model.model_fields.items()
    )


@cache
def _renamed_columns(model: Any) -> dict[str, str]:
    """The fields of ``model`` stored in a column of another name, field to column."""
    return {
        attr.key: attr.columns[0].key
        for attr in sa.inspect(model).column_attrs
        if attr.key != attr.columns[0].key
    }


@cache
def _table_order() -> dict[str, int]:
    """Each table's place in foreign-key order, parents first."""
    return {table.name: i for i, table in enumerate(SQLModel.metadata.sorted_tables)}


@cache
def _unique_columns(table: sa.Table) -> tuple[str, ...]:
    """The columns of ``table``'s first unique key (by constraint name); empty if none."""
    for constraint in sorted(table.constraints, key=lambda c: str(c.name)):
        if isinstance(constraint, sa.UniqueConstraint):
            return tuple(column.name for column in constraint.columns)
    return ()


def _key(row: Any) -> tuple[str, ...]:
    """A new row's first unique key, as text (empty for a table without one)."""
    return tuple(str(getattr(row, name)) for name in _unique_columns(row.__table__))


def chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    """``ids`` in slices small enough for one ``IN (...)`` list."""
    for i in range(0, len(ids), IN_LIST_CHUNK):
        yield ids[i : i + IN_LIST_CHUNK]


class _Strings(sa.types.TypeDecorator[Sequence[str]]):
    """A list of strings bound as one parameter: a JSON array on SQLite, an array on
    PostgreSQL."""

    impl = sa.String
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(ARRAY(sa.String()))
        return dialect.type_descriptor(sa.String())

    def process_bind_param(self, value: Sequence[str] | None, dialect: sa.Dialect) -> Any:
        if value is None:
            raise ValueError("an id list parameter needs a list, not None")
        return list(value) if dialect.name == "postgresql" else json.dumps(list(value))


class _InList(sa.ColumnElement[Any]):
    """``in_list``'s condition (compiled per dialect below)."""

    inherit_cache = True
    # Not Boolean: SQLAlchemy would write ``= 1`` after a boolean on SQLite, which
    # hides the column from the planner.
    type = sa.types.NullType()
    _traverse_internals = [  # noqa: RUF012 - its cache key (SQLAlchemy's form)
        ("column", InternalTraversal.dp_clauseelement),
        ("values", InternalTraversal.dp_clauseelement),
    ]

    def __init__(self, column: Any, name: str) -> None:
        self.column = column
        self.values = sa.bindparam(name, type_=_Strings())


@compiles(_InList)
def _in_json_array(element: _InList, compiler: Any, **kw: Any) -> str:
    column, values = compiler.process(element.column, **kw), compiler.process(element.values, **kw)
    return f"{column} IN (SELECT value FROM json_each({values}))"


@compiles(_InList, "postgresql")
def _in_array(element: _InList, compiler: Any, **kw: Any) -> str:
    column, values = compiler.process(element.column, **kw), compiler.process(element.values, **kw)
    return f"{column} = ANY({values})"


def in_list(column: Any, name: str) -> sa.ColumnElement[Any]:
    """``column IN`` the strings of the parameter ``name``, bound as one value: the
    statement's text is the same for any number of them, so SQLAlchemy and SQLite build
    and prepare it once, where an expanding ``IN`` is rewritten at each run (a page's
    three reads of 100 ids at 100,000 facts: 2.8 against 2.9 ms). SQLite reads the list
    with ``json_each``, PostgreSQL as an array (``= ANY``); where the plan starts from
    ``column``'s index, each value is looked up in it."""
    return _InList(column, name)


def json_matches(dialect: str, column: Any, wanted: Mapping[str, Any]) -> list[Any]:
    """SQL conditions: the JSON object in ``column`` holds every key of ``wanted`` (flat,
    scalar values) with an equal value, as JSON compares them (numbers by value, true is
    not 1, null is not a missing key). PostgreSQL: JSONB containment (``@>``); SQLite:
    ``json_type`` and ``json_extract`` per key. None of it when ``wanted`` is empty."""
    if not wanted:
        return []
    if dialect == "postgresql":
        return [column.op("@>")(sa.bindparam(None, dict(wanted), type_=JSONB()))]
    conditions = []
    for key, value in wanted.items():
        path = f'$."{key}"'  # keys are letters, digits, _ - . (memstore.metadata)
        kind = sa.func.json_type(column, path)
        if isinstance(value, bool):
            conditions.append(kind == ("true" if value else "false"))
        elif value is None:
            conditions.append(kind == "null")
        else:
            types = ("text",) if isinstance(value, str) else ("integer", "real")
            conditions += [kind.in_(types), sa.func.json_extract(column, path) == value]
    return conditions


def create_engine(url: str) -> sa.Engine:
    """An engine with sane settings for the backend: WAL and a busy timeout on SQLite."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return sa.create_engine(url, pool_pre_ping=True)


def shared_lock(engine: sa.Engine, name: str) -> Lock | None:
    """A lock for every process using the database, wherever it runs: PostgreSQL's
    advisory lock named ``name``. None for SQLite, whose processes share one machine
    and lock files instead."""
    return advisory_lock(engine, name) if engine.dialect.name == "postgresql" else None


def index_lock(engine: sa.Engine, uri: str) -> Lock | None:
    """Held around every write of the search index at ``uri``: PostgreSQL's advisory
    lock named after it; on SQLite, for an index at a URI (``s3://...``: no directory to
    hold a lock file), a lock file beside the database file. None: the index's own lock
    file in its directory (``memstore.index.lance.LOCK_FILE``)."""
    shared = shared_lock(engine, f"memstore index {uri}")
    if shared is not None or "://" not in uri:  # a local index directory
        return shared
    return _beside_sqlite(engine, ".index.lock")


def _advisory_key(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


def advisory_lock(engine: sa.Engine, name: str) -> Lock:
    """On PostgreSQL, a context manager factory holding the session advisory lock named
    ``name`` (shared by every process and machine using the database; released when
    the holder's connection drops)."""
    key = _advisory_key(name)

    @contextmanager
    def held() -> Iterator[None]:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": key})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": key})
                conn.commit()

    return held


#: TCP keepalives (seconds, count) of a lease's connection, set on the server's side:
#: without them a holder whose host crashed or lost the network keeps the lock until
#: the kernel's default (about two hours) gives its connection up.
LEASE_KEEPALIVES = {
    "tcp_keepalives_idle": 10,
    "tcp_keepalives_interval": 5,
    "tcp_keepalives_count": 4,
}


class AdvisoryLease:
    """A ``Lease`` on PostgreSQL: the session advisory lock named ``name``, taken with
    ``pg_try_advisory_lock`` on a connection kept for as long as it is held. The server
    drops it when that connection does: at once when the holder is killed, within about
    30 s (``LEASE_KEEPALIVES``) when its host crashed or lost the network."""

    def __init__(self, engine: sa.Engine, name: str) -> None:
        self._engine = engine
        self._key = _advisory_key(name)
        self._held: sa.Connection | None = None

    def hold(self) -> bool:
        if self._held is not None:
            try:  # the session lives, so its lock does
                self._held.execute(sa.text("SELECT 1"))
                self._held.commit()
                return True
            except sa.exc.DBAPIError:
                self._held.invalidate()  # never back to the pool
                self._held.close()
                self._held = None
                return False
        conn = self._engine.connect()
        taken = False
        try:
            taken = conn.execute(
                sa.text("SELECT pg_try_advisory_lock(:key)"), {"key": self._key}
            ).scalar_one()
            if taken:  # the server notices a holder gone silent (a crashed host) in ~30 s
                for setting, value in LEASE_KEEPALIVES.items():
                    conn.execute(sa.text(f"SET {setting} = {int(value)}"))
            conn.commit()
        except BaseException:
            if taken:  # never back to the pool holding the lock
                conn.invalidate()
            conn.close()
            raise
        if not taken:
            conn.close()
            return False
        self._held = conn
        return True

    def release(self) -> None:
        if self._held is None:
            return
        conn, self._held = self._held, None
        try:
            conn.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": self._key})
            conn.commit()
        except sa.exc.DBAPIError:
            conn.invalidate()  # the lock went with the session
        finally:
            conn.close()


def lease(engine: sa.Engine, name: str, suffix: str) -> Lease:
    """A ``Lease`` for every process using the database: PostgreSQL's advisory lock
    named ``name``; on a SQLite file, the lock file named after it plus ``suffix``; in
    memory, a lease this process always holds."""
    if engine.dialect.name == "postgresql":
        return AdvisoryLease(engine, name)
    database = engine.url.database
    if engine.dialect.name == "sqlite" and database and database != ":memory:":
        return FileLease(Path(f"{database}{suffix}"))
    return SoleLease()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    _write_ahead_log(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    # Deleted and overwritten content is zeroed, so an erase leaves no copy in the file.
    cursor.execute("PRAGMA secure_delete=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.close()


def busy(error: BaseException) -> bool:
    """Whether a SQLite error is another connection holding the lock (locked, busy)."""
    return "locked" in str(error) or "busy" in str(error)


@contextmanager
def busy_timeout(connection: sa.Connection, ms: int) -> Iterator[None]:
    """Within the block ``connection`` waits at most ``ms`` for a lock, not the pool's
    ``SQLITE_BUSY_TIMEOUT_MS``; after it, the pool's wait again, or the connection is
    dropped (none goes back to the pool waiting less)."""
    connection.exec_driver_sql(f"PRAGMA busy_timeout={ms}")
    try:
        yield
    finally:
        try:
            if connection.in_transaction():
                connection.rollback()
            connection.exec_driver_sql(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        except sa.exc.SQLAlchemyError:
            connection.invalidate()


def _write_ahead_log(cursor: sqlite3.Cursor) -> None:
    """Put the database in WAL mode. Switching takes an exclusive lock for which SQLite
    does not always wait (it answers "database is locked" at once when waiting could
    deadlock, e.g. while processes opening one new file hold shared locks), so a busy
    answer is retried until the busy timeout; a file already in WAL needs no switch."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


#: The newest revision in ``migrations/versions``. Opening a store compares the
#: database's revision with it and imports alembic only to migrate: alembic takes
#: ~0.15 s to import, which every command would pay. A test checks that it is
#: alembic's head.
SCHEMA_HEAD = "0012"
#: The table alembic records the database's revision in.
VERSION_TABLE = "alembic_version"


def alembic_config(connection: sa.Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str | None:
    """The newest revision, as alembic reads it from the migration scripts."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: sa.Engine) -> str | None:
    """The database's revision (None before its first migration)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(VERSION_TABLE):
            return None
        return conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


#: Held by a thread running alembic: its ``context`` and ``op`` are module globals, so
#: two migrations at once in one process (two new stores opened by two threads) would
#: run each other's scripts. The lock file or advisory lock only orders processes.
_ALEMBIC = threading.Lock()


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (a no-op when it is already there). Processes
    opening one new store at once take turns: the first migrates, the others find it
    done."""
    if revision == "head" and current_revision(engine) == SCHEMA_HEAD:
        return
    from alembic import command

    with _ALEMBIC, migration_lock(engine)():
        if revision == "head" and current_revision(engine) == SCHEMA_HEAD:
            return
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), revision)


def migration_lock(engine: sa.Engine) -> Lock:
    """Held while migrating: a lock file beside a SQLite file, an advisory lock on
    PostgreSQL."""
    return (
        shared_lock(engine, "memstore migrations")
        or _beside_sqlite(engine, ".migrate.lock")
        or nullcontext
    )


def _beside_sqlite(engine: sa.Engine, suffix: str) -> Lock | None:
    """A lock file named after a SQLite database file plus ``suffix`` (None for any
    other database, or SQLite in memory)."""
    database = engine.url.database
    if engine.dialect.name == "sqlite" and database and database != ":memory:":
        return file_lock(Path(f"{database}{suffix}"))
    return None


def downgrade(engine: sa.Engine, revision: str) -> None:
    from alembic import command

    with _ALEMBIC, engine.begin() as conn:
        command.downgrade(alembic_config(conn), revision)
