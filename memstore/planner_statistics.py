"""SQLite's query-planner statistics (``ANALYZE``), kept current as a store grows.

Without statistics SQLite's planner guesses, and for a read of ``id IN (...)`` within
a namespace (a neighborhood's facts, a page to hydrate) it prefers the (namespace,
status) index, scanning the namespace, to primary-key lookups: a 2-hop neighborhood
at 100,000 facts took 141 ms p50 before ``ANALYZE`` and 68 ms after. So a store
analyzes the database once its facts table is worth planning for and again whenever
that table has grown a few times over, a bounded ``ANALYZE`` (``analysis_limit``:
about 20 ms at 100,000 facts, where a full one takes 170). A SQLite connection
loads statistics when it opens, so pooled connections opened before new statistics
are replaced at their next checkout. PostgreSQL's autovacuum analyzes on its own:
nothing here runs there.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

log = logging.getLogger(__name__)

#: Rows ``ANALYZE`` samples per index (SQLite's ``analysis_limit``). Sampled, a
#: namespace seems to hold about this many facts, so it must stay above the ids of one
#: ``IN`` list (``IN_LIST_CHUNK``) for their lookups to look cheaper than its scan.
ANALYSIS_LIMIT = 10_000
#: Facts (rows of the table, every namespace) below which guesses serve as well.
LEAST_FACTS = 1000
#: The statistics are refreshed once the facts table holds this many times the rows
#: they were taken at.
GROWTH = 4
#: Write transactions between two looks at the facts table's size.
CHECK_EVERY = 16

_ROWS = sa.text("SELECT max(rowid) FROM facts")
_HAS_STATISTICS = sa.text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")
_STATISTICS = sa.text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'facts' ORDER BY idx")


class PlannerStatistics:
    """Keeps one SQLite engine's planner statistics current (on another database,
    does nothing). ``refresh`` analyzes when they are missing or stale; ``wrote``
    counts write transactions and refreshes every ``CHECK_EVERY``."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.enabled = engine.dialect.name == "sqlite"
        #: The facts table's statistics as last read (its ``sqlite_stat1`` rows).
        self.seen: tuple[str, ...] = ()
        self._writes = 0
        self._lock = threading.Lock()
        if self.enabled:
            sa.event.listen(engine, "connect", self._stamp)
            sa.event.listen(engine, "checkout", self._checkout)

    def wrote(self) -> None:
        """Count a committed write transaction; every ``CHECK_EVERY``, ``refresh``."""
        if not self.enabled:
            return
        with self._lock:
            self._writes += 1
            due = self._writes % CHECK_EVERY == 0
        if due:
            self.refresh()

    def refresh(self) -> bool:
        """Analyze when the facts table has reached ``LEAST_FACTS`` rows with no
        statistics, or ``GROWTH`` times the rows of its statistics; returns whether it
        did. Statistics another process wrote are taken up too. A failure (a locked or
        read-only database) is logged, never raised: the statistics only speed reads."""
        if not self.enabled:
            return False
        with self._lock:
            try:
                return self._refresh()
            except (SQLAlchemyError, ValueError) as exc:
                log.warning("could not refresh SQLite's planner statistics: %s", exc)
                return False

    def _refresh(self) -> bool:
        with self.engine.connect() as connection:
            rows = connection.execute(_ROWS).scalar() or 0
            statistics = _read(connection)
            taken_at = max((int(s.split()[0]) for s in statistics), default=0)
            analyze = rows >= LEAST_FACTS and rows >= GROWTH * taken_at
            if analyze:
                connection.exec_driver_sql(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}")
                connection.exec_driver_sql("ANALYZE")
                connection.commit()
                statistics = _read(connection)
        if statistics != self.seen:
            self.seen = statistics  # connections opened before now reconnect
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
