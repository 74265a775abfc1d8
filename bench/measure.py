"""What every benchmark records: where results go, their provenance, latency, disk size.

A result file starts with ``provenance(name)`` (what ran, how, when, at which commit,
on what machine) and is written with ``save``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("results")
#: The seed of every sample the benchmarks draw.
SEED = 7


def forget_readings() -> None:
    """Drop what the language layer and the gate's checks keep of recent texts (parses,
    sentences, values, findings), so that the next check reads its texts as a first one
    does. A benchmark's own reach into private caches: nothing else needs to empty them."""
    from importlib import import_module

    # by module: ``language.sentences`` is also the name of a function the package exports
    checks, evidence, parsing, sentences, values = (
        import_module(m)
        for m in (
            "gate.checks",
            "gate.evidence",
            "language.parsing",
            "language.sentences",
            "language.values",
        )
    )
    checks._found.clear()
    evidence._read_turns.cache_clear()
    parsing._docs.clear()
    parsing._readings.clear()
    sentences._cached_spans.cache_clear()
    sentences._cached_segments.cache_clear()
    values._values.cache_clear()


def forget_embeddings() -> None:
    """Drop the vectors the shared MiniLM encoders keep of their recent texts (those
    loaded, of each precision), so that the next search or gate check embeds its texts
    as a first one does: a benchmark that repeats a query or a claim would otherwise
    time the cache."""
    from gate.backends.embedded.backend import loaded_encoder
    from gate.backends.embedded.onnx_minilm import PRECISIONS

    for precision in PRECISIONS:
        encoder = loaded_encoder(precision)
        if encoder is not None:
            encoder.recent.clear()


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
    }


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def provenance(benchmark: str) -> dict[str, Any]:
    """The head of a result file: what ran, how, when, at which commit, on what machine."""
    return {
        "benchmark": benchmark,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
    }


def save(result: dict[str, Any], out: Path) -> None:
    """Write ``result`` as JSON to ``out`` and show it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    print(f"written to {out}")


def stop(process: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    """End a server the bench started: SIGTERM, then SIGKILL after ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    """Median and 95th percentile of ``samples`` (seconds) in milliseconds, and their count.
    The 95th percentile is by nearest rank (the ceil(0.95 n)-th smallest): of 20 samples
    or fewer it is the slowest."""
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[math.ceil(0.95 * len(ordered)) - 1] * 1000, 2),
        "samples": len(ordered),
    }


def directory_mib(path: Path) -> float:
    """The size of the files under ``path``, in MiB."""
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 2)


@dataclass
class Paced:
    """Writes made one at a time with a pause between them (``paced_writes``)."""

    ids: list[str] = field(default_factory=list)
    #: Seconds each call took.
    calls: list[float] = field(default_factory=list)
    #: Seconds from each call's start until the index held its fact.
    in_index: list[float] = field(default_factory=list)
    #: Writes the index did not hold within ``VISIBLE_WITHIN_S`` (caught up after each).
    late: int = 0


#: Seconds between two looks at the index backlog after a paced write.
POLL_S = 0.005
#: The longest wait for a paced write to reach the index before it counts as late.
VISIBLE_WITHIN_S = 5.0


def paced_writes(store: Any, items: Sequence[dict[str, Any]], pause: float) -> Paced:
    """``store.add_fact`` each item, ``pause`` seconds from one call's start to the next,
    as an agent writes a memory a turn: each call timed, then the index's backlog
    polled every ``POLL_S`` until it holds the fact."""
    done = Paced()
    for item in items:
        started = time.perf_counter()
        done.ids.append(store.add_fact(item).id)
        done.calls.append(time.perf_counter() - started)
        while store.index_backlog() and time.perf_counter() - started < VISIBLE_WITHIN_S:
            time.sleep(POLL_S)
        if store.index_backlog():  # counted, and caught up before the next write
            done.late += 1
            store.sync_index()
        else:
            done.in_index.append(time.perf_counter() - started)
        time.sleep(max(0.0, pause - (time.perf_counter() - started)))
    return done
