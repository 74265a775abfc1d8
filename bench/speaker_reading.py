"""Speaker-aware reading, measured (issue 59, goal 4): the gate at its defaults on an
agent-memory split, reading the evidence as written and as said (each turn's first
person read as its speaker, ``gate.Gate(speakers=...)``).

    python bench/speaker_reading.py --split dev                 # develop on this
    python bench/speaker_reading.py --split test --backend embedded

The test split is scored only under the rule written in docs/verifier-decision-rule.md
(2026-12-05) before it was run. Per reading: AUROC of p1, and at the gate's defaults
the share of true facts refused and of false facts admitted (stored, in any status).
"""

from __future__ import annotations

from typing import Any

import agent_memory
from gate_quality import quote_citations
from measure import RESULTS, provenance, save
from sklearn.metrics import roc_auc_score

from gate import Check, ContextItem, Gate

BATCH = 32


def score(rows: list[agent_memory.AgentMemoryPair], backend: str, speakers: bool) -> dict[str, Any]:
    """One reading of ``rows`` through a fresh gate (no cached answers)."""
    gate = Gate(backend, speakers=speakers)
    checks = [
        Check(
            claim=r.claim,
            evidence=tuple(ContextItem(str(i), t) for i, t in enumerate(r.evidence, start=1)),
            citations=tuple(quote_citations(r)),
        )
        for r in rows
    ]
    verdicts = [
        v for i in range(0, len(checks), BATCH) for v in gate.check_many(checks[i : i + BATCH])
    ]
    labels = [r.label for r in rows]
    true = [v for r, v in zip(rows, verdicts, strict=True) if r.label == 1]
    false = [v for r, v in zip(rows, verdicts, strict=True) if r.label == 0]
    return {
        "auroc": round(float(roc_auc_score(labels, [v.p1 or 0.0 for v in verdicts])), 4),
        "true_facts_refused": round(sum(not v.accepted for v in true) / len(true), 4),
        "false_facts_admitted": round(sum(v.accepted for v in false) / len(false), 4),
    }


def main(argv: list[str] | None = None) -> int:
    args = agent_memory.split_arguments(__doc__.splitlines()[0], argv)
    rows = agent_memory.load(args.split)
    result = {
        **provenance("speaker_reading"),
        "split": args.split,
        "backend": args.backend,
        "rows": len(rows),
        "as_written": score(rows, args.backend, speakers=False),
        "as_said": score(rows, args.backend, speakers=True),
    }
    out = args.out or RESULTS / f"speaker_reading_{args.split}_{args.backend}.json"
    save(result, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
