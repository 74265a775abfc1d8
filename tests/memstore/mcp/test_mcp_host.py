"""``memstore mcp --verifier host --extractor host``: the client's own model over MCP
sampling, through the MCP SDK's own client and a real server process over stdio.

The client's model is a sampling callback: a scripted one where the test needs to know
the answers (the plumbing, both protocol eras, the budgets, refusals and timeouts), and
one that forwards to a real llama.cpp server. They test the plumbing, not a model.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CreateMessageResult, ErrorData, TextContent

from gate.backends.llama_server import MODEL
from gate.backends.llama_server import llama_server as start_llama_server
from language.prompts import EXTRACT_PROMPT, VERIFY_PROMPT
from memstore.mcp.host import NO_SAMPLING_EXTRACTOR, NO_SAMPLING_VERIFIER, ChatSampler

pytestmark = pytest.mark.anyio

NAMESPACE = "user:maya"
PEANUTS = {
    "statement": "Maya is allergic to peanuts.",
    "members": [
        {"name": "Maya", "kind": "person", "role": "patient"},
        {"name": "peanuts", "kind": "food", "role": "allergen"},
    ],
    "evidence": ["Maya: I'm allergic to peanuts."],
}
SEATTLE = [{"role": "user", "name": "Maya", "content": "I live in Seattle now."}]
SEATTLE_FACT = {
    "statement": "Maya lives in Seattle.",
    "members": [
        {"name": "Maya", "kind": "person", "role": "subject"},
        {"name": "Seattle", "kind": "place", "role": "object"},
    ],
    "relation": "lives_in",
    "valid_from": None,
    "messages": [0],
    "quote": "I live in Seattle now",
}
#: The scrubbed evidence the gate's p0 question reads (gate.evidence.scrub).
REMOVED = "[EVIDENCE REMOVED]"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Model:
    """The client's model, scripted: YES where the evidence is there, NO where it was
    scrubbed (so the gate verifies at five samples), the Seattle fact as extraction;
    ``refuse`` and ``stall`` for the claims named so."""

    asked: list[Any] = field(default_factory=list)

    async def __call__(self, context: Any, params: Any) -> CreateMessageResult | ErrorData:
        self.asked.append(params)
        text = params.messages[0].content.text
        if params.system_prompt and params.system_prompt.startswith(EXTRACT_PROMPT):
            answer = json.dumps({"facts": [SEATTLE_FACT]})
        elif "refuses to answer" in text:
            return ErrorData(code=-1, message="the user declined this sampling request")
        elif "takes its time" in text:
            await anyio.sleep(30)
            answer = "YES"
        else:
            answer = "NO" if REMOVED in text else "YES"
        content = TextContent(type="text", text=answer)
        return CreateMessageResult(role="assistant", content=content, model="scripted")

    def verifier_questions(self) -> list[Any]:
        return [p for p in self.asked if p.system_prompt is None]


@asynccontextmanager
async def serving(
    data_dir: Path, *flags: str, model: Any = None, mode: str = "auto"
) -> AsyncIterator[Client]:
    """A stdio server on ``data_dir`` with ``flags``, and the SDK's client for it (with
    ``model`` as its sampling callback; ``mode`` "legacy": protocol 2025-11-25)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memstore.mcp", "--store", str(data_dir), "--namespace", NAMESPACE, *flags],
        env={"MEMSTORE_HALLUCINATION__TIMEOUT": "30"},
    )
    async with Client(params, sampling_callback=model, mode=mode) as client:  # type: ignore[arg-type]
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
    assert not result.is_error, text
    assert result.structured_content is not None
    return result.structured_content


