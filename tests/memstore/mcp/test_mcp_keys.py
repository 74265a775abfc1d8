"""One key check for the REST API and MCP over HTTP (``memstore.rest.auth``): the key
from ``Authorization: Bearer`` or ``X-API-Key``, refused alike by both fronts, and the
erase right over MCP for a key sent either way. In process: the REST app through
FastAPI's test client, MCP's middleware through httpx, the SDK's client on uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from db_rows import rows
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from rest_server import serving

import memstore
from memstore.config import key_fingerprint, load_settings
from memstore.mcp.auth import KeyAuth, erase_fingerprint
from memstore.mcp.server import HTTP_PATH, build_server, http_app
from memstore.rest import create_app
from memstore.rest.auth import presented_key

NS = "user:alice"
ALICE = "alice-key-0123456789abcdef"
BOB = "bob-key-0123456789abcdefgh"
ERASER = "eraser-key-0123456789abcdef"
KEYS = {ALICE: [NS], BOB: ["user:bob"], ERASER: [NS]}


@pytest.mark.parametrize(
    ("headers", "key"),
    [
        ({"authorization": f"Bearer {ALICE}"}, ALICE),
        ({"authorization": f"bearer   {ALICE} "}, ALICE),
        ({"x-api-key": ALICE}, ALICE),
        ({"authorization": f"Bearer {BOB}", "x-api-key": ALICE}, BOB),  # bearer first
        ({"authorization": f"Basic {BOB}", "x-api-key": ALICE}, ALICE),
        ({"authorization": f"Basic {BOB}"}, None),
        ({"authorization": "Bearer"}, None),
        ({"authorization": "Bearer ", "x-api-key": ""}, None),
        ({}, None),
    ],
)
def test_the_key_is_the_bearer_token_else_x_api_key(
    headers: dict[str, str], key: str | None
) -> None:
    assert presented_key(headers) == key
    assert presented_key(httpx.Headers(headers)) == key  # any case of the names


async def _reached(scope: Any, receive: Any, send: Any) -> None:
    """The app behind the middleware: 204, to tell a request that got through."""
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


CASES: list[tuple[dict[str, str], int]] = [
    ({}, 401),
    ({"Authorization": f"Bearer {ALICE}"}, 204),
    ({"X-API-Key": ALICE}, 204),
    ({"x-api-key": ALICE}, 204),
    ({"X-API-Key": "not-a-known-key-000000000"}, 401),
    ({"Authorization": "Bearer not-a-known-key-00000", "X-API-Key": ALICE}, 401),
    ({"X-API-Key": ALICE[:-1]}, 401),
    ({"Authorization": f"Basic {ALICE}"}, 401),
    ({"X-API-Key": BOB}, 403),
    ({"Authorization": f"Bearer {BOB}"}, 403),
]


def test_rest_and_mcp_answer_the_same_headers_alike(tmp_path: Path) -> None:
    """Each request the REST API refuses, MCP over HTTP refuses with the same status and
    body; each it lets through (to the route), MCP lets through (to the SDK's app)."""
    settings = load_settings(store={"url": str(tmp_path / "mem")}, server={"api_keys": KEYS})
    mcp_app = KeyAuth(_reached, settings.server, NS)

    async def mcp_answers() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=mcp_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return [await http.post(HTTP_PATH, json={}, headers=h) for h, _ in CASES]

    mcp = anyio.run(mcp_answers)
    with TestClient(create_app(settings)) as rest_client:
        for (headers, status), over_mcp in zip(CASES, mcp, strict=True):
            assert over_mcp.status_code == status, (headers, over_mcp.text)
            if status == 204:
                continue  # REST would go on to open the store: that is its route's work
            over_rest = rest_client.get(f"/v1/namespaces/{NS}/facts", headers=headers)
            assert over_rest.status_code == status, (headers, over_rest.text)
            assert over_mcp.json() == over_rest.json(), headers
            assert over_mcp.headers.get("WWW-Authenticate") == over_rest.headers.get(
                "WWW-Authenticate"
            )


def test_only_erase_keys_may_erase_whichever_header_carries_them() -> None:
    server = load_settings(server={"api_keys": KEYS, "erase_keys": [ERASER]}).server
    for headers in ({"x-api-key": ERASER}, {"authorization": f"Bearer {ERASER}"}):
        assert erase_fingerprint(server, headers) == key_fingerprint(ERASER)
    for headers in ({"x-api-key": ALICE}, {"authorization": f"Bearer {ALICE}"}, {}, None):
        assert erase_fingerprint(server, headers) is None


def test_mcp_over_http_erases_for_an_erase_key_sent_as_x_api_key(tmp_path: Path) -> None:
    """The SDK's client sending ``X-API-Key``: every key of the namespace is served, only
    the key of server.erase_keys erases, and the tombstone names it by its fingerprint."""
    server = load_settings(server={"api_keys": KEYS, "erase_keys": [ERASER]}).server
    with memstore.open(tmp_path / "mem", NS, hook=memstore.Ungated(), index=False) as store:
        fact = store.add_fact(
            statement="Alice works at Acme.",
            members=[("Alice", "person", "employee"), ("Acme", "org", "employer")],
            evidence=["Alice: I work at Acme."],
        )
        app = http_app(build_server(store, keys=server), server, NS, "127.0.0.1")

        async def erase_as(url: str, key: str) -> tuple[bool, str]:
            async with (
                httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=60) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                result = await client.call_tool("erase", {"reason": "asked", "fact_id": fact.id})
                return result.is_error, str(result.content)

        with serving(app) as base:
            refused, why = anyio.run(erase_as, base + HTTP_PATH, ALICE)
            assert refused and "server.erase_keys" in why
            assert store.get_fact(fact.id).id == fact.id  # nothing erased
            failed, done = anyio.run(erase_as, base + HTTP_PATH, ERASER)
        assert not failed, done
        by = rows(store.url, "SELECT erased_by FROM erasures")
    assert by == [(key_fingerprint(ERASER),)]
