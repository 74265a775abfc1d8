"""The MCP tools an agent fixes and reads memory with: ``supersede`` (correct, through the
gate), ``retract`` (forget, keeping the history), ``recall`` (a block for its context)
and ``search`` (filtered). The SDK's own client on the server in process, a real store
and index; the gate is a rule (``scripted.supports_its_own_words``), not a model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import TextContent
from scripted import supports_its_own_words

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore import Store
from memstore.mcp import server

pytestmark = pytest.mark.anyio

BOSTON = {
    "statement": "Maya lives in Boston.",
    "members": [{"name": "Maya", "kind": "person"}, {"name": "Boston", "kind": "city"}],
    "evidence": ["Maya: I live in Boston."],
}
LISBON = {
    "statement": "Maya lives in Lisbon.",
    "members": [{"name": "Maya", "kind": "person"}, {"name": "Lisbon", "kind": "city"}],
    "evidence": ["Maya: I live in Lisbon now."],
}
PARIS = {**LISBON, "statement": "Maya lives in Paris."}  # the evidence says Lisbon
WHERE = "Where does Maya live?"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Client, Store]]:
    gate = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)
    with memstore.open(tmp_path / "mem", "user:maya", gate=gate) as store:
        async with Client(server.build_server(store)) as client:
            yield client, store


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, error_text(result)
    assert result.structured_content is not None
    return result.structured_content


async def refused_call(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error and result.structured_content is None
    return error_text(result)


def error_text(result: Any) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def test_the_tools_are_listed_with_their_schemas(served: tuple[Client, Store]) -> None:
    client, _ = served
    tools = {t.name: t for t in (await client.list_tools()).tools}
    supersede, retract = tools["supersede"], tools["retract"]
    assert supersede.input_schema["required"] == ["fact_id", "statement", "members", "evidence"]
    assert retract.input_schema["required"] == ["fact_id", "reason"]
    assert tools["recall"].input_schema["required"] == ["query"]
    assert set(tools["recall"].input_schema["properties"]) == {
        "query", "budget_tokens", "k", "entity", "as_of", "min_score"
    }  # fmt: skip
    assert supersede.annotations is not None and supersede.annotations.read_only_hint is False
    assert supersede.annotations.destructive_hint is False  # the old version stays
    assert retract.annotations is not None and retract.annotations.destructive_hint is True
    assert (supersede.description or "").startswith("Correct a remembered fact")
    assert (retract.description or "").startswith("Forget a remembered fact")


async def test_supersede_replaces_a_fact_when_the_gate_admits_the_correction(
    served: tuple[Client, Store],
) -> None:
    client, store = served
    old = await call(client, "remember", BOSTON)
    new = await call(client, "supersede", {"fact_id": old["fact_id"], **LISBON})
    assert new["stored"] is True and new["verdict"] == "grounded" and new["status"] == "verified"
    assert new["fact_id"] != old["fact_id"]
    assert [(v.statement, v.status) for v in store.history(old["fact_id"])] == [
        ("Maya lives in Boston.", "superseded"),
        ("Maya lives in Lisbon.", "verified"),
    ]
    recalled = await call(client, "recall", {"query": WHERE})
    assert [f["fact_id"] for f in recalled["facts"]] == [new["fact_id"]]
    assert recalled["text"].startswith("- Maya lives in Lisbon. (since ")


async def test_a_correction_the_evidence_does_not_support_is_refused_and_changes_nothing(
    served: tuple[Client, Store],
) -> None:
    client, store = served
    old = await call(client, "remember", BOSTON)
    refused = await call(client, "supersede", {"fact_id": old["fact_id"], **PARIS})
    assert refused["stored"] is False and refused["fact_id"] is None
    assert refused["rejection_id"] and refused["reason"] and refused["hint"]
    assert store.get_fact(old["fact_id"]).status == "verified"
    assert [r.statement for r in store.rejections()] == ["Maya lives in Paris."]
    recalled = await call(client, "recall", {"query": WHERE})
    assert [f["fact_id"] for f in recalled["facts"]] == [old["fact_id"]]


async def test_retract_forgets_a_fact_and_its_history_keeps_the_reason(
    served: tuple[Client, Store],
) -> None:
    client, store = served
    fact = await call(client, "remember", BOSTON)
    done = await call(client, "retract", {"fact_id": fact["fact_id"], "reason": "Maya moved"})
    assert done == {
        "fact_id": fact["fact_id"],
        "statement": "Maya lives in Boston.",
        "status": "retracted",
        "reason": "Maya moved",
    }
    assert (await call(client, "recall", {"query": WHERE, "min_score": 0}))["facts"] == []
    assert (await call(client, "search", {"query": WHERE}))["result"] == []
    kept = store.get_fact(fact["fact_id"])
    assert (kept.status, kept.retraction_reason) == ("retracted", "Maya moved")
    again = await refused_call(client, "retract", {"fact_id": fact["fact_id"], "reason": "x"})
    assert "invalid input: fact_id" in again and "retracted" in again


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("supersede", {"fact_id": "0123456789abcdef", **LISBON}, "0123456789abcdef"),
        ("supersede", {"fact_id": "", **LISBON}, "fact_id"),
        ("supersede", {"fact_id": "x", **LISBON, "members": [{"name": " "}]}, "members.0.name"),
        ("retract", {"fact_id": "0123456789abcdef", "reason": "gone"}, "0123456789abcdef"),
        ("retract", {"fact_id": "0123456789abcdef", "reason": ""}, "reason"),
        ("recall", {"query": WHERE, "budget_tokens": 0}, "budget_tokens"),
        ("recall", {"query": WHERE, "min_score": 1.5}, "min_score"),
        ("search", {"query": WHERE, "min_score": -1}, "min_score"),
    ],
)
async def test_bad_input_and_unknown_facts_are_tool_errors_naming_them(
    served: tuple[Client, Store], tool: str, arguments: dict[str, Any], says: str
) -> None:
    client, store = served
    text = await refused_call(client, tool, arguments)
    assert says in text, text
    assert store.stats().facts == {} and store.rejections() == []


async def test_recall_answers_a_block_within_its_budget_and_nothing_when_unrelated(
    served: tuple[Client, Store],
) -> None:
    client, _ = served
    await call(client, "remember", BOSTON)
    found = await call(client, "recall", {"query": WHERE, "budget_tokens": 64})
    assert found["text"].startswith("- Maya lives in Boston. (recorded ")
    assert found["text"].endswith("source: inline)") and 0 < found["tokens"] <= 64
    assert found["left_out"] == 0 and found["facts"][0]["relevance"] >= 0.32
    cut = await call(client, "recall", {"query": WHERE, "budget_tokens": 5})
    assert (cut["text"], cut["facts"], cut["tokens"], cut["left_out"]) == ("", [], 0, 1)
    unrelated = await call(client, "recall", {"query": "How do I reverse a list in Python?"})
    assert (unrelated["text"], unrelated["facts"]) == ("", [])


async def test_search_filters_by_recording_time_and_relevance(
    served: tuple[Client, Store],
) -> None:
    client, store = served
    first = await call(client, "remember", BOSTON)
    recorded = store.get_fact(first["fact_id"]).recorded_at
    after = (recorded + timedelta(microseconds=1)).isoformat()
    assert [h["fact_id"] for h in (await call(client, "search", {"query": WHERE}))["result"]] == [
        first["fact_id"]
    ]
    assert (await call(client, "search", {"query": WHERE, "recorded_after": after}))["result"] == []
    before = await call(client, "search", {"query": WHERE, "recorded_before": after})
    assert [h["fact_id"] for h in before["result"]] == [first["fact_id"]]
    far = {"query": "How do I reverse a list in Python?", "min_score": 0.32}
    assert (await call(client, "search", far))["result"] == []
