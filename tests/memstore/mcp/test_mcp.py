"""The MCP server (memstore.mcp.server) through the MCP SDK's own client, over stdio and HTTP.

A real server process per transport, the real embedded gate, a real SQLite store.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from gate_samples import REFUSE_UNGROUNDED_ENV
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent
from serve_process import free_port

import memstore
from memstore.mcp import server as mcp_server

pytestmark = pytest.mark.anyio

NAMESPACE = "user:alice"
EVIDENCE = ["Alice: I'm allergic to peanuts."]
PEANUTS = {
    "statement": "Alice is allergic to peanuts.",
    "members": [
        {"name": "Alice", "kind": "person", "role": "patient"},
        {"name": "peanuts", "kind": "food", "role": "allergen"},
    ],
    "evidence": EVIDENCE,
}
SHELLFISH = {
    "statement": "Alice is allergic to shellfish.",
    "members": [
        {"name": "Alice", "kind": "person", "role": "patient"},
        {"name": "shellfish", "kind": "food", "role": "allergen"},
    ],
    "evidence": EVIDENCE,
}
BOB = "Bob is allergic to peanuts."
#: The gate's deadline in the server processes: generous, as test machines are busy.
#: A slow machine's deadline; the specification's table alone (a refusal to test).
SLOW_MACHINE = {"MEMSTORE_HALLUCINATION__TIMEOUT": "30", **REFUSE_UNGROUNDED_ENV}
STARTUP_S = 180.0


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Served:
    """A stdio server on NAMESPACE, with a grounded and an ungrounded ``remember`` done."""

    client: Client
    data_dir: Path
    stored: dict[str, Any]
    refused: dict[str, Any]


@pytest.fixture(scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    data_dir = tmp_path_factory.mktemp("mcp") / "mem"
    # Another namespace of the same store, written before the server opens it.
    with memstore.open(data_dir, "user:bob", hook=memstore.Ungated()) as bob:
        bob.add_fact(
            statement=BOB,
            members=[("Bob", "person", "patient"), ("peanuts", "food", "allergen")],
            evidence=["Bob: peanuts make me ill."],
        )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memstore.mcp", "--store", str(data_dir), "--namespace", NAMESPACE],
        env=SLOW_MACHINE,
    )
    async with Client(params) as client:
        stored = await call(client, "remember", PEANUTS)
        refused = await call(client, "remember", SHELLFISH)
        yield Served(client, data_dir, stored, refused)


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A successful tool call's structured result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, error_text(result)
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


# -- the command line -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--config", "missing.yaml"], 2, "Error: config: no config file at missing.yaml"),
        (["--transport", "http", "--port", "70000"], 1, "Error: port: 70000 is not a TCP port"),
        (["--namespace", "no spaces"], 1, "Error: namespace: "),
        (["--transport", "carrier-pigeon"], 2, "invalid choice: 'carrier-pigeon'"),
        # HTTP without API keys: refused, unless on loopback with the explicit flag.
        (["--transport", "http"], 2, "Error: server.api_keys: MCP over HTTP needs API keys"),
        (
            ["--transport", "http", "--host", "0.0.0.0", "--allow-unauthenticated"],
            2,
            "Only on a loopback address",
        ),
        (
            ["--transport", "http", "--host", "[::]", "--allow-unauthenticated"],
            2,
            "Error: server.api_keys: ",
        ),
    ],
)
def test_bad_arguments_fail_before_serving(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    command = [sys.executable, "-m", "memstore.mcp", "--store", str(tmp_path / "mem")]
    done = subprocess.run(
        command + args, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == code and done.stdout == ""
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "mem").exists()


@pytest.mark.parametrize("verbose", [False, True])
def test_a_new_stores_migrations_are_logged_only_when_asked(tmp_path: Path, verbose: bool) -> None:
    """A new store's first start migrates it; stderr names each step only with -v."""
    command = [sys.executable, "-m", "memstore.mcp", "--store", str(tmp_path / "mem")]
    done = subprocess.run(
        command + (["-v"] if verbose else []),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,  # stdio ends at once: the server opens the store and stops
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert ("alembic" in done.stderr) is verbose, done.stderr
    assert "memstore MCP server" in done.stderr


def test_the_cli_refuses_http_without_keys(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "memstore.cli", "--store", str(tmp_path / "mem")]
    command += ["mcp", "--transport", "http", "-n", NAMESPACE]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2, done.stderr
    assert "server.api_keys" in done.stderr and "--allow-unauthenticated" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "mem").exists()


