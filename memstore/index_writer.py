"""Index writes on a background thread (``Store(index_writes="background")``).

A write then commits its facts and their outbox rows to SQL and returns; this thread
applies the namespace's queued changes to the search index, in batches, at the
embedder's own rate. It wakes when a write says so and every ``INTERVAL`` seconds
(changes another process queued), so a search sees a write once its batch is in,
normally well within a second. SQL stays the truth: what the thread has not applied
stays queued in the outbox, and the next open, ``Store.sync_index()`` or the thread's
next turn applies it; a failed turn is logged and retried.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

#: Seconds between two turns of the thread when no write wakes it.
INTERVAL = 0.5


class IndexWriter:
    """A daemon thread that calls ``apply`` (apply the queued changes; it logs its own
    failures) when woken and every ``interval`` seconds, until ``stop``."""

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

    def stop(self, timeout: float | None = None) -> None:
        """Finish the turn under way, apply what is still queued, and end the thread."""
        self._stopping.set()
        self._woken.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            self._woken.wait(self._interval)
            self._woken.clear()
            try:
                self._apply()
            except Exception:  # the thread must outlive any one turn
                log.exception("a background turn of the search index failed; retrying")
            if self._stopping.is_set():
                return
