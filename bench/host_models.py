"""What it costs to check writes with a language model the agent already has: requests,
tokens and latency per write, per route to the model.

    python bench/host_models.py [--rows 12] [--samples 5]

The model is SmolLM2-135M behind llama.cpp's OpenAI-compatible server (started here),
near chance as a judge: this bench measures the routes, not the model's quality. The
rows are a seeded sample of the agent-memory dev split, each one claim checked against
its evidence (one write's gate call: p1 and p0). Routes:

- ``openai-logprobs``: the ``openai`` backend reading the first token's log-probabilities
  (one request per question);
- ``sampling``: the ``sampling`` backend, ``--samples`` text answers per question, no
  log-probabilities asked (``gate.backends.sampling``);
- ``mcp-host-mid-call`` and ``mcp-host-rounds``: ``memstore mcp --verifier host`` as a
  stdio server process, the MCP SDK's client with a sampling callback that forwards to
  the same llama.cpp server, speaking protocol 2025-11-25 (requests mid-call) and
  2026-07-28 (``input_required`` rounds); the tool ``verify_claim``, timed at the client.

Per route: requests and tokens per write (the server's own token counts), latency per
claim (p50/p95 of whole writes, one claim each), the share of sampled answers that were a
bare YES or NO, and the outcomes (verified / held / refused). Results go to
``bench/results/host_models.json`` with the machine, the date, the commit and the command.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import agent_memory
import anyio
from measure import RESULTS, SEED, percentiles, provenance, save

from gate import Gate, Verdict
from gate.backends.llama_server import MODEL, llama_server
from gate.backends.openai import OpenAIBackend
from gate.backends.sampling import SamplingBackend
from language.prompts import yes_or_no

OUT = RESULTS / "host_models.json"


def rows(count: int) -> list[agent_memory.AgentMemoryPair]:
    pairs = agent_memory.load("dev", generated=False)
    return random.Random(SEED).sample(pairs, min(count, len(pairs)))


def outcome_shares(outcomes: list[str]) -> dict[str, float]:
    counts = Counter(outcomes)
    return {k: round(counts[k] / len(outcomes), 3) for k in ("verified", "held", "refused")}


def gate_route(
    name: str, backend: OpenAIBackend | SamplingBackend, pairs: list[Any]
) -> dict[str, Any]:
    """Each row as one gate call through ``backend``, its requests and tokens counted."""
    gate = Gate(backend, deadline=600.0)
    times: list[float] = []
    outcomes: list[str] = []
    answered = asked = 0
    start_requests, start_tokens = backend.usage.requests, backend.usage.tokens
    for pair in pairs:
        began = time.perf_counter()
        verdict: Verdict = gate.check(pair.claim, list(pair.evidence))
        times.append(time.perf_counter() - began)
        outcomes.append(verdict.outcome)
    requests, tokens = backend.usage.requests, backend.usage.tokens
    if isinstance(backend, SamplingBackend):
        answered, asked = backend.answered, backend.asked
    return {
        "route": name,
        "requests_per_write": round((requests - start_requests) / len(pairs), 2),
        "tokens_per_write": round((tokens - start_tokens) / len(pairs), 1),
        "latency_per_claim": percentiles(times),
        "bare_answers": round(answered / asked, 3) if asked else None,
        "outcomes": outcome_shares(outcomes),
    }


def mcp_route(name: str, mode: str, url: str, pairs: list[Any], samples: int) -> dict[str, Any]:
    """Each row as one ``verify_claim`` call to a ``memstore mcp --verifier host`` server."""
    from mcp import Client, StdioServerParameters

    from memstore.mcp.host import ChatSampler

    forward = ChatSampler(url, MODEL)

    async def run() -> dict[str, Any]:
        data = Path(tempfile.mkdtemp(prefix="host-models-"))
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                *("-m", "memstore.mcp", "--store", str(data / "mem"), "--namespace", "bench"),
                *("--verifier", "host", "--samples", str(samples), "--host-timeout", "600"),
            ],
        )
        times: list[float] = []
        outcomes: list[str] = []
        async with Client(params, sampling_callback=forward, mode=mode) as client:  # type: ignore[arg-type]
            for pair in pairs:
                began = time.perf_counter()
                result = await client.call_tool(
                    "verify_claim", {"claim": pair.claim, "evidence": list(pair.evidence)}
                )
                times.append(time.perf_counter() - began)
                answer = result.structured_content or {}
                outcomes.append(str(answer.get("outcome", "error")))
        asked = len(forward.answers)
        bare = sum(yes_or_no(text) is not None for text in forward.answers)
        return {
            "route": name,
            "requests_per_write": round(asked / len(pairs), 2),
            "tokens_per_write": round(forward.tokens / len(pairs), 1),
            "latency_per_claim": percentiles(times),
            "bare_answers": round(bare / asked, 3) if asked else None,
            "outcomes": outcome_shares(outcomes),
        }

    return anyio.run(run)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=12, help="agent-memory dev rows checked")
    parser.add_argument("--samples", type=int, default=5, help="answers per question (k)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    pairs = rows(args.rows)
    result: dict[str, Any] = {
        **provenance("host_models"),
        "model": "SmolLM2-135M-Instruct Q4_1 on llama.cpp (llama-cpp-python server, 2 threads)",
        "rows": len(pairs),
        "samples": args.samples,
        "routes": [],
    }
    with tempfile.TemporaryDirectory() as logs, llama_server(Path(logs)) as url:
        logprobs = OpenAIBackend(MODEL, base_url=url, mode="logprobs", timeout=120)
        result["routes"].append(gate_route("openai-logprobs", logprobs, pairs))
        sampler = SamplingBackend(MODEL, base_url=url, samples=args.samples, timeout=120)
        result["routes"].append(gate_route("sampling", sampler, pairs))
        result["routes"].append(mcp_route("mcp-host-mid-call", "legacy", url, pairs, args.samples))
        result["routes"].append(mcp_route("mcp-host-rounds", "auto", url, pairs, args.samples))
    save(result, args.out)


if __name__ == "__main__":
    main()