# -- streamable HTTP (first, so only one server process runs at a time) -----------

ALICE_KEY = "alice-mcp-key-0123456789"
BOB_KEY = "bob-mcp-key-0123456789ab"
KEYS = {ALICE_KEY: ["user:alice"], BOB_KEY: ["user:bob"]}
ACME = "Alice works at Acme as a data engineer."


@asynccontextmanager
async def http_server(
    tmp_path: Path, *args: str, keys: dict[str, list[str]] | None = None
) -> AsyncIterator[tuple[str, str]]:
    """An HTTP MCP server process on NAMESPACE, which holds one fact; yields the URL of
    its endpoint and the fact's id. Checks it stops cleanly."""
    data_dir = tmp_path / "mem"
    with memstore.open(data_dir, NAMESPACE, hook=memstore.Ungated()) as store:
        fact = store.add_fact(
            statement=ACME,
            members=[("Alice", "person", "employee"), ("Acme", "org", "employer")],
            evidence=["Alice: I work at Acme as a data engineer."],
        )
    port = free_port()
    command = [sys.executable, "-m", "memstore.mcp", "--store", str(data_dir)]
    command += ["--namespace", NAMESPACE, "--transport", "http", "--port", str(port), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env.update(SLOW_MACHINE)
    if keys is not None:
        env["MEMSTORE_SERVER__API_KEYS"] = json.dumps(keys)
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(command, stdout=err, stderr=subprocess.STDOUT, env=env)
    try:
        await wait_until_listening(proc, port, log)
        yield f"http://127.0.0.1:{port}{mcp_server.HTTP_PATH}", fact.id
    finally:
        proc.terminate()
        code = proc.wait(timeout=60)
    output = log.read_text(errors="replace")
    assert code == 0 and "memstore MCP server stopped" in output, output


def key_headers(key: str | None, header: str = "bearer") -> dict[str, str]:
    """``key`` as a bearer token, or in the header named ``header``; none without a key."""
    if key is None:
        return {}
    return {"Authorization": f"Bearer {key}"} if header == "bearer" else {header: key}


async def recall_over_http(url: str, fact_id: str, key: str | None, header: str = "bearer") -> None:
    """The MCP SDK's client (with the key as a bearer token, or in ``header``) recalls
    the fact."""
    headers = key_headers(key, header)
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        assert client.server_info is not None and client.server_info.name == "memstore"
        hits = (await call(client, "recall", {"query": "Where does Alice work?"}))["facts"]
        assert [h["fact_id"] for h in hits] == [fact_id]
        assert hits[0]["statement"] == ACME


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}


async def test_http_needs_a_key_for_the_namespace(tmp_path: Path) -> None:
    async with http_server(tmp_path, keys=KEYS) as (url, fact_id):
        await recall_over_http(url, fact_id, ALICE_KEY)
        accept = {"Accept": "application/json, text/event-stream"}
        cases = [
            ({}, 401, "unauthorized"),
            ({"Authorization": "Bearer not-a-known-key-0000000"}, 401, "unauthorized"),
            ({"Authorization": f"Basic {ALICE_KEY}"}, 401, "unauthorized"),
            ({"Authorization": "Bearer"}, 401, "unauthorized"),
            ({"X-API-Key": ""}, 401, "unauthorized"),
            ({"Authorization": f"Bearer {BOB_KEY}"}, 403, "forbidden"),
        ]
        async with httpx.AsyncClient(timeout=60) as http:
            for headers, status, error in cases:
                for response in (
                    await http.post(url, json=INITIALIZE, headers={**accept, **headers}),
                    await http.get(url, headers={**accept, **headers}),
                ):
                    assert response.status_code == status, (headers, response.text)
                    assert response.json()["error"] == error, response.text
                    if status == 401:
                        assert response.headers["WWW-Authenticate"] == "Bearer"
            ok = await http.post(
                url, json=INITIALIZE, headers={**accept, "Authorization": f"Bearer {ALICE_KEY}"}
            )
            assert ok.status_code == 200, ok.text


