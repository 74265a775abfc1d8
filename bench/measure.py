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
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("results")
#: The seed of every sample the benchmarks draw.
SEED = 7


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
