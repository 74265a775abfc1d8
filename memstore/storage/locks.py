"""Locks between processes of one machine: an ``flock`` on a file."""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

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
