"""One store at one size: ingest rates, query latency, reopen, memory and disk, re-verification.

    python bench/store_scale.py --facts 10000 [--gated 500] [--queries 100] [--reverify 500]
    python bench/store_scale.py --facts 1000000 --no-index
    python bench/store_scale.py --facts 100000 --postgres

Builds a SQLite store with its LanceDB index from the seeded synthetic World
(``bench/synthetic.py``): ``facts`` memories written ungated through ``add_facts``
in batches of 1,000 (the near-duplicate check off, as for a bulk import; the
embedding model loaded before the clock starts), then ``gated`` more through the
embedded gate in batches of 100, a share of them (``--ungrounded``) given another
turn's evidence so that the audit log has rejections. Then p50/p95 latency of
reads (``get_fact``, ``facts_about``, 2-hop ``neighborhood`` from random entities
and from the most popular person, search in each mode, the audit queries), the
time to reopen the store, peak RSS, on-disk size, and a re-verification run over
up to ``reverify`` facts marked due (the gate's result cache cold; only the gated
facts it accepted can be due, as ungated facts are never re-verified). Run one
size per process so peak RSS is that size's. Results go to
``bench/results/store_<facts>.json`` with the machine, the date, the commit and
the command.

``--no-index`` builds the store without its search index, for a size whose
embedding would not fit a run (``make bench-large``'s 1,000,000 facts): SQL, the
graph reads, the audit queries, reopen, memory and re-verification are measured as
above, search is not, and instead the embedder's rate here is measured on a sample
of the World's texts, with the time the index's texts (each stored fact and each
piece of evidence) would take to embed at that rate: the floor of building it.

``--postgres`` keeps the facts in a PostgreSQL server the script starts (as the
tests start theirs: ``tests/support/postgres_server.py``, fsync off), the index on
local disk; its peak RSS is this process's, not the server's.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

import lancedb
import sqlalchemy as sa
from measure import RESULTS, directory_mib, forget_embeddings, percentiles, provenance, save
from synthetic import KINDS, World

import memstore
from gate import Gate, create_backend
from gate.backends.embedded.onnx_minilm import PRECISIONS
from memstore.index.embeddings import MiniLM
from memstore.index.outbox import SYNC_BATCH
from memstore.index.rows import CHUNKS, FACTS
from memstore.write.hook import GateHook

NAMESPACE = "user:bench"
#: Seconds one latency series may take before it stops (after a few calls): the 2-hop
#: queries of a large store return a good share of it.
BUDGET_S = 60.0


def timed(
    call: Callable[[Any], Any], args: Sequence[Any], budget: float = BUDGET_S, least: int = 5
) -> tuple[dict[str, float], list[Any]]:
    """Latency percentiles of ``call(arg)`` over ``args`` (stopping once ``budget`` seconds
    are spent and ``least`` calls made), and what each call returned. Before each call
    (untimed) the encoder forgets its recent texts: a search embeds its query."""
    samples, out = [], []
    for arg in args:
        forget_embeddings()
        began = time.perf_counter()
        out.append(call(arg))
        samples.append(time.perf_counter() - began)
        if len(samples) >= least and sum(samples) > budget:
            break
    return percentiles(samples), out


def peak_rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def postgres_mib(url: str) -> float:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            size = connection.execute(sa.text("SELECT pg_database_size(current_database())"))
            return round(size.scalar_one() / 2**20, 1)
    finally:
        engine.dispose()


def sqlite_mib(data: Path) -> float:
    files = [data / f"memstore.db{suffix}" for suffix in ("", "-wal", "-shm")]
    return round(sum(f.stat().st_size for f in files if f.exists()) / 2**20, 1)


def index_tables(data: Path) -> dict[str, dict[str, Any]]:
    """Rows of each LanceDB table, whether it has a vector index (else: flat scans) and its
    fragments (compacted every 64 index writes; many small ones slow scans down)."""
    db = lancedb.connect(str(data / "index"))
    out = {}
    for name in (FACTS, CHUNKS):
        table = db.open_table(name)
        stats: Any = table.stats()  # a dict at run time, whatever its annotation says
        out[name] = {
            "rows": table.count_rows(),
            "vector_index": any(ix.columns == ["vector"] for ix in table.list_indices()),
            "fragments": stats["fragment_stats"]["num_fragments"],
        }
    return out


def tenths(marks: list[tuple[int, float]], total: int) -> list[dict[str, float]]:
    """Facts/s over each tenth of a run, from (facts done, seconds) after each batch."""
    out, last = [], (0, 0.0)
    for k in range(1, 11):
        mark = next(m for m in marks if m[0] >= -(-k * total // 10))
        if mark[0] > last[0]:
            rate = (mark[0] - last[0]) / (mark[1] - last[1])
            out.append({"facts": mark[0], "facts_per_second": round(rate, 1)})
            last = mark
    return out


def ungated_ingest(
    store: memstore.Store, world: World, picks: set[int], index: bool = True
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Write the World; returns the report, the ids at positions ``picks`` and every
    entity name written (sorted)."""
    if index:
        store.search("warm up the embedding model", 1)
    ids: list[str] = []
    names: set[str] = set()
    deduplicated = 0
    marks: list[tuple[int, float]] = []
    done, tenth = 0, 1
    started = time.perf_counter()
    for batch in world.batches(1_000):
        names.update(m[0] for item in batch for m in item["members"])
        for n, fact in enumerate(store.add_facts(batch), start=done):
            deduplicated += isinstance(fact, memstore.FactPublic) and fact.deduplicated
            if n in picks:
                ids.append(fact.id)
        done += len(batch)
        marks.append((done, time.perf_counter() - started))
        if done >= tenth * world.facts / 10:
            rate = done / marks[-1][1]
            print(f"ungated {done}/{world.facts} facts, {rate:.0f} facts/s", file=sys.stderr)
            tenth = int(done * 10 / world.facts) + 1
    seconds = marks[-1][1]
    report = {
        "facts": done,
        "batch": 1_000,
        "near_duplicate_check": False,
        "deduplicated": deduplicated,  # same statement and members as a stored fact
        "seconds": round(seconds, 1),
        "facts_per_second": round(done / seconds, 1),
        "facts_per_second_by_tenth": tenths(marks, done),
    }
    return report, ids, sorted(names)


