"""``memstore bench``: a few minutes' measure of this machine with the configured gate.

Writes synthetic, grounded facts to a temporary store (batched and one by one),
checks claims and searches. The full benchmarks (gate quality on labelled data,
stores at scale) live in the repository's ``bench/`` directory (``make bench``).
"""

from __future__ import annotations

import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable

from memstore.config import Settings
from memstore.schemas import FactPublic

Progress = Callable[[str, int, int], None]
BATCH = 50
PROBES = 30


def fact(i: int) -> dict[str, object]:
    """A synthetic fact the evidence states in other words."""
    return {
        "statement": f"Person {i} lives in Town {i}.",
        "members": [(f"Person {i}", "person", "resident"), (f"Town {i}", "place", "home")],
        "relation": "lives_in",
        "evidence": [f"Person {i}: I live in Town {i}."],
    }


def run(settings: Settings, facts: int, progress: Progress) -> dict[str, float | str]:
    """Measures, by name: rates in facts/s, latencies in ms (p50 and p95)."""
    with tempfile.TemporaryDirectory(prefix="memstore-bench-") as tmp:
        store_settings = settings.store.model_copy(update={"url": tmp, "index": None})
        local = settings.model_copy(update={"store": store_settings})
        with local.open("bench") as store:
            progress("loading the verifier", 0, 1)
            store.verify_claim("Warm-up.", "Warm-up.")
            started, stored = time.perf_counter(), 0
            for first in range(0, facts, BATCH):
                batch = [fact(i) for i in range(first, min(first + BATCH, facts))]
                results = store.add_facts(batch)
                stored += sum(1 for r in results if isinstance(r, FactPublic))
                progress("gated writes, batches of 50", first + len(batch), facts)
            batched = facts / (time.perf_counter() - started)
            # add_facts of one: a rejection is a result here, not an exception
            single = _timed(
                lambda i: store.add_facts([fact(facts + i)]), "gated writes, one by one", progress
            )
            claims = _timed(
                lambda i: store.verify_claim(
                    f"Person {i} lives in Town {i}.", f"Person {i}: my home is Town {i}."
                ),
                "verify_claim",
                progress,
            )
            searches = _timed(
                lambda i: store.search(f"where does person {i} live?", 10), "search", progress
            )
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "verifier": settings.hallucination.backend
        if settings.hallucination.enabled
        else "none (gate off)",
        "gated writes, batches of 50 (facts/s)": batched,
        "admitted by the gate (%)": 100.0 * stored / facts,
        "add_fact p50 (ms)": _p(single, 50),
        "add_fact p95 (ms)": _p(single, 95),
        "verify_claim p50 (ms)": _p(claims, 50),
        "verify_claim p95 (ms)": _p(claims, 95),
        "search k=10 p50 (ms)": _p(searches, 50),
        "search k=10 p95 (ms)": _p(searches, 95),
    }


def _timed(call: Callable[[int], object], what: str, progress: Progress) -> list[float]:
    times = []
    for i in range(PROBES):
        started = time.perf_counter()
        call(i)
        times.append((time.perf_counter() - started) * 1000.0)
        progress(what, i + 1, PROBES)
    return times


def _p(values: list[float], percent: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]
