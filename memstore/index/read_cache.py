"""A local copy of an object-store index for searching (``store.object_store.read_cache``).

On S3, each query of a LanceDB table reads the candidate rows' vectors from the data
files with one request each (about 30 a hybrid query): 30-60 ms of a search that takes
under 20 on a local disk. LanceDB keeps its index files in memory but has no cache of
data files, so this host keeps a copy of the index's files in a local directory and
searches that copy. Writes still go to the object store, which stays the index every
host shares.

Lance never changes a file once written: a commit adds data, deletion and index files,
then a manifest naming them (``_versions/``). So a refresh lists the index's prefix,
downloads the files it does not hold (each to a temporary name, then renamed into
place), every other file before any manifest, so a manifest is never seen before the
files it names; and deletes local files the store dropped (old versions a cleanup
removed) once they have been gone for ``DROP_AFTER`` seconds, so a query running on an
older version finds its files. A thread refreshes every ``REFRESH_EVERY`` seconds.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from memstore.index.object_store import ObjectStore

log = logging.getLogger(__name__)

#: Seconds between two refreshes of the copy (a commit is searchable here within about
#: this long; this process's own commits at once, ``SearchIndex`` reads the store then).
REFRESH_EVERY = 0.5
#: Seconds a file the store no longer holds is kept here: a query running on an older
#: version may still read it (queries take milliseconds). Short, because an erase
#: rewrites the index's files to leave no copy of the erased text: the copy here goes
#: within this, plus one refresh.
DROP_AFTER = 5.0
#: Files Lance does rewrite in place (the rest never change once written).
MUTABLE = ("latest_version_hint.json", "_latest.manifest")
#: Where a download is written before it is renamed into place.
PARTIAL_DIR = ".partial"
#: Downloads are read in pieces of this many bytes.
_PIECE = 1 << 20


def s3_filesystem(object_store: ObjectStore | None) -> Any:
    """A ``pyarrow.fs.S3FileSystem`` reaching the store as LanceDB does (unset fields:
    the ``AWS_*`` variables, an instance role)."""
    from pyarrow import fs

    store = object_store or ObjectStore()
    options: dict[str, Any] = {"region": store.region}
    if store.endpoint is not None:
        parts = urlsplit(store.endpoint)
        options |= {"endpoint_override": parts.netloc, "scheme": parts.scheme}
    if store.access_key_id is not None and store.secret_access_key is not None:
        options |= {
            "access_key": store.access_key_id.get_secret_value(),
            "secret_key": store.secret_access_key.get_secret_value(),
        }
        if store.session_token is not None:
            options["session_token"] = store.session_token.get_secret_value()
    if store.timeout is not None:
        options["request_timeout"] = store.timeout
    if store.connect_timeout is not None:
        options["connect_timeout"] = store.connect_timeout
    options["force_virtual_addressing"] = store.virtual_hosted_style
    return fs.S3FileSystem(**{k: v for k, v in options.items() if v is not None})


@dataclass
class Refreshed:
    """What one refresh did."""

    fetched: int = 0
    dropped: int = 0
    bytes: int = 0


@dataclass
class ReadCache:
    """The local copy at ``directory`` of the index at ``uri`` (``s3://bucket/prefix``)."""

    uri: str
    directory: Path
    object_store: ObjectStore | None = None
    #: Name (relative to the prefix) -> (size, modified ns) of each file held here.
    _held: dict[str, tuple[int, int]] = field(default_factory=dict, init=False)
    #: Name -> when the store was first seen without it.
    _gone_since: dict[str, float] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.uri)
        self._root = f"{parts.netloc}/{parts.path.strip('/')}".rstrip("/")
        self._fs = s3_filesystem(self.object_store)
        self.directory.mkdir(parents=True, exist_ok=True)
        for path in self._local_files():  # what an earlier run left: trusted by size
            name = path.relative_to(self.directory).as_posix()
            if path.name not in MUTABLE:
                self._held[name] = (path.stat().st_size, 0)

    def refresh(self) -> Refreshed:
        """Bring the copy in line with the store once (one at a time)."""
        with self._lock:
            return self._refresh()

    def _refresh(self) -> Refreshed:
        from pyarrow import fs

        done = Refreshed()
        remote: dict[str, tuple[int, int]] = {}
        for info in self._fs.get_file_info(fs.FileSelector(self._root, recursive=True)):
            if info.type == fs.FileType.File:
                name = info.path[len(self._root) + 1 :]
                remote[name] = (info.size or 0, info.mtime_ns or 0)
        wanted = [n for n, stat in remote.items() if not self._fresh(n, stat)]
        # Every other file before the manifests that name them.
        for name in sorted(wanted, key=lambda n: (n.split("/")[-2:-1] == ["_versions"], n)):
            done.bytes += self._fetch(name)
            self._held[name] = remote[name]
            done.fetched += 1
        now = time.monotonic()
        for name in [n for n in self._held if n not in remote]:
            since = self._gone_since.setdefault(name, now)
            if now - since >= DROP_AFTER:
                (self.directory / name).unlink(missing_ok=True)
                del self._held[name]
                del self._gone_since[name]
                done.dropped += 1
        for name in [n for n in self._gone_since if n in remote]:
            del self._gone_since[name]  # back (a name used again)
        return done

    def _fresh(self, name: str, stat: tuple[int, int]) -> bool:
        held = self._held.get(name)
        if held is None or held[0] != stat[0]:
            return False
        # A file of the same size left by an earlier run (mtime 0) counts as fresh: Lance
        # never rewrites one; a newer mtime (a name rewritten) is fetched again.
        return held[1] == 0 or held[1] >= stat[1]

    def _fetch(self, name: str) -> int:
        """Download ``name`` to a temporary file, then rename it into place."""
        target = self.directory / name
        partial = self.directory / PARTIAL_DIR / f"{threading.get_ident()}-{os.getpid()}"
        partial.parent.mkdir(parents=True, exist_ok=True)
        size = 0
        with (
            self._fs.open_input_stream(f"{self._root}/{name}") as source,
            partial.open("wb") as out,
        ):
            while piece := source.read(_PIECE):
                out.write(piece)
                size += len(piece)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(partial, target)
        return size

    def _local_files(self) -> Iterator[Path]:
        for path in self.directory.rglob("*"):
            if path.is_file() and PARTIAL_DIR not in path.relative_to(self.directory).parts:
                yield path

    # -- the thread --------------------------------------------------------------------

    def start(self, every: float = REFRESH_EVERY) -> None:
        """Refresh every ``every`` seconds on a daemon thread until ``stop``."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, args=(every,), name="memstore-index-read-cache", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(60)
            self._thread = None

    def _run(self, every: float) -> None:
        failing = False
        while not self._stop.wait(every):
            try:
                self.refresh()
            except Exception:  # searches fall back to the store itself meanwhile
                if not failing:
                    log.warning(
                        "refreshing the local copy of the index %s at %s failed; retried "
                        "(logged once until it works)",
                        self.uri,
                        self.directory,
                        exc_info=True,
                    )
                failing = True
            else:
                failing = False
