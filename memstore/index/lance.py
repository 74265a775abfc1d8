"""The search index on LanceDB: fact and evidence-chunk vectors plus a full-text index.

A derived index of the SQL truth (docs/design.md, Storage invariants): every row here
can be rebuilt from the database, and rows are written by id (merge), so replaying a
change is harmless. This module knows LanceDB and nothing of SQL.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import pyarrow as pa

from memstore.index.embeddings import Embedder, embed_checked
from memstore.index.lancedb_import import import_lancedb
from memstore.index.read_cache import STALE_AFTER
from memstore.index.rows import (
    CHUNKS,
    DEFAULT_VECTOR_INDEX_AT,
    FACTS,
    ChunkDoc,
    FactDoc,
    Ranking,
    micros,
    quoted,
)
from memstore.storage.locks import Lock, file_lock

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from memstore.index.embeddings import Matrix
    from memstore.index.read_cache import ReadCache

# LanceDB warns on each index listing of a table with a vector index that its statistics
# will stop including the IVF centroids; memstore reads only index columns, so it opts in.
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")

T = TypeVar("T")

#: Index commits between compactions (each write adds a LanceDB fragment).
COMPACT_EVERY = 64
#: Maintenance removes the files of versions older than this (a version's age counts
#: from its commit; the latest is always kept). A reader, in this process or another,
#: checks out the latest version for each query and holds it only while the query runs,
#: so a minute is ample on a local disk; an hour kept the files of every compaction
#: (at 10k facts here: 103 MB on disk against 22 MB live).
KEEP_VERSIONS = timedelta(minutes=1)
#: The same for an object-store index: hosts that share it compare the commit times one
#: wrote with their own clocks, so it leaves room for clock skew.
KEEP_VERSIONS_REMOTE = timedelta(hours=1)
#: How stale a read of an object-store index may be: LanceDB asks the store for the
#: latest version at most this often (each ask is a request on every query otherwise:
#: 7-12 ms of a hybrid search on S3 here, growing with the versions kept). A commit of
#: another process is seen within this, plus one query; this process's own at once.
#: A local index is asked on every read (a file listing: cheap).
REMOTE_READ_CONSISTENCY = timedelta(seconds=1)


def read_consistency(uri: str) -> timedelta:
    """LanceDB's ``read_consistency_interval`` for the index at ``uri``."""
    return REMOTE_READ_CONSISTENCY if "://" in uri else timedelta(0)


#: LanceDB's warning for a short retention, which memstore chooses knowingly.
_SHORT_RETENTION = r"optimize\(cleanup_older_than="
#: Delta indexes the vector index may hold before maintenance builds it again. Each
#: maintenance that finds new rows adds one, and a query searches them all (0.1-0.2 ms
#: each at 78,000 rows here); a build costs about 0.35 ms a row on 2 cores (27 s at
#: 78,000), during which the index's writes wait.
MAX_VECTOR_DELTAS = 16
#: Vector queries ``by_vectors`` runs at once (a batch of 1,000 facts asks 1,000).
_AT_ONCE = 32
_WRITE_ATTEMPTS = 5  # commit conflicts with another process are retried
_DELETE_CHUNK = 500  # ids per DELETE predicate
_PURGE_ROWS = 20_000  # rows per commit when a purge rewrites a table
_META_EMBEDDER = b"memstore.embedder"
_META_DIMENSIONS = b"memstore.dimensions"
#: In a local index directory: the file whose lock a process holds while it writes.
LOCK_FILE = ".memstore-write.lock"
#: A fact row's metadata tokens; added to the facts table of an index made before it.
METADATA_FIELD = pa.field("metadata", pa.list_(pa.string()))


def _fts() -> Any:
    """The full-text index on ``text`` (positions off: no phrase queries)."""
    from lancedb.index import FTS

    return FTS(with_position=False)