def gated_ingest(store: memstore.Store, count: int, ungrounded: float) -> dict[str, Any]:
    """Write ``count`` facts of another World through the store's gate, in batches of 100;
    a seeded ``ungrounded`` share cites the evidence of a fact 50 places later."""
    began = time.perf_counter()
    store.verify_claim("Lena lives in Northhaven.", "Lena: I live in Northhaven.")
    load = time.perf_counter() - began
    items = list(World(facts=count, seed=8).items())
    rng = random.Random(8)
    swapped = set()
    for i in range(len(items)):
        if rng.random() < ungrounded:
            items[i] = {**items[i], "evidence": items[(i + 50) % len(items)]["evidence"]}
            swapped.add(i)
    results: list[Any] = []
    started = time.perf_counter()
    for start in range(0, len(items), 100):
        results.extend(store.add_facts(items[start : start + 100]))
    seconds = time.perf_counter() - started
    accepted = [r for r in results if isinstance(r, memstore.FactPublic)]
    # Rejections of facts that kept their own evidence, by template: the gate's misses.
    missed = Counter(
        items[i]["relation"]
        for i, r in enumerate(results)
        if i not in swapped and not isinstance(r, memstore.FactPublic)
    )
    return {
        "facts": len(items),
        "batch": 100,
        "near_duplicate_check": store.near_duplicate is not None,
        "given_other_evidence": len(swapped),
        "gate_load_seconds_incl_one_check": round(load, 2),
        "seconds": round(seconds, 1),
        "facts_per_second": round(len(items) / seconds, 1),
        "accepted": len(accepted),
        "rejected": len(results) - len(accepted),
        # The same write refused the same way again is counted on its rejection, no new row.
        "refused_again": len(results)
        - len(accepted)
        - len({r.id for r in results if not isinstance(r, memstore.FactPublic)}),
        "rejected_of_given_other_evidence": sum(
            1 for i in swapped if not isinstance(results[i], memstore.FactPublic)
        ),
        "rejected_own_evidence_by_relation": dict(missed.most_common()),
        "deduplicated": sum(1 for r in accepted if r.deduplicated),
        "stored_status": dict(Counter(r.status for r in accepted)),
        # A fact deduplicated against an ungated one answers with that one's verdict.
        "verdicts": dict(Counter(r.verdict for r in results)),
    }


