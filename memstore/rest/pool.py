"""The REST server's pool of open stores, one per namespace in use: bounded, least
recently used first out, idle stores closed, closing off the request threads."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from memstore.config import Settings
from memstore.errors import MemstoreError
from memstore.store import Store

log = logging.getLogger("memstore.rest")


class _Entry:
    """One namespace's place in the pool: its store (None while it opens) and leases."""

    __slots__ = ("idle_since", "leases", "store")

    def __init__(self) -> None:
        self.store: Store | None = None
        self.leases = 1
        self.idle_since = 0.0


class NamespaceStores:
    """The stores of the namespaces in use: a bounded pool shared by every request.

    A request leases its namespace's store (``with stores.lease(ns) as store``),
    opening it on first use. At most ``server.max_open_stores`` stay open: to make room,
    the least recently used store that no request holds is closed; and a store no
    request has used for ``server.store_idle_timeout`` is closed by ``sweep()`` (a
    background thread calls it once ``start()`` ran). A leased store is never closed.
    When every open store is leased, a new namespace opens anyway rather than waiting,
    and the pool shrinks back to the limit as those requests end.

    With ``scheduler.enabled`` each open store re-verifies its facts in the background
    (until it is closed). Stores taken out of the pool are closed by the pool's own
    closer thread, in order, never on a request's thread: closing waits for the
    namespace's re-verification run, and a request must not wait for another
    namespace's. A namespace whose old store is still closing is reopened once that
    close is done. ``close()`` closes them all and joins the closer (the app's
    shutdown calls it); ``settle()`` waits until every store handed off is closed.
    ``clock`` (seconds, monotonic) is what idle times are measured with.
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.max_open = settings.server.max_open_stores
        timeout = settings.server.store_idle_timeout
        #: Seconds a store may stay unused before ``sweep()`` closes it; None: never.
        self.idle_timeout = None if timeout is None else timeout.total_seconds()
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # least recently used first
        self._cond = threading.Condition()
        self._closed = False
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        #: Stores handed to the closer thread, and per namespace how many are not closed yet.
        self._to_close: queue.SimpleQueue[Store | None] = queue.SimpleQueue()
        self._closing: dict[str, int] = {}
        self._closer: threading.Thread | None = None
        self._closer_joined = False

    @contextmanager
    def lease(self, namespace: str) -> Iterator[Store]:
        """The namespace's Store (opened if needed), kept open until the block ends."""
        entry = self._acquire(namespace)
        try:
            assert entry.store is not None
            yield entry.store
        finally:
            self._release(namespace, entry)

    def _acquire(self, namespace: str) -> _Entry:
        with self._cond:
            while True:
                if self._closed:
                    raise MemstoreError("the server is shutting down")
                entry = self._entries.get(namespace)
                if entry is None and namespace not in self._closing:
                    break
                if entry is None:
                    self._cond.wait()  # its previous store is still closing
                    continue
                if entry.store is not None:
                    entry.leases += 1
                    self._entries.move_to_end(namespace)
                    return entry
                self._cond.wait()  # another request is opening it
            entry = self._entries[namespace] = _Entry()
            surplus = self._surplus()
        self._close_later(surplus)  # before opening: never more files open than needed
        try:
            store = self._open(namespace)
        except BaseException:
            with self._cond:
                del self._entries[namespace]
                self._cond.notify_all()
            raise
        with self._cond:
            entry.store = store
            self._cond.notify_all()
            if not self._closed:
                return entry
            self._entries.pop(namespace, None)
        self._close([store])
        raise MemstoreError("the server is shutting down")

    def _release(self, namespace: str, entry: _Entry) -> None:
        with self._cond:
            entry.leases -= 1
            if entry.leases == 0:
                entry.idle_since = self._clock()
            if self._entries.get(namespace) is entry:
                self._entries.move_to_end(namespace)
            surplus = self._surplus()
        self._close_later(surplus)

    def _surplus(self) -> list[Store]:
        """Take the least recently used idle stores out while over the limit (locked)."""
        taken: list[Store] = []
        if len(self._entries) <= self.max_open:
            return taken
        for namespace, entry in list(self._entries.items()):
            if len(self._entries) <= self.max_open:
                break
            if entry.leases == 0 and entry.store is not None:
                del self._entries[namespace]
                taken.append(entry.store)
        return taken

    def _open(self, namespace: str) -> Store:
        store = self.settings.open(namespace)
        scheduler = self.settings.scheduler
        if scheduler.enabled:
            try:
                store.start_reverifier(every=scheduler.every, **scheduler.options())
            except BaseException:
                store.close()
                raise
        log.info("opened namespace %s", namespace)
        return store

    def _close_later(self, stores: list[Store]) -> None:
        """Hand ``stores`` to the closer thread (started on first use); after shutdown
        has joined it, close them here."""
        if not stores:
            return
        with self._cond:
            late = self._closer_joined
            if not late:
                for store in stores:
                    self._closing[store.namespace] = self._closing.get(store.namespace, 0) + 1
                    self._to_close.put(store)
                if self._closer is None:
                    self._closer = threading.Thread(
                        target=self._closing_loop, name="memstore-store-closer", daemon=True
                    )
                    self._closer.start()
        if late:
            self._close(stores)

    def _closing_loop(self) -> None:
        while (store := self._to_close.get()) is not None:
            self._close([store])
            with self._cond:
                left = self._closing.pop(store.namespace) - 1
                if left:
                    self._closing[store.namespace] = left
                self._cond.notify_all()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every store handed to the closer is closed; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._closing, timeout)

    @staticmethod
    def _close(stores: list[Store]) -> None:
        for store in stores:
            try:
                store.close()
            except Exception:
                log.exception("closing the store of namespace %s failed", store.namespace)
            else:
                log.info("closed namespace %s", store.namespace)

    def sweep(self, now: float | None = None) -> int:
        """Close every store unused for ``idle_timeout`` (at ``now``, default the clock's
        time) that no request holds; returns how many were closed."""
        if self.idle_timeout is None:
            return 0
        now = self._clock() if now is None else now
        with self._cond:
            idle = [
                namespace
                for namespace, entry in self._entries.items()
                if entry.leases == 0
                and entry.store is not None
                and now - entry.idle_since >= self.idle_timeout
            ]
            stores = [self._entries.pop(namespace).store for namespace in idle]
        self._close_later([store for store in stores if store is not None])
        return len(idle)

    def start(self) -> None:
        """Sweep idle stores on a background thread until ``close()``."""
        if self.idle_timeout is None or self._sweeper is not None:
            return
        every = min(max(self.idle_timeout / 2, 0.5), 60.0)

        def sweeping() -> None:
            while not self._stop.wait(every):
                try:
                    self.sweep()
                except Exception:  # never let one bad sweep stop the sweeper
                    log.exception("closing idle stores failed")

        self._sweeper = threading.Thread(target=sweeping, name="memstore-idle-stores", daemon=True)
        self._sweeper.start()

    def namespaces(self) -> list[str]:
        """The namespaces whose stores are open now."""
        with self._cond:
            return sorted(ns for ns, entry in self._entries.items() if entry.store is not None)

    def leased(self, namespace: str) -> int:
        """How many requests hold the namespace's store now."""
        with self._cond:
            entry = self._entries.get(namespace)
            return 0 if entry is None else entry.leases

    def close(self) -> None:
        """Close every store (stopping their re-verifiers) and join the closer thread;
        later leases fail."""
        self._stop.set()
        with self._cond:
            self._closed = True
            stores = [e.store for e in self._entries.values() if e.store is not None]
            self._entries.clear()
            self._cond.notify_all()
        if self._sweeper is not None:
            self._sweeper.join(timeout=30)
        self._close(stores)
        with self._cond:
            self._closer_joined = True  # from now on _close_later closes in place
            closer = self._closer
        if closer is not None:
            self._to_close.put(None)
            closer.join()
