"""The floors under issue 26's unmet read goals, measured part by part on one machine.

    python bench/results/experiments/floors-2026-11-29/floors.py [--facts 10000]
        [--store DIR --facts N]

A store of ``synthetic.World(facts, seed=7)`` written ungated into the search index,
which is then compacted and indexed (``SearchIndex.maintain``); ``--store``: an existing
``bench/store_scale.py`` store instead, opened as it is (``--facts``: the count it
was built with, whose world names the entities and questions). Then, the p50 over 60
calls each (after one untimed pass), the parts taking turns on each call:

- the 2-hop ``neighborhood`` of 60 distinct random entities the store holds: end
  to end; its SQL statements replayed on the raw ``sqlite3`` connection, fetched to the
  end (what SQLite itself takes); and its result built again from plain data
  (``NeighborhoodPublic.model_validate`` of its own dump: the pydantic objects alone).
- hybrid ``search`` (top 10) of the bench's questions: end to end; the query's embedding;
  LanceDB's vector side and text side each alone, and both at once.
- imports, each in a fresh interpreter (p50 of 5 rounds in turns, ``IMPORTS``): Python
  alone; LanceDB as memstore imports it; ``sqlmodel`` (with SQLAlchemy and pydantic);
  ``memstore.store``; and the store with LanceDB, what ``memstore search`` imports
  before it reads.

Nothing here is tuned: it measures what the goals stand on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import sqlalchemy as sa
from measure import forget_embeddings, provenance
from store_scale import NAMESPACE
from synthetic import World

import memstore
from memstore.index.lance import FACTS, _run
from memstore.index.rows import Filter
from memstore.schemas import NeighborhoodPublic
from memstore.storage.tables import ACTIVE_STATUSES

CALLS = 60


def interleaved(runs: dict[str, Callable[[Any], Any]], args: list[Any]) -> dict[str, Any]:
    """The median ms of each of ``runs`` over ``args``, after one untimed pass. The runs
    take turns on each argument, so that all of them see the machine in the same state
    (a shared 2-core machine drifts by a third within minutes), starting one later on
    each argument, so that none always finds the caches another left, and none finds
    the encoder's recent vectors (``forget_embeddings`` first); ``took`` holds
    every sample, run by run, in the order of ``args``, for ratios per call."""
    for a in args:
        for run in runs.values():
            run(a)
    names = list(runs)
    took: dict[str, list[float]] = {name: [] for name in runs}
    for i, a in enumerate(args):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            forget_embeddings()  # each run embeds its text as a first one does
            began = time.perf_counter()
            runs[name](a)
            took[name].append((time.perf_counter() - began) * 1000)
    return {
        "ms_p50": {name: round(statistics.median(t), 2) for name, t in took.items()},
        "took": took,
    }


def statements(engine: sa.Engine, call: Callable[[], Any]) -> list[tuple[str, Any]]:
    """The (SQL, parameters) ``call`` sends to the database, in order."""
    sent: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, sql: str, params: Any, _ctx: Any, _many: bool) -> None:
        sent.append((sql, params))

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        call()
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    return sent


#: What a fresh interpreter runs for ``imports_ms_p50``: an empty start; LanceDB as
#: memstore imports it (``memstore.index.lancedb_import``); SQLModel with SQLAlchemy and
#: pydantic; the store; the store and LanceDB, which ``memstore search`` needs.
IMPORTS = {
    "python_alone": "pass",
    "lancedb_as_memstore_imports_it": (
        "from memstore.index.lancedb_import import import_lancedb; import_lancedb()"
    ),
    "sqlmodel": "import sqlmodel",
    "memstore.store": "import memstore.store",
    "memstore.store_and_lancedb": (
        "import memstore.store; from memstore.index.lancedb_import import import_lancedb; "
        "import_lancedb()"
    ),
}


def imports_ms() -> dict[str, float]:
    """The median wall ms of a fresh interpreter running each of ``IMPORTS``: 5 rounds
    in which each takes its turn, after one untimed round."""
    took: dict[str, list[float]] = {name: [] for name in IMPORTS}
    for round_ in range(6):
        for name, code in IMPORTS.items():
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            if round_:
                took[name].append((time.perf_counter() - began) * 1000)
    return {name: round(statistics.median(t), 1) for name, t in took.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--store", type=Path, help="an existing store_scale.py store")
    args = parser.parse_args()
    world = World(facts=args.facts, seed=7)
    tmp = tempfile.TemporaryDirectory(prefix="floors-")
    path = args.store or Path(tmp.name) / "store"
    if args.store is None:
        with memstore.open(path, NAMESPACE, near_duplicate=None) as store:
            items = list(world.items())
            for start in range(0, len(items), 1000):
                store.add_facts(items[start : start + 1000], ungated=True)
            store.sync_index()
            store._index.ready().maintain()  # compacted and indexed, as the store keeps it
    out: dict[str, Any] = {**provenance("floors"), "facts": args.facts, "store": str(path)}
    with memstore.open(path, NAMESPACE, index=path / "index", near_duplicate=None) as store:
        rng = random.Random(7)
        names = [n for kind in world.entities for n in world.entities[kind]]
        asked: list[str] = []  # CALLS distinct names the store holds
        while len(asked) < CALLS:
            name = rng.choice(names)
            if name in asked:
                continue
            try:
                store.neighborhood(name, 2)
            except memstore.NotFound:  # a name of the world no fact drew
                continue
            asked.append(name)
        engine = store._scope.engine
        raw = engine.raw_connection()
        sqlite = raw.driver_connection
        sent = {name: statements(engine, lambda n=name: store.neighborhood(n, 2)) for name in asked}

        def replay(name: str) -> None:
            for sql, params in sent[name]:
                sqlite.execute(sql, params).fetchall()

        dumped = {name: store.neighborhood(name, 2).model_dump() for name in asked}
        parts = interleaved(
            {
                "end_to_end": lambda n: store.neighborhood(n, 2),
                "sqlite_alone": replay,
                "pydantic_build_alone": lambda n: NeighborhoodPublic.model_validate(dumped[n]),
            },
            asked,
        )
        took = parts.pop("took")
        floor = [
            (sql + build) / whole
            for whole, sql, build in zip(
                took["end_to_end"], took["sqlite_alone"], took["pydantic_build_alone"], strict=True
            )
        ]
        out["neighborhood_2hop"] = {
            "facts_returned_mean": statistics.mean(len(d["facts"]) for d in dumped.values()),
            "statements_mean": statistics.mean(len(s) for s in sent.values()),
            **parts,
            "floor_share_of_end_to_end_p50": round(statistics.median(floor), 2),
        }
        raw.close()
        questions = world.queries(CALLS)
        index = store._index.ready()
        where = Filter(NAMESPACE, statuses=sorted(ACTIVE_STATUSES)).sql(FACTS)  # search's
        vectors = {q: index.embed([q])[0] for q in questions}

        def side(query: str, by: str) -> Any:
            if by == "vector":
                return index._nearest(FACTS, vectors[query], where, 30)
            return index._matching(FACTS, query, where, 30)

        async def both(query: str) -> Any:
            return await asyncio.gather(side(query, "vector"), side(query, "text"))

        parts = interleaved(
            {
                "end_to_end": lambda q: store.search(q, k=10),
                "embed_one_query": lambda q: index.embed([q]),
                "lancedb_vector_side": lambda q: _run(side(q, "vector")),
                "lancedb_text_side": lambda q: _run(side(q, "text")),
                "lancedb_both_at_once": lambda q: _run(both(q)),
            },
            questions,
        )
        took = parts.pop("took")
        floor = [
            (m + both_sides) / e
            for e, m, both_sides in zip(
                took["end_to_end"],
                took["embed_one_query"],
                took["lancedb_both_at_once"],
                strict=True,
            )
        ]
        out["search_hybrid_k10"] = {
            **parts,
            "floor_share_of_end_to_end_p50": round(statistics.median(floor), 2),
        }
    out["imports_ms_p50"] = imports_ms()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
