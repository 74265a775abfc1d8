"""The relevance threshold of ``Store.recall`` (``memstore.read.recall.DEFAULT_MIN_SCORE``),
measured on the agent-memory ``dev`` split (never on test rows).

    python bench/recall_threshold.py

A search hit's ``relevance`` is the cosine similarity of the query's and the
statement's embeddings (the packaged all-MiniLM-L6-v2) clipped to [0, 1]. This script
remembers every hand-written supported claim of the dev split in a store (gate off)
and asks it two kinds of query, reading the relevance the store reports for every
remembered fact:

- ``fact``: each hand-written claim of dev (true or false: a statement about the same
  situation); a remembered fact of the same scenario is related, one of another
  scenario unrelated;
- ``message``: each scenario's evidence (what the user said, the tool output, ...);
  the facts it states are related, the facts of other scenarios unrelated.

The rule: the default is the 99th percentile of relevance over all unrelated pairs,
rounded up to two decimals, so at most 1% of memories about something else pass it.
Results go to ``bench/results/recall_threshold.json``: the chosen value, percentiles
of both groups per query kind, and the share of each group kept at thresholds from
0.10 to 0.60.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from agent_memory import load
from measure import RESULTS, provenance, save

import memstore

#: The percentile of unrelated relevance the default sits at.
PERCENTILE = 99.0
THRESHOLDS = [round(0.1 + 0.05 * i, 2) for i in range(11)]


def measure(data: Path) -> dict[str, Any]:
    pairs = load("dev", generated=False)
    evidence = {p.scenario: "\n".join(p.evidence) for p in pairs}
    facts = [p for p in pairs if p.label == 1]
    queries = [("fact", p.claim, p.scenario, p.id) for p in pairs]
    queries += [("message", text, scenario, None) for scenario, text in sorted(evidence.items())]
    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with memstore.open(data, "bench:recall", hook=memstore.Ungated()) as store:
        remembered = {}
        for p in facts:
            fact = store.add_fact(statement=p.claim, members=[p.scenario], evidence=p.evidence)
            remembered[fact.id] = p
        for kind, text, scenario, own in queries:
            hits = store.search(text, len(facts) + 10, mode="vector")
            assert len(hits) == len(facts), "every remembered fact is scored"
            for hit in hits:
                memory = remembered[hit.fact.id]
                if memory.id == own:
                    continue  # a claim is not its own query
                related = memory.scenario == scenario
                groups[kind]["related" if related else "unrelated"].append(hit.relevance)
    unrelated = [r for kind in groups.values() for r in kind["unrelated"]]
    default = math.ceil(float(np.percentile(unrelated, PERCENTILE)) * 100) / 100
    summary: dict[str, Any] = {}
    for kind, by_group in sorted(groups.items()):
        summary[kind] = {}
        for group, values in sorted(by_group.items()):
            v = np.asarray(values)
            summary[kind][group] = {
                "pairs": len(values),
                "percentiles": {
                    str(q): round(float(np.percentile(v, q)), 3) for q in (1, 5, 25, 50, 75, 95, 99)
                },
                "kept_at": {str(t): round(float(np.mean(v >= t)), 4) for t in THRESHOLDS},
                "kept_at_default": round(float(np.mean(v >= default)), 4),
            }
    return {
        "memories": len(facts),
        "queries": {"fact": sum(q[0] == "fact" for q in queries), "message": len(evidence)},
        "rule": f"the {PERCENTILE:g}th percentile of unrelated relevance, rounded up",
        "default_min_score": default,
        "by_query": summary,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "recall_threshold.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = {**provenance("recall_threshold"), **measure(Path(tmp) / "store")}
    save(result, args.out)


if __name__ == "__main__":
    main()