async def test_http_takes_the_key_as_x_api_key_too(tmp_path: Path) -> None:
    """One key check serves the REST API and MCP over HTTP: ``X-API-Key: <key>`` is
    accepted as ``Authorization: Bearer <key>`` is, and refused alike for a wrong key or
    a key of other namespaces; a bearer token wins over an ``X-API-Key`` beside it."""
    async with http_server(tmp_path, keys=KEYS) as (url, fact_id):
        await recall_over_http(url, fact_id, ALICE_KEY, header="X-API-Key")
        await recall_over_http(url, fact_id, ALICE_KEY)  # Bearer still works
        accept = {"Accept": "application/json, text/event-stream"}
        cases = [
            ({"X-API-Key": ALICE_KEY}, 200, None),
            ({"x-api-key": ALICE_KEY}, 200, None),  # header names are case-insensitive
            ({"Authorization": f"Bearer {ALICE_KEY}"}, 200, None),
            ({"X-API-Key": "not-a-known-key-0000000"}, 401, "unauthorized"),
            ({"X-API-Key": ALICE_KEY[:-1]}, 401, "unauthorized"),
            ({"X-API-Key": BOB_KEY}, 403, "forbidden"),
            ({"Authorization": f"Bearer {BOB_KEY}", "X-API-Key": ALICE_KEY}, 403, "forbidden"),
            ({"Authorization": f"Basic {BOB_KEY}", "X-API-Key": ALICE_KEY}, 200, None),
        ]
        async with httpx.AsyncClient(timeout=60) as http:
            for headers, status, error in cases:
                response = await http.post(url, json=INITIALIZE, headers={**accept, **headers})
                assert response.status_code == status, (headers, response.text)
                if error is not None:
                    assert response.json()["error"] == error, response.text
                if status == 401:
                    assert response.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.slow
async def test_http_answers_408_to_a_body_that_does_not_arrive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """server.body_timeout guards MCP over HTTP as it does the REST API: the SDK's
    transport would answer 500 to the timeout, so the 408 is sent before it can."""
    monkeypatch.setenv("MEMSTORE_SERVER__BODY_TIMEOUT", "1s")
    async with http_server(tmp_path, keys=KEYS) as (url, _):
        address = httpx.URL(url)
        head = (
            f"POST {address.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {ALICE_KEY}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"
        )
        with socket.create_connection(("127.0.0.1", address.port), timeout=60) as sock:
            sock.sendall(head.encode())
            answer = b""
            while chunk := sock.recv(65536):  # the server answers, then closes
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 408"), answer[:500]
    assert b"body_timeout" in answer and b"server.body_timeout" in answer


async def test_http_answers_413_to_a_body_over_max_body_bytes(tmp_path: Path) -> None:
    """The REST API's body limit guards MCP over HTTP too, before the key is checked."""
    settings = memstore.load_settings(server={"api_keys": KEYS, "max_body_bytes": 2048})
    with memstore.open(tmp_path / "mem", NAMESPACE, hook=memstore.Ungated(), index=False) as store:
        server = mcp_server.build_server(store, keys=settings.server)
        app = mcp_server.http_app(server, settings.server, NAMESPACE, "127.0.0.1")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            accept = {"Accept": "application/json, text/event-stream"}
            big = {**INITIALIZE, "padding": "x" * 4096}
            for headers in ({}, {"Authorization": f"Bearer {ALICE_KEY}"}):
                over = await http.post(
                    mcp_server.HTTP_PATH, json=big, headers={**accept, **headers}
                )
                assert over.status_code == 413, over.text
                assert over.json()["field"] == "body" and "max_body_bytes" in over.text
            small = await http.post(mcp_server.HTTP_PATH, json=INITIALIZE, headers=accept)
            assert small.status_code == 401  # under the limit: on to the key check


@pytest.mark.parametrize("front", ["mcp_server", "cli"])
def test_allow_erase_reaches_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, front: str
) -> None:
    """``--allow-erase`` (both commands) is what puts erase on a stdio server's list."""
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(mcp_server, "run", lambda *a, **options: seen.append(options))
    store = ["--store", str(tmp_path / "mem")]
    for flag in ([], ["--allow-erase"]):
        if front == "mcp_server":
            mcp_server.main([*store, "--namespace", NAMESPACE, *flag])
        else:
            from typer.testing import CliRunner

            from memstore.cli import app

            done = CliRunner().invoke(app, [*store, "mcp", "-n", NAMESPACE, *flag])
            assert done.exit_code == 0, done.output
    assert [options["allow_erase"] for options in seen] == [False, True]


async def test_http_without_keys_serves_loopback_only_when_allowed(tmp_path: Path) -> None:
    async with http_server(tmp_path, "--host", "127.0.0.1", "--allow-unauthenticated") as (
        url,
        fact_id,
    ):
        await recall_over_http(url, fact_id, None)


