"""Remembering a conversation through each front: the REST API (real HTTP), the MCP
server (the SDK's client, in process) and the CLI (the Typer app). A rule verifier
(``scripted.supports_its_own_words``) decides, so every verdict is the same on every
machine; the extractor is the one the settings choose."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp_types import TextContent
from rest_server import ALICE_KEY, KEYS, serving, settings_for
from scripted import Mishearing, supports_its_own_words
from typer.testing import CliRunner

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore.cli import Exit, app
from memstore.config import ConversationSettings, Settings, load_settings
from memstore.conversations import conversation
from memstore.conversations.extractors import Candidate, EmbeddedExtractor
from memstore.conversations.messages import MAX_MESSAGES, Message
from memstore.mcp import server as mcp_server
from memstore.rest import create_app

ALICE = "/v1/namespaces/user:alice"
PEANUTS = {"role": "user", "name": "Alice", "content": "Hi! I'm allergic to peanuts."}
NOTED = {"role": "assistant", "content": "Noted."}
BOSTON = {"role": "user", "name": "Maya", "content": "I live in Boston."}
LISBON = {"role": "user", "name": "Maya", "content": "I moved to Lisbon in May."}
ACME = {"role": "user", "name": "Maya", "content": "I work at Acme."}
GLOBEX = {"role": "user", "name": "Maya", "content": "I work for Globex."}
#: An extractor endpoint where nothing listens.
NOBODY = {
    "extractor": "llm",
    "llm": {"model": "tiny", "base_url": "http://127.0.0.1:9/v1", "timeout": 2, "retries": 0},
}
CLEAN_ENV = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None, "MEMSTORE_CONFIG": None}

RULE_GATE = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def rule_gate() -> Iterator[Gate]:
    """Every store opened from settings checks with the rule verifier."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Settings, "gate", lambda self: RULE_GATE)
        yield RULE_GATE


def mishear(patch: pytest.MonkeyPatch) -> None:
    """The settings' extractor mishears "peanuts" as "shellfish"."""
    patch.setattr(conversation, "extractor_from", lambda settings: Mishearing())


# -- REST -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rest_client(
    tmp_path_factory: pytest.TempPathFactory, rule_gate: Gate
) -> Iterator[httpx.Client]:
    data = tmp_path_factory.mktemp("conversations") / "memdata"
    with serving(create_app(settings_for(str(data)))) as base:
        headers = {"Authorization": f"Bearer {ALICE_KEY}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            yield client


def outcomes(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["outcome"], c["statement"]) for c in report["candidates"]]


def test_rest_answers_each_candidate(rest_client: httpx.Client) -> None:
    response = rest_client.post(f"{ALICE}/conversations", json={"messages": [PEANUTS, NOTED]})
    assert response.status_code == 200, response.text
    report = response.json()
    assert (report["extractor"], report["messages"]) == ("embedded", 2)
    assert outcomes(report) == [("stored", "Alice is allergic to peanuts.")]
    fact = report["candidates"][0]["fact"]
    assert fact["status"] == "verified" and fact["namespace"] == "user:alice"
    again = rest_client.post(f"{ALICE}/conversations", json={"messages": [PEANUTS]}).json()
    assert outcomes(again) == [("duplicate", "Alice is allergic to peanuts.")]
    assert again["candidates"][0]["fact"]["id"] == fact["id"]


def test_rest_supersedes_by_default_and_flags_when_asked(rest_client: httpx.Client) -> None:
    url = f"{ALICE}/conversations"
    old = rest_client.post(url, json={"messages": [BOSTON]}).json()["candidates"][0]["fact"]
    [moved] = rest_client.post(url, json={"messages": [LISBON]}).json()["candidates"]
    assert moved["outcome"] == "superseded" and moved["replaced"] == [old["id"]]
    assert rest_client.get(f"{ALICE}/facts/{old['id']}").json()["status"] == "superseded"
    acme = rest_client.post(url, json={"messages": [ACME]}).json()["candidates"][0]["fact"]
    [flagged] = rest_client.post(url, json={"messages": [GLOBEX], "on_conflict": "flag"}).json()[
        "candidates"
    ]
    assert flagged["outcome"] == "conflict" and flagged["conflicts"] == [acme["id"]]
    assert rest_client.get(f"{ALICE}/facts/{acme['id']}").json()["status"] == "verified"


