"""Small OpenAI-compatible servers on 127.0.0.1 for the openai backend's edge cases.

A fake at the network edge: each answers ``/v1/chat/completions`` the way one kind
of real server does (with logprobs, without them, failing first, never answering).
The claim is read back out of the prompt; a claim naming "peanuts" is true.
``scripted`` answers a list of replies in turn (the llm extractor's tests).
"""

from __future__ import annotations

import json
import math
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

from local_server import QuietHandler, running


def claim_of(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    match = re.search(r"Claim: (.*)", prompt)
    return match.group(1) if match else ""


def top_logprobs(p_yes: float, *, drop: str | None = None) -> list[dict[str, Any]]:
    """Top-5 of a model that puts ``p_yes`` on " YES" and most of the rest on "NO"."""
    entries = [
        (" YES", p_yes * 0.9),
        ("Yes", p_yes * 0.1),
        ("NO", (1 - p_yes) * 0.8),
        (" no", (1 - p_yes) * 0.1),
        ("The", 0.01),
    ]
    return [
        {"token": token, "logprob": math.log(max(p, 1e-12)), "bytes": None}
        for token, p in sorted(entries, key=lambda e: -e[1])
        if drop is None or token.strip().upper() != drop
    ]


class Handler(QuietHandler):
    """Behaviour is chosen by ``server.mode``."""

    server: FakeServer

    def do_POST(self) -> None:
        server = self.server
        with server.lock:
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        try:
            time.sleep(server.delay)
        finally:
            # Counted out before answering: once the client has its answer it may send the
            # next request at once, and that one must not overlap this one in the count.
            with server.lock:
                server.in_flight -= 1
        self._answer()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append(body)
        if self.server.failures_left > 0:
            self.server.failures_left -= 1
            self._send(503, {"error": {"message": "overloaded"}})
            return
        true = "peanut" in claim_of(body).lower()
        p_yes = 0.9 if true else 0.15
        mode = self.server.mode
        if mode == "logprobs" and body.get("logprobs"):
            drop = self.server.drop
            top = top_logprobs(p_yes, drop=drop)
            first = top[0]["token"]
            content = [{"token": first, "logprob": top[0]["logprob"], "top_logprobs": top}]
            choices = [{"index": 0, "message": {"role": "assistant", "content": first},
                        "logprobs": {"content": content}}]  # fmt: skip
        else:
            # Three answers in four say what is true, counted over the server's life,
            # so samples asked one request at a time differ as n answers of one would.
            n = int(body.get("n") or 1)
            with self.server.lock:
                first, self.server.sampled = self.server.sampled, self.server.sampled + n
            answers = ["YES" if (i % 4 != 3) == true else "NO" for i in range(first, first + n)]
            choices = [
                {"index": i, "message": {"role": "assistant", "content": a}, "logprobs": None}
                for i, a in enumerate(answers)
            ]
        self._send(200, {"id": "x", "object": "chat.completion", "choices": choices})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, mode: str, failures: int = 0, drop: str | None = None, delay: float = 0.0
    ) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = mode
        self.delay = delay
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.failures_left = failures
        self.sampled = 0
        self.drop = drop
        self.requests: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def serving(
    mode: str, failures: int = 0, drop: str | None = None, delay: float = 0.0
) -> Iterator[FakeServer]:
    with running(FakeServer(mode, failures, drop, delay)) as server:
        yield server


@contextmanager
def silent_server() -> Iterator[str]:
    """Accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        sock.close()


# -- a scripted chat endpoint (the llm extractor's edge cases) ------------------------


@dataclass
class Reply:
    """One scripted answer: a chat completion whose message is ``content``, or ``status``
    with ``body`` (any JSON, or raw text when ``body`` is a str and ``raw`` is set)."""

    content: str | None = None
    status: int = 200
    body: Any = None
    raw: bool = False
    finish_reason: str = "stop"


class ScriptedHandler(QuietHandler):
    """Answers each POST with the server's next reply (the last one repeats)."""

    server: ScriptedServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        server = self.server
        with server.lock:
            server.requests.append(body)
            server.headers.append({k.lower(): v for k, v in self.headers.items()})
            reply = server.replies.pop(0) if len(server.replies) > 1 else server.replies[0]
        if reply.content is not None:
            message = {"role": "assistant", "content": reply.content}
            choice = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
            payload: Any = {"id": "x", "object": "chat.completion", "choices": [choice]}
        else:
            payload = reply.body
        data = payload.encode() if reply.raw else json.dumps(payload).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/plain" if reply.raw else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, replies: list[Reply]) -> None:
        super().__init__(("127.0.0.1", 0), ScriptedHandler)
        self.lock = threading.Lock()
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def scripted(*replies: Reply) -> Iterator[ScriptedServer]:
    """A chat endpoint that answers with ``replies`` in turn, recording each request."""
    with running(ScriptedServer(list(replies)), poll=0.05) as server:
        yield server
