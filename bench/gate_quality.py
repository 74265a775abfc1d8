"""Verifier quality and latency per backend on ../shared/data/grounding (check split only).

    python bench/gate_quality.py --backend embedded [--per-dataset N] [--option key=value ...]

For each dataset: AUROC of p1 and balanced accuracy at p1 >= 0.5 (the gate's
``min_p1``, never tuned on these rows). End to end: each row through ``Gate.check``
with the default thresholds and deadline, as one write would be (all evidence
cited): the share of unsupported rows rejected (rejection recall) and of supported
rows rejected (false rejections). Latency: per-claim time of single calls and of
batches of 32. Results go to ``bench/results/gate_quality_<backend>.json``
with the machine, the date, the commit and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from gate import Check, Gate, create_backend, datasets
from gate.backends.embedded.fit import pair

RESULTS = Path(__file__).with_name("results")
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


def sample(rows: list[datasets.Example], per_dataset: int) -> list[datasets.Example]:
    """At most ``per_dataset`` check-split rows of each dataset, seeded."""
    rng = random.Random(SEED)
    out = []
    for name in datasets.datasets(rows):
        group = [r for r in rows if r.dataset == name]
        out.extend(group if per_dataset <= 0 else rng.sample(group, min(per_dataset, len(group))))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--option", action="append", default=[], help="backend option key=value")
    parser.add_argument("--per-dataset", type=int, default=0, help="rows per dataset (0 = all)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--gate", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--deadline", type=float, default=120.0, help="the gate's, in seconds")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    options = {key: _value(raw) for key, raw in (opt.split("=", 1) for opt in args.option)}

    started = time.perf_counter()
    backend = create_backend(args.backend, **options)
    load_s = time.perf_counter() - started
    rows = sample(datasets.load(args.data, "check"), args.per_dataset)
    pairs = [pair(r) for r in rows]
    p = np.zeros(len(rows))
    run_started = time.perf_counter()
    for i in range(0, len(rows), args.batch):
        p[i : i + args.batch] = backend.estimate_many(pairs[i : i + args.batch])
        print(f"\r  {min(i + args.batch, len(rows))}/{len(rows)}", end="", file=sys.stderr)
    print(file=sys.stderr)
    run_s = time.perf_counter() - run_started

    # Latency on short pairs (BEGIN), so the numbers are comparable across backends.
    short = [pair(r) for r in rows if r.dataset.startswith("begin")][:64] or pairs[:64]
    singles = []
    for claim, context in short[:16]:
        t = time.perf_counter()
        backend.estimate(claim, context)
        singles.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    backend.estimate_many(short[:32])
    batch_ms = (time.perf_counter() - t) * 1000 / len(short[:32])

    # The gate end to end, in batches; the deadline is raised so a long batch is not cut
    # short (a verdict does not depend on its batch otherwise). Timeouts are counted.
    labels = np.array([r.label for r in rows])
    gate = Gate(backend, deadline=args.deadline)
    rejected = np.zeros(len(rows), dtype=bool)
    statuses: Counter[str] = Counter()
    for i in range(0, len(rows) if args.gate else 0, args.batch):
        chunk = rows[i : i + args.batch]
        verdicts = gate.check_many([Check.of(r.claim, list(r.evidence)) for r in chunk])
        for j, verdict in enumerate(verdicts, start=i):
            rejected[j] = not verdict.accepted
            statuses[str(verdict.status)] += 1
        print(f"\r  gate {i + len(chunk)}/{len(rows)}", end="", file=sys.stderr)
    print(file=sys.stderr)
    gate_rates = (lambda m: _gate_rates(rejected[m], labels[m])) if args.gate else (lambda m: {})

    names = np.array([r.dataset for r in rows])
    per_dataset = {}
    for name in datasets.datasets(rows):
        m = names == name
        per_dataset[name] = {
            "rows": int(m.sum()),
            "auroc": round(float(roc_auc_score(labels[m], p[m])), 4),
            "balanced_accuracy": round(float(balanced_accuracy_score(labels[m], p[m] >= 0.5)), 4),
            **gate_rates(m),
        }
    result = {
        "backend": args.backend,
        "identity": backend.identity,
        "options": options,
        "split": "check",
        "per_dataset_limit": args.per_dataset,
        "datasets": per_dataset,
        "mean_auroc": round(statistics.mean(d["auroc"] for d in per_dataset.values()), 4),
        "min_auroc": min(d["auroc"] for d in per_dataset.values()),
        "gate": {**gate_rates(slice(None)), "verdicts": dict(sorted(statuses.items()))}
        if args.gate
        else None,
        "load_s": round(load_s, 2),
        "all_rows_ms_per_claim": round(run_s * 1000 / max(1, len(rows)), 1),
        "single_ms_p50": round(statistics.median(singles), 1),
        "single_ms_p95": round(float(np.percentile(singles, 95)), 1),
        "batch32_ms_per_claim": round(batch_ms, 1),
        "machine": machine(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit(),
        "command": " ".join(["python", "bench/gate_quality.py", *(argv or sys.argv[1:])]),
    }
    out = args.out or RESULTS / f"gate_quality_{args.backend}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    backend.close()
    return 0


def _gate_rates(rejected: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Rejection recall (unsupported rows rejected) and false rejections (supported rejected)."""
    return {
        "rejection_recall": round(float(rejected[labels == 0].mean()), 4),
        "false_rejection_rate": round(float(rejected[labels == 1].mean()), 4),
    }


def _value(raw: str) -> Any:
    """A JSON value when the text is one (numbers, true/false), else the text."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


if __name__ == "__main__":
    raise SystemExit(main())
