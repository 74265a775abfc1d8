"""Who may use MCP over HTTP: the REST API's key check (``memstore.rest.auth``:
``Authorization: Bearer <key>`` or ``X-API-Key: <key>``, a key of ``server.api_keys``
that may use the served namespace) as ASGI middleware, the right to erase, and whether
the server may listen without keys at all."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Mapping

from starlette.datastructures import Headers

from gate import ConfigError
from memstore.config import ServerSettings, key_fingerprint
from memstore.names import check_namespace
from memstore.rest.asgi import ASGIApp, Receive, Scope, Send
from memstore.rest.auth import check_key, presented_key
from memstore.rest.errors import Denied, error_response

log = logging.getLogger("memstore.mcp")

NO_KEYS = (
    "MCP over HTTP needs API keys: server.api_keys maps each key to the namespaces it "
    'may use, e.g. MEMSTORE_SERVER__API_KEYS=\'{"<a long random key>": ["user:*"]}\', '
    "and clients send Authorization: Bearer <key> (or X-API-Key: <key>). Only on a "
    "loopback address (127.0.0.1, ::1, localhost) may --allow-unauthenticated serve "
    "without keys"
)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost``, 127.0.0.0/8, ``::1``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_http_access(server: ServerSettings, host: str, allow_unauthenticated: bool) -> None:
    """Raise ConfigError unless HTTP clients must authenticate, or may skip it knowingly."""
    if server.api_keys:
        if allow_unauthenticated:
            log.warning("server.api_keys are set: clients need a key all the same")
        return
    if not (allow_unauthenticated and is_loopback(host)):
        raise ConfigError("server.api_keys", NO_KEYS)
    log.warning(
        "serving without authentication on %s (--allow-unauthenticated): anyone who can "
        "reach this address may read and write the namespace",
        host,
    )


class KeyAuth:
    """ASGI middleware: every HTTP request needs an API key (``Authorization: Bearer``
    or ``X-API-Key``) of ``server.api_keys`` that allows ``namespace``, checked as the
    REST API checks it; else 401 (no key or an unknown one) or 403 (a key of other
    namespaces), as JSON like the REST API's errors."""

    def __init__(self, app: ASGIApp, server: ServerSettings, namespace: str) -> None:
        check_namespace(namespace)
        self.app = app
        self.server = server
        self.namespace = namespace

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            try:
                check_key(self.server, presented_key(Headers(scope=scope)), self.namespace)
            except Denied as denied:
                if scope["type"] == "websocket":  # none is served; refuse before accepting
                    await send({"type": "websocket.close", "code": 1008})
                    return
                response = error_response(denied.status, denied.error, denied.detail)
                if denied.status == 401:
                    response.headers["WWW-Authenticate"] = "Bearer"
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def erase_fingerprint(server: ServerSettings, headers: Mapping[str, str] | None) -> str | None:
    """The fingerprint of the request's key (``presented_key`` of its ``headers``) when
    the key is in ``server.erase_keys``, to record as who erased; None when it may not
    erase."""
    key = presented_key(headers or {})
    if key is None or not server.may_erase(key):
        return None
    return key_fingerprint(key)
