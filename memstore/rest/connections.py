"""Slow clients do not hold connections: a request's headers and its body each have a
deadline (``server.header_timeout``, ``server.body_timeout``).

uvicorn closes a connection idle between requests (its keep-alive timeout) but waits
for ever on a client that sends a request a byte at a time, or nothing at all.
``BoundedH11Protocol`` closes a connection whose request headers are not all in within
``header_timeout`` seconds of its opening, or of the first bytes of a later request on
it; the body's deadline is kept by ``memstore.rest.body_limit.BodyLimit`` (408).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from memstore.config import ServerSettings

log = logging.getLogger("memstore.rest")


class BoundedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline on each request's headers."""

    #: Seconds a request's headers may take (set by ``protocol_with``).
    header_timeout = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._timed_cycle: object | None = None
        #: Between a response and the next request (kept alive): no request under way.
        self._between = False

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()  # a connection that sends nothing is held no longer than a slow one

    def data_received(self, data: bytes) -> None:
        if self._between:
            self._between = False
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self._request_began():
            self._disarm()  # its headers are in: its handler runs, however long

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._request_began():  # a pipelined request, already whole
            self._disarm()
        else:  # uvicorn's keep-alive timeout bounds the wait for the next request
            self._between = True

    def handle_websocket_upgrade(self, event: Any) -> None:
        self._disarm()  # the connection is the websocket protocol's from here
        super().handle_websocket_upgrade(event)

    def _request_began(self) -> bool:
        """Whether a request (its headers whole) began since the last look."""
        if self.cycle is not None and self.cycle is not self._timed_cycle:
            self._timed_cycle = self.cycle
            return True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            log.info(
                "closed a connection whose request headers took over %.0f s "
                "(server.header_timeout)",
                self.header_timeout,
            )
            self.transport.close()


def protocol_with(header_timeout: float) -> type[BoundedH11Protocol]:
    """The protocol class for uvicorn's ``http`` option, with this header deadline."""
    return type("BoundedH11Protocol", (BoundedH11Protocol,), {"header_timeout": header_timeout})


def uvicorn_config(
    app: Any, server: ServerSettings, host: str, port: int, **options: Any
) -> uvicorn.Config:
    """uvicorn's settings for ``app`` on ``host``:``port``, with the header deadline of
    ``server`` (the REST API and the MCP server's http transport)."""
    http = protocol_with(server.header_timeout.total_seconds())
    return uvicorn.Config(app, host=host, port=port, http=http, **options)