def latencies(
    store: memstore.Store,
    world: World,
    ids: list[str],
    names: list[str],
    queries: int,
    hub_repeats: int,
    budget: float,
    index: bool,
) -> dict[str, Any]:
    """p50/p95 of each read (search only with an ``index``); calls that return facts
    report how many (kept as counts only, so a large store's answers are not all held
    at once)."""
    rng = random.Random(7)
    known = set(names)
    out: dict[str, Any] = {}
    series: dict[str, tuple[Callable[[Any], Any], Sequence[Any], int]] = {
        "get_fact": (store.get_fact, [rng.choice(ids) for _ in range(queries)], 5),
    }
    per_kind = [[n for n in world.popular(kind, queries) if n in known] for kind in KINDS]
    series["facts_about_popular"] = (
        lambda e: len(store.facts_about(e)),  # one page: at most 100 since bounded reads
        [n for row in zip(*per_kind, strict=False) for n in row][:queries],
        5,
    )
    series["neighborhood_2hop_random"] = (
        lambda e: len(store.neighborhood(e, 2).facts),
        [rng.choice(names) for _ in range(queries)],
        5,
    )
    hub = world.entities["person"][0]  # the most popular person: a hub like "the user"
    series["neighborhood_2hop_hub"] = (
        lambda e: len(store.neighborhood(e, 2).facts),
        [hub] * hub_repeats,
        1,
    )
    asked = world.queries(queries) if index else []
    for mode in ("hybrid", "vector", "text") if index else ():
        series[f"search_{mode}_k10"] = (partial(store.search, k=10, mode=mode), asked, 5)
    counts = store.count_rejections()
    verdict = max(counts, key=counts.__getitem__) if counts else "insufficient_evidence"
    series["rejections_by_verdict_50"] = (
        lambda v: store.rejections(verdict=v, limit=50),
        [verdict] * queries,
        5,
    )
    series["count_rejections"] = (lambda _: store.count_rejections(), range(queries), 5)
    for name, (call, args, least) in series.items():
        out[name], found = timed(call, args, budget, least)
        if name.startswith(("facts_about", "neighborhood")):
            out[name]["mean_facts"] = round(statistics.mean(found), 1)
    out["neighborhood_2hop_hub"]["entity"] = hub
    out["rejections_by_verdict_50"]["verdict"] = verdict
    return out


def reverify(store: memstore.Store, limit: int) -> dict[str, Any]:
    """Mark the gate-checked facts due and re-check up to ``limit``, the gate's cache cold."""
    assert isinstance(store.hook, memstore.GateHook)
    cold = Gate(store.hook.gate.backend, cache_size=0)
    forget_embeddings()  # nor the embeddings of the claims it checked at ingest
    due = store.mark_due()
    report = store.reverify(limit=limit, gate=cold)
    return {
        "due": due,
        **{k: v for k, v in report.summary().items() if k != "duration_s"},
        "seconds": round(report.duration_s, 2),
        "facts_per_second": round(report.checked / report.duration_s, 1),
    }


def embedded_gate(precision: str) -> Gate:
    """A gate over the embedded backend with MiniLM's graph of ``precision``."""
    return Gate(create_backend("embedded", precision=precision))


def embedding_floor(
    world: World, texts: int, precision: str, sample: int = 2_000
) -> dict[str, Any]:
    """The least time building the index of ``texts`` texts would take here: MiniLM's
    rate (its graph of ``precision``) on the statements and the evidence of the World's
    first ``sample`` facts (in the index writer's batches, the model loaded before the
    clock)."""
    items = list(islice(world.items(), sample))
    written = list(dict.fromkeys(item["statement"] for item in items))
    written += list(dict.fromkeys(text for item in items for text in item["evidence"]))
    embedder = MiniLM(precision)
    embedder.embed(written[:8])
    forget_embeddings()
    began = time.perf_counter()
    for start in range(0, len(written), SYNC_BATCH):
        embedder.embed(written[start : start + SYNC_BATCH])
    rate = len(written) / (time.perf_counter() - began)
    return {
        "sample_texts": len(written),
        "texts_per_second": round(rate, 1),
        "texts": texts,
        "minutes": round(texts / rate / 60, 1),
    }


