"""A store's search index: where it lives, opening it, whether search can run, and
bringing it in line with SQL (queued changes, a full rebuild).

SQL is the truth; the index follows it through the outbox (``memstore.index.outbox``).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from memstore.errors import InvalidInput, MemstoreError, SearchIndexError
from memstore.index import outbox
from memstore.index.embeddings import Embedder
from memstore.index.object_store import ObjectStore, check_index_uri, is_uri
from memstore.index.writer import MAX_BEHIND, THROTTLE_PAUSE, THROTTLE_WAIT, IndexWriter
from memstore.storage import db
from memstore.storage.locks import Lease
from memstore.storage.scope import Scope
from memstore.storage.tables import OutboxKind

if TYPE_CHECKING:
    from memstore.index.embeddings import Matrix
    from memstore.index.lance import SearchIndex
    from memstore.index.read_cache import ReadCache

log = logging.getLogger(__name__)

#: The search index's directory inside a data directory.
INDEX_DIRNAME = "index"
#: Where a store opened by URL keeps its search index (a directory or LanceDB URI).
INDEX_URI_ENV = "MEMSTORE_INDEX_URI"
NO_INDEX = "this store has no search index"
#: On SQLite, the lease of the background index writer: a lock file named after the
#: database file plus this.
APPLIER_LEASE_SUFFIX = ".index-applier.lock"
#: Seconds between two counts of the queue while a write waits for the applier.
THROTTLE_POLL = 0.1


def index_uri(index: str | Path | bool, data_dir: Path | None) -> str | None:
    """Where the search index lives: see ``memstore.open()``."""
    if index is True:
        if data_dir is not None:
            return str(data_dir / INDEX_DIRNAME)
        return os.environ.get(INDEX_URI_ENV) or None
    if index is False:
        return None
    if isinstance(index, str | Path) and str(index).strip():
        if not is_uri(str(index)):
            return str(Path(index).expanduser())
        try:
            return check_index_uri(str(index))
        except ValueError as exc:
            raise InvalidInput("index", str(exc)) from None
    raise InvalidInput("index", "must be True, False, or a directory or LanceDB URI")


def _reason(exc: Exception) -> str:
    """What went wrong, short: an object store's error code and message when it sent
    one (LanceDB's own text is a page of Rust debug output), else the exception."""
    text = str(exc)
    code = re.search(r"<Code>([^<]+)</Code>(?:<Message>([^<]*)</Message>)?", text)
    if code:
        return f"the object store answered {code.group(1)}: {code.group(2) or ''}".rstrip(": ")
    os_error = re.search(r'Os \{ code: \d+, kind: \w+, message: "([^"]+)"', text)
    if os_error:
        return f"cannot reach the object store: {os_error.group(1)}"
    return text


@dataclass(frozen=True)
class IndexStatus:
    """Where the search index stands (``Store.index_status``)."""

    #: ``inline`` (a write indexes its facts before it returns), ``background`` or
    #: ``queued`` (another process indexes them).
    writes: str
    #: In background: whether this process's thread applies the queue (holds the
    #: lease); None otherwise.
    leading: bool | None
    #: Changes of every namespace queued and not yet in the index.
    queued: int
    #: Seconds since the oldest of them was queued (0.0 when none is): how far behind.
    behind_s: float
    #: What this process's background thread applied while it led (rows, facts, chunks,
    #: seconds of work).
    applied: outbox.Synced
    #: Seconds this process's writes waited for the applier (``MAX_BEHIND``).
    waited_s: float
    #: Why the index cannot be searched or written, in words; None when it can.
    problem: str | None


class IndexHandle:
    """The index at ``uri`` (None: no search) and, when search cannot run, why not."""

    def __init__(
        self, scope: Scope, uri: str | None, object_store: ObjectStore | None = None
    ) -> None:
        self.scope = scope
        self.uri = uri
        #: How to reach an ``s3://`` index (None: LanceDB's defaults and ``AWS_*``).
        self.object_store = object_store
        self.index: SearchIndex | None = None
        #: Why search cannot run, in words that say what to do; None when it can.
        self.problem: str | None = None
        #: How writes reach the index: ``inline``, ``background``, ``queued`` (``Store``).
        self.writes = "inline"
        #: The thread that applies new facts' changes (``index_writes="background"``).
        self.writer: IndexWriter | None = None
        #: Who may apply queued changes in the background: one process of all that
        #: share the database and this index (``memstore.index.writer``).
        self.lease: Lease | None = None
        #: Seconds writes waited for the applier (``throttle``), all threads together.
        self.waited_s = 0.0
        #: Until when (monotonic) writes do not wait: after one waited in vain.
        self._unthrottled_until = 0.0
        #: Whether the background thread holds the lease (as of its last ask).
        self.leading = False
        #: What the background thread applied while it led (``memstore index-worker``).
        self.applied = outbox.Synced()
        #: Per thread, inside ``batch``: the targeted changes held back (targets, their
        #: vectors). Per thread: a Store is shared by a server's request threads.
        self._local = threading.local()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Apply the targeted changes asked for inside (``apply_queued(targets)``: writes,
        retractions, reviews) as one change when the block ends: one LanceDB commit, not
        one per call. SQL and the outbox hold each change at its commit as always; a
        crash inside leaves them queued for the next open."""
        if getattr(self._local, "held", None) is not None:  # nested: the outer block applies
            yield
            return
        held: tuple[list[str], dict[str, Any]] = ([], {})
        self._local.held = held
        try:
            yield
        finally:
            self._local.held = None
            targets, vectors = held
            if targets:
                self.apply_queued(list(dict.fromkeys(targets)), vectors)

    def start_writer(self) -> None:
        """Leave new facts' index changes to a background thread (``memstore.index.writer``):
        writes return once SQL holds them."""
        if self.writer is None and self.usable:
            assert self.uri is not None  # usable
            self.lease = db.lease(
                self.scope.engine, f"memstore index applier {self.uri}", APPLIER_LEASE_SUFFIX
            )
            self.writer = IndexWriter(
                self._writer_turn, name=f"memstore-index:{self.scope.namespace}"
            )

    def throttle(self) -> None:
        """After a write in background or queued: while the oldest queued change is more
        than ``MAX_BEHIND`` seconds old, wait for the applier (``memstore.index.writer``)
        to catch up, at most ``THROTTLE_WAIT`` seconds (counted in ``waited_s``); after
        a wait that long, none for ``THROTTLE_PAUSE`` seconds."""
        if time.monotonic() < self._unthrottled_until:
            return
        began, waited = time.monotonic(), False
        while True:
            with self.scope.session() as session:
                behind = outbox.behind(session)
            if behind <= MAX_BEHIND:
                break
            if time.monotonic() - began >= THROTTLE_WAIT:
                log.warning(
                    "the search index at %s is still %.0f s behind after %.0f s of waiting: "
                    "is an index writer running (a store in index_writes='background', or "
                    "`memstore index-worker`), and keeping up? Writes stop waiting for it "
                    "for %.0f s",
                    self.uri,
                    behind,
                    THROTTLE_WAIT,
                    THROTTLE_PAUSE,
                )
                self._unthrottled_until = time.monotonic() + THROTTLE_PAUSE
                break
            if self.writer is not None:
                self.writer.wake()
            time.sleep(THROTTLE_POLL)
            waited = True
        if waited:
            self.waited_s += time.monotonic() - began

    def _writer_turn(self) -> bool:
        """One turn of the background thread: when this process holds the lease, apply
        every namespace's queued changes; False when another process holds it. Raises
        (the thread logs it and backs off); the changes stay queued."""
        assert self.lease is not None
        self.leading = False  # until the lease answers (it may raise)
        self.leading = self.lease.hold()
        if self.leading:  # the lease asked again between batches: a lost one stops it
            outbox.sync(
                self.scope.session,
                self.ready(),
                tally=self.applied,
                batch=outbox.APPLY_BATCH,
                keep_going=self.lease.hold,
            )
        return self.leading

    def stop_writer(self) -> None:
        """Stop the background thread, once it has applied what is queued when it leads
        (or, when its last turn hangs on the index's write lock, once
        ``index_writer.STOP_TIMEOUT`` is up), and give up the lease."""
        if self.writer is not None:
            self.writer.stop()
            self.writer = None
        if self.lease is not None:
            self.lease.release()
            self.lease = None
            self.leading = False

    def open(self, embedder: Embedder, vector_index_at: int, where: object) -> None:
        """Open the index; ``where`` (data directory or URL) goes into the advice to rebuild."""
        if self.uri is None:
            self.problem = (
                f"{NO_INDEX}: open it with index='<directory or LanceDB URI>' or set "
                f"{INDEX_URI_ENV}"
            )
            return
        # Here, not at the top: LanceDB, Arrow and numpy are imported only by the
        # commands that open an index.
        from memstore.index.lance import SearchIndex

        try:
            self.index = SearchIndex(
                self.uri,
                embedder,
                vector_index_at=vector_index_at,
                # PostgreSQL workers may share an index from several machines: they take
                # turns writing it through the database; SQLite's share a lock file.
                write_lock=db.index_lock(self.scope.engine, self.uri),
                storage_options=self.object_store.storage_options() if self.object_store else {},
                read_cache=self._read_cache(),
            )
        except Exception as exc:
            raise SearchIndexError(
                f"cannot open the search index at {self.uri}: {_reason(exc)}"
            ) from exc
        mismatch = self.index.mismatch()
        if mismatch is not None:
            self.problem = (
                f"{mismatch}: rebuild it with store.reindex() or `memstore reindex {where}`"
            )

    def _read_cache(self) -> ReadCache | None:
        """The local copy of an ``s3://`` index that searches read, when the object
        store's settings name a directory for it (a subdirectory per bucket and prefix)."""
        where = self.object_store.read_cache if self.object_store else None
        if where is None or self.uri is None or not is_uri(self.uri):
            return None
        from memstore.index.read_cache import ReadCache

        parts = urlsplit(self.uri)
        directory = Path(where).expanduser() / parts.netloc / parts.path.strip("/")
        return ReadCache(self.uri, directory, self.object_store)

    def close(self) -> None:
        """Stop the threads of the index (the local copy's refresh); the writer is
        ``stop_writer``'s."""
        if self.index is not None:
            self.index.close()

    @property
    def usable(self) -> bool:
        """Whether the index exists and matches this store's embedder."""
        return self.index is not None and self.problem is None

    def ready(self) -> SearchIndex:
        """The index, or MemstoreError saying why search cannot run."""
        if self.index is None or self.problem is not None:
            raise MemstoreError(self.problem or NO_INDEX)
        return self.index

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Embed ``texts`` with the index's embedder (unit vectors, one row each)."""
        return self.ready().embed(list(texts))

    def replay_queued(self, notice_at: int) -> None:
        """Apply what a killed writer or reindex left queued for this namespace, saying so
        first when it is more than ``notice_at`` changes. Other namespaces' queues are
        theirs: each is applied by its own open, writer thread or ``sync_index()``, so a
        namespace with a long queue never holds up the first request to another. Queued
        erasures are the exception, whichever namespace they are of: few, and each purges
        erased text from the index files, which must not wait for that namespace."""
        namespace = self.scope.namespace
        with self.scope.session() as session:
            erasures = outbox.pending(session, kind=OutboxKind.ERASURE)
            backlog = outbox.pending(session, namespace)
        if erasures:
            self.apply_queued(kind=OutboxKind.ERASURE)
        if backlog > notice_at:
            log.warning(
                "applying %d queued search-index changes of namespace %s left by an "
                "interrupted writer or reindex (up to about 40 s per 10,000 on 2 cores); "
                "the store opens when done",
                backlog,
                namespace,
            )
        if backlog:
            self.apply_queued(namespace=namespace)

    def apply_queued(
        self,
        targets: Collection[str] | None = None,
        vectors: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        kind: OutboxKind | None = None,
    ) -> None:
        """Apply queued index changes (only ``targets`` / ``namespace`` / ``kind`` ones,
        when given).
        A failure is logged, never raised: SQL already holds the change, and it stays
        queued for a replay. Inside ``batch``, targeted changes wait for its end."""
        if self.index is None or self.problem is not None:
            return
        held = getattr(self._local, "held", None)
        if held is not None and targets is not None and namespace is None and kind is None:
            held[0].extend(targets)
            held[1].update(vectors or {})
            return
        try:
            outbox.sync(
                self.scope.session,
                self.index,
                namespace=namespace,
                targets=targets,
                vectors=vectors or {},
                kind=kind,
            )
        except Exception:
            log.warning(
                "the search index at %s is behind; the change stays queued and is applied "
                "at the next open or store.sync_index()",
                self.uri,
                exc_info=True,
            )

    def sync(self) -> int:
        """Write every queued change (all namespaces) now; returns how many. Raises."""
        index = self.ready()
        try:
            return outbox.sync(self.scope.session, index).rows
        except MemstoreError:
            raise
        except Exception as exc:
            raise SearchIndexError(
                f"cannot update the search index at {self.uri}: {_reason(exc)}"
            ) from exc

    def rebuild(self, progress: Callable[[int, int], None] | None) -> outbox.Rebuilt:
        """Rebuild the index from SQL (``outbox.rebuild``); search runs again after it."""
        if self.index is None:
            raise MemstoreError(self.problem or NO_INDEX)
        try:
            rebuilt = outbox.rebuild(self.scope.session, self.index, progress)
        except MemstoreError:
            raise
        except Exception as exc:
            raise SearchIndexError(
                f"cannot rebuild the search index at {self.uri}: {_reason(exc)}"
            ) from exc
        self.problem = None
        if self.writes == "background":  # could not start while the index was unusable
            self.start_writer()
        return rebuilt

    def status(self) -> IndexStatus:
        """Where the index stands: see ``IndexStatus``."""
        with self.scope.session() as session:
            queued = outbox.pending(session)
            behind = outbox.behind(session)
        return IndexStatus(
            writes=self.writes,
            leading=None if self.writer is None else self.leading,
            queued=queued,
            behind_s=behind,
            applied=replace(self.applied),
            waited_s=self.waited_s,
            problem=self.problem or (NO_INDEX if self.index is None else None),
        )

    def backlog(self) -> int:
        """Changes of this namespace queued for the index but not yet in it."""
        with self.scope.session() as session:
            return outbox.pending(session, self.scope.namespace)
