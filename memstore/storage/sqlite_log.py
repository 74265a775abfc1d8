"""Emptying SQLite's write-ahead log after an erase, so erased text leaves the disk.

An erase commits into the ``-wal`` file first; until a checkpoint copies it into
the database file and truncates the log, the erased pages stay readable there.
PostgreSQL needs none of this.
"""

from __future__ import annotations

import logging
import time

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from memstore.storage import db

log = logging.getLogger(__name__)

#: After an erase (SQLite), how often emptying the write-ahead log is tried while a
#: reader holds it, and how many seconds apart (about one second in all).
LOG_CHECKPOINT_TRIES = 20
LOG_CHECKPOINT_WAIT = 0.05


class ErasedTextLog:
    """The write-ahead log of one engine; ``pending`` while it may still hold erased text."""

    def __init__(self, engine: sa.Engine, namespace: str) -> None:
        self.engine = engine
        self.namespace = namespace
        self.pending = False

    def after_erase(self) -> bool:
        """Fold the log back into the database file and empty it (SQLite only). True when
        it could not be emptied (a reader held it): the erased text may stay in the
        ``-wal`` file until the next checkpoint, which the next erase and ``close`` retry."""
        if self.engine.dialect.name != "sqlite":
            return False
        self.pending = not self.checkpoint()
        if self.pending:
            log.warning(
                "erase in %r: another connection is reading the SQLite database, so its "
                "write-ahead log (%s-wal) still holds copies of the erased text; they go "
                "at the next checkpoint (the next erase, or when the store closes)",
                self.namespace,
                self.engine.url.database,
            )
        return self.pending

    def before_close(self) -> None:
        """Retry a checkpoint an erase left pending, or say that SQLite will do it."""
        if self.pending and self.checkpoint():
            self.pending = False
        elif self.pending:
            log.warning(
                "closing %r: the SQLite write-ahead log still holds copies of erased "
                "text (a reader holds it); SQLite empties it when its last connection "
                "closes",
                self.namespace,
            )

    def checkpoint(self) -> bool:
        """``PRAGMA wal_checkpoint(TRUNCATE)``, retried ``LOG_CHECKPOINT_TRIES`` times
        ``LOG_CHECKPOINT_WAIT`` seconds apart while a reader keeps it busy; True once
        the log is copied into the database file and truncated to nothing."""
        try:
            # Not the pool's 30 s busy handler per try: these tries are the waiting.
            with self.engine.connect() as conn, db.busy_timeout(conn, 0):
                for attempt in range(LOG_CHECKPOINT_TRIES):
                    if attempt:
                        time.sleep(LOG_CHECKPOINT_WAIT)
                    row = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").one()
                    if row[0] == 0:  # (busy, log frames, checkpointed frames)
                        return True
        except SQLAlchemyError:
            log.warning("could not checkpoint the SQLite log after an erase", exc_info=True)
        return False
