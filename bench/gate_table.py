"""The verifier backends side by side, from ``results/gate_quality_*.json`` (markdown).

    python bench/gate_table.py [results/gate_quality_embedded.json ...]

Per dataset: AUROC / balanced accuracy at the gate's ``min_p1``; then calibration,
the gate end to end (rejection precision and recall, false rejections), the WiCE
scrub test and latency. ``agent_memory`` (the agent-memory test split) is a dataset
row like the others, with its own rows for the shares of true and of false facts the
gate refuses; the means are over the public sets. Rows a backend was not run on show as
a dash; the row limit per dataset is in each column's heading.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("results")
#: The agent-memory test split's dataset name (left out of the means over public sets).
AGENT_MEMORY = "agent_memory"


def table(results: list[dict[str, Any]]) -> str:
    heads = [
        f"{r['identity']}" + (f" ({r['per_dataset_limit']}/set)" if r["per_dataset_limit"] else "")
        for r in results
    ]
    names = sorted({name for r in results for name in r["datasets"]})
    lines = [
        "| dataset: AUROC / balanced accuracy | " + " | ".join(heads) + " |",
        "|---|" + "---|" * len(results),
    ]
    for name in names:
        cells = []
        for r in results:
            d = r["datasets"].get(name)
            cells.append(f"{_num(d['auroc'])} / {_num(d['balanced_accuracy'])}" if d else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    def row(label: str, value: Callable[[dict[str, Any]], str]) -> str:
        return f"| {label} | " + " | ".join(_or_dash(value, r) for r in results) + " |"

    lines += [
        row("agent memory: true facts refused", lambda r: _share(r, "true_facts_refused")),
        row("agent memory: false facts refused", lambda r: _share(r, "false_facts_refused")),
        row("mean AUROC (min)", lambda r: f"{r['mean_auroc']:.3f} ({r['min_auroc']:.2f})"),
        row("mean balanced accuracy", lambda r: f"{r['mean_balanced_accuracy']:.3f}"),
        row("mean calibration error (ECE)", lambda r: f"{_mean(r, 'ece'):.3f}"),
        row("gate: rejection precision", lambda r: f"{r['gate']['rejection_precision']:.2f}"),
        row("gate: rejection recall", lambda r: f"{r['gate']['rejection_recall']:.2f}"),
        row("gate: false rejections", lambda r: f"{r['gate']['false_rejection_rate']:.2f}"),
        row("WiCE scrub test: p0 < p1", lambda r: _scrub(r["scrub_test_wice"])),
        row("gate ms/row, all rows", lambda r: f"{r['gate_ms_per_row']:.0f}"),
        row("gate single ms p50 / p95", lambda r: _single(r)),
        *(
            row(f"gate batch {n} ms (SPEC {500 + 100 * n})", lambda r, n=n: _batch(r, str(n)))
            for n in (8, 32, 128)
        ),
        row("backend ms/claim, batch 32", lambda r: f"{r['batch32_ms_per_claim']:.1f}"),
        row("load s", lambda r: f"{r['load_s']:.1f}"),
    ]
    return "\n".join(lines)


def _or_dash(value: Callable[[dict[str, Any]], str], result: dict[str, Any]) -> str:
    """The cell, or a dash where the result lacks the number (an older or partial run)."""
    try:
        return value(result)
    except (KeyError, TypeError):
        return "-"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _share(result: dict[str, Any], key: str) -> str:
    return f"{result['datasets'][AGENT_MEMORY][key]:.2f}"


def _mean(result: dict[str, Any], key: str) -> float:
    values = [
        d[key]
        for name, d in result["datasets"].items()
        if name != AGENT_MEMORY and d[key] is not None
    ]
    return sum(values) / len(values)


def _scrub(scrub: dict[str, Any]) -> str:
    return f"{scrub['share_p0_below_p1']:.2f} (n={scrub['scored']})"


def _single(result: dict[str, Any]) -> str:
    ok = "" if result["gate_single_within_spec"] else " over SPEC"
    return f"{result['gate_single_ms_p50']:.0f} / {result['gate_single_ms_p95']:.0f}{ok}"


def _batch(result: dict[str, Any], size: str) -> str:
    b = result["gate_batched"][size]
    return f"{b['ms']:.0f}" + ("" if b["within_spec"] else " over SPEC")


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(RESULTS.glob("gate_quality_*.json"))
    results = [json.loads(p.read_text()) for p in paths]
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
