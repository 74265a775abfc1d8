"""The least share of writes any thresholds could leave held (issue 59), for one verifier.

    python bench/held_floor.py                          # train and dev, embedded
    python bench/held_floor.py --backend embedded-ce-mix

Three outcomes hold what they cannot decide. With the goals of true facts refused <= 5%
and false facts verified <= 5%, how much is left held depends on how well the verifier
tells true from false. This script asks the gate (default policy, no citations, as
``three_outcomes.py``) about every row, keeps the checks' refusals, and then searches every
pair of thresholds on p1 (refuse below one, verify at or above the other) for the least
held share that meets both goals *on the same rows*: thresholds fitted on the rows they are
scored on, and the checks' doubts ignored, so the figure is a floor, lower than any
default could reach. It also gives the verifier's AUROC, and the AUROC a verifier would
need for a floor of 35% (two classes of equal spread on a probit scale, the checks'
share of false facts refused as measured). The test split is not read.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from statistics import NormalDist
from typing import Any

import agent_memory
from measure import RESULTS, provenance, save
from three_outcomes import verdicts

from gate import Gate, GatePolicy

#: The goals of issue 59.
MAX_TRUE_REFUSED = 0.05
MAX_FALSE_VERIFIED = 0.05
MAX_HELD = 0.35


def auroc(true: list[float], false: list[float]) -> float:
    """The chance a true fact scores above a false one (ties count half)."""
    wins = sum((t > f) + 0.5 * (t == f) for t in true for f in false)
    return wins / (len(true) * len(false))


def floor(p1: list[float], label: list[bool], refused: list[bool]) -> dict[str, float] | None:
    """The least held share over every pair of thresholds on ``p1`` that meets both goals
    on these rows, with the thresholds and the two error shares there; None if none does.
    A row the checks refused stays refused whatever the thresholds. Each goal bounds one
    threshold alone, and a higher refusal threshold or a lower verification one holds
    less, so the best pair is the highest feasible one and the lowest feasible other."""
    trues, falses = sum(label), len(label) - sum(label)
    cuts = sorted({*p1, 0.0, math.inf})
    rows = list(zip(p1, label, refused, strict=True))
    checked_true = sum(1 for _, y, r in rows if r and y)

    def true_refused(low: float) -> float:
        return (checked_true + sum(1 for p, y, r in rows if y and not r and p < low)) / trues

    def false_verified(high: float) -> float:
        return sum(1 for p, y, r in rows if not y and not r and p >= high) / falses

    lows = [c for c in cuts if true_refused(c) <= MAX_TRUE_REFUSED]
    highs = [c for c in cuts if false_verified(c) <= MAX_FALSE_VERIFIED]
    if not lows or not highs:
        return None
    low, high = max(lows), min(highs)
    low = min(low, high)  # past each other, every row is decided either way
    decided = sum(1 for p, _, r in rows if r or p < low or p >= high)
    return {
        "held": round(1 - decided / len(rows), 4),
        "refuse_below": low if low < math.inf else None,  # None: nothing by the verifier
        "verify_from": high if high < math.inf else None,
        "true_refused": round(true_refused(low), 4),
        "false_verified": round(false_verified(high), 4),
    }


def needed_auroc(checks_refuse_false: float) -> float:
    """The AUROC at which two normal classes of equal spread leave a held share of
    ``MAX_HELD`` (true and false facts alike in number; the checks refuse the given share
    of false facts and no true one; the best thresholds for both goals)."""
    normal = NormalDist()
    for step in range(0, 4001):
        d = step / 1000
        true_verified = 1 - normal.cdf(normal.inv_cdf(1 - MAX_FALSE_VERIFIED) - d)
        # false facts the checks leave, refused below the 5th percentile of true ones
        false_refused = checks_refuse_false + (1 - checks_refuse_false) * normal.cdf(
            normal.inv_cdf(MAX_TRUE_REFUSED) + d
        )
        if 1 - (true_verified + false_refused) / 2 <= MAX_HELD:
            return round(normal.cdf(d / math.sqrt(2)), 3)
    return 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--split", action="append", choices=("train", "dev"), default=[])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    gate = Gate(args.backend)
    result: dict[str, Any] = {**provenance("held_floor"), "backend": args.backend, "splits": {}}
    for split in args.split or ["train", "dev"]:
        rows = agent_memory.load(split)
        found = verdicts(rows, gate, GatePolicy())
        p1 = [v.p1 for v in found]
        label = [r.label == 1 for r in rows]
        refused = [v.outcome == "refused" and v.check is not None for v in found]
        false_refused = sum(r for r, y in zip(refused, label, strict=True) if not y)
        checks_share = false_refused / (len(label) - sum(label))
        result["splits"][split] = {
            "rows": len(rows),
            "auroc_p1": round(
                auroc(
                    [p for p, y in zip(p1, label, strict=True) if y],
                    [p for p, y in zip(p1, label, strict=True) if not y],
                ),
                3,
            ),
            "checks_refuse_false": round(checks_share, 4),
            "floor": floor(p1, label, refused),
            "auroc_needed_for_held_035": needed_auroc(checks_share),
        }
        print(split, result["splits"][split])
    save(result, args.out or RESULTS / f"held_floor_{args.backend}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
