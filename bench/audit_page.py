"""The audit page at scale: how fast its pages answer over a namespace of many rejections.

    python bench/audit_page.py --rejections 100000 [--repeats 30]

Writes ``rejections`` refused facts into a fresh SQLite store (no search index) through
``add_facts`` in batches of 100 (the gate's limit per call), each refused by a write
hook with seeded verdicts and numbers (the verifier is not what is measured; the page
is), then serves the real app in
process (FastAPI's TestClient, the API key in a header) and times, ``repeats`` times
each: the list's first page (with its chart and the drift report behind the banners),
the list filtered by verdict and by words, a page deep in the list, one rejection's
page (its neighbourhood of the audit chain checked), and ``GET /drift``; and, at most 3
times, the chain page, which walks the whole audit chain. Results go to
``bench/results/audit_page_<rejections>.json`` with the machine, date, commit and
command. The goal (issue 28): the list in <= 300 ms p95 at 100,000 rejections.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from measure import RESULTS, SEED, percentiles, provenance, save

import memstore
from memstore import Admission, Candidate, FactStatus
from memstore.config import load_settings
from memstore.rest import create_app

NS = "user:audit"
KEY = "audit-bench-key-0123456789"
VERDICTS = ("unsupported", "insufficient_evidence", "contradicted", "prior_sufficient")
BATCH = 100  # the most facts one call may put through the gate


class SeededRefusals:
    """A write hook that refuses every fact with a seeded verdict and numbers."""

    name = "bench-refusals"

    def __init__(self, seed: int) -> None:
        self.draw = random.Random(seed)

    def admit_many(self, candidates: Sequence[Candidate]) -> list[Admission]:
        found = []
        for _ in candidates:
            p0, p1 = self.draw.uniform(0.0, 0.5), self.draw.uniform(0.0, 0.7)
            required, observed = self.draw.uniform(1.0, 4.0), self.draw.uniform(0.0, 3.0)
            found.append(
                Admission(
                    accepted=False,
                    verdict=self.draw.choice(VERDICTS),
                    status=FactStatus.UNVERIFIED,
                    confidence=0.0,
                    p0=p0,
                    p1=p1,
                    required_bits=required,
                    observed_bits=observed,
                    budget_gap=required - observed,
                    backend=self.name,
                    latency_ms=self.draw.uniform(5.0, 80.0),
                )
            )
        return found


def fact(n: int) -> dict[str, Any]:
    person, company = f"Person {n}", f"Company {n % 997}"
    return {
        "statement": f"{person} works at {company}.",
        "members": [(person, "person", "employee"), (company, "org", "employer")],
        "relation": "works_at",
        "evidence": [f"{person}: I have been at {company} since {1990 + n % 30}."],
    }


def fill(data: Path, rejections: int) -> float:
    """Write ``rejections`` refused facts; the seconds it took."""
    started = time.perf_counter()
    with memstore.open(data, NS, hook=SeededRefusals(SEED), index=False) as store:
        for start in range(0, rejections, BATCH):
            store.add_facts([fact(n) for n in range(start, min(start + BATCH, rejections))])
            print(f"  {min(start + BATCH, rejections)} rejections", file=sys.stderr, flush=True)
    return time.perf_counter() - started


def timed(client: TestClient, path: str, repeats: int, **params: Any) -> dict[str, float]:
    """p50/p95 of ``repeats`` GETs of ``path`` (after one warm-up), each answered 200."""
    headers = {"X-API-Key": KEY}
    assert client.get(path, params=params, headers=headers).status_code == 200
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        response = client.get(path, params=params, headers=headers)
        samples.append(time.perf_counter() - began)
        assert response.status_code == 200, response.text[:300]
    return percentiles(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rejections", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--out", type=Path, help="default: results/audit_page_<N>.json")
    args = parser.parse_args(argv)
    result = provenance("audit_page") | {"rejections": args.rejections}
    with tempfile.TemporaryDirectory(prefix="memstore-audit-bench-") as tmp:
        data = Path(tmp) / "memdata"
        seconds = fill(data, args.rejections)
        result["ingest"] = {"seconds": round(seconds, 1), "per_s": round(args.rejections / seconds)}
        settings = load_settings(
            store={"url": str(data), "index": False},
            server={"api_keys": {KEY: [NS]}},
            hallucination={"enabled": False},
        )
        with memstore.open(data, NS, index=False) as store:
            one = store.rejections(limit=1, offset=args.rejections // 2)[0].id
        page = f"/audit/{NS}"
        with TestClient(create_app(settings)) as client:
            result["latency"] = {
                "list": timed(client, page, args.repeats),
                "list_by_verdict": timed(client, page, args.repeats, verdict="contradicted"),
                "list_by_words": timed(client, page, args.repeats, text="Company 42."),
                "list_deep_page": timed(client, page, args.repeats, offset=args.rejections // 2),
                "one_rejection": timed(client, f"{page}/rejections/{one}", args.repeats),
                "whole_chain": timed(client, f"{page}/chain", min(args.repeats, 3)),
                "drift_api": timed(client, f"/v1/namespaces/{NS}/drift", args.repeats),
            }
    list_p95 = result["latency"]["list"]["p95_ms"]
    result["goal"] = {"list_p95_ms_at_most": 300, "met": list_p95 <= 300}
    save(result, args.out or RESULTS / f"audit_page_{args.rejections}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
