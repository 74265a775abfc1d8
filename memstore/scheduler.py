"""Running re-verification periodically with APScheduler.

Two ways: ``Store.start_reverifier(every=...)`` runs it on a background thread of
an embedded store (an in-memory job store: the job lives as long as the store);
``watch()`` is the standalone worker behind ``memstore reverify --watch``: a
blocking scheduler whose job store is a table (``apscheduler_jobs``) in the
store's own database, so the schedule survives restarts. Several workers may
watch one database; APScheduler may then start a run in more than one of them,
and the facts' leases make sure no fact is checked twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.blocking import BlockingScheduler

from memstore import db
from memstore.reverify import ReverifyReport

if TYPE_CHECKING:
    from memstore.store import Store

log = logging.getLogger(__name__)

JOBS_TABLE = "apscheduler_jobs"
JOB_PREFIX = "memstore-reverify:"


class BackgroundReverifier:
    """A store's in-process re-verification schedule (see ``Store.start_reverifier``)."""

    def __init__(self, store: Store, every: timedelta, options: dict[str, Any]) -> None:
        self.store = store
        self.every = every
        self.options = options
        self.runs = 0
        self.last_report: ReverifyReport | None = None
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._scheduler = BackgroundScheduler(
            jobstores={"default": MemoryJobStore()},
            executors={"default": ThreadPoolExecutor(1)},
            timezone=UTC,
        )

    @property
    def running(self) -> bool:
        return bool(self._scheduler.running)

    def start(self) -> None:
        self._scheduler.add_job(
            self.run_now,
            "interval",
            seconds=self.every.total_seconds(),
            next_run_time=datetime.now(UTC),
            id=JOB_PREFIX + self.store.namespace,
            max_instances=1,
            coalesce=True,
        )
        self._scheduler.start()

    def run_now(self) -> ReverifyReport | None:
        """One run, as the schedule would do it; errors are logged and kept, not raised."""
        with self._lock:
            try:
                report = self.store.reverify(**self.options)
            except Exception as exc:  # a failed run must not kill the schedule
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("re-verification of %s failed", self.store.namespace)
                return None
            self.runs += 1
            self.last_report, self.last_error = report, None
            return report

    def stop(self, wait: bool = True) -> None:
        if self._scheduler.running:
            self._scheduler.shutdown(wait=wait)


#: Set by the process that runs ``watch()``: called with each run's report.
_reporter: Callable[[ReverifyReport], None] | None = None
#: Set by the process that runs ``watch()``: opens a namespace's store (settings applied).
_opener: Callable[[str], Store] | None = None
_stores: dict[tuple[str, str], Store] = {}
_stores_lock = threading.Lock()


def run_job(url: str, namespace: str, options: dict[str, Any]) -> None:
    """The persisted job: one re-verification run of ``namespace`` (stores stay open)."""
    from memstore.store import Store

    with _stores_lock:
        store = _stores.get((url, namespace))
        if store is None:
            opened = _opener(namespace) if _opener is not None else Store(url, namespace)
            store = _stores[(url, namespace)] = opened
    report = store.reverify(**options)
    if _reporter is not None:
        _reporter(report)


def watch(
    url: str,  # a data directory or a database URL
    namespaces: Sequence[str],
    every: timedelta,
    options: dict[str, Any],
    *,
    reporter: Callable[[ReverifyReport], None] | None = None,
    opener: Callable[[str], Store] | None = None,
) -> None:
    """Run re-verification of ``namespaces`` every ``every`` until interrupted.

    The schedule lives in the database's ``apscheduler_jobs`` table; one job per
    namespace, replaced (not duplicated) when a worker starts again. ``opener`` opens
    a namespace's store (default: ``Store(url, namespace)`` with the default gate).
    """
    global _reporter, _opener
    _reporter, _opener = reporter, opener
    engine = db.create_engine(db.database_url(url)[0])
    scheduler = BlockingScheduler(
        jobstores={"default": SQLAlchemyJobStore(engine=engine, tablename=JOBS_TABLE)},
        executors={"default": ThreadPoolExecutor(1)},
        timezone=UTC,
    )
    for namespace in namespaces:
        scheduler.add_job(
            "memstore.scheduler:run_job",
            "interval",
            seconds=every.total_seconds(),
            next_run_time=datetime.now(UTC),
            id=JOB_PREFIX + namespace,
            name=f"re-verify {namespace}",
            kwargs={"url": url, "namespace": namespace, "options": options},
            replace_existing=True,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,
        )
    try:
        scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        if scheduler.running:
            scheduler.shutdown(wait=True)
        with _stores_lock:
            for store in _stores.values():
                store.close()
            _stores.clear()
        engine.dispose()
