"""Index writes on a background thread (``Store(index_writes="background")``, and
``memstore index-worker``).

A write then commits its facts and their outbox rows to SQL and returns; one thread
among every process that shares the database applies the queued changes of every
namespace to the search index, in batches (one index commit for up to
``outbox.APPLY_BATCH`` rows), at the embedder's own rate. Which thread is elected
through a lease (``memstore.storage.locks.Lease``: PostgreSQL's advisory lock, or a
lock file beside a SQLite file): the others follow, asking for the lease every
``FOLLOW_INTERVAL`` seconds, and one of them takes over within that time when the
leader stops or dies. The leader wakes when a write of its process says so and every
``INTERVAL`` seconds (changes other processes queued), so a search sees a write once
its batch is in, normally within a second or two. SQL stays the truth: what no thread
has applied stays queued in the outbox, and the next open, ``Store.sync_index()`` or
the leader's next turn applies it. A failed turn is logged once per run of failures and
retried after a wait that doubles each time, up to ``MAX_BACKOFF`` seconds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

#: Seconds between two turns of the thread when no write wakes it.
INTERVAL = 0.5
#: Seconds between two asks for the lease while another process holds it (so another
#: takes over within about this long of the leader's death).
FOLLOW_INTERVAL = 2.0
#: How far behind SQL the index may fall while writes go on, in seconds since the oldest
#: queued change (of any namespace) was queued: a write that finds it older waits for
#: the applier to catch up (at most ``THROTTLE_WAIT`` seconds), so writers slow to the
#: index's pace instead of leaving it ever further behind. A bound in changes would be
#: one in time only at one applier rate (2,000 changes were 37 s at 100,000 facts on S3
#: here).
MAX_BEHIND = 3.0
#: The longest a write waits for the applier; past it (no applier running?) it returns,
#: says so in the log, and writes stop waiting for ``THROTTLE_PAUSE`` seconds.
THROTTLE_WAIT = 30.0
THROTTLE_PAUSE = 60.0
#: The longest wait before a retry after failed turns (the wait doubles from ``INTERVAL``).
MAX_BACKOFF = 30.0
#: Seconds ``stop`` waits for the last turn: on PostgreSQL a turn first waits for the
#: index's advisory lock, which another process may hold for as long as it likes.
STOP_TIMEOUT = 60.0


class IndexWriter:
    """A daemon thread that calls ``apply`` (apply the queued changes when this process
    leads; False when another does; raises on failure) when woken and every ``interval``
    seconds, until ``stop``; while another leads, every ``follow`` seconds."""

    def __init__(
        self,
        apply: Callable[[], bool],
        name: str,
        interval: float = INTERVAL,
        follow: float = FOLLOW_INTERVAL,
    ) -> None:
        self._apply = apply
        self._interval = interval
        self._follow = follow
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
        failing = leading = False
        while True:
            # Read before the turn: the thread ends only after a turn that began once
            # stop was asked, so that turn sees every change queued before it.
            stopping = self._stopping.is_set()
            self._woken.clear()
            try:
                leading = self._apply()
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
            if failing or not leading:  # back off, or follow: only stop cuts it short
                self._stopping.wait(wait if failing else self._follow)
            else:
                self._woken.wait(wait)
