"""A fault-injecting proxy in front of a real OpenAI-compatible verifier server: a fake at
the network edge, for the shared-verifier scale-out test.

Each POST is forwarded to the upstream server, answered 503, or held without an answer
until the client gives up (its timeout). Which one depends on the scale-out fact the
prompt's claim names (``workers.fact(n)``) and on how often the proxy has seen that exact
request body before, never on timing or arrival order, so the same requests get the same
treatment however the workers interleave: ``FAULTS[n % len(FAULTS)]`` says what fact n's
requests get. The proxy counts what it did, in all and per fact.

The first requests about a fact are always its write's (it does not exist before), so
with the backend's ``concurrency`` 1 (one claim's requests in turn) "held while written"
holds exactly the attempts of the write's first request: every one times out.
"""

from __future__ import annotations

import hashlib
import json
import re
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

import httpx
from local_server import QuietHandler, running
from openai_servers import claim_of

#: What the requests of fact n get, by ``n % len(FAULTS)``:
#: ``503 first``: the first request with a given body is answered 503, later ones forwarded;
#: ``held first``: the first is held past the client's timeout, later ones forwarded;
#: ``held while written``: the fact's first ``attempts`` requests are held, later ones
#: forwarded; ``none``: every one is forwarded.
FAULTS = ("503 first", "held first", "held while written", "none")
#: The longest a held request is held when its client never gives up.
HOLD_LIMIT_S = 120.0
FACT_NUMBER = re.compile(r"Worker fact (\d+) ")


def fault_of(n: int | None) -> str:
    """The fault a request about fact ``n`` (None: not a scale-out fact) gets."""
    return "none" if n is None else FAULTS[n % len(FAULTS)]


class ProxyHandler(QuietHandler):
    """Forwards, answers 503 or holds each POST, as ``VerifierProxy.decide`` says."""

    server: VerifierProxy

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        match = FACT_NUMBER.search(claim_of(json.loads(body)))
        n = int(match.group(1)) if match else None
        action = self.server.decide(n, hashlib.sha256(body).hexdigest())
        if action == "answered 503":
            self._send(503, b'{"error": {"message": "overloaded (injected)"}}')
        elif action == "held":
            self._hold()
        else:
            upstream = self.server.client.post(
                self.path, content=body, headers={"Content-Type": "application/json"}
            )
            self._send(upstream.status_code, upstream.content)

    def _hold(self) -> None:
        """Answer nothing until the client closes the connection (or the proxy stops)."""
        self.close_connection = True
        until = time.monotonic() + HOLD_LIMIT_S
        while time.monotonic() < until and not self.server.stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable and self.connection.recv(1, socket.MSG_PEEK) == b"":
                return  # the client gave up

    def _send(self, status: int, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out meanwhile: its retry is another request


class VerifierProxy(ThreadingHTTPServer):
    """Listens on a free port of 127.0.0.1 and forwards to ``upstream`` (a ``/v1`` URL).
    ``attempts``: the requests a write makes for one claim (the backend's retries + 1)."""

    daemon_threads = True

    def __init__(self, upstream: str, attempts: int) -> None:
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        root = upstream.rstrip("/").removesuffix("/v1")
        self.client = httpx.Client(base_url=root, timeout=HOLD_LIMIT_S)
        self.attempts = attempts
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        #: How often each request body was seen, and what was done: in all and per fact.
        self.seen: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.per_fact: dict[int, Counter[str]] = {}
        self._answered_503: set[str] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def decide(self, n: int | None, digest: str) -> str:
        """What to do with a request about fact ``n`` whose body hashes to ``digest``;
        counted."""
        with self.lock:
            first = self.seen[digest] == 0
            self.seen[digest] += 1
            fault = fault_of(n)
            about_n = 0 if n is None else sum(self.per_fact.get(n, Counter()).values())
            if (fault == "held first" and first) or (
                fault == "held while written" and about_n < self.attempts
            ):
                action = "held"
            elif fault == "503 first" and first:
                action = "answered 503"
                self._answered_503.add(digest)
            else:
                action = "forwarded"
            self.done[action] += 1
            if n is not None:
                self.per_fact.setdefault(n, Counter())[action] += 1
            return action

    def retried_after_503(self) -> int:
        """Request bodies answered 503 that the client then sent again."""
        with self.lock:
            return sum(self.seen[digest] > 1 for digest in self._answered_503)


@contextmanager
def verifier_proxy(upstream: str, attempts: int) -> Iterator[VerifierProxy]:
    """The proxy, serving for the length of the block."""
    proxy = VerifierProxy(upstream, attempts)
    try:
        with running(proxy, poll=0.05):
            yield proxy
    finally:
        proxy.stopping.set()  # releases requests still held
        proxy.client.close()
