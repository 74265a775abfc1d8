"""``results/SUMMARY.md`` from the result files: gate quality, stores at scale, the peer.

    python bench/summary.py   # rebuild it from bench/results/*.json

Every number comes from a result file, and each file names its own date, commit,
machine and command; ``make bench`` (``run_all.py``) rewrites this summary after
running the steps, with their wall times.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gate_quality import RESULTS, commit, machine
from gate_table import table

STEPS_FILE = RESULTS / "steps.json"
SUMMARY = RESULTS / "SUMMARY.md"


def write_summary(command: str, timings: dict[str, float], total_s: float) -> Path:
    """Record the steps' wall times, then write ``SUMMARY.md``; returns its path."""
    steps = _load(STEPS_FILE) or {}
    run = steps.setdefault("runs", {}).setdefault(command, {})
    run.update(
        {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "commit": commit(),
            "machine": machine(),
            "total_s": round(total_s, 1),
        }
    )
    run.setdefault("steps_s", {}).update(timings)
    STEPS_FILE.write_text(json.dumps(steps, indent=2) + "\n", encoding="utf-8")
    SUMMARY.write_text(render(), encoding="utf-8")
    return SUMMARY


def render() -> str:
    """The whole summary as markdown."""
    parts = ["# Benchmark summary", "", *_runs(), ""]
    gates = [_load(p) for p in sorted(RESULTS.glob("gate_quality_*.json"))]
    gates = [g for g in gates if g and "gate_batched" in g]  # results of this suite's format
    if gates:
        parts += [
            "## Gate quality and speed per verifier backend",
            "",
            "Check split of `../shared/data/grounding` (never trained or calibrated on). "
            "Balanced accuracy at the gate's own `min_p1`; the gate end to end with its "
            "default thresholds, every row one write with all its evidence cited; latency "
            "of the gate (p1 and p0, cache off) on short BEGIN pairs against SPEC-08.36/37.",
            "",
            table(gates),
            "",
            _provenance_list(gates),
            "",
        ]
    stores = sorted(
        (s for s in map(_load, RESULTS.glob("store_*.json")) if s), key=lambda s: s["facts"]
    )
    if stores:
        parts += ["## The store at scale", "", store_table(stores), "", _provenance_list(stores)]
        parts.append("")
    peer = _load(RESULTS / "peer_mem0.json")
    if peer:
        parts += ["## Side by side with mem0", "", peer_table(peer), "", _provenance_list([peer])]
        parts.append("")
    return "\n".join(parts)


def store_table(stores: list[dict[str, Any]]) -> str:
    """One column per store size."""
    return "(store table)"


def peer_table(peer: dict[str, Any]) -> str:
    """memstore and mem0 on the same data, with the ratios."""
    return "(peer table)"


def _runs() -> list[str]:
    steps = _load(STEPS_FILE) or {}
    lines = []
    for command, run in steps.get("runs", {}).items():
        m = run["machine"]
        lines.append(
            f"- `{command}`: {run['total_s'] / 60:.1f} min on {m['cpus']} CPUs "
            f"({m['processor']}, {m['platform']}, Python {m['python']}), "
            f"{run['date']}, commit {run['commit']}; steps: "
            + ", ".join(f"{k} {v:.0f} s" for k, v in run["steps_s"].items())
        )
    return lines or ["- no `make bench` run recorded yet; numbers below from single scripts"]


def _provenance_list(results: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"- `{r.get('command', '?')}` at {r.get('date', '?')}, commit {r.get('commit', '?')}"
        for r in results
    )


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


if __name__ == "__main__":
    SUMMARY.write_text(render(), encoding="utf-8")
    print(SUMMARY.read_text(encoding="utf-8"))
    sys.exit(0)
