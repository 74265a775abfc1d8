"""Verifier quality and latency per backend on ../shared/data/grounding (check split only)
and on the agent-memory test split (``bench/data/agent_memory``, dataset ``agent_memory``).

    python bench/gate_quality.py --backend embedded [--per-dataset N] [--option key=value ...]

Every row goes through ``Gate.check_many`` as one write would (default thresholds,
all evidence cited; an agent-memory row that gives a ``quote`` cites that span, so its
p0 scrubs just the quote, as an agent citing its source would). Per dataset: AUROC of
p1; balanced accuracy at the gate's own ``min_p1`` (never tuned on these rows);
expected calibration error (10 bins) and Brier score of p1; precision and recall of
rejection (an unsupported row is the one to reject) and the share of supported rows
rejected. The scrub test: supported WiCE rows with their supporting sentences cited,
the share whose p0 (those sentences scrubbed) falls below p1. Speed: the gate (p1 and
p0, no cache) on short pairs, single checks p50/p95 and batches of 8/32/128, against
the latency budget (docs/design.md, Latency budget: 500 ms single; 500 ms + 100 ms x N
batched); and the backend's per-claim time in batches of 32. Results go to
``bench/results/gate_quality_<backend>.json`` with the machine, the date, the commit and
the command. ``agent_memory`` also reports the share of true facts refused and of false
facts refused at the gate's defaults; the means (``mean_auroc``, ``min_auroc``,
``mean_balanced_accuracy``) are over the public sets only, while ``rows`` and ``gate``
count every row.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import agent_memory
import numpy as np
from measure import RESULTS, SEED, forget_embeddings, provenance, save
from rich.console import Console
from rich.progress import track
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from gate import Check, Citation, Gate, Verdict, VerifierBackend, create_backend
from gate.backends.registry import DEFAULT_BACKEND
from training import datasets
from training.embedded import pair

#: The latency budget (docs/design.md, Latency budget): a single check within 500 ms; a
#: batch of N within 500 ms + 100 ms x N.
SPEC_SINGLE_MS = 500
SPEC_PER_CLAIM_MS = 100
STDERR = Console(stderr=True)


def sample(rows: list[datasets.Example], per_dataset: int) -> list[datasets.Example]:
    """At most ``per_dataset`` check-split rows of each dataset, seeded."""
    rng = random.Random(SEED)
    out = []
    for name in datasets.datasets(rows):
        group = [r for r in rows if r.dataset == name]
        out.extend(group if per_dataset <= 0 else rng.sample(group, min(per_dataset, len(group))))
    return out


#: The dataset name of the agent-memory test split in the results.
AGENT_MEMORY = "agent_memory"


def sample_agent_memory(per_dataset: int) -> list[agent_memory.AgentMemoryPair]:
    """At most ``per_dataset`` pairs of the agent-memory *test* split, seeded (scored only)."""
    pairs = agent_memory.load("test")
    if per_dataset <= 0 or per_dataset >= len(pairs):
        return pairs
    return random.Random(SEED).sample(pairs, per_dataset)


def quote_citations(pair: agent_memory.AgentMemoryPair) -> list[Citation]:
    """The pair's quote as a citation of the span that states it; none (all evidence
    cited) where it gives no quote or the quote is not found verbatim."""
    if pair.quote:
        for i, text in enumerate(pair.evidence, start=1):
            at = text.find(pair.quote)
            if at >= 0:
                return [Citation(str(i), at, at + len(pair.quote))]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=DEFAULT_BACKEND)
    parser.add_argument("--option", action="append", default=[], help="backend option key=value")
    parser.add_argument("--per-dataset", type=int, default=0, help="rows per dataset (0 = all)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument(
        "--batches", default="8,32,128", help="batch sizes timed through the gate, comma-separated"
    )
    parser.add_argument("--singles", type=int, default=16, help="single checks timed")
    parser.add_argument("--deadline", type=float, default=120.0, help="the gate's, in seconds")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument(
        "--agent-memory-rows",
        type=int,
        default=None,
        help="agent-memory test rows scored (default: as --per-dataset; 0 = the whole split)",
    )
    parser.add_argument(
        "--no-agent-memory", action="store_true", help="skip the agent-memory test split"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    options = {key: _value(raw) for key, raw in (opt.split("=", 1) for opt in args.option)}
    result: dict[str, Any] = {**provenance("gate_quality"), "backend": args.backend}

    started = time.perf_counter()
    backend = create_backend(args.backend, **options)
    load_s = time.perf_counter() - started
    all_rows = datasets.load(args.data, "check")
    rows = sample(all_rows, args.per_dataset)
    # The deadline is raised so a long batch is not cut short (a verdict does not
    # otherwise depend on its batch); any timeouts are counted among the verdicts.
    gate = Gate(backend, deadline=args.deadline)
    threshold = gate.policy.min_p1

    memory_rows = args.per_dataset if args.agent_memory_rows is None else args.agent_memory_rows
    memory = [] if args.no_agent_memory else sample_agent_memory(memory_rows)
    checks = [Check.of(r.claim, list(r.evidence)) for r in rows]
    checks += [Check.of(p.claim, list(p.evidence), quote_citations(p)) for p in memory]

    run_started = time.perf_counter()
    verdicts = _check(gate, checks, args.batch)
    run_s = time.perf_counter() - run_started
    labels = np.array([r.label for r in rows] + [p.label for p in memory])
    p1 = np.array([np.nan if v.p1 is None else v.p1 for v in verdicts])
    rejected = np.array([not v.accepted for v in verdicts])
    names = np.array([r.dataset for r in rows] + [AGENT_MEMORY] * len(memory))
    scored = ~np.isnan(p1)
    per_dataset = {}
    for name in [*datasets.datasets(rows), *([AGENT_MEMORY] if memory else [])]:
        m = (names == name) & scored
        per_dataset[name] = {
            "rows": int((names == name).sum()),
            **_scores(labels[m], p1[m], threshold),
            **_rejections(rejected[names == name], labels[names == name]),
        }
    if memory:
        am = per_dataset[AGENT_MEMORY]
        am["split"] = "test"
        am["true_facts_refused"] = am["false_rejection_rate"]
        am["false_facts_refused"] = am["rejection_recall"]
        am["quotes_cited"] = sum(bool(quote_citations(p)) for p in memory)
    public = {k: v for k, v in per_dataset.items() if k != AGENT_MEMORY}
    scored_sets = [d for d in public.values() if d["auroc"] is not None]

    # The scrub test: WiCE rows that are supported, with their supporting sentences cited.
    wice = [r for r in rows if r.label == 1 and r.supporting]
    scrub_checks = [
        Check.of(
            r.claim,
            list(r.evidence),
            [Citation(str(i + 1)) for i in sorted({i for g in r.supporting for i in g})],
        )
        for r in wice
    ]
    scrubbed = _check(gate, scrub_checks, args.batch) if wice else []
    pairs = [(v.p1, v.p0) for v in scrubbed if v.p1 is not None and v.p0 is not None]

    speed = _speed(backend, rows, args.singles, [int(b) for b in args.batches.split(",") if b])
    result.update(
        {
            "identity": backend.identity,
            "options": options,
            "split": "check",
            "per_dataset_limit": args.per_dataset,
            "agent_memory_limit": 0 if args.no_agent_memory else memory_rows,
            "rows": len(checks),
            "threshold_min_p1": threshold,
            "datasets": per_dataset,
            "mean_auroc": _mean(d["auroc"] for d in public.values()),
            "min_auroc": min((d["auroc"] for d in scored_sets), default=None),
            "mean_balanced_accuracy": _mean(d["balanced_accuracy"] for d in public.values()),
            "gate": {
                **_rejections(rejected, labels),
                "verdicts": dict(sorted(Counter(str(v.status) for v in verdicts).items())),
            },
            "scrub_test_wice": {
                "supported_rows_with_supporting_sentences": len(wice),
                "scored": len(pairs),
                "share_p0_below_p1": round(sum(b < a for a, b in pairs) / len(pairs), 4)
                if pairs
                else None,
                "mean_p1": round(statistics.mean(a for a, _ in pairs), 4) if pairs else None,
                "mean_p0": round(statistics.mean(b for _, b in pairs), 4) if pairs else None,
                "accepted": sum(v.accepted for v in scrubbed),
            },
            "load_s": round(load_s, 2),
            "gate_ms_per_row": round(run_s * 1000 / max(1, len(checks)), 1),
            **speed,
        }
    )
    backend.close()
    save(result, args.out or RESULTS / f"gate_quality_{args.backend}.json")
    return 0


def _check(gate: Gate, checks: list[Check], batch: int) -> list[Verdict]:
    """Every check through the gate in batches, with a progress bar."""
    out: list[Verdict] = []
    starts = range(0, len(checks), batch)
    for i in track(starts, f"{len(checks)} claims", console=STDERR, transient=True):
        out.extend(gate.check_many(checks[i : i + batch]))
    return out


def _scores(labels: np.ndarray, p1: np.ndarray, threshold: float) -> dict[str, float | None]:
    """AUROC of p1, balanced accuracy at the gate's threshold, calibration error and Brier
    (AUROC and balanced accuracy are None when the rows hold one class only)."""
    both = len(set(labels.tolist())) == 2
    return {
        "auroc": round(float(roc_auc_score(labels, p1)), 4) if both else None,
        "balanced_accuracy": round(float(balanced_accuracy_score(labels, p1 >= threshold)), 4)
        if both
        else None,
        "ece": round(expected_calibration_error(labels, p1), 4),
        "brier": round(float(np.mean((p1 - labels) ** 2)), 4),
    }


def expected_calibration_error(labels: np.ndarray, p: np.ndarray, bins: int = 10) -> float:
    """Mean |share supported - mean p| over ``bins`` equal-width bins of p, row-weighted."""
    which = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        m = which == b
        if m.any():
            total += m.sum() * abs(labels[m].mean() - p[m].mean())
    return float(total / max(1, len(p)))


def _rejections(rejected: np.ndarray, labels: np.ndarray) -> dict[str, float | None]:
    """The gate's rejections against the labels: an unsupported row is the one to reject
    (a rate is None when it has no rows to count)."""
    unsupported = labels == 0

    def share(values: np.ndarray) -> float | None:
        return round(float(values.mean()), 4) if values.size else None

    return {
        "rejection_precision": share(unsupported[rejected]),
        "rejection_recall": share(rejected[unsupported]),
        "false_rejection_rate": share(rejected[~unsupported]),
    }


def _speed(
    backend: VerifierBackend, rows: list[datasets.Example], singles: int, batches: list[int]
) -> dict[str, Any]:
    """Latency of the gate (p1 and p0, no cache) on short pairs, against the latency budget."""
    short = [r for r in rows if r.dataset.startswith("begin")] or rows
    checks = [Check.of(r.claim, list(r.evidence)) for r in short]
    gate = Gate(backend, deadline=600.0, cache_size=0)
    gate.check_many(checks[:2])  # warm up
    times = []
    for chk in checks[:singles]:
        forget_embeddings()  # the quality pass embedded these texts already
        t = time.perf_counter()
        gate.check_many([chk])
        times.append((time.perf_counter() - t) * 1000)
    batched = {}
    for size in batches:
        chunk = (checks * (size // max(1, len(checks)) + 1))[:size]
        forget_embeddings()
        t = time.perf_counter()
        gate.check_many(chunk)
        ms = (time.perf_counter() - t) * 1000
        budget = SPEC_SINGLE_MS + SPEC_PER_CLAIM_MS * size
        batched[str(size)] = {
            "ms": round(ms, 1),
            "ms_per_claim": round(ms / size, 1),
            "spec_ms": budget,
            "within_spec": ms <= budget,
        }
    pairs = [pair(r) for r in short[:32]]
    forget_embeddings()
    t = time.perf_counter()
    backend.estimate_many(pairs)
    estimate_ms = (time.perf_counter() - t) * 1000 / max(1, len(pairs))
    single_p95 = float(np.percentile(times, 95)) if times else None
    return {
        "gate_single_ms_p50": round(statistics.median(times), 1) if times else None,
        "gate_single_ms_p95": round(single_p95, 1) if single_p95 is not None else None,
        "gate_single_within_spec": single_p95 is not None and single_p95 <= SPEC_SINGLE_MS,
        "gate_batched": batched,
        "batch32_ms_per_claim": round(estimate_ms, 1),
    }


def _mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None (None when none are)."""
    present = [v for v in values if v is not None]
    return round(statistics.mean(present), 4) if present else None


def _value(raw: str) -> Any:
    """A JSON value when the text is one (numbers, true/false), else the text."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


if __name__ == "__main__":
    raise SystemExit(main())
