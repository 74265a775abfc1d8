"""SQLite's query-planner statistics (``ANALYZE``), kept current as a store grows.

Without statistics SQLite's planner guesses, and for a read of ``id IN (...)`` within
a namespace (a neighborhood's facts, a page to hydrate) it prefers the (namespace,
status) index, scanning the namespace, to primary-key lookups: a 2-hop neighborhood
at 100,000 facts took 141 ms p50 before ``ANALYZE`` and 71 ms after (measured beside
another run). So a store on a SQLite file analyzes it once its facts table is worth
planning for and again whenever that table has grown a few times over, a bounded
``ANALYZE`` (``analysis_limit``: about 20 ms at 100,000 facts, where a full one takes
170). A connection keeps the statistics it loaded until the schema changes, which a
later ``ANALYZE`` does not do, so pooled connections that loaded older ones are
replaced at their next checkout. Not for an in-memory database (replacing its
connection would lose it) or a file opened read-only, nor PostgreSQL, whose
autovacuum analyzes on its own.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import sqlalchemy as sa

from memstore.storage import db

log = logging.getLogger(__name__)

#: Rows ``ANALYZE`` samples per index (SQLite's ``analysis_limit``). Sampled, a
#: namespace seems to hold about this many facts, so it must stay above the ids of one
#: ``IN`` list (``IN_LIST_CHUNK``) for their lookups to look cheaper than its scan.
ANALYSIS_LIMIT = 10_000
#: Facts (rows of the table, every namespace) below which guesses serve as well.
LEAST_FACTS = 1000
#: The statistics are refreshed once the facts table has this many times the rows it
#: had when they were taken.
GROWTH = 4
#: Write transactions between two looks at the facts table's size.
CHECK_EVERY = 16
#: Milliseconds ``ANALYZE`` waits for another writer before giving up until next time.
ANALYZE_WAIT_MS = 200

#: The highest rowid of facts: its rows ever written, read from the end of one b-tree.
_ROWS = sa.text("SELECT max(rowid) FROM facts")
_HAS_STATISTICS = sa.text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")
_STATISTICS = sa.text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'facts' ORDER BY idx")


def on_file(engine: sa.Engine) -> bool:
    """Whether ``engine`` is SQLite on a file it may write (not in memory, not opened
    read-only)."""
    url = engine.url
    database = url.database or ""
    memory = database in ("", ":memory:") or ":memory:" in database
    memory = memory or url.query.get("mode") == "memory" or url.query.get("vfs") == "memdb"
    read_only = url.query.get("mode") == "ro" or url.query.get("immutable") == "1"
    return url.get_backend_name() == "sqlite" and not memory and not read_only


class PlannerStatistics:
    """Keeps one SQLite file's planner statistics current (elsewhere, does nothing).
    ``refresh`` analyzes when they are missing or stale; ``wrote`` counts write
    transactions and refreshes every ``CHECK_EVERY``. Best effort: a failure (a busy
    or read-only database) is logged and tried again at the next look."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.enabled = on_file(engine)
        #: The facts table's statistics as last read (its ``sqlite_stat1`` rows).
        self.seen: tuple[str, ...] = ()
        #: The facts table's highest rowid at this process's last ``ANALYZE`` (rowids
        #: only grow: deleted facts do not make it look grown).
        self.analyzed_at = 0
        self._writes = 0
        self._lock = threading.Lock()
        if self.enabled:
            sa.event.listen(engine, "connect", self._stamp)
            sa.event.listen(engine, "checkout", self._checkout)

    def wrote(self) -> None:
        """Count a committed write transaction; every ``CHECK_EVERY``, ``refresh``
        (unless another thread is at it)."""
        if not self.enabled:
            return
        self._writes += 1  # a count lost to a race only delays a look
        if self._writes % CHECK_EVERY == 0:
            self.refresh(wait=False)

    def refresh(self, wait: bool = True) -> bool:
        """Analyze when the facts table has at least ``LEAST_FACTS`` rows and no
        statistics, or ``GROWTH`` times the rows it had at the last ``ANALYZE``; returns
        whether it did. Statistics another process wrote count as taken (this
        process's connections that loaded older ones are replaced)."""
        if not self.enabled or not self._lock.acquire(blocking=wait):
            return False
        try:
            return self._refresh()
        except Exception as exc:  # only speed is at stake: never fail the caller
            level = logging.DEBUG if db.busy(exc) else logging.WARNING  # next look retries
            log.log(level, "could not refresh SQLite's planner statistics: %s", exc)
            return False
        finally:
            self._lock.release()

    def _refresh(self) -> bool:
        with self.engine.connect() as connection:
            rows = connection.execute(_ROWS).scalar() or 0
            statistics = _read(connection)
            if not self.analyzed_at and statistics:  # taken by another process
                self.analyzed_at = max(int(s.split()[0]) for s in statistics)
            grown = rows >= GROWTH * self.analyzed_at if statistics else True
            analyze = rows >= LEAST_FACTS and grown
            if analyze:
                with db.busy_timeout(connection, ANALYZE_WAIT_MS):
                    connection.exec_driver_sql(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}")
                    connection.exec_driver_sql("ANALYZE")
                    connection.commit()
                self.analyzed_at = rows
                statistics = _read(connection)
            if statistics != self.seen:
                self.seen = statistics  # connections that loaded others are replaced
                if analyze:  # but this one, which loaded them by analyzing
                    connection.info["planner_statistics"] = statistics
        return analyze

    def _stamp(self, _dbapi_connection: Any, record: Any) -> None:
        """A new connection loads the statistics there are now."""
        record.info["planner_statistics"] = self.seen

    def _checkout(self, _dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        """A pooled connection that loaded older statistics is replaced (the pool
        opens a new one when this raises ``DisconnectionError``)."""
        if record.info.get("planner_statistics", self.seen) != self.seen:
            raise sa.exc.DisconnectionError("SQLite's planner statistics changed")


def _read(connection: sa.Connection) -> tuple[str, ...]:
    """The facts table's ``sqlite_stat1`` rows (none before the first ``ANALYZE``)."""
    if connection.execute(_HAS_STATISTICS).first() is None:
        return ()
    return tuple(connection.execute(_STATISTICS).scalars())