async def wait_until_listening(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server exited with {proc.returncode}:\n{log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            await anyio.sleep(0.2)
    pytest.fail(f"the server did not listen within {STARTUP_S}s:\n{log.read_text()}")


# -- stdio ------------------------------------------------------------------------


async def test_lists_its_tools_with_input_schemas(served: Served) -> None:
    tools = {t.name: t for t in (await served.client.list_tools()).tools}
    # erase is a right of its own: over stdio only with --allow-erase (audit/test_erase.py)
    assert set(tools) == {
        "remember",
        "remember_conversation",
        "recall",
        "search",
        "supersede",
        "retract",
        "verify_claim",
        "audit_rejections",
        "list_memories",
    }
    remember = tools["remember"].input_schema
    assert remember["required"] == ["statement", "members", "evidence"]
    assert set(remember["properties"]) == {
        "statement",
        "members",
        "evidence",
        "relation",
        "confidence",
        "metadata",
    }
    assert remember["properties"]["evidence"]["items"] == {"type": "string"}
    member = remember["$defs"]["Member"]
    assert set(member["properties"]) == {"name", "kind", "role"} and member["required"] == ["name"]
    assert tools["recall"].input_schema["required"] == ["query"]
    assert tools["verify_claim"].input_schema["required"] == ["claim", "evidence"]
    assert "required" not in tools["audit_rejections"].input_schema
    assert (tools["remember"].description or "").startswith("Remember a fact, if the evidence")
    for tool in tools.values():
        assert tool.description and tool.output_schema is not None, tool.name
        assert "\n " not in tool.description, tool.description  # no docstring indentation
        assert all(p.get("description") for p in tool.input_schema["properties"].values())
    assert tools["recall"].annotations is not None and tools["recall"].annotations.read_only_hint
    assert tools["remember"].annotations is not None
    assert tools["remember"].annotations.read_only_hint is False
    assert served.client.server_info is not None
    assert served.client.server_info.name == "memstore"
    instructions = served.client.instructions or ""
    assert NAMESPACE in instructions and "gated" in instructions


async def test_remember_stores_a_grounded_fact(served: Served) -> None:
    stored = served.stored
    assert stored["stored"] is True and stored["verdict"] == "grounded"
    assert stored["status"] == "verified" and stored["fact_id"]
    assert stored["confidence"] == pytest.approx(0.95)
    assert stored["deduplicated"] is False and stored["rejection_id"] is None
    assert stored["p1"] > stored["p0"]


async def test_remember_reports_a_refusal_as_a_result(served: Served) -> None:
    refused = served.refused
    assert refused["stored"] is False and refused["verdict"] == "insufficient_evidence"
    assert refused["fact_id"] is None and refused["rejection_id"]
    assert refused["reason"] and refused["hint"]
    assert refused["p1"] > refused["p0"]
    assert refused["budget_gap"] > 2.0  # the default flag threshold, in bits
    assert refused["budget_gap"] == pytest.approx(
        refused["required_bits"] - refused["observed_bits"]
    )


async def test_remembering_the_same_fact_again_stores_nothing_new(served: Served) -> None:
    again = await call(served.client, "remember", PEANUTS)
    assert again["stored"] is True and again["deduplicated"] is True
    assert again["fact_id"] == served.stored["fact_id"]


async def test_recall_finds_the_stored_fact_and_not_the_refused_one(served: Served) -> None:
    hits = (await call(served.client, "recall", {"query": "What is Alice allergic to?"}))["facts"]
    assert [h["fact_id"] for h in hits] == [served.stored["fact_id"]]
    [hit] = hits
    assert hit["statement"] == PEANUTS["statement"] and hit["status"] == "verified"
    assert hit["members"] == PEANUTS["members"] and hit["score"] > 0
    none = await call(served.client, "recall", {"query": "shellfish", "k": 3})
    assert all("shellfish" not in h["statement"] for h in none["facts"])


async def test_audit_lists_the_refusal(served: Served) -> None:
    client, refused = served.client, served.refused
    page = await call(client, "audit_rejections", {})
    assert page["next_cursor"] is None
    [rejection] = page["refusals"]
    assert rejection["rejection_id"] == refused["rejection_id"]
    assert rejection["statement"] == SHELLFISH["statement"]
    assert rejection["verdict"] == "insufficient_evidence" and rejection["reason"]
    assert rejection["evidence"] == EVIDENCE and rejection["members"] == SHELLFISH["members"]
    assert rejection["budget_gap"] == pytest.approx(refused["budget_gap"])

    async def count(**where: Any) -> int:
        return len((await call(client, "audit_rejections", where))["refusals"])

    assert await count(verdict="insufficient_evidence") == 1
    assert await count(verdict="contradicted") == 0
    assert await count(text="shellfish") == 1
    assert await count(text="peanuts") == 0
    hour_ago = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    assert await count(since=hour_ago, limit=5) == 1
    assert await count(since=(datetime.now(UTC) + timedelta(hours=1)).isoformat()) == 0


async def test_the_same_refusal_again_counts_on_it(served: Served) -> None:
    again = await call(served.client, "remember", SHELLFISH)  # the only test that repeats it
    assert again["stored"] is False
    assert again["rejection_id"] == served.refused["rejection_id"]
    [rejection] = (await call(served.client, "audit_rejections", {}))["refusals"]
    assert rejection["attempts"] == 2 and rejection["last_attempt_at"] > rejection["created_at"]


async def test_verify_claim_answers_and_stores_nothing(served: Served) -> None:
    grounded = await call(
        served.client, "verify_claim", {"claim": PEANUTS["statement"], "evidence": EVIDENCE}
    )
    assert grounded["status"] == "grounded" and grounded["accepted"] is True
    assert grounded["confidence"] > 0.5
    refused = await call(
        served.client, "verify_claim", {"claim": SHELLFISH["statement"], "evidence": EVIDENCE}
    )
    assert refused["status"] == "insufficient_evidence" and refused["accepted"] is False
    assert refused["p0"] is not None and refused["required_bits"] is not None
    assert refused["budget_gap"] == pytest.approx(served.refused["budget_gap"])
    assert refused["reason"]


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        # Caught by the store: a member whose name is blank.
        ("remember", {**PEANUTS, "members": [{"name": "  ", "role": "patient"}]}, "members.0.name"),
        # Caught by the tool's input schema.
        ("remember", {**PEANUTS, "confidence": 1.5}, "confidence"),
        ("remember", {**PEANUTS, "members": [{"name": "Alice", "colour": "red"}]}, "colour"),
        ("recall", {"query": "Alice", "k": 0}, "k"),
        ("audit_rejections", {"verdict": "maybe"}, "verdict"),
        ("verify_claim", {"claim": "Alice is allergic to peanuts.", "evidence": []}, "evidence"),
    ],
)
async def test_bad_input_is_a_tool_error_naming_the_field(
    served: Served, tool: str, arguments: dict[str, Any], field: str
) -> None:
    result = await served.client.call_tool(tool, arguments)
    assert result.is_error
    assert result.structured_content is None
    assert field in error_text(result), error_text(result)


