"""Slow clients on loopback: ``memstore serve`` (a real process) closes a connection
whose request headers trickle in past ``server.header_timeout`` and answers 408 to a
body that does not arrive within ``server.body_timeout``; prompt clients are served,
kept-alive connections included. The deadlines are 1 s here; each test waits up to a
minute for the server to act, so a slow machine only makes it slower."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from rest_server import ALICE_KEY
from serve_process import memstore_serve

#: How long a test waits for the server to cut a slow client off (it should take ~1 s).
PATIENCE_S = 60.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """``memstore serve`` with 1 s deadlines on headers and bodies; yields its port."""
    where = tmp_path_factory.mktemp("slow-clients")
    settings = {
        "MEMSTORE_URL": str(where / "mem"),
        "MEMSTORE_SERVER__API_KEYS": json.dumps({ALICE_KEY: ["user:alice"]}),
        "MEMSTORE_HALLUCINATION__ENABLED": "false",
        "MEMSTORE_SERVER__HEADER_TIMEOUT": "1s",
        "MEMSTORE_SERVER__BODY_TIMEOUT": "1s",
    }
    with memstore_serve(where, settings) as served:
        yield served.port


def closed_by_server(sock: socket.socket, trickle: bytes | None) -> bytes:
    """Send ``trickle`` every 0.2 s (None: nothing) until the server closes the connection;
    returns what it sent before closing. Fails after PATIENCE_S."""
    received = b""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], 0.2)
        if readable:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                return received
            if not chunk:
                return received
            received += chunk
        elif trickle is not None:
            try:
                sock.sendall(trickle)
            except (BrokenPipeError, ConnectionResetError):
                return received
    pytest.fail(f"the server kept a slow connection open for {PATIENCE_S:.0f} s")


@pytest.mark.parametrize("trickle", [None, b"X-Slow: 1\r\n"], ids=["silent", "trickling"])
def test_headers_that_do_not_arrive_in_time_close_the_connection(
    server: int, trickle: bytes | None
) -> None:
    with socket.create_connection(("127.0.0.1", server), timeout=PATIENCE_S) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n")
        assert closed_by_server(sock, trickle) == b""  # no answer: only a close


def test_a_body_that_does_not_arrive_in_time_is_answered_408(server: int) -> None:
    body = json.dumps({"statement": "Alice works at Acme.", "members": ["Alice", "Acme"]})
    head = (
        f"POST /v1/namespaces/user:alice/facts HTTP/1.1\r\nHost: localhost\r\n"
        f"Authorization: Bearer {ALICE_KEY}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body) + 1000}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", server), timeout=PATIENCE_S) as sock:
        sock.sendall(head.encode() + body.encode())
        answer = closed_by_server(sock, None)
    status = answer.split(b"\r\n", 1)[0]
    assert status.startswith(b"HTTP/1.1 408"), answer[:500]
    assert b"body_timeout" in answer


def test_prompt_clients_are_served_on_a_kept_alive_connection(server: int) -> None:
    headers = {"Authorization": f"Bearer {ALICE_KEY}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{server}", headers=headers) as client:
        for _ in range(3):  # one connection: each request's headers start a new deadline
            assert client.get("/health").status_code == 200
        written = client.post(
            "/v1/namespaces/user:alice/facts",
            json={
                "statement": "Alice works at Acme.",
                "members": ["Alice", "Acme"],
                "evidence": ["Alice: I work at Acme."],
            },
        )
        assert written.status_code == 201, written.text
