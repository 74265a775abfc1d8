"""Locks between processes: an ``flock`` on a file (one machine), and a lease, a lock
one process keeps for as long as it likes and loses when it dies (``Lease``)."""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Protocol

#: A context manager factory: ``with lock(): ...`` holds it for the block.
Lock = Callable[[], AbstractContextManager[object]]


def file_lock(path: Path) -> Lock:
    """An exclusive ``flock`` on ``path`` (created if missing), held for the ``with``
    block; the kernel drops it when the holder dies."""

    @contextmanager
    def held() -> Iterator[None]:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(file, fcntl.LOCK_UN)

    return held


class Lease(Protocol):
    """One holder at a time among every process that asks, kept until ``release`` or
    the holder's death (the lock goes with its process or connection): how one process
    is elected for a job that must run once (``memstore.index.writer``)."""

    def hold(self) -> bool:
        """Whether this object holds the lease now: takes it when it is free, and checks
        that one held is still held. Never waits for another holder."""
        ...

    def release(self) -> None:
        """Give the lease up (nothing when not held)."""
        ...


class FileLease:
    """A lease on one machine: a non-blocking ``flock`` on ``path``, kept open. Each
    ``FileLease`` opens the file itself, so two in one process exclude each other too."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def hold(self) -> bool:
        if self._file is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        file = self.path.open("a")
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            file.close()
            return False
        self._file = file
        return True

    def release(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            fcntl.flock(file, fcntl.LOCK_UN)
            file.close()


class SoleLease:
    """The lease of a database only this process can open (SQLite in memory): always
    held."""

    def hold(self) -> bool:
        return True

    def release(self) -> None:
        return None
