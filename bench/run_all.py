"""``make bench``: every benchmark in turn, then ``results/SUMMARY.md``.

    python bench/run_all.py [--large] [--only NAME ...]

Each step runs in its own process (so peak memory is per step) and writes its
``results/*.json``; a step that fails is reported and the rest still run (the exit
status is then 1). ``--large`` runs the opt-in 1,000,000-fact store (without its
index), the 100,000-fact store on PostgreSQL and the 100,000-fact scale-out bench
(PostgreSQL + an S3 index, 1, 2 and 4 worker processes) instead (``make bench-large``,
about 75 minutes here). The summary is rebuilt from every result
file present, each with its own date and commit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from summary import write_summary

BENCH = Path(__file__).resolve().parent

#: name: arguments of the script (the first is the script, relative to bench/).
STEPS: dict[str, list[str]] = {
    # 100 seeded check-split rows per public data set (~950 rows; the whole split is 3,624)
    # and every row of the agent-memory test split (209).
    **{
        f"gate-{name}": [
            *("gate_quality.py", "--backend", name, "--per-dataset", "100"),
            *("--agent-memory-rows", "0"),
        ]
        for name in ("embedded", "embedded-ce", "embedded-ce-mix")
    },
    # Three outcomes (verified / held / refused) beside the old decision, per backend, on
    # the agent-memory test split (scored under docs/verifier-decision-rule.md).
    **{
        f"three-outcomes-{name}": ["three_outcomes.py", "--split", "test", "--backend", name]
        for name in ("embedded", "embedded-ce-mix")
    },
    # The least share any thresholds could leave held on train and dev (a floor, fitted
    # on the rows it scores), the verifier's AUROC and the AUROC the goal would need.
    **{
        f"held-floor-{name}": ["held_floor.py", "--backend", name]
        for name in ("embedded", "embedded-ce-mix")
    },
    # SmolLM2-135M takes ~1 s per claim here: 5 rows per data set, batches of 8.
    "gate-hf-causal": [
        *("gate_quality.py", "--backend", "hf-causal", "--per-dataset", "5"),
        *("--batch", "8", "--batches", "8", "--singles", "4"),
    ],
    "store-10k": ["store_scale.py", "--facts", "10000"],
    # Ingest is most of it (~18 min); each latency series stops after 10 s.
    "store-100k": ["store_scale.py", "--facts", "100000", "--budget", "10", "--hub-repeats", "2"],
    "peer-mem0": ["peer_mem0.py"],
    # The audit page's list, one rejection and GET /drift over 100,000 rejections.
    "audit-page": ["audit_page.py", "--rejections", "100000"],
    # Requests, tokens and latency per write when the agent's own model checks it:
    # logprobs, sampling, MCP sampling mid-call and in rounds (SmolLM2 on llama.cpp).
    "host-models": ["host_models.py", "--rows", "12"],
    # 22 conversations, embedded then llm (starts a llama.cpp server with SmolLM2-135M).
    "conversations": ["conversations.py"],
    # two long casual chats: is a question's answer turn among search's top 10?
    "casual-chat": ["casual_chat.py"],
    # --help, stats, get, audit, search as new processes, and serve's first answer.
    "startup": ["startup.py"],
    # add_fact and add_facts ungated, the index written inline and in the background.
    "writes": ["writes.py"],
    # 5,000 index changes queued in one namespace; first requests to 2,020 new ones.
    "namespaces": ["namespaces.py"],
}
LARGE: dict[str, list[str]] = {
    # SQL, graph and audit at 1,000,000 facts (~18 min); its search index is not built, as
    # embedding it would take over an hour here (the run measures how long).
    "store-1m": [
        *("store_scale.py", "--facts", "1000000", "--budget", "10", "--hub-repeats", "1"),
        "--no-index",
    ],
    # The 100,000-fact store with its facts in PostgreSQL (started by the script; ~19 min).
    "store-100k-postgres": [
        *("store_scale.py", "--facts", "100000", "--budget", "10", "--hub-repeats", "2"),
        "--postgres",
    ],
    # Starts PostgreSQL and weed mini; the fill is most of it (99 facts/s here: 17 min,
    # 25 in all). Not in the normal run.
    "scale-out-100k": ["scale_out.py", "--facts", "100000", "--seconds", "60"],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="the opt-in large steps only")
    parser.add_argument("--only", action="append", default=[], help="run this step (repeatable)")
    args = parser.parse_args(argv)
    steps = LARGE if args.large else STEPS
    unknown = sorted(set(args.only) - set(steps))
    if unknown:
        parser.error(f"unknown step(s) {unknown}; choose from {sorted(steps)}")
    chosen = {name: argv_ for name, argv_ in steps.items() if not args.only or name in args.only}

    timings: dict[str, float] = {}
    failed = []
    started = time.perf_counter()
    for n, (name, script) in enumerate(chosen.items(), 1):
        print(f"[{n}/{len(chosen)}] {name}: python bench/{' '.join(script)}", flush=True)
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, f"bench/{script[0]}", *script[1:]],
            cwd=BENCH.parent,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        timings[name] = round(time.perf_counter() - began, 1)
        status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        print(f"    {status} in {timings[name]:.0f} s", flush=True)
        if done.returncode != 0:
            failed.append(name)
    total = time.perf_counter() - started
    command = "make bench-large" if args.large else "make bench"
    if args.only:  # a partial run is its own line in the summary, not the suite's total
        command = "python bench/run_all.py " + " ".join(f"--only {n}" for n in chosen)
    out = write_summary(command, timings, total)
    print(f"{len(chosen) - len(failed)}/{len(chosen)} steps in {total / 60:.1f} min; see {out}")
    if failed:
        print(f"failed: {', '.join(failed)} (run `python bench/run_all.py --only NAME` to retry)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