#: Per table, the scalar index of each column a filter or a lookup reads, so LanceDB
#: prefilters a query through them instead of scanning the column: ``btree`` for
#: columns with many values (ids, sources), ``bitmap`` for fewer (statuses, and
#: namespaces: every query filters on one, and its rows are most of a table; at 78,000
#: rows here the vector and text sides of a query took 7.6 and 6.5 ms p50 with a B-tree
#: on it, 5.6 and 4.9 with a bitmap), ``label_list`` for lists (``array_has``).
SCALAR_INDEXES: dict[str, dict[str, str]] = {
    FACTS: {
        "id": "btree",
        "namespace": "bitmap",
        "status": "bitmap",
        "relation": "btree",
        "entity_ids": "label_list",
        "metadata": "label_list",
    },
    CHUNKS: {
        "id": "btree",
        "namespace": "bitmap",
        "status": "bitmap",
        "evidence_id": "btree",
        "source": "btree",
    },
}


def _scalar(kind: str) -> Any:
    """The LanceDB config of a scalar index kind (``SCALAR_INDEXES``)."""
    from lancedb.index import Bitmap, BTree, LabelList

    return {"btree": BTree, "bitmap": Bitmap, "label_list": LabelList}[kind]()


#: LanceDB's names of the scalar index kinds (``IndexConfig.index_type``).
_KIND_NAMES = {"BTree": "btree", "Bitmap": "bitmap", "LabelList": "label_list"}


def _index_scalars(table: Any, name: str, *, afresh: bool = False) -> None:
    """Give each column of ``table`` (named ``name``) the scalar index ``SCALAR_INDEXES``
    names: where it has none (``afresh``: every column, made again), and where it has
    one of another kind (an older release's), which is dropped first (LanceDB keeps
    both otherwise, and its planner may pick the old one)."""
    held: dict[str, list[Any]] = {}
    for ix in table.list_indices():
        if len(ix.columns) == 1:
            held.setdefault(ix.columns[0], []).append(ix)
    for column, kind in SCALAR_INDEXES[name].items():
        other = [ix for ix in held.get(column, []) if _KIND_NAMES.get(ix.index_type) != kind]
        for ix in other:
            table.drop_index(ix.name)
        if afresh or other or column not in held:
            table.create_index(column, config=_scalar(kind), replace=True)


def _hnsw() -> Any:
    """The vector index: HNSW over scalar-quantized vectors, cosine distance."""
    from lancedb.index import IvfHnswSq

    return IvfHnswSq(distance_type="cosine")