def start_postgres(stack: contextlib.ExitStack, parser: argparse.ArgumentParser) -> str:
    """A new database on a PostgreSQL server started for this run (stopped with ``stack``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
    from postgres_server import PostgresServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        parser.error("--postgres needs PostgreSQL (apt-get install postgresql)")
    server = PostgresServer(bindir)
    try:
        server.start()
    except BaseException:
        shutil.rmtree(server.root, ignore_errors=True)
        raise
    stack.callback(server.stop)
    return server.new_database()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--gated", type=int, default=500, help="facts written through the gate")
    parser.add_argument("--ungrounded", type=float, default=0.2, help="share of gated facts")
    parser.add_argument("--queries", type=int, default=100, help="timed samples per query")
    parser.add_argument("--hub-repeats", type=int, default=3, help="timed 2-hop hub queries")
    parser.add_argument("--reverify", type=int, default=500, help="facts re-verified")
    parser.add_argument(
        "--budget", type=float, default=BUDGET_S, help="seconds per latency series, at most"
    )
    parser.add_argument(
        "--no-index",
        action="store_true",
        help="no search index: search is not measured, the time to embed it is",
    )
    parser.add_argument(
        "--postgres", action="store_true", help="the facts in PostgreSQL (started here)"
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="float32",
        help="the MiniLM graph of the index and of the embedded gate (int8: quantized)",
    )
    parser.add_argument("--dir", type=Path, help="keep the store here (default: a temp dir)")
    parser.add_argument("--out", type=Path, help="default: bench/results/store_<facts>.json")
    args = parser.parse_args()
    database = "postgresql" if args.postgres else "sqlite"
    suffix = "_postgresql" if args.postgres else ""
    if args.precision != "float32":
        suffix += f"_{args.precision}"
    out = args.out or RESULTS / f"store_{args.facts}{suffix}.json"
    result: dict[str, Any] = {**provenance("store_scale"), "facts": args.facts}
    result["precision"] = args.precision
    index = not args.no_index
    result["index"], result["database"] = index, database
    rss: dict[str, float] = {}
    world = World(facts=args.facts, seed=7)
    picks = set(random.Random(7).sample(range(args.facts), min(args.facts, args.queries)))
    with contextlib.ExitStack() as stack:
        if args.dir is None:
            data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memstore-scale-")))
        else:
            data = args.dir
            if data.exists() and any(data.iterdir()):
                parser.error(f"--dir {data} is not empty")
        target: str | Path = data
        if args.postgres:
            target = start_postgres(stack, parser)
        # Without an index there is no near-duplicate check either.
        # The embedded gate of that precision, built on the first gated write (as the
        # store's default gate is): the ungated build never loads it.
        gated = GateHook(load=partial(embedded_gate, args.precision))
        options: dict[str, Any] = {
            "index": str(data / "index"),
            "embedder": MiniLM(args.precision),
            "hook": gated,
        }
        if not index:
            options = {"index": False, "near_duplicate": None, "hook": gated}
        build = {**options, "hook": memstore.Ungated(), "near_duplicate": None}
        with memstore.open(target, NAMESPACE, **build) as store:
            result["ungated_ingest"], ids, names = ungated_ingest(store, world, picks, index)
        rss["after_build"] = peak_rss_mib()
        began = time.perf_counter()
        store = stack.enter_context(memstore.open(target, NAMESPACE, **options))
        result["open_after_build_seconds"] = round(time.perf_counter() - began, 2)
        print("gated ingest", file=sys.stderr)
        result["gated_ingest"] = gated_ingest(store, args.gated, args.ungrounded)
        rss["after_gated_ingest"] = peak_rss_mib()
        if index:
            result["index_tables"] = index_tables(data)
        print("latency", file=sys.stderr)
        result["latency"] = latencies(
            store, world, ids, names, args.queries, args.hub_repeats, args.budget, index
        )
        rss["after_latency"] = peak_rss_mib()
        del ids, names
        store.close()
        began = time.perf_counter()
        store = stack.enter_context(memstore.open(target, NAMESPACE, **options))
        result["reopen_seconds"] = round(time.perf_counter() - began, 2)
        print("re-verification", file=sys.stderr)
        result["reverify"] = reverify(store, args.reverify)
        result["stats"] = store.stats().model_dump(exclude={"namespace"})
        result["disk_mib"] = {
            "database": postgres_mib(str(target)) if args.postgres else sqlite_mib(data),
            "index": directory_mib(data / "index") if index else None,
        }
        rss["end"] = peak_rss_mib()
        result["peak_rss_mib"] = rss
        if not index:
            stats = result["stats"]
            texts = sum(stats["facts"].values()) + stats["evidence"]
            result["index_floor"] = embedding_floor(world, texts, args.precision)
        store.close()
    save(result, out)


if __name__ == "__main__":
    main()
