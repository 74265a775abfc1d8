"""Start-up: how long a new user waits for ``memstore`` commands and for the server.

    python bench/startup.py [--repeats 10] [--serve-repeats 5]

Before the clock: a small store (``FACTS`` ungated facts about ``FACTS`` people, in the
search index, and ``FACTS`` rejections refused by ``audit_page``'s seeded write hook,
so no verifier is loaded). Then each command runs as the installed console script in a
fresh process, once untimed (the file cache) and ``repeats`` times timed, wall clock
from start to exit: ``memstore --help``, ``stats``, ``get <id>``, ``audit`` and
``search``; and ``memstore serve`` ``serve_repeats`` times, from the start of the
process to the first ``200`` of ``GET /health`` (polled every 20 ms on a free port).
Results go to ``bench/results/startup.json`` with the machine, date, commit, command
and the load average before the run (the goals assume an idle machine).

Goals (issue 26): ``--help`` <= 0.5 s, reads (``stats``, ``get``, ``audit``,
``search``) <= 1.5 s, the server's first answer <= 3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from audit_page import SeededRefusals
from audit_page import fact as refused_fact
from measure import RESULTS, SEED, percentiles, provenance, save, stop

import memstore

NS = "user:startup"
KEY = "startup-bench-key-0123456789"
FACTS = 20
#: Goals in ms (issue 26): the p50 of each command, and of the server's first answer.
GOALS_MS = {"help": 500, "stats": 1500, "get": 1500, "audit": 1500, "search": 1500}
SERVE_GOAL_MS = 3000


def make_store(data: Path) -> str:
    """The small store the commands read; returns one fact's id."""
    with memstore.open(data, NS) as store:
        stored = store.add_facts(
            [
                {
                    "statement": f"Person {n} is allergic to food {n}.",
                    "members": [
                        (f"Person {n}", "person", "patient"),
                        (f"food {n}", "food", "allergen"),
                    ],
                    "evidence": [f"Person {n}: I'm allergic to food {n}."],
                }
                for n in range(FACTS)
            ],
            ungated=True,
        )
        store.sync_index()
    with memstore.open(data, NS, hook=SeededRefusals(SEED), index=False) as store:
        store.add_facts([refused_fact(n) for n in range(FACTS)])
    return stored[0].id


def console_script() -> list[str]:
    """The installed ``memstore`` next to this Python (else ``python -m memstore.cli``)."""
    script = Path(sys.executable).with_name("memstore")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memstore.cli"]


def clean_env(**extra: str) -> dict[str, str]:
    """This environment less every ``MEMSTORE_*`` setting, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    return {**env, **extra}


def time_command(argv: list[str], repeats: int) -> dict[str, Any]:
    """Wall time of ``argv`` from start to exit (it must exit 0): one untimed run first."""
    samples = []
    for n in range(repeats + 1):
        began = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=clean_env())
        took = time.perf_counter() - began
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
        if n:
            samples.append(took)
    return percentiles(samples)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def first_answer(data: Path, timeout_s: float = 120.0) -> float:
    """Seconds from starting ``memstore serve`` to its first 200 on ``GET /health``."""
    port = free_port()
    keys = json.dumps({KEY: [NS]})
    argv = [*console_script(), "--store", str(data), "serve", "--host", "127.0.0.1"]
    began = time.perf_counter()
    server = subprocess.Popen(
        [*argv, "--port", str(port)],
        env=clean_env(MEMSTORE_SERVER__API_KEYS=keys),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while time.perf_counter() - began < timeout_s:
            if server.poll() is not None:
                raise SystemExit(f"memstore serve exited {server.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    if r.status == 200:
                        return time.perf_counter() - began
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.02)
        raise SystemExit(f"memstore serve did not answer in {timeout_s:.0f} s")
    finally:
        stop(server)


def run(repeats: int, serve_repeats: int) -> dict[str, Any]:
    result = provenance("startup")
    work = Path(tempfile.mkdtemp(prefix="memstore-startup-"))
    try:
        data = work / "mem"
        fact_id = make_store(data)
        result["load_average_before"] = [round(x, 2) for x in os.getloadavg()]
        where = ["--store", str(data), "--namespace", NS]  # not for --help
        commands = {
            "help": ["--help"],
            "stats": ["stats"],
            "get": ["get", fact_id],
            "audit": ["audit", "--format", "json"],
            "search": ["search", "allergic to food 3", "--json"],
        }
        measured = {}
        for name, args in commands.items():
            options = [] if name == "help" else where
            latency = time_command([*console_script(), *options, *args], repeats)
            measured[name] = {
                "argv": ["memstore", *("ID" if a == fact_id else a for a in args)],
                **latency,
                "goal_ms": GOALS_MS[name],
                "met": latency["p50_ms"] <= GOALS_MS[name],
            }
            print(f"{name}: {latency}", flush=True)
        serve = percentiles([first_answer(data) for _ in range(serve_repeats)])
        result.update(
            facts=FACTS,
            rejections=FACTS,
            repeats=repeats,
            commands=measured,
            serve_first_answer={**serve, "goal_ms": SERVE_GOAL_MS},
        )
        result["serve_first_answer"]["met"] = serve["p50_ms"] <= SERVE_GOAL_MS
        result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per command")
    parser.add_argument("--serve-repeats", type=int, default=5, help="server starts timed")
    parser.add_argument("--out", type=Path, default=RESULTS / "startup.json")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.serve_repeats < 1:
        parser.error("--repeats and --serve-repeats must be at least 1")
    save(run(args.repeats, args.serve_repeats), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