def _schema(table: str, dimensions: int, embedder: str) -> pa.Schema:
    common = [
        pa.field("id", pa.string(), nullable=False),
        pa.field("namespace", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
    ]
    if table == FACTS:
        own = [
            pa.field("relation", pa.string()),
            pa.field("entity_ids", pa.list_(pa.string())),
            pa.field("recorded_us", pa.int64()),
            pa.field("valid_from_us", pa.int64()),
            pa.field("valid_to_us", pa.int64()),
            METADATA_FIELD,
        ]
    else:
        own = [
            pa.field("evidence_id", pa.string()),
            pa.field("source", pa.string()),
            pa.field("version", pa.int64()),
            pa.field("start", pa.int64()),
            pa.field("end", pa.int64()),
            pa.field("created_us", pa.int64()),
        ]
    metadata = {_META_EMBEDDER: embedder.encode(), _META_DIMENSIONS: str(dimensions).encode()}
    vector = pa.field("vector", pa.list_(pa.float32(), dimensions))
    return pa.schema([*common, *own, vector], metadata=metadata)


class SearchIndex:
    """The LanceDB database at ``uri`` with a ``facts`` and an ``evidence_chunks`` table."""

    def __init__(
        self,
        uri: str,
        embedder: Embedder,
        *,
        vector_index_at: int = DEFAULT_VECTOR_INDEX_AT,
        write_lock: Lock | None = None,
        storage_options: Mapping[str, str] | None = None,
        keep_versions: timedelta | None = None,
        max_vector_deltas: int = MAX_VECTOR_DELTAS,
        read_cache: ReadCache | None = None,
    ) -> None:
        """``write_lock`` excludes other processes while this one writes (default: a
        lock file in the index directory; none for an object-store URI).
        ``storage_options``: how LanceDB reaches an object-store URI (endpoint,
        credentials; ``memstore.index.object_store``). ``keep_versions``: how old a version
        maintenance keeps (default ``KEEP_VERSIONS``, ``KEEP_VERSIONS_REMOTE`` for a URI).
        ``max_vector_deltas``: the vector index's delta indexes kept before maintenance
        builds it again (``MAX_VECTOR_DELTAS``). ``read_cache``: a local copy of an
        object-store index that searches read while it holds this process's latest
        commit (``memstore.index.read_cache``)."""
        self.uri = uri
        self.embedder = embedder
        self.vector_index_at = vector_index_at
        self.max_vector_deltas = max_vector_deltas
        if keep_versions is None:
            keep_versions = KEEP_VERSIONS_REMOTE if "://" in uri else KEEP_VERSIONS
        self.keep_versions = keep_versions
        # Imported here, not at the top: it is slow to import (``lancedb_import``), and
        # most commands (and `memstore --help`) never open an index.
        self._db = import_lancedb().connect(
            uri,
            read_consistency_interval=read_consistency(uri),
            storage_options=dict(storage_options or {}),
        )
        self._lock = threading.Lock()
        self._holder: int | None = None  # the thread whose write turn it is
        if write_lock is None:
            write_lock = nullcontext if "://" in uri else file_lock(Path(uri) / LOCK_FILE)
        self._write_lock = write_lock
        self._writes_since_compaction = 0
        #: The tables of the local copy, and the versions this process last committed.
        self._cache = read_cache
        self._cached: dict[str, Any] = {}
        self._committed: dict[str, int] = {}
        with self._writing():  # processes opening a new index at once create it once
            self._tables = {name: self._open_table(name) for name in (FACTS, CHUNKS)}
        if read_cache is not None:
            self._open_copy()
            read_cache.start()

    def _open_copy(self) -> None:
        """``_open_cached``, logging a failure: searches then read the store until a
        refresh of the copy works."""
        try:
            self._open_cached()
        except Exception:
            self._cached = {}
            log.warning(
                "cannot make a local copy of the index at %s; searches read the store "
                "until a refresh works",
                self.uri,
                exc_info=True,
            )

    def _open_cached(self, refresh: bool = True) -> None:
        """Bring the local copy in line (``refresh``) and open its tables (read only,
        each query on the latest version it holds)."""
        assert self._cache is not None
        if refresh:
            self._cache.refresh()
        local = import_lancedb().connect(
            self._cache.directory, read_consistency_interval=timedelta(0)
        )
        self._cached = {name: local.open_table(name) for name in (FACTS, CHUNKS)}

    def close(self) -> None:
        """Stop refreshing the local copy (nothing else to release)."""
        if self._cache is not None:
            self._cache.stop()

    # -- state -----------------------------------------------------------------

    def mismatch(self) -> str | None:
        """Why the stored vectors cannot serve this embedder (None when they can)."""
        for name, table in self._tables.items():
            meta = table.schema.metadata or {}
            built = meta.get(_META_EMBEDDER, b"").decode()
            dims = meta.get(_META_DIMENSIONS, b"0").decode()
            if (built, dims) != (self.embedder.name, str(self.embedder.dimensions)):
                return (
                    f"the {name} index was built with {built or 'an unknown embedder'} "
                    f"({dims} dimensions), not {self.embedder.name} "
                    f"({self.embedder.dimensions})"
                )
        return None

    def has_vector_index(self, table: str) -> bool:
        return any(ix.columns == ["vector"] for ix in self._tables[table].list_indices())

    def reset(self) -> None:
        """Drop both tables and start empty with this embedder (for a rebuild)."""
        with self._writing():
            existing = set(self._db.list_tables().tables)
            for name in (FACTS, CHUNKS):
                if name in existing:
                    self._db.drop_table(name)
            self._tables = {name: self._open_table(name) for name in (FACTS, CHUNKS)}
            if self._cache is not None:  # new tables: a new copy of each
                for name in (FACTS, CHUNKS):
                    self._cache.drop_table(name)
                self._cached = {}
                self._open_copy()

    # -- writes ----------------------------------------------------------------

    def write_facts(self, docs: Sequence[FactDoc], vectors: Mapping[str, Matrix] = {}) -> None:
        """Insert or replace these facts' rows, embedding only texts not embedded yet."""
        rows = [
            {
                "id": d.id,
                "namespace": d.namespace,
                "status": d.status,
                "text": d.text,
                "relation": d.relation,
                "entity_ids": list(d.entity_ids),
                "recorded_us": micros(d.recorded_at),
                "valid_from_us": micros(d.valid_from),
                "valid_to_us": micros(d.valid_to),
                "metadata": list(d.metadata),
            }
            for d in docs
        ]
        self._merge(FACTS, rows, vectors)

    def write_chunks(self, docs: Sequence[ChunkDoc]) -> None:
        rows = []
        for d in docs:
            row: dict[str, Any] = asdict(d)
            row["created_us"] = micros(row.pop("created_at"))
            rows.append(row)
        self._merge(CHUNKS, rows, {})

    def delete(self, table: str, column: str, values: Sequence[str]) -> None:
        """Delete the rows whose ``column`` holds one of ``values`` (no commit when none
        is there)."""
        for start in range(0, len(values), _DELETE_CHUNK):
            chunk = values[start : start + _DELETE_CHUNK]
            where = f"{column} IN ({quoted(chunk)})"
            if not self._row_ids(table, where):
                continue
            with self._writing():
                self._tables[table].delete(where)

    def purge(self) -> None:
        """Leave no copy of deleted rows on disk (after an erase).

        A LanceDB delete or update only marks the old rows deleted; their data files
        stay. Every live row is rewritten (in commits of about ``_PURGE_ROWS`` rows, by
        data file), so the files that hold deleted rows drop out; the text, scalar and
        vector indexes are rebuilt and every older version of the tables is removed. Costs a
        rewrite of both tables. A search running in another process on an older version
        at that moment fails once.
        """
        with self._writing():
            for name, handle in self._tables.items():
                row_ids = self._row_ids(name, None)
                if not row_ids:
                    continue
                sizes: dict[int, int] = {}
                for row_id in row_ids:
                    sizes[row_id >> 32] = sizes.get(row_id >> 32, 0) + 1  # by fragment
                group: list[int] = []
                for n, fragment in enumerate(sorted(sizes)):
                    group.append(fragment)
                    rows = sum(sizes[f] for f in group)
                    if rows >= _PURGE_ROWS or n == len(sizes) - 1:
                        self._rewrite(handle, group)
                        group = []
                handle.create_index("text", config=_fts(), replace=True)
                _index_scalars(handle, name, afresh=True)
                if self.has_vector_index(name):
                    handle.create_index("vector", config=_hnsw(), replace=True)
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", _SHORT_RETENTION, UserWarning)
                    handle.optimize(cleanup_older_than=timedelta(0))
            self._writes_since_compaction = 0

    @staticmethod
    def _rewrite(handle: Any, fragments: Sequence[int]) -> None:
        """Write the live rows of these data files anew (one commit); the old files,
        left with deleted rows only, drop out of the table."""
        where = " OR ".join(
            f"(_rowid >= {f << 32} AND _rowid < {(f + 1) << 32})" for f in fragments
        )
        rows = handle.search().where(where).select(handle.schema.names).limit(None).to_arrow()
        if rows.num_rows:
            handle.merge_insert("id").when_matched_update_all().execute(rows)

    def _row_ids(self, table: str, where: str | None) -> list[int]:
        """LanceDB row ids (fragment id << 32 | offset) of the rows matching ``where``
        (None: every row)."""
        query = self._tables[table].search()
        if where is not None:
            query = query.where(where)
        found = query.with_row_id(True).select(["id"]).limit(None).to_arrow()
        return [int(i) for i in found.column("_rowid").to_pylist()]

    def vectors(self, table: str, ids: Sequence[str]) -> dict[str, tuple[str, Matrix]]:
        """The stored (text, vector) of these rows."""
        found = self.rows(table, ids, ["id", "text", "vector"])
        return {r["id"]: (r["text"], np.asarray(r["vector"], dtype=np.float32)) for r in found}

    def embed(self, texts: Sequence[str]) -> Matrix:
        return embed_checked(self.embedder, texts)

    def _merge(self, table: str, rows: list[dict[str, Any]], vectors: Mapping[str, Matrix]) -> None:
        if not rows:
            return
        known = dict(vectors)
        texts = {r["id"]: r["text"] for r in rows}
        stored = self.vectors(table, [i for i in texts if i not in known])
        known.update({i: vector for i, (text, vector) in stored.items() if texts[i] == text})
        missing = [r for r in rows if r["id"] not in known]
        if missing:
            fresh = self.embed([r["text"] for r in missing])
            known.update({r["id"]: v for r, v in zip(missing, fresh, strict=True)})
        for r in rows:
            r["vector"] = np.asarray(known[r["id"]], dtype=np.float32).tolist()
        data = pa.Table.from_pylist(rows, schema=self._tables[table].schema)
        with self._writing():
            for attempt in range(1, _WRITE_ATTEMPTS + 1):
                try:
                    (
                        self._tables[table]
                        .merge_insert("id")
                        .when_matched_update_all()
                        .when_not_matched_insert_all()
                        .execute(data)
                    )
                    break
                except (OSError, RuntimeError) as exc:
                    if "conflict" not in str(exc).lower() or attempt == _WRITE_ATTEMPTS:
                        raise
                    time.sleep(0.05 * attempt)
            self._writes_since_compaction += 1
            if self._writes_since_compaction >= COMPACT_EVERY:
                self._maintain()

    def maintain(self) -> None:
        """Compact fragments, fold new rows into the indexes, and build the vector index
        of a table that has grown past ``vector_index_at`` rows."""
        with self._writing():
            self._maintain()

    def _maintain(self) -> None:
        self._writes_since_compaction = 0
        for name, table in self._tables.items():
            # An index made before one of its scalar indexes (or with another kind) gets
            # it here, not on open (a reader may not write).
            _index_scalars(table, name)
            vector = next((ix for ix in table.list_indices() if ix.columns == ["vector"]), None)
            if vector is None and table.count_rows() >= self.vector_index_at:
                # HNSW over scalar-quantized vectors: good recall without a PQ training step;
                # filtered queries prefilter, so they stay exact in what they admit.
                table.create_index("vector", config=_hnsw())
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", _SHORT_RETENTION, UserWarning)
                table.optimize(cleanup_older_than=self.keep_versions)
            # Each optimize indexes the rows written since in a delta index of its own,
            # which every query then searches too: past ``max_vector_deltas`` of them,
            # the index is built again over all rows.
            if vector is not None:
                stats = table.index_stats(vector.name)
                if stats is not None and stats.num_indices > self.max_vector_deltas:
                    table.create_index("vector", config=_hnsw(), replace=True)

    # -- reads -----------------------------------------------------------------
    # Queries run on the AsyncTable that each of LanceDB's tables wraps (``_reader``), on
    # LanceDB's own event loop: both sides of a hybrid query run at once, and no query
    # pays the synchronous wrapper's extra schema reads (2-3 ms a query here). Their
    # Arrow results are turned into Python in the calling thread, not on that loop.

    def ranked(
        self,
        table: str,
        vector: Matrix | None,
        text: str | None,
        where: str,
        limit: int,
        also: Sequence[tuple[Matrix, str]] = (),
    ) -> tuple[Ranking, Ranking, list[Ranking]]:
        """Both sides of a hybrid query, run at once. By meaning: the ``limit`` rows
        nearest ``vector``, scored by cosine similarity (past ``vector_index_at`` rows
        the approximate index picks them; their scores are still exact, computed again
        from the stored vectors, so a threshold means one thing at every size). By text:
        the ``limit`` rows that best match ``text`` (BM25), with their stored vectors. A
        side without its ``vector`` or ``text`` (or with a blank text) finds nothing.
        ``also``: more (vector, where) queries by meaning, run with them (``by_vectors``)."""

        def run(reader: Any) -> list[pa.Table | None]:
            async def sides() -> list[pa.Table | None]:
                return list(
                    await asyncio.gather(
                        _nearest(reader, vector, where, limit),
                        _matching(reader, text, where, limit),
                        *(_nearest(reader, v, w, limit) for v, w in also),
                    )
                )

            return _run(sides())

        by_vector, by_text, *more = self._read(table, run)
        return _by_distance(by_vector), _by_score(by_text), [_by_distance(m) for m in more]

    def by_vectors(
        self, table: str, queries: Sequence[tuple[Matrix, str]], limit: int
    ) -> list[Ranking]:
        """For each (vector, where) query, the ``limit`` rows nearest its vector among the
        rows it admits (``ranked``'s side by meaning); ``_AT_ONCE`` queries run at once."""

        def run(reader: Any) -> list[Ranking]:
            async def each(chunk: Sequence[tuple[Matrix, str]]) -> list[pa.Table | None]:
                nearest = (_nearest(reader, v, where, limit) for v, where in chunk)
                return list(await asyncio.gather(*nearest))

            found: list[Ranking] = []
            for start in range(0, len(queries), _AT_ONCE):
                chunk = queries[start : start + _AT_ONCE]
                found += [_by_distance(h) for h in _run(each(chunk))]
            return found

        return self._read(table, run)

    def ids(self, table: str, column: str = "id") -> set[str]:
        """Every distinct value of ``column`` (a string column) in ``table``."""
        found = self._read(table, lambda r: _run(r.query().select([column]).to_arrow()))
        return set(found.column(column).to_pylist())

    def rows(self, table: str, ids: Sequence[str], columns: Sequence[str]) -> list[dict[str, Any]]:
        if not ids:
            return []

        def run(reader: Any) -> list[dict[str, Any]]:
            query = (
                reader.query().where(f"id IN ({quoted(ids)})").select(list(columns)).limit(len(ids))
            )
            return list(_run(query.to_arrow()).to_pylist())

        return self._read(table, run)

    def _read(self, table: str, run: Callable[[Any], T]) -> T:
        """``run(reader)`` on the ``lancedb.AsyncTable`` of ``table`` that reads should
        use (``_copy``, else the index itself), chosen here, outside LanceDB's loop (a
        table asked for its version from inside it deadlocks). A failed read on the copy
        is run again on the index itself."""
        copy = self._copy(table)
        if copy is None:
            return run(self._tables[table]._table)
        try:
            return run(copy)
        except Exception:
            log.warning(
                "a read of the local copy of %s failed; read the store", table, exc_info=True
            )
            return run(self._tables[table]._table)

    def _copy(self, table: str) -> Any | None:
        """The local copy's AsyncTable of ``table`` when there is one, it was refreshed
        within ``STALE_AFTER`` and it holds this process's last commit of the table."""
        if self._cache is None or not self._cache.fresh_within(STALE_AFTER):
            return None
        try:
            if not self._cached:  # its first open failed: now that a refresh worked
                self._open_cached(refresh=False)
            cached = self._cached[table]
            if cached.version >= self._committed.get(table, 0):
                return cached._table
        except Exception:  # a copy being refreshed, or broken: the store itself
            log.debug("the local copy of %s cannot serve this read", table, exc_info=True)
        return None

    # -- internals -------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Held around every change: one thread of this process, and one process of all
        that share the index. LanceDB itself lets two processes that merge the same new
        id both insert it (two rows, one id); taking turns, the second one updates."""
        if self._holder == threading.get_ident():  # already this thread's turn
            yield
            return
        with self._lock, self._write_lock():
            self._holder = threading.get_ident()
            try:
                if self._db.read_consistency_interval:  # reads may lag: write on the latest
                    for table in getattr(self, "_tables", {}).values():
                        table.checkout_latest()
                yield
            finally:
                self._holder = None
                if self._cache is not None:  # search the store until the copy has these
                    tables = getattr(self, "_tables", {})
                    self._committed = {n: t.version for n, t in tables.items()}

    def writing(self) -> AbstractContextManager[None]:
        """Hold the write turn across several changes: a syncer reads what to write from
        SQL inside it, so a slower syncer can never write an older state over a newer."""
        return self._writing()

    def _open_table(self, name: str) -> Any:
        """Open or create ``name`` with its full-text index (also after a process was
        killed between creating a table and indexing it)."""
        try:
            table = self._db.open_table(name)
        except ValueError:  # not there ("was not found"), though an object store may still
            # list a dropped table's prefix (SeaweedFS keeps the empty directory)
            table = self._db.create_table(
                name,
                schema=_schema(name, self.embedder.dimensions, self.embedder.name),
                exist_ok=True,
            )
        if name == FACTS and METADATA_FIELD.name not in table.schema.names:
            table.add_columns(METADATA_FIELD)  # an index from before metadata: none yet
        if not any(ix.columns == ["text"] for ix in table.list_indices()):
            table.create_index("text", config=_fts(), replace=True)
            _index_scalars(table, name, afresh=True)  # a new table: all of them
        return table


async def _nearest(reader: Any, vector: Matrix | None, where: str, limit: int) -> pa.Table | None:
    """The ``limit`` rows of ``reader`` (an AsyncTable) nearest ``vector`` among those
    ``where`` admits, with their cosine distance."""
    if vector is None:
        return None
    return await (
        reader.query()
        .nearest_to(np.asarray(vector, dtype=np.float32))
        .column("vector")
        .distance_type("cosine")
        .where(where)  # a prefilter
        .refine_factor(1)
        .select(["id", "_distance"])
        .limit(limit)
        .to_arrow()
    )


async def _matching(reader: Any, text: str | None, where: str, limit: int) -> pa.Table | None:
    """The ``limit`` rows of ``reader`` that best match ``text`` (BM25) among those
    ``where`` admits, with their score and stored vector."""
    if text is None or not text.strip():
        return None
    return await (
        reader.query()
        .nearest_to_text(text, columns="text")
        .where(where)  # a prefilter
        .select(["id", "_score", "vector"])
        .limit(limit)
        .to_arrow()
    )


def _by_distance(hits: pa.Table | None) -> Ranking:
    """A vector query's rows as a ``Ranking`` scored by cosine similarity."""
    if hits is None:
        return Ranking([], [])
    distances = hits.column("_distance").to_pylist()
    return Ranking(hits.column("id").to_pylist(), [1.0 - d for d in distances])


def _by_score(hits: pa.Table | None) -> Ranking:
    """A full-text query's rows as a ``Ranking`` scored by BM25, with their vectors."""
    if hits is None:
        return Ranking([], [])
    ids, scores = hits.column("id").to_pylist(), hits.column("_score").to_pylist()
    stored = hits.column("vector").combine_chunks()
    if stored.null_count:  # flatten() would drop them: rows by id instead (search's ``rate``)
        return Ranking(ids, scores)
    vectors = stored.flatten().to_numpy(zero_copy_only=False).reshape(-1, stored.type.list_size)
    return Ranking(ids, scores, np.asarray(vectors, dtype=np.float32))


def _run(query: Coroutine[Any, Any, T]) -> T:
    """``query`` run to its end on LanceDB's event loop, the thread its synchronous API
    runs on (imported here, as ``lancedb`` is: it is slow to import)."""
    from lancedb.background_loop import LOOP

    return cast("T", LOOP.run(query))