def rows(data_dir: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(data_dir / "memstore.db") as db:
        return db.execute(sql).fetchall()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_gate_asks_the_clients_model(tmp_path: Path, mode: str) -> None:
    """Mid-call requests (2025-11-25) or input_required rounds (2026-07-28, what the
    SDK's client speaks by default): the same questions, the same verdict."""
    model = Model()
    flags = ("--verifier", "host", "--host-fallback")  # a client that samples: not used
    async with serving(tmp_path / "mem", *flags, model=model, mode=mode) as client:
        stored = await call(client, "remember", PEANUTS)
        checked = await call(
            client,
            "verify_claim",
            {
                "claim": "Maya is allergic to peanuts.",
                "evidence": ["Maya: peanuts? I am allergic."],
            },
        )
    assert stored["stored"] and stored["status"] == "verified"
    assert stored["p1"] == pytest.approx(5.5 / 6) and stored["p0"] == pytest.approx(0.5 / 6)
    questions = model.verifier_questions()
    assert len(questions) == 2 * 5 + 2 * 5  # p1 and p0, five samples each, two calls
    first = questions[0]
    evidence = "[1] Maya: Maya is allergic to peanuts."  # first person read as its speaker
    assert first.messages[0].content.text == VERIFY_PROMPT.format(
        claim=PEANUTS["statement"], context=evidence
    )
    assert first.temperature == 1.0 and first.max_tokens == 4
    assert checked["status"] == "grounded" and checked["outcome"] == "verified"
    assert checked["p1_spread"] == pytest.approx(0.1045, abs=1e-4)
    # one fact, one verification: nothing was written on a round that ended for answers
    assert rows(tmp_path / "mem", "SELECT count(*) FROM facts") == [(1,)]
    assert rows(tmp_path / "mem", "SELECT count(*) FROM verifications") == [(1,)]
    assert rows(tmp_path / "mem", "SELECT count(*) FROM rejections") == [(0,)]
    [(backend,)] = rows(tmp_path / "mem", "SELECT backend FROM verifications")
    assert backend.startswith("sampling:mcp-host:k5:")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_conversation_is_extracted_and_checked_by_the_clients_model(
    tmp_path: Path, mode: str
) -> None:
    model = Model()
    flags = ("--verifier", "host", "--extractor", "host")
    async with serving(tmp_path / "mem", *flags, model=model, mode=mode) as client:
        report = await call(client, "remember_conversation", {"messages": SEATTLE})
    assert report["extractor"] == "llm:host"
    [candidate] = report["candidates"]
    assert candidate["statement"] == "Maya lives in Seattle." and candidate["outcome"] == "stored"
    assert candidate["verdict"] == "grounded"
    extraction = [p for p in model.asked if p.system_prompt is not None]
    assert extraction  # the extractor's instructions, with the schema written out
    assert extraction[0].system_prompt.startswith(EXTRACT_PROMPT)
    assert '"facts"' in extraction[0].system_prompt
    assert "[0] Maya (user): I live in Seattle now." in extraction[0].messages[0].content.text
    assert rows(tmp_path / "mem", "SELECT statement, status FROM facts") == [
        ("Maya lives in Seattle.", "verified")
    ]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_past_the_budget_the_fact_is_held(tmp_path: Path, mode: str) -> None:
    model = Model()
    flags = ("--verifier", "host", "--host-requests", "4")  # the gate would ask 10
    async with serving(tmp_path / "mem", *flags, model=model, mode=mode) as client:
        held = await call(client, "remember", PEANUTS)
    assert held["stored"] and held["status"] == "pending"
    assert "over the budget of 4" in held["reason"]
    assert model.asked == []  # refused before a single request


async def test_a_refusal_by_the_client_holds_the_fact(tmp_path: Path) -> None:
    model = Model()
    refused = {**PEANUTS, "statement": "Maya refuses to answer about peanuts."}
    async with serving(tmp_path / "mem", "--verifier", "host", model=model, mode="legacy") as c:
        declined = await call(c, "remember", refused)
    assert declined["stored"] and declined["status"] == "pending"
    assert "the client did not sample" in declined["reason"]
    assert "declined" in declined["reason"]


async def test_a_client_past_the_timeout_holds_the_fact(tmp_path: Path) -> None:
    model = Model()  # answers this claim after 30 s
    slow = {**PEANUTS, "statement": "Maya takes its time with peanuts."}
    flags = ("--verifier", "host", "--host-timeout", "2")
    async with serving(tmp_path / "mem", *flags, model=model, mode="legacy") as client:
        timed_out = await call(client, "remember", slow)
    assert timed_out["stored"] and timed_out["status"] == "pending"
    assert "did not answer within 2s (this call's budget)" in timed_out["reason"]


async def test_a_client_that_cannot_sample_is_told_what_to_do(tmp_path: Path) -> None:
    async with serving(tmp_path / "mem", "--verifier", "host") as client:
        result = await client.call_tool("remember", PEANUTS)
        recalled = await call(client, "recall", {"query": "peanuts"})
    assert result.is_error
    text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
    assert NO_SAMPLING_VERIFIER in text and "--host-fallback" in text
    assert recalled["facts"] == []  # nothing written; the tools that read work as ever
    assert rows(tmp_path / "mem", "SELECT count(*) FROM facts") == [(0,)]


async def test_a_server_that_only_extracts_with_the_host_still_gates_writes_itself(
    tmp_path: Path,
) -> None:
    """--extractor host alone: remember needs no sampling (the configured gate checks
    it); remember_conversation tells a client that cannot sample what to do."""
    async with serving(tmp_path / "mem", "--extractor", "host") as client:
        stored = await call(client, "remember", PEANUTS)
        result = await client.call_tool("remember_conversation", {"messages": SEATTLE})
    assert stored["stored"] and stored["verdict"] != "verifier_error"
    assert result.is_error
    text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
    assert NO_SAMPLING_EXTRACTOR in text
    assert rows(tmp_path / "mem", "SELECT statement FROM facts") == [(PEANUTS["statement"],)]


async def test_with_a_fallback_the_configured_verifier_answers_and_says_so(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path / "mem", "--verifier", "host", "--host-fallback") as client:
        answer = await call(client, "remember", PEANUTS)
    assert answer["verdict"] != "verifier_error"
    [(backend,)] = rows(
        tmp_path / "mem", "SELECT backend FROM verifications UNION SELECT backend FROM rejections"
    )
    assert backend.startswith("embedded")  # the verdict names the verifier that answered


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_llama_server(tmp_path_factory.mktemp("llama")) as url:
        yield url


async def test_a_real_model_behind_the_client(tmp_path: Path, llama_server: str) -> None:
    """The sampling callback forwards to llama.cpp (no logprobs asked): whatever the small
    model says, the write ends as a normal result and every question reached it."""
    forward = ChatSampler(llama_server, MODEL)
    flags = ("--verifier", "host", "--samples", "3")
    async with serving(tmp_path / "mem", *flags, model=forward, mode="legacy") as client:
        answer = await call(client, "remember", PEANUTS)
    sent = forward.payloads
    assert len(sent) == 2 * 3 and not any("logprobs" in p for p in sent)
    assert forward.tokens > 0 and len(forward.answers) == 6
    assert answer["verdict"] != "timeout"
    if answer["stored"]:
        assert answer["status"] in ("verified", "unverified", "pending")
    else:
        assert answer["rejection_id"]
