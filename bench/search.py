"""Search on the LanceDB index: write cost, query latency, and where a known fact ranks.

    python bench/search.py [--facts 10000] [--queries 50]

Writes ``facts`` memories (the tests' seeded distractors plus the peanut allergy)
through ``add_facts`` with the gate off, in batches of 1,000, to a SQLite store
with its index; then times searches (hybrid, vector only, text only), records the
peanut fact's rank for a question, a paraphrase and a keyword, times one write
with the near-duplicate check, a rebuild (``reindex``), and an open with nothing
queued. Results go to ``bench/results/search.json`` with the machine, the date,
the commit and the command.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import RESULTS, directory_mib, forget_embeddings, percentiles, provenance, save

import memstore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))
from distractors import distractors

PEANUTS = {
    "statement": "The user is allergic to peanuts.",
    "members": [("user", "person", "patient"), ("peanuts", "food", "allergen")],
    "relation": "allergic_to",
    "evidence": ["User: just so you know, I'm allergic to peanuts."],
}
PROBES = {
    "question": ("what is the user allergic to?", "hybrid"),
    "paraphrase": ("Which nuts must the user never eat?", "vector"),
    "keyword": ("peanuts", "text"),
}
QUERIES = [
    "where does Alice work",
    "who has a pet rabbit",
    "trips the user is planning",
    "which books is the user reading",
    "who speaks Japanese",
    "allergic to shellfish",
    "birthday in March",
    "who loves sushi",
    "hiking hobby",
    "visited Osaka",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50, help="timed searches per mode")
    args = parser.parse_args()
    result: dict[str, Any] = {
        **provenance("search"),
        "facts": args.facts,
    }
    items = list(distractors(args.facts - 1))
    items.insert(len(items) // 2, PEANUTS)
    with tempfile.TemporaryDirectory(prefix="memstore-bench-") as tmp:
        data = Path(tmp)
        ungated = memstore.Ungated()
        with memstore.open(data, "user:alice", hook=ungated, near_duplicate=None) as store:
            store.search("warm up the model", 1)  # model load is not part of the write rate
            started = time.perf_counter()
            for start in range(0, len(items), 1_000):
                store.add_facts(items[start : start + 1_000])
            seconds = time.perf_counter() - started
            result["write"] = {
                "seconds": round(seconds, 1),
                "facts_per_second": round(len(items) / seconds, 1),
                "sqlite_mib": round((data / "memstore.db").stat().st_size / 2**20, 1),
                "index_mib": directory_mib(data / "index"),
            }
            peanut = store.facts_about("peanuts")[0].id
            result["rank_of_the_peanut_fact"] = {
                name: next(
                    (
                        n
                        for n, h in enumerate(store.search(q, 50, mode=mode), 1)
                        if h.fact.id == peanut
                    ),
                    None,
                )
                for name, (q, mode) in PROBES.items()
            }
            latency: dict[str, Any] = {}
            for mode in ("hybrid", "vector", "text"):
                samples = []
                for n in range(args.queries):
                    forget_embeddings()  # the queries repeat: each one embedded again
                    began = time.perf_counter()
                    store.search(QUERIES[n % len(QUERIES)], 10, mode=mode)
                    samples.append(time.perf_counter() - began)
                latency[mode] = percentiles(samples)
            samples = []
            for n in range(args.queries):
                forget_embeddings()
                began = time.perf_counter()
                store.search_evidence(QUERIES[n % len(QUERIES)], 10)
                samples.append(time.perf_counter() - began)
            latency["evidence_hybrid"] = percentiles(samples)
            result["search_k10"] = latency
        with memstore.open(data, "user:alice", hook=ungated) as store:
            samples = []
            for n in range(20):
                began = time.perf_counter()
                store.add_fact(
                    statement=f"The user booked table {n} at the harbour restaurant.",
                    members=["user", f"table {n}"],
                    evidence=[f"Booking {n} confirmed."],
                )
                samples.append(time.perf_counter() - began)
            result["add_fact_with_near_duplicate_check"] = percentiles(samples)
            began = time.perf_counter()
            rebuilt = store.reindex()
            result["reindex"] = {
                "seconds": round(time.perf_counter() - began, 1),
                "facts": rebuilt.facts,
                "chunks": rebuilt.chunks,
            }
        began = time.perf_counter()
        memstore.open(data, "user:alice", hook=ungated).close()
        result["open_seconds_nothing_queued"] = round(time.perf_counter() - began, 2)
    save(result, RESULTS / "search.json")


if __name__ == "__main__":
    main()
