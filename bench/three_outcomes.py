"""Three outcomes, measured (issue 59): the gate's old decision (admit or refuse) beside
the new default (verified / held / refused, with the checks of ``gate.checks``), on an
agent-memory split, for one verifier backend.

    python bench/three_outcomes.py --split dev                 # develop on this
    python bench/three_outcomes.py --split test --backend embedded

The test split is scored only under the rule written in docs/verifier-decision-rule.md
(Three outcomes, 2026-12-05) before it was run. No citations are given (the whole
evidence is cited): the set's quotes exist for true claims only, so citing them would
tell the gate the label. Per set: the share of true facts refused, of false facts
stored ``verified``, and of all facts held; per phenomenon, the outcomes; per check,
how often it fired on true and on false facts.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, defaultdict
from typing import Any

import agent_memory
from measure import RESULTS, forget_embeddings, forget_readings, provenance, save

from gate import Check, ContextItem, Gate, GatePolicy, Verdict

BATCH = 32
#: The gate as it decided before three outcomes: refuse what it cannot ground, no checks.
OLD = GatePolicy(reject_unsupported=True, checks=False, verify_p1=0.0)


def verdicts(
    rows: list[agent_memory.AgentMemoryPair], gate: Gate, policy: GatePolicy
) -> list[Verdict]:
    checks = [
        Check(
            claim=r.claim,
            evidence=tuple(ContextItem(str(i), t) for i, t in enumerate(r.evidence, 1)),
        )
        for r in rows
    ]
    return [
        v
        for i in range(0, len(checks), BATCH)
        for v in gate.check_many(checks[i : i + BATCH], policy=policy)
    ]


def shares(rows: list[agent_memory.AgentMemoryPair], found: list[Verdict]) -> dict[str, Any]:
    """The outcome shares of one decision over ``rows``."""
    true = [v for r, v in zip(rows, found, strict=True) if r.label == 1]
    false = [v for r, v in zip(rows, found, strict=True) if r.label == 0]
    return {
        "true_facts_refused": round(sum(v.outcome == "refused" for v in true) / len(true), 4),
        "false_facts_verified": round(sum(v.outcome == "verified" for v in false) / len(false), 4),
        "held": round(sum(v.outcome == "held" for v in found) / len(found), 4),
        "true_facts_verified": round(sum(v.outcome == "verified" for v in true) / len(true), 4),
        "false_facts_refused": round(sum(v.outcome == "refused" for v in false) / len(false), 4),
    }


def phenomena(
    rows: list[agent_memory.AgentMemoryPair], found: list[Verdict]
) -> dict[str, dict[str, int]]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for r, v in zip(rows, found, strict=True):
        table[f"{'true' if r.label else 'false'} {r.phenomenon}"][v.outcome] += 1
    return {k: dict(sorted(c.items())) for k, c in sorted(table.items())}


def checks_fired(
    rows: list[agent_memory.AgentMemoryPair], found: list[Verdict]
) -> dict[str, dict[str, Any]]:
    """Per deciding check: how often it decided on true and on false facts, and its
    precision when it refused (false facts among those it refused)."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for r, v in zip(rows, found, strict=True):
        if v.check:
            table[f"{v.check} ({v.outcome})"]["false" if r.label == 0 else "true"] += 1
    out: dict[str, dict[str, Any]] = {}
    for name, c in sorted(table.items()):
        fired = c["true"] + c["false"]
        out[name] = {
            "on_true": c["true"],
            "on_false": c["false"],
            "share_false": round(c["false"] / fired, 3),
        }
    return out


def checks_ms(rows: list[agent_memory.AgentMemoryPair]) -> dict[str, float]:
    """Milliseconds per claim the checks add, in batches of ``BATCH`` (the language
    model loaded first; every text parsed afresh), p50 and p95 over the batches."""
    from gate.checks import check_many
    from language.parsing import nlp
    from language.speakers import as_said

    nlp()
    per_claim = []
    for i in range(0, len(rows), BATCH):
        batch = rows[i : i + BATCH]
        pairs = [(r.claim, "\n\n".join(as_said(t) for t in r.evidence)) for r in batch]
        started = time.perf_counter()
        check_many(pairs)
        per_claim.append((time.perf_counter() - started) * 1000 / len(batch))
    per_claim.sort()
    return {
        "p50": round(per_claim[len(per_claim) // 2], 2),
        "p95": round(per_claim[min(len(per_claim) - 1, int(len(per_claim) * 0.95))], 2),
    }


def checks_added_ms(
    rows: list[agent_memory.AgentMemoryPair], gate: Gate, rounds: int = 2
) -> dict[str, float]:
    """Milliseconds per claim the checks add to the gate's own call (they read beside
    the verifier where the evidence is short, ``gate.engine.BESIDE_CHARS``): each batch
    of ``BATCH`` through ``gate.check_many`` with the checks on and off, in turns (which
    goes first alternates by round), with every cache emptied before each; p50 of each
    over the batches, and the difference."""
    runs: dict[str, list[float]] = {"on": [], "off": []}
    policies = {"on": GatePolicy(), "off": GatePolicy(checks=False)}
    for turn in range(rounds):
        order = ("on", "off") if turn % 2 == 0 else ("off", "on")
        for i in range(0, len(rows), BATCH):
            batch = rows[i : i + BATCH]
            for name in order:
                forget_embeddings()
                forget_readings()
                gate.forget()
                started = time.perf_counter()
                verdicts(batch, gate, policies[name])
                runs[name].append((time.perf_counter() - started) * 1000 / len(batch))
    on, off = (statistics.median(runs[name]) for name in ("on", "off"))
    return {
        "gate_p50": round(on, 2),
        "gate_without_checks_p50": round(off, 2),
        "added": round(on - off, 2),
    }


def main(argv: list[str] | None = None) -> int:
    args = agent_memory.split_arguments(__doc__.splitlines()[0], argv)
    rows = agent_memory.load(args.split)
    timing = checks_ms(rows)  # first: nothing parsed yet
    gate = Gate(args.backend)
    old, new = verdicts(rows, gate, OLD), verdicts(rows, gate, GatePolicy())
    added = checks_added_ms(rows, gate)
    result = {
        **provenance("three_outcomes"),
        "split": args.split,
        "backend": args.backend,
        "rows": len(rows),
        "verify_p1": GatePolicy().verify_p1,
        "checks_ms_per_claim": timing,
        "checks_added_ms_per_claim": added,
        "old": shares(rows, old),
        "new": shares(rows, new),
        "new_by_phenomenon": phenomena(rows, new),
        "new_by_check": checks_fired(rows, new),
    }
    out = args.out or RESULTS / f"three_outcomes_{args.split}_{args.backend}.json"
    save(result, out)
    print(f"{args.split} {args.backend}: old {result['old']}\n  new {result['new']}")
    print(f"  checks: {timing['p50']} ms per claim (p50 of batches of {BATCH})")
    print(f"  added to the gate's call: {added['added']} ms per claim ({added})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
