"""Other LanceDB vector index kinds on a copy of a store's facts table, against HNSW-SQ.

    python bench/results/experiments/floors-2026-11-29/vector_indexes.py INDEX_DIR KIND

``INDEX_DIR``: a store's index directory (``bench/store_scale.py --facts 100000``),
copied first to a scratch directory next to this run, which ``KIND`` then indexes again:
``current`` (the store's own IVF-HNSW-SQ, untouched), ``ivfpq``, ``ivfrq``. For 60 of
the bench's questions, with the store's filter (namespace and active statuses): the p50
and p95 ms of the vector side of a search (top 30, as ``search.rank`` asks for top 10),
with ``refine_factor`` 1 (the store's: exact scores, the same rows), none and 10, at
1-40 probes, and for the HNSW index at a search width (``ef``) of 30-100; and its
recall@30 against an exact search of the same filter. The store's own index holds
its delta indexes and unindexed rows as they are; the others are built fresh over all
rows.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import lancedb
import numpy as np
from lancedb.background_loop import LOOP
from lancedb.index import IvfPq, IvfRq
from store_scale import NAMESPACE
from synthetic import World

from memstore.index.embeddings import MiniLM
from memstore.index.rows import FACTS, Filter
from memstore.storage.tables import ACTIVE_STATUSES

source, kind = Path(sys.argv[1]), sys.argv[2]
scratch = tempfile.TemporaryDirectory(prefix="vector-indexes-")
copy = Path(scratch.name) / "index"
shutil.copytree(source, copy)
table = lancedb.connect(copy).open_table(FACTS)
questions = World(facts=100000, seed=7).queries(60)
vectors = np.asarray(MiniLM().embed(questions), dtype=np.float32)
where = Filter(NAMESPACE, statuses=sorted(ACTIVE_STATUSES)).sql(FACTS)  # search's
reader = table._table


def nearest(vector, exact=False, refine=1, nprobes=None, ef=None):
    query = reader.query().nearest_to(vector).column("vector").distance_type("cosine")
    query = query.where(where)
    if refine:
        query = query.refine_factor(refine)
    if exact:
        query = query.bypass_vector_index()
    if nprobes:
        query = query.nprobes(nprobes)
    if ef:
        query = query.ef(ef)
    return LOOP.run(query.select(["id", "_distance"]).limit(30).to_arrow())


truth = [set(nearest(v, exact=True).column("id").to_pylist()) for v in vectors]


def measure(name, **options):
    recall = []
    for _round in range(2):  # the first round warms the caches
        took = []
        for vector, exact in zip(vectors, truth, strict=True):
            began = time.perf_counter()
            found = nearest(vector, **options)
            took.append((time.perf_counter() - began) * 1000)
            recall.append(len(set(found.column("id").to_pylist()) & exact) / 30)
    took.sort()
    print(
        f"{name}: p50 {statistics.median(took):.2f} p95 {took[int(0.95 * len(took))]:.2f} "
        f"recall@30 {statistics.mean(recall):.3f}",
        flush=True,
    )


measure("exact (no index)", exact=True)
configs = {"ivfpq": IvfPq(distance_type="cosine"), "ivfrq": IvfRq(distance_type="cosine")}
if kind in configs:
    began = time.perf_counter()
    table.create_index("vector", config=configs[kind], replace=True)
    print(f"{kind} built in {time.perf_counter() - began:.1f} s")
print(table.index_stats("vector_idx"))
measure(kind)
measure(f"{kind}, no refine", refine=0)
measure(f"{kind}, refine 10", refine=10)
for probes in (1, 5, 10, 40):
    measure(f"{kind}, {probes} probes", nprobes=probes)
if kind == "current":  # the HNSW graph's search width
    for ef in (30, 60, 100):  # at least k (30), LanceDB asks
        measure(f"{kind}, ef {ef}", ef=ef)
