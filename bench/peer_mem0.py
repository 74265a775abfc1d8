"""memstore beside mem0 (open source, local and offline) on the same synthetic facts.

    python bench/peer_mem0.py [--facts 2000] [--queries 50] [--probes 50] [--single 100]
                              [--paced 100] [--pause-ms 250] [--threads 0]
                              [--index-writes inline|background] [--out PATH]

One process, one data set: ``synthetic.World(facts, seed=7)``, the same packaged
all-MiniLM-L6-v2 for both, every model loaded before a clock starts. mem0 (``mem0ai``)
runs as a user would run it locally and offline: ``Memory.from_config`` with the
huggingface embedder on the packaged model directory, Qdrant in local mode on disk
(mem0's default), its history SQLite file in the temporary directory, telemetry off
and ``infer=False`` on every add, so no LLM is called (its constructor insists on an
OpenAI key: it gets a dummy one and a base URL on a closed local port). memstore
writes the same statements with their members and evidence, the gate off
(``memstore.Ungated()``) and the near-duplicate report off (mem0 without inference
compares nothing either), to SQLite with its LanceDB index.

Writes: the first ``facts - single - paced`` facts through mem0 ``add`` (one fact a
call, the only way to give each its metadata) and memstore ``add_facts`` (batches of
100); the next ``single`` through mem0 ``add`` with a list of messages (its only
multi-item form, one call per batch) and memstore ``add_fact``, one at a time, back to
back; the last ``paced`` through mem0 ``add`` and memstore ``add_fact`` one at a time
with ``pause_ms`` between calls, as an agent writes a memory a turn (each call timed;
for memstore with background index writes also the time until the index holds the
fact, ``measure.paced_writes``, and the index caught up before the first). Then search latency at
k=10 on ``world.queries``, hit@10 for probes built from sampled facts (see ``probe``),
and the size of each store's directory. Every Python-level socket connection and DNS
lookup is blocked and recorded. ``--index-writes background``: memstore's writes
return once SQL holds them and a thread indexes them; ``sync_index()`` waits for the
index before the searches, and its time is reported beside the write rates.

Torch keeps its default threads (``--threads N`` sets them; both systems share the
process and the setting). Run it on an otherwise idle machine: on two cores shared
with other work, two torch threads made a one-sentence encode about eight times
slower (82 vs 11 ms), which swamps what is being compared. Results go to
``bench/results/peer_mem0_<facts>.json`` with the machine, the date, the commit and the command.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import socket
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

from measure import (
    RESULTS,
    SEED,
    directory_mib,
    forget_embeddings,
    paced_writes,
    percentiles,
    provenance,
    save,
)
from synthetic import World

import memstore
from gate.backends.embedded.backend import minilm_path

K = 10
BATCH = 100
USER = "bench"
#: A question per relation that names every member of the fact in other words than
#: its statement (the statements are ``synthetic.TEMPLATES``).
PARAPHRASES = {
    "lives_in": "Is {0}'s home in {1}?",
    "works_at": "Is {0} employed by {1}?",
    "allergic_to": "Can {0} safely eat {1}?",
    "likes": "Is {1} {0}'s favourite dish?",
    "friends_with": "Are {0} and {1} close?",
    "leads": "Is {0} in charge of {1}?",
    "met_at": "Did {0} first get to know {1} at the {2}?",
    "works_on": "Is {0} on the {1} team at {2}?",
    "based_in": "Is {0} headquartered in {1}?",
    "moved_to": "Did {0} relocate to {2} for a job at {1}?",
    "trip": "Are {0}, {1} and {2} travelling to {3} together?",
    "attended": "Did {0} and {1} of {2} go to the {3}?",
}
#: The question each fact answers: it names the other members, not the answer.
QUESTIONS = {
    "lives_in": "Where does {0} live?",
    "works_at": "Who does {0} work for?",
    "allergic_to": "What is {0} allergic to?",
    "likes": "What food does {0} love?",
    "friends_with": "Who is {0} friends with?",
    "leads": "Who leads the {1} project?",
    "met_at": "Where did {0} meet {1}?",
    "works_on": "What does {0} work on for {2}?",
    "based_in": "Where is {0} based?",
    "moved_to": "Why did {0} move to {2}?",
    "trip": "Where are {0}, {1} and {2} going?",
    "attended": "Which event did {0} and {1} attend?",
}


@contextmanager
def network_blocked() -> Iterator[list[str]]:
    """Refuse and record every DNS lookup and IP connection made through Python's socket."""
    attempts: list[str] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(f"connect {address!r}")
            raise OSError("network blocked by bench/peer_mem0.py")
        connect(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        attempts.append(f"getaddrinfo {host!r}")
        raise socket.gaierror("network blocked by bench/peer_mem0.py")

    socket.socket.connect = guarded_connect  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = guarded_getaddrinfo
    try:
        yield attempts
    finally:
        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.getaddrinfo = getaddrinfo


def facts_of(item: dict[str, Any]) -> dict[str, Any]:
    """What mem0 keeps beside a fact's statement: its relation, members and evidence."""
    return {
        "relation": item["relation"],
        "members": [list(member) for member in item["members"]],
        "evidence": item["evidence"],
    }


def ratio(a: float, b: float) -> float:
    """``a / b`` to two decimals."""
    return round(a / b, 2)


def rate(count: int, seconds: float) -> dict[str, float]:
    """A write throughput record."""
    return {
        "facts": count,
        "seconds": round(seconds, 1),
        "facts_per_second": round(count / seconds, 1),
    }


def probe(item: dict[str, Any], counts: Counter[str]) -> dict[str, str]:
    """The queries for one fact: a paraphrase naming all its members, the question it
    answers, and the member that is in the fewest facts of the world (its key entity)."""
    names = [name for name, _kind, _role in item["members"]]
    return {
        "paraphrase": PARAPHRASES[item["relation"]].format(*names),
        "question": QUESTIONS[item["relation"]].format(*names),
        "entity": min(names, key=lambda name: (counts[name], names.index(name))),
    }


def answering(item: dict[str, Any], items: list[dict[str, Any]]) -> int:
    """How many facts answer ``item``'s question: same relation, and among their members
    every name the question mentions."""
    names = [name for name, _kind, _role in item["members"]]
    asked = {names[int(i)] for i in re.findall(r"\{(\d)\}", QUESTIONS[item["relation"]])}
    return sum(
        other["relation"] == item["relation"]
        and asked <= {name for name, _kind, _role in other["members"]}
        for other in items
    )


def mem0_config(root: Path) -> dict[str, Any]:
    """mem0's configuration: local embedder, local Qdrant on disk, history beside it."""
    return {
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": str(minilm_path()),
                "model_kwargs": {"device": "cpu", "local_files_only": True},
            },
        },
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": USER,
                "embedding_model_dims": 384,
                "path": str(root / "qdrant"),
            },
        },
        "llm": {  # required by the constructor; never called with infer=False
            "provider": "openai",
            "config": {"api_key": "dummy-never-used", "openai_base_url": "http://127.0.0.1:9/v1"},
        },
        "history_db_path": str(root / "history.db"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=50, help="timed searches per system")
    parser.add_argument("--probes", type=int, default=50, help="facts probed for hit@10")
    parser.add_argument("--single", type=int, default=100, help="facts written one at a time")
    parser.add_argument("--paced", type=int, default=100, help="facts written one a pause")
    parser.add_argument("--pause-ms", type=float, default=250.0, help="the pause of --paced")
    parser.add_argument(
        "--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)"
    )
    parser.add_argument(
        "--index-writes",
        choices=("inline", "background"),
        default="inline",
        help="memstore's index_writes (background: sync_index() before the searches, timed)",
    )
    parser.add_argument("--out", type=Path, help="default: results/peer_mem0_<facts>.json")
    args = parser.parse_args()
    args.out = args.out or RESULTS / f"peer_mem0_{args.facts}.json"
    if min(args.single, args.paced) < 1 or args.single + args.paced >= args.facts:
        parser.error("--single and --paced must be at least 1 and leave facts for the bulk")
    if args.pause_ms < 0:
        parser.error("--pause-ms must be at least 0")
    import torch

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    result: dict[str, Any] = {
        **provenance("peer_mem0"),
        "facts": args.facts,
        "index_writes": args.index_writes,
        "torch_threads": torch.get_num_threads(),
    }
    world = World(facts=args.facts, seed=SEED)
    items = list(world.items())
    first_paced = len(items) - args.paced
    bulk, tail = items[: first_paced - args.single], items[first_paced - args.single : first_paced]
    paced, pause = items[first_paced:], args.pause_ms / 1000
    queries = world.queries(args.queries)
    counts = Counter(name for item in items for name, _kind, _role in item["members"])
    statements = Counter(item["statement"] for item in items)
    # The generator repeats some statements; probe only facts whose statement is unique,
    # so "its id in the top 10" and "that memory in the top 10" are the same thing.
    unique = [n for n, item in enumerate(items) if statements[item["statement"]] == 1]
    probed = sorted(random.Random(SEED).sample(unique, min(args.probes, len(unique))))
    probes = {n: probe(items[n], counts) for n in probed}

    with tempfile.TemporaryDirectory(prefix="peer-mem0-") as tmp, network_blocked() as attempts:
        root = Path(tmp)
        os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is imported
        os.environ["MEM0_DIR"] = str(root / "mem0-home")  # its config.json, not ~/.mem0
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        import mem0
        from mem0 import Memory

        config = mem0_config(root / "mem0")
        m = Memory.from_config(config)  # loads its embedder
        m.search("warm up", filters={"user_id": USER}, top_k=1)
        store = memstore.open(
            root / "memstore",
            f"user:{USER}",
            hook=memstore.Ungated(),
            near_duplicate=None,
            index_writes=args.index_writes,
        )
        store.search("warm up the model", 1)  # loads memstore's

        # Writes: ids in item order, for the probes.
        mem0_ids: list[str] = []
        ms_ids: list[str] = []
        loads = {"before_writes": os.getloadavg()[0]}
        began = time.perf_counter()
        for item in bulk:
            out = m.add(item["statement"], user_id=USER, metadata=facts_of(item), infer=False)
            mem0_ids.append(out["results"][0]["id"])
        mem0_add = rate(len(bulk), time.perf_counter() - began)
        began = time.perf_counter()
        for start in range(0, len(tail), BATCH):
            messages = [
                {"role": "user", "content": i["statement"]} for i in tail[start : start + BATCH]
            ]
            out = m.add(messages, user_id=USER, infer=False)
            mem0_ids.extend(r["id"] for r in out["results"])
        mem0_list = rate(len(tail), time.perf_counter() - began)
        mem0_paced = []
        for item in paced:
            metadata = facts_of(item)
            began = time.perf_counter()
            out = m.add(item["statement"], user_id=USER, metadata=metadata, infer=False)
            mem0_paced.append(time.perf_counter() - began)
            mem0_ids.append(out["results"][0]["id"])
            time.sleep(max(0.0, pause - (time.perf_counter() - began)))
        began = time.perf_counter()
        for start in range(0, len(bulk), BATCH):
            ms_ids.extend(f.id for f in store.add_facts(bulk[start : start + BATCH]))
        ms_batch = rate(len(bulk), time.perf_counter() - began)
        began = time.perf_counter()
        for item in tail:
            ms_ids.append(store.add_fact(item).id)
        ms_single = rate(len(tail), time.perf_counter() - began)
        queued = store.index_backlog()
        began = time.perf_counter()
        store.sync_index()  # inline: nothing queued; background: the index catches up
        caught_up = {"queued": queued, "seconds": round(time.perf_counter() - began, 2)}
        ms_paced = paced_writes(store, paced, pause)
        ms_ids.extend(ms_paced.ids)
        store.sync_index()
        loads["after_writes"] = os.getloadavg()[0]
        assert len(mem0_ids) == len(ms_ids) == len(items)
        result["write"] = {
            "mem0_add_one_fact_per_call": mem0_add,
            "mem0_add_list_of_messages": {**mem0_list, "messages_per_call": BATCH},
            "memstore_add_facts": {**ms_batch, "batch": BATCH},
            "memstore_add_fact": ms_single,
            "memstore_index_after_writes": caught_up,
            "paced": {
                "facts": len(paced),
                "pause_ms": args.pause_ms,
                "mem0_add": percentiles(mem0_paced),
                "memstore_add_fact": percentiles(ms_paced.calls),
                "memstore_in_index_after": (
                    percentiles(ms_paced.in_index) if ms_paced.in_index else None
                ),
                "memstore_not_in_index_within_5_s": ms_paced.late,
                "ratio_memstore_to_mem0_add_p50": ratio(
                    percentiles(ms_paced.calls)["p50_ms"], percentiles(mem0_paced)["p50_ms"]
                ),
            },
            "ratio_memstore_add_facts_to_mem0_add": ratio(
                ms_batch["facts_per_second"], mem0_add["facts_per_second"]
            ),
            "ratio_memstore_add_fact_to_mem0_add": ratio(
                ms_single["facts_per_second"], mem0_add["facts_per_second"]
            ),
        }

        # Search latency and hit@10.
        systems: dict[str, Callable[[str], list[str]]] = {
            "mem0": lambda q: [
                r["id"] for r in m.search(q, filters={"user_id": USER}, top_k=K)["results"]
            ],
            "memstore_hybrid": lambda q: [h.fact.id for h in store.search(q, K)],
            "memstore_vector": lambda q: [h.fact.id for h in store.search(q, K, mode="vector")],
        }
        latency: dict[str, Any] = {}
        for name, search in systems.items():
            samples = []
            for q in queries:
                forget_embeddings()  # memstore's query embedding not kept from the last side
                began = time.perf_counter()
                search(q)
                samples.append(time.perf_counter() - began)
            latency[name] = percentiles(samples)
        for name in ("memstore_hybrid", "memstore_vector"):
            latency[f"ratio_{name}_to_mem0_p50"] = ratio(
                latency[name]["p50_ms"], latency["mem0"]["p50_ms"]
            )
        loads["after_searches"] = os.getloadavg()[0]
        result["search_k10"] = latency
        hits: dict[str, dict[str, float]] = {
            kind: {} for kind in ("paraphrase", "question", "entity")
        }
        for name, search in systems.items():
            ids = mem0_ids if name == "mem0" else ms_ids
            for kind in hits:
                found = sum(ids[n] in search(probes[n][kind]) for n in probed)
                hits[kind][name] = round(found / len(probed), 3)
        result["hit_at_10"] = {
            **hits,
            "probes": len(probed),
            "how": (
                f"{len(probed)} facts sampled (seed {SEED}) among those whose statement occurs "
                "once in the world; a hit is that fact's id in the top 10. 'paraphrase': a "
                "hand-written question per relation naming every member in other words than "
                "the statement (PARAPHRASES in this file); 'question': the question the fact "
                "answers, naming the other members but not the answer (QUESTIONS; other facts "
                "may answer it too); 'entity': the fact's member that is in the fewest facts "
                "of the world, alone as the query."
            ),
            "question_probe_facts_answering_median": statistics.median(
                answering(items[n], items) for n in probed
            ),
            "entity_probe_facts_per_entity_median": statistics.median(
                counts[probes[n]["entity"]] for n in probed
            ),
            "entity_probes_with_at_most_10_facts": sum(
                counts[probes[n]["entity"]] <= K for n in probed
            ),
            "examples": [{"statement": items[n]["statement"], **probes[n]} for n in probed[:3]],
        }

        m.close()
        m.vector_store.client.close()
        store.close()
        mem0_dir, ms_dir = root / "mem0", root / "memstore"
        result["disk_mib"] = {
            "mem0_total": directory_mib(mem0_dir),
            "mem0_qdrant": directory_mib(mem0_dir / "qdrant"),
            "mem0_history_db": round((mem0_dir / "history.db").stat().st_size / 2**20, 2),
            "memstore_total": directory_mib(ms_dir),
            "memstore_sqlite": round((ms_dir / "memstore.db").stat().st_size / 2**20, 2),
            "memstore_index": directory_mib(ms_dir / "index"),
        }
        result["disk_mib"]["ratio_memstore_to_mem0"] = ratio(
            result["disk_mib"]["memstore_total"], result["disk_mib"]["mem0_total"]
        )
        result["load_average_1min"] = {k: round(v, 2) for k, v in loads.items()}
        result["network_attempts"] = list(attempts)

    result["mem0"] = {
        "version": mem0.__version__,
        "packages": {p: version(p) for p in ("mem0ai", "qdrant-client", "sentence-transformers")},
        "config": {  # paths under the run's temporary directory
            **mem0_config(Path("<tmpdir>/mem0")),
            "llm": {"provider": "openai", "config": "dummy key, never called"},
        },
        "environment": {k: os.environ[k] for k in ("MEM0_TELEMETRY", "HF_HUB_OFFLINE")},
        "notes": [
            "infer=False on every add: no LLM call; the dummy OpenAI key only satisfies the "
            "constructor, and its base URL is a closed local port.",
            "search: filters={'user_id': ...} and top_k (mem0 2.x rejects top-level user_id "
            "and has no limit=); default threshold 0.1 and no reranker.",
            "mem0's keyword (BM25) side needs fastembed's Qdrant/bm25 and its lemmatizer and "
            "entity boosts need spaCy's en_core_web_sm, both downloaded at run time: offline "
            "they are off and its search is by embedding only (it logs this). Entity links "
            "are only made by inferred adds anyway.",
            "the metadata of each one-per-call fact holds its relation, members and evidence "
            "(stored, not embedded); the list-of-messages form takes one metadata per call, "
            "so those facts carry none.",
        ],
    }
    result["memstore"] = {
        "version": memstore.__version__,
        "config": "SQLite + LanceDB index, hook=Ungated(), near_duplicate=None, search k=10",
        "notes": [
            "memstore also embeds and indexes each fact's evidence text (about one per two "
            "facts) and keeps the entity hypergraph, work mem0 does not do here.",
        ],
    }
    save(result, args.out)


if __name__ == "__main__":
    main()
