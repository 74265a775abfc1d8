"""Index writes on a background thread (``Store(index_writes="background")``).

A write then commits its facts and their outbox rows to SQL and returns; this thread
applies the namespace's queued changes to the search index, in batches, at the
embedder's own rate. It wakes when a write says so and every ``INTERVAL`` seconds
(changes another process queued), so a search sees a write once its batch is in,
normally well within a second. SQL stays the truth: what the thread has not applied
stays queued in the outbox, and the next open, ``Store.sync_index()`` or the thread's
next turn applies it. A failed turn is logged once per run of failures and retried
after a wait that doubles each time, up to ``MAX_BACKOFF`` seconds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

#: Seconds between two turns of the thread when no write wakes it.
INTERVAL = 0.5
#: The longest wait before a retry after failed turns (the wait doubles from ``INTERVAL``).
MAX_BACKOFF = 30.0
#: Seconds ``stop`` waits for the last turn: on PostgreSQL a turn first waits for the
#: index's advisory lock, which another process may hold for as long as it likes.
STOP_TIMEOUT = 60.0


class IndexWriter:
    """A daemon thread that calls ``apply`` (apply the queued changes; raises on failure)
    when woken and every ``interval`` seconds, until ``stop``."""

    def __init__(self, apply: Callable[[], None], name: str, interval: float = INTERVAL) -> None:
        self._apply = apply
        self._interval = interval
        self._woken = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Apply what is queued soon (a write just queued something)."""
        self._woken.set()

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Finish the turn under way, apply what is still queued, and end the thread;
        wait at most ``timeout`` seconds, then leave the rest queued and say so."""
        self._stopping.set()
        self._woken.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning(
                "%s: the last turn did not end within %.0f s (waiting for the search "
                "index's write lock?); what it has not applied stays queued in the SQL "
                "outbox, and the next memstore.open() of this database applies it",
                self._thread.name,
                timeout,
            )

    def _run(self) -> None:
        wait = self._interval
        failing = False
        while True:
            if failing:  # back off: only stop cuts the wait short, not new writes
                self._stopping.wait(wait)
            else:
                self._woken.wait(wait)
            self._woken.clear()
            # Read before the turn: the thread ends only after a turn that began once
            # stop was asked, so that turn sees every change queued before it.
            stopping = self._stopping.is_set()
            try:
                self._apply()
            except Exception:  # the thread must outlive any one turn
                if stopping:  # the store is closing (or closed): nothing retries now
                    log.warning(
                        "%s: the last turn before stopping failed; what it did not apply "
                        "stays queued in the SQL outbox, and the next memstore.open() of "
                        "this database applies it",
                        self._thread.name,
                        exc_info=True,
                    )
                    return
                if not failing:
                    log.warning(
                        "%s: applying queued search-index changes failed; they stay "
                        "queued and are retried, less often while this goes on "
                        "(logged once until a turn succeeds)",
                        self._thread.name,
                        exc_info=True,
                    )
                wait = min(wait * 2, MAX_BACKOFF)
                failing = True
            else:
                if failing:
                    log.info("%s: the search index caught up", self._thread.name)
                wait, failing = self._interval, False
            if stopping:
                return
