"""The one base class every verifier backend implements (like httpx's BaseTransport),
and what the Gate hands a backend call: a ``CallControl`` (stop early, time the wait for
the model) and the fair ``ModelLock`` backends guard their model with.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Self


class Cancelled(Exception):
    """The Gate gave up on this backend call (its deadline passed); the work stopped early."""


class InputRequired(Exception):
    """The backend needs answers from outside this process before it can estimate: the
    MCP host's model, asked over a protocol that cannot wait mid-call for the client
    (``memstore.mcp.host``). The Gate raises it instead of making it a verdict, so the
    caller can return the questions, and call again once they are answered."""


class CallControl:
    """What the Gate tells one ``estimate_many`` call, and what the call tells it back.

    ``cancelled`` turns true when the Gate has stopped waiting; a backend checks it
    (``check()``) between mini-batches and stops, so abandoned work releases the model
    within one mini-batch. Time spent inside ``waiting()`` (queued for the model behind
    other calls, or loading it) is not the call's own work: the Gate's deadline does
    not count it, and bounds it separately.
    """

    def __init__(self) -> None:
        self._cancel = threading.Event()
        self._mutex = threading.Lock()
        self._waited = 0.0
        self._waiting_since: float | None = None
        self._depth = 0
        self._wakers: set[threading.Event] = set()
        # Bumped and notified on every transition the Gate's watcher must see: the call
        # starts waiting for the model, gets it (stops waiting), or finishes.
        self._changed = threading.Condition(self._mutex)
        self._changes = 0

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the call to stop; wakes it if it is queued for the model."""
        self._cancel.set()
        with self._mutex:
            wakers = list(self._wakers)
        for event in wakers:
            event.set()

    def check(self) -> None:
        """Raise Cancelled if the Gate has given up on this call."""
        if self._cancel.is_set():
            raise Cancelled("the gate stopped waiting for this call")

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Time the block as waiting for the model, not as the call's own work."""
        with self._mutex:
            if self._depth == 0:
                self._waiting_since = time.monotonic()
                self._notify()
            self._depth += 1
        try:
            yield
        finally:
            with self._mutex:
                self._depth -= 1
                if self._depth == 0 and self._waiting_since is not None:
                    self._waited += time.monotonic() - self._waiting_since
                    self._waiting_since = None
                    self._notify()

    def waited(self) -> float:
        """Seconds spent waiting so far, the wait in progress included."""
        with self._mutex:
            ongoing = 0.0 if self._waiting_since is None else time.monotonic() - self._waiting_since
            return self._waited + ongoing

    @property
    def is_waiting(self) -> bool:
        return self._waiting_since is not None

    def changes(self) -> int:
        """How many transitions (wait started, wait ended, finished) happened so far."""
        with self._mutex:
            return self._changes

    def finished(self) -> None:
        """Tell whoever watches this call that it has finished (answered or failed)."""
        with self._mutex:
            self._notify()

    def wait_for_change(self, seen: int, timeout: float) -> bool:
        """Block until a transition after ``seen`` (``changes()``) or ``timeout`` seconds;
        True if one happened."""
        with self._changed:
            return self._changed.wait_for(lambda: self._changes != seen, timeout)

    def _notify(self) -> None:
        """Record a transition and wake the watcher; the caller holds ``_mutex``."""
        self._changes += 1
        self._changed.notify_all()

    def _add_waker(self, event: threading.Event) -> None:
        with self._mutex:
            self._wakers.add(event)
        if self.cancelled:
            event.set()

    def _drop_waker(self, event: threading.Event) -> None:
        with self._mutex:
            self._wakers.discard(event)


class _Waiter:
    __slots__ = ("event", "granted")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.granted = False


class ModelLock:
    """A first-come, first-served lock around one model.

    Backends take it per mini-batch (``with lock.hold(control): ...``), so calls
    interleave mini-batch by mini-batch in arrival order and one long call cannot
    starve the others; the wait is timed as ``control.waiting()`` and a cancelled
    call leaves the queue at once.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._queue: deque[_Waiter] = deque()
        self._held = False

    def locked(self) -> bool:
        with self._mutex:
            return self._held

    def queued(self) -> int:
        """How many calls wait for the lock."""
        with self._mutex:
            return len(self._queue)

    def acquire(self, control: CallControl | None = None) -> None:
        """Wait for the lock, in arrival order; raise Cancelled if ``control`` is cancelled."""
        if control is not None:
            control.check()
        with self._mutex:
            if not self._held and not self._queue:
                self._held = True
                return
            waiter = _Waiter()
            self._queue.append(waiter)
        if control is None:
            try:
                waiter.event.wait()
            except BaseException:  # e.g. KeyboardInterrupt: never leave a dead waiter
                self._abandon(waiter)
                raise
            return
        control._add_waker(waiter.event)
        try:
            with control.waiting():
                waiter.event.wait()
        except BaseException:
            self._abandon(waiter)
            raise
        finally:
            control._drop_waker(waiter.event)
        with self._mutex:
            if not waiter.granted:  # woken by cancel(): leave the queue
                self._queue.remove(waiter)
                raise Cancelled("the gate stopped waiting for this call")
        if control.cancelled:
            self.release()
            control.check()

    def _abandon(self, waiter: _Waiter) -> None:
        """A waiter gives up after an exception: leave the queue, or, if the lock was
        already handed to it, pass the lock on, so it is never held by nobody."""
        with self._mutex:
            granted = waiter.granted
            if not granted:
                self._queue.remove(waiter)
        if granted:
            self.release()

    def release(self) -> None:
        with self._mutex:
            if self._queue:
                waiter = self._queue.popleft()
                waiter.granted = True  # handed over: the lock stays held
                waiter.event.set()
            else:
                self._held = False

    @contextmanager
    def hold(self, control: CallControl | None = None) -> Iterator[None]:
        """Hold the lock for one mini-batch of ``control``'s call."""
        self.acquire(control)
        try:
            yield
        finally:
            self.release()


class Closing:
    """``with`` support for anything with a ``close()``: the block's end closes it.
    Backends, the chat endpoint, memstore's extractor and Store share it."""

    def close(self) -> None:
        """Release models, sessions or connections. A no-op by default."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class VerifierBackend(Closing):
    """Estimates P(claim is true | context) for batches of (claim, context) pairs.

    Subclasses implement ``estimate_many``. ``deterministic`` backends (same input,
    same output) may be cached; ``identity`` names the model and prompt for the cache.
    A backend whose ``estimate_many`` also takes a ``control`` keyword gets the Gate's
    CallControl: it should stop (``control.check()``) between mini-batches and time
    its wait for the model with ``control.waiting()`` (``ModelLock`` does both).
    Backends without it still work; the Gate's deadline then counts all their time.
    """

    name: str = "backend"
    model: str = ""
    deterministic: bool = True

    @property
    def identity(self) -> str:
        return f"{self.name}:{self.model}"

    def estimate_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One probability per (claim, context) pair, in order.

        Overrides may add an optional ``control: CallControl | None = None`` keyword.
        """
        raise NotImplementedError

    def estimate(self, claim: str, context: str) -> float:
        return self.estimate_many([(claim, context)])[0]
