"""Re-verification on a background thread of one process (``Store.start_reverifier``).

An in-memory APScheduler job that lives as long as the store: it calls the
store's ``reverify`` every so often and keeps the last report or error. The
standalone worker with a persisted schedule is ``memstore.reverify.scheduler.watch``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.background import BackgroundScheduler

from memstore.reverify.run import ReverifyReport

#: How often ``Store.start_reverifier()`` looks for due facts.
DEFAULT_REVERIFY_EVERY = timedelta(minutes=5)

# The logger the schedules have always logged to (this class lived in memstore.reverify.scheduler).
log = logging.getLogger("memstore.reverify.scheduler")

JOB_PREFIX = "memstore-reverify:"


class Reverifiable(Protocol):
    """What a schedule runs: a namespace's ``reverify`` (a ``Store``)."""

    @property
    def namespace(self) -> str: ...

    @property
    def reverify(self) -> Callable[..., ReverifyReport]: ...


class BackgroundReverifier:
    """A store's in-process re-verification schedule (see ``Store.start_reverifier``)."""

    def __init__(self, store: Reverifiable, every: timedelta, options: dict[str, Any]) -> None:
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
        """Whether the schedule is running."""
        return bool(self._scheduler.running)

    def start(self) -> None:
        """Start the schedule; the first run starts now."""
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
        """Stop the schedule (``wait``: let a run in progress finish)."""
        if self._scheduler.running:
            self._scheduler.shutdown(wait=wait)
