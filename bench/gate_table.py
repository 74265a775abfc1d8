"""The verifier backends side by side, from ``results/gate_quality_*.json`` (markdown).

    python bench/gate_table.py [results/gate_quality_embedded.json ...]

Per dataset: AUROC / balanced accuracy at p1 >= 0.5; then the gate end to end
(rejection recall, false rejections) and latency. Rows a backend was not run on
show as a dash; the row limit per dataset is in each column's heading.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("results")


def table(results: list[dict[str, Any]]) -> str:
    heads = [
        f"{r['identity']}" + (f" ({r['per_dataset_limit']}/set)" if r["per_dataset_limit"] else "")
        for r in results
    ]
    names = sorted({name for r in results for name in r["datasets"]})
    lines = [
        "| dataset | " + " | ".join(heads) + " |",
        "|---|" + "---|" * len(results),
    ]
    for name in names:
        cells = []
        for r in results:
            d = r["datasets"].get(name)
            cells.append(f"{d['auroc']:.2f} / {d['balanced_accuracy']:.2f}" if d else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    def row(label: str, value: Any) -> str:
        return f"| {label} | " + " | ".join(value(r) for r in results) + " |"

    lines += [
        row("mean AUROC (min)", lambda r: f"{r['mean_auroc']:.3f} ({_min_auroc(r):.2f})"),
        row("gate: rejection recall", lambda r: _gate(r, "rejection_recall")),
        row("gate: false rejections", lambda r: _gate(r, "false_rejection_rate")),
        row("ms/claim, all rows", lambda r: f"{r['all_rows_ms_per_claim']:.0f}"),
        row("ms/claim, short, batch 32", lambda r: f"{r['batch32_ms_per_claim']:.1f}"),
        row("ms, short, single p50", lambda r: f"{r['single_ms_p50']:.1f}"),
        row("load s", lambda r: f"{r['load_s']:.1f}"),
    ]
    return "\n".join(lines)


def _min_auroc(result: dict[str, Any]) -> float:
    return min(d["auroc"] for d in result["datasets"].values())


def _gate(result: dict[str, Any], key: str) -> str:
    gate = result.get("gate")
    return f"{gate[key]:.2f}" if gate else "-"


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(RESULTS.glob("gate_quality_*.json"))
    results = [json.loads(p.read_text()) for p in paths]
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
