"""The request body's limits (``server.max_body_bytes``, ``server.body_timeout``), as
ASGI middleware that the REST API and the MCP server's http transport share."""

from __future__ import annotations

import asyncio

from fastapi import HTTPException

from memstore.rest.asgi import ASGIApp, Message, Receive, Scope, Send
from memstore.rest.errors import error_response


class BodyTooSlow(Exception):
    """Raised into the app from ``receive`` once ``BodyLimit`` has answered 408."""


class BodyLimit:
    """Answers 413 (field ``body``) to a request body over ``limit`` bytes, unread, and
    408 to one not all in within ``timeout`` seconds of the app's first read of it.

    The 408 is sent from here, not left to the app: an app may catch what ``receive``
    raises (the MCP SDK's transport answers 500 to any exception), so once the 408 is
    out, whatever the app sends after it is dropped and the connection is closed."""

    def __init__(self, app: ASGIApp, limit: int, timeout: float | None = None) -> None:
        self.app = app
        self.limit = limit
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reason = f"is larger than {self.limit} bytes (server.max_body_bytes)"
        length = dict(scope.get("headers", [])).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            response = error_response(
                413, "too_large", f"body: {reason}", field="body", reason=reason
            )
            await response(scope, receive, send)
            return
        seen = 0
        deadline: float | None = None
        whole = False  # the body is all in: later reads wait for a disconnect, unbounded
        started = answered = False

        async def sent(message: Message) -> None:
            nonlocal started
            if answered:
                return  # the 408 went out: the app's late answer has nowhere to go
            started = True
            await send(message)

        async def too_slow() -> None:
            nonlocal answered
            late = f"did not arrive within {self.timeout:g} s (server.body_timeout)"
            if not started:
                response = error_response(
                    408, "body_timeout", f"body: {late}", field="body", reason=late
                )
                response.headers["Connection"] = "close"
                await response(scope, receive, send)
            answered = True

        async def counted() -> Message:
            nonlocal seen, deadline, whole
            if answered:
                raise BodyTooSlow
            if whole or self.timeout is None:
                message = await receive()
            else:
                loop = asyncio.get_running_loop()
                deadline = deadline or loop.time() + self.timeout
                try:
                    async with asyncio.timeout_at(deadline):
                        message = await receive()
                except TimeoutError:
                    await too_slow()
                    raise BodyTooSlow from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                whole = not message.get("more_body", False)
                if seen > self.limit:  # a chunked body with no Content-Length
                    raise HTTPException(413, f"body: {reason}")
            return message

        try:
            await self.app(scope, counted, sent)
        except BodyTooSlow:
            pass  # answered 408 above
        except Exception:
            if not answered:
                raise
            # The app turned the 408's exception into its own (FastAPI: 400 "error
            # parsing the body"); the client has its answer already.
