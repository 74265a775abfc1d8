"""Namespaces under load: one namespace's backlog never stalls another's first request.

    python bench/namespaces.py [--backlog 5000] [--first 20] [--namespaces 2000]
                               [--concurrency 20]

Before the clock: a store whose namespace ``busy`` has ``backlog`` search-index changes
queued and not applied (ungated facts written with no index, two changes each: the
fact and its evidence). Then ``memstore serve`` runs as a real process on a free port,
and an HTTP client sends:

1. ``first`` requests at once, each the first to a namespace never opened
   (``GET .../facts``): wall time per request;
2. ``namespaces`` more such first requests at ``concurrency`` at once (each client
   request times out after 120 s): timeouts, errors, latency, and the server's
   resident memory (``VmRSS``) before and after, with its ``server.max_open_stores``.

Results go to ``bench/results/namespaces.json`` with the machine, date, commit and
command. Goals (issue 54): the first request to a new namespace with 5,000 changes
queued elsewhere <= 1 s p95; 2,000 new namespaces at concurrency 20: 0 timeouts, the
server's memory bounded by its pool of open stores.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from measure import RESULTS, percentiles, provenance, save, stop
from startup import clean_env, console_script, free_port

import memstore
from memstore.config import DEFAULT_MAX_OPEN_STORES

KEY = "namespaces-bench-key-0123456789"
BUSY = "busy"
FIRST_GOAL_P95_S = 1.0
CLIENT_TIMEOUT_S = 120.0


def make_store(data: Path, backlog: int) -> int:
    """``busy`` with ``backlog`` queued index changes; returns how many are queued."""
    facts = [
        {
            "statement": f"Person {n} works at company {n}.",
            "members": [f"Person {n}", f"company {n}"],
            "evidence": [f"Person {n}: I work at company {n}."],
        }
        for n in range(backlog // 2)
    ]
    with memstore.open(data, BUSY, index=False) as store:
        for start in range(0, len(facts), 500):
            store.add_facts(facts[start : start + 500], ungated=True)
        return store.index_backlog()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def first_request(client: httpx.Client, namespace: str) -> tuple[float, str]:
    """Seconds for the first request to ``namespace``, and ``ok``, ``timeout`` or an error."""
    began = time.perf_counter()
    try:
        response = client.get(f"/v1/namespaces/{namespace}/facts", params={"limit": 10})
    except httpx.TimeoutException:
        return time.perf_counter() - began, "timeout"
    except httpx.HTTPError as exc:
        return time.perf_counter() - began, type(exc).__name__
    took = time.perf_counter() - began
    return took, "ok" if response.status_code == 200 else f"HTTP {response.status_code}"


def run(backlog: int, first: int, namespaces: int, concurrency: int) -> dict[str, Any]:
    result = provenance("namespaces")
    work = Path(tempfile.mkdtemp(prefix="memstore-namespaces-"))
    data = work / "memdata"
    try:
        result["backlog_queued"] = make_store(data, backlog)
        port = free_port()
        keys = json.dumps({KEY: ["*"]})
        argv = [*console_script(), "--store", str(data), "serve", "--host", "127.0.0.1"]
        server = subprocess.Popen(
            [*argv, "--port", str(port)],
            env=clean_env(MEMSTORE_SERVER__API_KEYS=keys),
            stdout=subprocess.DEVNULL,
            stderr=(work / "server.log").open("wb"),
        )
        try:
            base = f"http://127.0.0.1:{port}"
            headers = {"Authorization": f"Bearer {KEY}"}
            limits = httpx.Limits(max_connections=concurrency)
            with httpx.Client(
                base_url=base, headers=headers, timeout=CLIENT_TIMEOUT_S, limits=limits
            ) as client:
                deadline = time.monotonic() + 120
                while True:
                    try:
                        if client.get("/health").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("memstore serve did not start")
                    time.sleep(0.05)
                rss_before = rss_kib(server.pid)
                with ThreadPoolExecutor(first) as pool:  # all at once, as agents start
                    singles = list(
                        pool.map(lambda n: first_request(client, f"first:{n}"), range(first))
                    )
                result["first_requests"] = {
                    "count": first,
                    "seconds": percentiles([s for s, _ in singles]),
                    "each_ms": [round(s * 1000, 1) for s, _ in singles],
                    "not_ok": sum(1 for _, outcome in singles if outcome != "ok"),
                    "goal_p95_s": FIRST_GOAL_P95_S,
                }
                with ThreadPoolExecutor(concurrency) as pool:
                    began = time.perf_counter()
                    many = list(
                        pool.map(lambda n: first_request(client, f"many:{n}"), range(namespaces))
                    )
                    took = time.perf_counter() - began
                outcomes: dict[str, int] = {}
                for _, outcome in many:
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                result["many_namespaces"] = {
                    "count": namespaces,
                    "concurrency": concurrency,
                    "client_timeout_s": CLIENT_TIMEOUT_S,
                    "outcomes": outcomes,
                    "timeouts": outcomes.get("timeout", 0),
                    "seconds": percentiles([s for s, _ in many]),
                    "max_ms": round(max(s for s, _ in many) * 1000, 1),
                    "wall_s": round(took, 1),
                    "server_rss_mib_before": round(rss_before / 1024, 1),
                    "server_rss_mib_after": round(rss_kib(server.pid) / 1024, 1),
                    "max_open_stores": DEFAULT_MAX_OPEN_STORES,
                }
        finally:
            stop(server, timeout=60)
        with memstore.open(data, BUSY, index=False) as store:
            result["backlog_left_after"] = store.index_backlog()  # busy's own opens apply it
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backlog", type=int, default=5000)
    parser.add_argument("--first", type=int, default=20)
    parser.add_argument("--namespaces", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS / "namespaces.json")
    args = parser.parse_args(argv)
    result = run(args.backlog, args.first, args.namespaces, args.concurrency)
    result["command"] = " ".join(["python", "bench/namespaces.py", *sys.argv[1:]])
    save(result, args.out)
    print(json.dumps({k: result[k] for k in ("first_requests", "many_namespaces")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