def test_rest_reports_a_refusal_and_audits_it(rest_client: httpx.Client) -> None:
    with pytest.MonkeyPatch.context() as patch:
        mishear(patch)
        response = rest_client.post(f"{ALICE}/conversations", json={"messages": [PEANUTS]})
    assert response.status_code == 200, response.text
    [refused] = response.json()["candidates"]
    assert refused["outcome"] == "refused" and refused["fact"] is None
    rejection = refused["rejection"]
    assert rejection["verdict"] in {"unsupported", "contradicted"} and rejection["reason"]
    audited = rest_client.get(f"{ALICE}/rejections/{rejection['id']}").json()
    assert audited["statement"] == "Alice is allergic to shellfish."


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"messages": []}, "messages"),
        ({"messages": "I like tea"}, "messages"),
        ({"messages": [PEANUTS, {"role": "robot", "content": "x"}]}, "messages.1.role"),
        ({"messages": [{"role": "user", "content": "   "}]}, "messages.0.content"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages.0"),
        (
            {"messages": [{"role": "user", "content": "x", "timestamp": "soon"}]},
            "messages.0.timestamp",
        ),
        ({"messages": [PEANUTS], "on_conflict": "ignore"}, "on_conflict"),
        ({"messages": [PEANUTS], "context_turns": -1}, "context_turns"),
        ({"messages": [PEANUTS], "extractor": "llm"}, "extractor"),
    ],
)
def test_rest_bad_input_is_400_naming_the_field(
    rest_client: httpx.Client, body: dict[str, Any], field: str
) -> None:
    response = rest_client.post(f"{ALICE}/conversations", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_rest_answers_502_when_the_extractor_fails(tmp_path: Path, rule_gate: Gate) -> None:
    data = tmp_path / "memdata"
    with serving(create_app(settings_for(str(data), conversations=NOBODY))) as base:
        headers = {"Authorization": f"Bearer {ALICE_KEY}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            response = client.post(f"{ALICE}/conversations", json={"messages": [PEANUTS]})
    assert response.status_code == 502, response.text
    assert response.json()["error"] == "extractor_failed"
    assert "extractor" in response.json()["detail"] and "nothing" in response.json()["detail"]
    assert ALICE_KEY not in response.text
    with memstore.open(data, "user:alice", hook=memstore.Ungated(), index=False) as store:
        assert store.stats().facts == {} and store.rejections() == []


def test_rest_documents_the_route(rest_client: httpx.Client) -> None:
    schema = rest_client.get("/openapi.json").json()
    route = schema["paths"]["/v1/namespaces/{namespace}/conversations"]["post"]
    assert {"200", "400", "502"} <= set(route["responses"])
    assert route["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ConversationReport"
    }


# -- MCP ------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def mcp(tmp_path: Path) -> AsyncIterator[Client]:
    with memstore.open(tmp_path / "mem", "user:alice", gate=RULE_GATE) as store:
        server = mcp_server.build_server(store, conversations=ConversationSettings())
        async with Client(server) as client:
            yield client


async def remember(client: Client, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool("remember_conversation", arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


@pytest.mark.anyio
async def test_mcp_lists_the_tool(mcp: Client) -> None:
    tools = {t.name: t for t in (await mcp.list_tools()).tools}
    tool = tools["remember_conversation"]
    assert tool.input_schema["required"] == ["messages"]
    assert set(tool.input_schema["properties"]) == {
        "messages",
        "on_conflict",
        "context_turns",
        "metadata",
        "user_name",
    }
    assert tool.annotations is not None and tool.annotations.read_only_hint is False
    assert (tool.description or "").startswith("Remember what a conversation states")


@pytest.mark.anyio
async def test_mcp_summarises_each_candidate(mcp: Client) -> None:
    done = await remember(mcp, {"messages": [PEANUTS, NOTED]})
    assert (done["extractor"], done["messages"]) == ("embedded", 2)
    [stored] = done["candidates"]
    assert stored["statement"] == "Alice is allergic to peanuts."
    assert (stored["outcome"], stored["verdict"], stored["message"]) == ("stored", "grounded", 0)
    assert stored["fact_id"] and stored["rejection_id"] is None and stored["p1"] > 0.9
    old = (await remember(mcp, {"messages": [BOSTON]}))["candidates"][0]["fact_id"]
    [moved] = (await remember(mcp, {"messages": [LISBON]}))["candidates"]
    assert moved["outcome"] == "superseded" and moved["replaced"] == [old]
    acme = (await remember(mcp, {"messages": [ACME]}))["candidates"][0]["fact_id"]
    [flagged] = (await remember(mcp, {"messages": [GLOBEX], "on_conflict": "flag"}))["candidates"]
    assert flagged["outcome"] == "conflict" and flagged["conflicts"] == [acme]


@pytest.mark.anyio
async def test_mcp_reports_a_refusal_as_a_result(
    mcp: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    mishear(monkeypatch)
    [refused] = (await remember(mcp, {"messages": [PEANUTS]}))["candidates"]
    assert refused["outcome"] == "refused" and refused["fact_id"] is None
    assert refused["verdict"] == "unsupported" and refused["rejection_id"]
    assert refused["reason"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"messages": [{"role": "robot", "content": "x"}]}, "role"),
        ({"messages": []}, "messages"),
        ({"messages": [PEANUTS], "on_conflict": "ignore"}, "on_conflict"),
    ],
)
async def test_mcp_bad_input_is_a_tool_error_naming_the_field(
    mcp: Client, arguments: dict[str, Any], field: str
) -> None:
    result = await mcp.call_tool("remember_conversation", arguments)
    assert result.is_error and result.structured_content is None
    text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
    assert field in text, text


@pytest.mark.anyio
async def test_mcp_reports_an_extractor_failure_as_a_tool_error(tmp_path: Path) -> None:
    with memstore.open(tmp_path / "mem", "user:alice", gate=RULE_GATE) as store:
        server = mcp_server.build_server(store, conversations=ConversationSettings(**NOBODY))
        async with Client(server) as client:
            result = await client.call_tool("remember_conversation", {"messages": [PEANUTS]})
        assert result.is_error
        text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
        assert "extractor endpoint" in text, text
        assert store.stats().facts == {}


# -- CLI ------------------------------------------------------------------------------


@pytest.fixture
def conversation_cli(tmp_path: Path, rule_gate: Gate) -> Any:
    """Run ``memstore --store <tmp store> -n user:alice ARGS``; returns the click Result."""
    runner = CliRunner()
    where = str(tmp_path / "mem")

    def invoke(*args: str, input: str | None = None, env: dict[str, Any] | None = None) -> Any:
        return runner.invoke(
            app,
            ["--store", where, "-n", "user:alice", *args],
            input=input,
            env={**CLEAN_ENV, **(env or {})},
        )

    invoke.store = where  # type: ignore[attr-defined]
    return invoke


def test_cli_reads_a_json_list_and_prints_a_table(conversation_cli: Any, tmp_path: Path) -> None:
    said = tmp_path / "said.json"
    said.write_text(json.dumps([PEANUTS, NOTED, BOSTON]))
    done = conversation_cli("remember-conversation", str(said), env={"COLUMNS": "200"})
    assert done.exit_code == Exit.OK, done.output
    assert "Alice is allergic to peanuts." in done.stdout and "grounded" in done.stdout
    assert "2 fact(s) found in 3 message(s) by the embedded extractor" in done.stdout
    with memstore.open(conversation_cli.store, "user:alice", index=False) as store:
        assert [f.statement for f in store.facts_about("Maya")] == ["Maya lives in Boston."]


def test_cli_reads_json_lines_from_stdin_and_prints_json(conversation_cli: Any) -> None:
    lines = "\n".join(json.dumps(m) for m in (BOSTON, NOTED)) + "\n\n"
    first = conversation_cli("remember-conversation", "--json", input=lines)
    assert first.exit_code == Exit.OK, first.output
    old = json.loads(first.stdout)["candidates"][0]["fact"]["id"]
    moved = conversation_cli("remember-conversation", "-", "--json", input=json.dumps(LISBON))
    assert moved.exit_code == Exit.OK, moved.output
    [outcome] = json.loads(moved.stdout)["candidates"]
    assert outcome["outcome"] == "superseded" and outcome["replaced"] == [old]
    table = conversation_cli(
        "remember-conversation", input=json.dumps(LISBON), env={"COLUMNS": "200"}
    )
    assert "already remembered" in table.stdout


def test_cli_flags_a_conflict_when_asked(conversation_cli: Any) -> None:
    assert conversation_cli("remember-conversation", input=json.dumps([ACME])).exit_code == Exit.OK
    done = conversation_cli(
        "remember-conversation", "--on-conflict", "flag", "--json", input=json.dumps(GLOBEX)
    )
    assert done.exit_code == Exit.OK, done.output
    assert json.loads(done.stdout)["candidates"][0]["outcome"] == "conflict"


def test_cli_exits_0_when_a_candidate_is_refused(
    conversation_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    mishear(monkeypatch)
    done = conversation_cli(
        "remember-conversation", "--context-turns", "0", input=json.dumps([PEANUTS])
    )
    assert done.exit_code == Exit.OK, done.output
    assert "refused" in done.stdout and "see why: memstore audit" in done.stdout


@pytest.mark.parametrize(
    ("given", "args", "field"),
    [
        (
            '[{"role": "user", "content": "x"}, {"role": "robot", "content": "y"}]',
            (),
            "messages.1.role",
        ),
        ('{"role": "user"}\nnot json\n', (), "file: line 2 is not JSON"),
        ("  \n", (), "file: holds no messages"),
        ('"just text"', (), "messages.0"),
        (json.dumps([PEANUTS]), ("--on-conflict", "ignore"), "on_conflict"),
        (json.dumps([PEANUTS]), ("--context-turns", "-1"), "--context-turns"),
    ],
)
def test_cli_bad_input_exits_2_naming_it(
    conversation_cli: Any, given: str, args: tuple[str, ...], field: str
) -> None:
    done = conversation_cli("remember-conversation", *args, input=given)
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert field in done.stderr, done.stderr


def test_cli_a_missing_file_exits_2(conversation_cli: Any, tmp_path: Path) -> None:
    done = conversation_cli("remember-conversation", str(tmp_path / "nowhere.jsonl"))
    assert done.exit_code == Exit.BAD_INPUT and "cannot read" in done.stderr


def test_cli_an_extractor_failure_exits_1_and_stores_nothing(
    conversation_cli: Any, tmp_path: Path
) -> None:
    config = tmp_path / "memstore.yaml"
    config.write_text(json.dumps({"conversations": NOBODY}))
    done = conversation_cli(
        "--config", str(config), "remember-conversation", input=json.dumps([PEANUTS])
    )
    assert done.exit_code == Exit.INTERNAL, done.output
    assert "the fact extractor failed; nothing was stored" in done.stderr


# -- per-call limits on every front ------------------------------------------------------

#: Each message is one candidate fact (a different allergy each).
MANY = [
    {"role": "user", "name": "Alice", "content": f"I'm allergic to {food}."}
    for food in ("peanuts", "shellfish", "sesame", "mustard")
]
#: One message longer than the evidence limit below.
LONG = [{"role": "user", "name": "Alice", "content": "I'm allergic to peanuts. " * 12}]
TIGHT = {"max_claims": 3, "max_evidence_chars": 200}
#: Per limit: the messages over it, REST's status, and what the error says.
OVER = {
    "claims": (MANY, 400, "at most 3 candidate facts extracted"),
    "evidence": (LONG, 413, "at most 200 characters of evidence"),
}


def untouched(data: Path | str) -> None:
    """Nothing was stored or refused: the limit held before any gate work."""
    with memstore.open(data, "user:alice", hook=memstore.Ungated(), index=False) as store:
        assert store.stats().facts == {} and store.rejections() == []


@pytest.mark.parametrize("limit", sorted(OVER))
def test_rest_holds_the_per_call_limits(tmp_path: Path, rule_gate: Gate, limit: str) -> None:
    messages, status, says = OVER[limit]
    data = tmp_path / "memdata"
    settings = load_settings(store={"url": str(data), **TIGHT}, server={"api_keys": KEYS})
    with serving(create_app(settings)) as base:
        headers = {"Authorization": f"Bearer {ALICE_KEY}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            response = client.post(f"{ALICE}/conversations", json={"messages": messages})
    assert response.status_code == status, response.text
    assert response.json()["field"] == "messages" and says in response.json()["detail"]
    untouched(data)


@pytest.mark.anyio
@pytest.mark.parametrize("limit", sorted(OVER))
async def test_mcp_holds_the_per_call_limits(tmp_path: Path, limit: str) -> None:
    messages, _, says = OVER[limit]
    limits = memstore.Limits(**TIGHT)
    with memstore.open(tmp_path / "mem", "user:alice", gate=RULE_GATE, limits=limits) as store:
        server = mcp_server.build_server(store, conversations=ConversationSettings())
        async with Client(server) as client:
            result = await client.call_tool("remember_conversation", {"messages": messages})
    assert result.is_error
    text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
    assert "messages" in text and says in text, text
    untouched(tmp_path / "mem")


@pytest.mark.parametrize("limit", sorted(OVER))
def test_cli_holds_the_per_call_limits(conversation_cli: Any, tmp_path: Path, limit: str) -> None:
    messages, _, says = OVER[limit]
    config = tmp_path / "memstore.yaml"
    config.write_text(json.dumps({"store": TIGHT}))
    done = conversation_cli(
        "--config", str(config), "remember-conversation", input=json.dumps(messages)
    )
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert "messages" in done.stderr and says in done.stderr, done.stderr
    untouched(conversation_cli.store)


class Counting(EmbeddedExtractor):
    """The embedded extractor, counting the turns it was asked to read."""

    def __init__(self) -> None:
        super().__init__()
        self.read = 0

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        self.read += len(messages)
        return super().extract(messages)


def test_python_refuses_one_message_over_the_text_limit(tmp_path: Path) -> None:
    messages, _, says = OVER["evidence"]
    limits = memstore.Limits(**TIGHT)
    extractor = Counting()
    with memstore.open(tmp_path / "mem", "user:alice", gate=RULE_GATE, limits=limits) as store:
        with pytest.raises(memstore.TooLarge, match=says) as raised:
            store.remember_conversation([*MANY[:1], *messages], extractor=extractor)
        assert raised.value.field == "messages"
    assert extractor.read == 0  # refused before any extraction
    untouched(tmp_path / "mem")


#: Alice's allergies, then a move: over 3 candidates and over 200 characters in all.
LONGER = [
    *MANY,
    {"role": "user", "name": "Alice", "content": "I live in Leeds."},
    {"role": "user", "name": "Alice", "content": "Thanks for noting all that."},
    {"role": "user", "name": "Alice", "content": "I moved to York last month."},
]


def test_python_remembers_a_conversation_over_the_limits_in_parts(tmp_path: Path) -> None:
    """A caller cannot tell how many candidates a transcript gives: the Python API reads
    a long one in parts that each fit the limits, and a later part reconciles with what
    an earlier one stored."""
    assert sum(len(m["content"]) + len("Alice: ") for m in LONGER) > TIGHT["max_evidence_chars"]
    limits = memstore.Limits(**TIGHT)
    with memstore.open(tmp_path / "mem", "user:alice", gate=RULE_GATE, limits=limits) as store:
        report = store.remember_conversation(LONGER)
        assert report.messages == len(LONGER)
        assert [c.message for c in report.candidates] == [0, 1, 2, 3, 4, 6]
        assert all(c.fact is not None for c in report.candidates), report.candidates
        moved = report.candidates[-1]
        assert moved.outcome == "superseded" and moved.replaced == [report.candidates[4].fact.id]
        active = {f.statement for f in store.facts_about("Alice")}
    foods = ("peanuts", "shellfish", "sesame", "mustard")
    assert active == {
        *(f"Alice is allergic to {food}." for food in foods),
        "Alice moved to York last month.",
    }


def test_python_refuses_a_message_with_too_many_facts_before_writing_any(tmp_path: Path) -> None:
    """Every part is checked against the limits before the first is written."""
    dense = {"role": "user", "name": "Alice", "content": " ".join(m["content"] for m in MANY)}
    limits = memstore.Limits(**TIGHT)
    with memstore.open(tmp_path / "mem", "user:alice", gate=RULE_GATE, limits=limits) as store:
        with pytest.raises(memstore.InvalidInput, match="at most 3 candidate facts") as raised:
            store.remember_conversation([*LONGER, dense])
        assert raised.value.field == "messages"
    untouched(tmp_path / "mem")


def test_python_remembers_more_messages_than_one_call_holds(tmp_path: Path) -> None:
    chat = [{"role": "user", "name": "Alice", "content": "Thanks!"}] * MAX_MESSAGES
    chat = [*chat, MANY[0]]
    with memstore.open(tmp_path / "mem", "user:alice", gate=RULE_GATE) as store:
        report = store.remember_conversation(chat)
    assert report.messages == MAX_MESSAGES + 1
    assert [(c.message, c.outcome) for c in report.candidates] == [(MAX_MESSAGES, "stored")]