@pytest.mark.parametrize("since", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
async def test_a_time_out_of_range_in_utc_is_a_readable_tool_error(
    served: Served, since: str
) -> None:
    """Found by fuzzing: these answered an empty error (an OverflowError inside)."""
    result = await served.client.call_tool("audit_rejections", {"since": since})
    assert result.is_error and result.structured_content is None
    text = error_text(result)
    assert "invalid input: since" in text and "out of range" in text, text


async def test_a_server_on_alice_never_returns_bobs_facts(served: Served) -> None:
    hits = (await call(served.client, "search", {"query": BOB, "k": 50}))["result"]
    assert hits, "alice's own peanut fact should match"
    assert all("Bob" not in h["statement"] for h in hits)
    assert all(m["name"] != "Bob" for h in hits for m in h["members"])
    with memstore.open(served.data_dir, "user:bob", index=False) as bob:
        assert [f.statement for f in bob.facts_about("Bob")] == [BOB]


async def test_sql_state_agrees_with_the_tool_results(served: Served) -> None:
    """Runs last: bad input, verify_claim and the repeated write left no rows behind."""
    with memstore.open(served.data_dir, NAMESPACE, index=False) as store:
        facts = store.facts_about("Alice")
        assert [f.id for f in facts] == [served.stored["fact_id"]]
        assert facts[0].verdict == "grounded" and facts[0].status == "verified"
        rejections = store.rejections()
        assert [r.id for r in rejections] == [served.refused["rejection_id"]]
        assert rejections[0].statement == SHELLFISH["statement"]
        assert store.count_rejections() == {"insufficient_evidence": 1}
        assert store.get_rejection(served.refused["rejection_id"]).namespace == NAMESPACE
