"""The request body limit (``server.max_body_bytes``), as ASGI middleware that the
REST API and the MCP server's http transport share."""

from __future__ import annotations

from fastapi import HTTPException

from memstore.rest.asgi import ASGIApp, Message, Receive, Scope, Send
from memstore.rest.errors import error_response


class BodyLimit:
    """Answers 413 (field ``body``) to a request body over ``limit`` bytes, unread."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

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

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:  # a chunked body with no Content-Length
                    raise HTTPException(413, f"body: {reason}")
            return message

        await self.app(scope, counted, send)
