"""Running re-verification periodically with APScheduler.

Two ways: ``Store.start_reverifier(every=...)`` runs it on a background thread of
an embedded store (``memstore.reverify.background``: the job lives as long as the store);
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
from typing import Any, Protocol

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.blocking import BlockingScheduler

from memstore.reverify.background import JOB_PREFIX, BackgroundReverifier, Reverifiable
from memstore.reverify.run import ReverifyReport
from memstore.storage import db

log = logging.getLogger(__name__)

JOBS_TABLE = "apscheduler_jobs"

__all__ = ["JOBS_TABLE", "JOB_PREFIX", "BackgroundReverifier", "run_job", "watch"]


class OpenStore(Reverifiable, Protocol):
    """A store ``watch()`` opened: it re-verifies, and is closed when the watch ends."""

    def close(self) -> None: ...


#: Set by the process that runs ``watch()``: called with each run's report.
_reporter: Callable[[ReverifyReport], None] | None = None
#: Set by the process that runs ``watch()``: opens a namespace's store (settings applied).
_opener: Callable[[str], OpenStore] | None = None
_stores: dict[tuple[str, str], OpenStore] = {}
_stores_lock = threading.Lock()


def run_job(url: str, namespace: str, options: dict[str, Any]) -> None:
    """The persisted job: one re-verification run of ``namespace`` (stores stay open)."""
    with _stores_lock:
        store = _stores.get((url, namespace))
        if store is None:
            if _opener is None:
                raise RuntimeError("run_job runs inside watch(), which sets the opener")
            opened = _opener(namespace)
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
    opener: Callable[[str], OpenStore],
) -> None:
    """Run re-verification of ``namespaces`` every ``every`` until interrupted.

    The schedule lives in the database's ``apscheduler_jobs`` table; one job per
    namespace, replaced (not duplicated) when a worker starts again. ``opener`` opens
    a namespace's store (``memstore.open``, or ``Settings.open``: the settings applied).
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
            "memstore.reverify.scheduler:run_job",
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
