"""A real HTTP server on 127.0.0.1 whose pages tests change between fetches."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate

from local_server import QuietHandler, local_server, running


class Site:
    """What the server serves: path -> (status, body); bodies get an ETag and Last-Modified."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[int, str]] = {}
        self.modified: dict[str, float] = {}
        self.requests: list[dict[str, str]] = []

    def put(self, path: str, body: str, status: int = 200, when: float = 1_700_000_000) -> None:
        self.pages[path] = (status, body)
        self.modified[path] = when


@contextmanager
def serve(state: Site) -> Iterator[str]:
    """Serve ``state`` on a free port; yields the base URL."""

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            state.requests.append(dict(self.headers))
            status, body = state.pages.get(self.path, (404, "not found"))
            data = body.encode("utf-8")
            etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
            modified = formatdate(state.modified.get(self.path, 0), usegmt=True)
            if status == 200 and self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.end_headers()
                return
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            if status == 200:
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", modified)
            self.end_headers()
            self.wfile.write(data)

    with running(local_server(Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"
