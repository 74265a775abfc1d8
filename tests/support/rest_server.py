"""The REST API's test server: API keys per namespace pattern, the app served by
uvicorn on 127.0.0.1 in a thread, and httpx clients per key (shared by the REST tests)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from gate_samples import REFUSE_UNGROUNDED_GATE

from memstore.config import Settings, load_settings

ALICE_KEY = "alice-only-key-0123456789"  # user:alice
USERS_KEY = "every-user-key-0123456789"  # user:*
BOTH_KEY = "alice-and-bob-key-0123456"  # user:alice, user:bob
TEAM_KEY = "team-red-key-012345678901"  # team/red/* (a namespace with slashes)
KEYS = {
    ALICE_KEY: ["user:alice"],
    USERS_KEY: ["user:*"],
    BOTH_KEY: ["user:alice", "user:bob"],
    TEAM_KEY: ["team/red/*"],
}


@contextmanager
def serving(app: FastAPI, root_path: str = "") -> Iterator[str]:
    """Run ``app`` with uvicorn on a free port of 127.0.0.1 (behind a proxy that strips
    ``root_path``, as uvicorn's ``--root-path`` says); yields its base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", root_path=root_path)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        assert thread.is_alive(), "the server failed to start"
        assert time.monotonic() < deadline, "the server did not start in time"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        assert not thread.is_alive(), "the server did not stop"


def settings_for(url: str, **sections: Any) -> Settings:
    """A test server's settings: the shared API keys and, unless ``hallucination`` is
    given, the specification's decision table alone (the refusal paths' tests)."""
    sections.setdefault("hallucination", REFUSE_UNGROUNDED_GATE)
    return load_settings(store={"url": url}, server={"api_keys": KEYS}, **sections)


class Api:
    """The running server: its base URL, app and database, and clients per key."""

    def __init__(self, base: str, app: FastAPI, db_url: str) -> None:
        self.base = base
        self.app = app
        self.db_url = db_url
        self._clients: list[httpx.Client] = []

    def client(self, key: str | None = ALICE_KEY, header: str = "bearer") -> httpx.Client:
        headers = {}
        if key is not None:
            headers = {"Authorization": f"Bearer {key}"} if header == "bearer" else {header: key}
        client = httpx.Client(base_url=self.base, headers=headers, timeout=60)
        self._clients.append(client)
        return client

    def close(self) -> None:
        for client in self._clients:
            client.close()
