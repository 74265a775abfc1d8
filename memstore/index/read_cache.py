"""A local copy of an object-store index for searching (``store.object_store.read_cache``).

On S3, each query of a LanceDB table reads the candidate rows' vectors from the data
files with one request each (about 30 a hybrid query): 30-60 ms of a search that takes
under 20 on a local disk. LanceDB keeps its index files in memory but has no cache of
data files, so this host keeps a copy of the index's files in a local directory and
searches that copy. Writes still go to the object store, which stays the index every
host shares.

Lance never changes a file once written (but a hint naming the latest version, which the
copy leaves out: Lance then lists the manifests it holds): a commit adds data, deletion
and index files, then a manifest naming them (``_versions/``). So a refresh lists the
manifests first, then every other file, and downloads what it does not hold (each to a
temporary name, then renamed into place): the other files first, then only the manifests
of the first listing, so a manifest is never seen here before the files it names. A
manifest the store dropped goes at once (a reset table's old versions would hide the new
ones); another file goes once it has been gone for ``DROP_AFTER`` seconds (a query on an
older version may still read it), and at once when the copy stops (``stop``). A thread
refreshes every ``REFRESH_EVERY`` seconds; ``SearchIndex`` reads the copy only while it
was refreshed in the last ``STALE_AFTER`` seconds, and the store itself otherwise.
"""

from __future__ import annotations

import logging
import os
import shutil
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


def _is_version(name: str) -> bool:
    """Whether ``name`` is under a table's ``_versions/`` (manifests and the hint) or a
    mutable file: fetched after everything else, never trusted from an earlier run."""
    return "/_versions/" in f"/{name}" or Path(name).name in MUTABLE


#: Seconds after its last refresh that the copy is too stale to search.
STALE_AFTER = 5.0
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
        #: When (monotonic) the copy was last brought in line; None: never.
        self.refreshed_at: float | None = None
        self.directory.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.directory / PARTIAL_DIR, ignore_errors=True)  # a killed run's
        for path in self._local_files():  # what an earlier run left: data, by its size
            name = path.relative_to(self.directory).as_posix()
            if path.name in MUTABLE:  # never kept (see above)
                path.unlink()
            elif not _is_version(name):  # a manifest's name is reused after a reset
                self._held[name] = (path.stat().st_size, 0)

    def refresh(self) -> Refreshed:
        """Bring the copy in line with the store once (one at a time)."""
        with self._lock:
            done = self._refresh()
        self.refreshed_at = time.monotonic()
        return done

    def fresh_within(self, seconds: float) -> bool:
        """Whether the copy was brought in line less than ``seconds`` ago."""
        return self.refreshed_at is not None and time.monotonic() - self.refreshed_at < seconds

    def _list(self, prefix: str) -> dict[str, tuple[int, int]]:
        """Name (relative to the index's prefix) -> (size, modified ns) of each file
        under ``prefix`` (relative too; "" for all)."""
        from pyarrow import fs

        root = f"{self._root}/{prefix}".rstrip("/")
        listed: dict[str, tuple[int, int]] = {}
        try:
            infos = self._fs.get_file_info(fs.FileSelector(root, recursive=True))
        except FileNotFoundError:
            return listed
        for info in infos:
            if info.type == fs.FileType.File:
                listed[info.path[len(self._root) + 1 :]] = (info.size or 0, info.mtime_ns or 0)
        return listed

    def _refresh(self, drop_after: float = DROP_AFTER) -> Refreshed:
        done = Refreshed()
        # The manifests first, then everything else: a file a listed manifest names was
        # written before that manifest, so the second listing holds it. Only the first
        # listing's manifests are installed, after every other file.
        tables = [n for n in self._list_dirs() if n.endswith(".lance")]
        versions: dict[str, tuple[int, int]] = {}
        for table in tables:
            versions |= self._list(f"{table}/_versions")
        versions = {n: stat for n, stat in versions.items() if Path(n).name not in MUTABLE}
        remote = {n: stat for n, stat in self._list("").items() if not _is_version(n)}
        remote |= versions
        data = [n for n in remote if not _is_version(n) and not self._fresh(n, remote[n])]
        manifests = sorted(n for n in versions if n.endswith(".manifest"))
        manifests = [n for n in manifests if not self._fresh(n, remote[n])]
        # Not the hint naming the latest version: rewritten in place, it may name one
        # this copy does not hold yet; without it, Lance lists the manifests held here.
        for name in [*sorted(data), *manifests]:
            done.bytes += self._fetch(name)
            self._held[name] = remote[name]
            done.fetched += 1
        now = time.monotonic()
        for name in [n for n in self._held if n not in remote]:
            # A manifest goes at once (a query holds its own in memory; a reset table's
            # old ones would hide the new); files after ``drop_after``.
            since = self._gone_since.setdefault(name, now)
            if _is_version(name) or now - since >= drop_after:
                (self.directory / name).unlink(missing_ok=True)
                del self._held[name]
                self._gone_since.pop(name, None)
                done.dropped += 1
        for name in [n for n in self._gone_since if n in remote]:
            del self._gone_since[name]  # back (a name used again)
        return done

    def _list_dirs(self) -> list[str]:
        """The names directly under the index's prefix (its tables' directories)."""
        from pyarrow import fs

        try:
            infos = self._fs.get_file_info(fs.FileSelector(self._root, recursive=False))
        except FileNotFoundError:
            return []
        return [i.path[len(self._root) + 1 :] for i in infos if i.type == fs.FileType.Directory]

    def _fresh(self, name: str, stat: tuple[int, int]) -> bool:
        held = self._held.get(name)
        if held is None or held[0] != stat[0] or Path(name).name in MUTABLE:
            return False
        # A file of the same size left by an earlier run (mtime 0) counts as fresh: Lance
        # never rewrites a data file; a newer mtime (a name written again) is fetched.
        return held[1] == 0 or held[1] >= stat[1]

    def drop_table(self, table: str) -> None:
        """Forget the copy of ``table`` (its store tables were dropped and made again)."""
        with self._lock:
            prefix = f"{table}.lance/"
            for name in [n for n in self._held if n.startswith(prefix)]:
                del self._held[name]
                self._gone_since.pop(name, None)
            shutil.rmtree(self.directory / f"{table}.lance", ignore_errors=True)

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
        """End the thread, then drop at once what the store no longer holds (an erase's
        files must not outlive the last process that refreshes the copy)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(60)
            self._thread = None
        try:
            with self._lock:
                self._refresh(drop_after=0.0)
        except Exception:
            log.warning("a last refresh of the copy at %s failed", self.directory, exc_info=True)

    def _run(self, every: float) -> None:
        failing = False
        while not self._stop.wait(every):
            try:
                self.refresh()
            except Exception:  # searches read the store itself once the copy is stale
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
