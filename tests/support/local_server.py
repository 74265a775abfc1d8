"""What the tests' small HTTP servers share: a handler that keeps quiet, and a server on
a free port of 127.0.0.1 run in a thread for the length of a ``with`` block."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

Server = TypeVar("Server", bound=ThreadingHTTPServer)


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing (tests read what the server records)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def local_server(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server for ``handler`` on a free port of 127.0.0.1 (not yet serving)."""
    return ThreadingHTTPServer(("127.0.0.1", 0), handler)


@contextmanager
def running(server: Server, poll: float = 0.5) -> Iterator[Server]:
    """Serve ``server`` in a daemon thread, checking for shutdown every ``poll``
    seconds; shut it down and close its socket afterwards."""
    thread = threading.Thread(target=server.serve_forever, args=(poll,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
