"""Who may do what: the API key (``Authorization: Bearer`` or ``X-API-Key``), the
namespace's store leased for a request whose key may use it, and the right to erase.

``presented_key`` and ``check_key`` are the one key check of the server: the REST API's
routes use them here, and MCP over HTTP (``memstore.mcp.auth``) uses them too."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated

from fastapi import Depends, Path, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from memstore.config import ServerSettings, key_fingerprint
from memstore.errors import InvalidInput
from memstore.names import check_namespace
from memstore.rest.errors import Denied
from memstore.rest.state import server_state
from memstore.store import Store

#: Why a key that may use the namespace may still not erase in it.
ERASE_FORBIDDEN = (
    "this API key may not erase: erasing is a separate right; list the key in "
    "server.erase_keys (MEMSTORE_SERVER__ERASE_KEYS) to allow it"
)

_bearer = HTTPBearer(
    auto_error=False, description="An API key from server.api_keys, as a Bearer token."
)
_api_key = APIKeyHeader(
    name="X-API-Key", auto_error=False, description="An API key from server.api_keys."
)


#: Why a request without an API key is refused (401).
KEY_REQUIRED = "an API key is required (Authorization: Bearer or X-API-Key)"


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The API key a request's ``headers`` carry: the token of ``Authorization: Bearer
    <key>``, else the value of ``X-API-Key``; None when neither holds one. ``headers``
    looks names up case-insensitively (Starlette's) or holds them in lower case."""
    scheme, _, token = (headers.get("authorization") or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() == "bearer" and token:
        return token
    return headers.get("x-api-key") or None


def check_key(server: ServerSettings, key: str | None, namespace: str) -> str:
    """``key`` when it may use ``namespace``: Denied 401 without a key or for one that is
    not in ``server.api_keys``, InvalidInput (400) for a malformed namespace, Denied 403
    for a key of other namespaces. Keys are compared in constant time (``hmac``)."""
    if not key:
        raise Denied(401, "unauthorized", KEY_REQUIRED)
    if not server.namespaces_for(key):
        raise Denied(401, "unauthorized", "unknown API key")
    try:
        check_namespace(namespace)
    except ValueError as exc:
        raise InvalidInput("namespace", str(exc)) from None
    if not server.allows(key, namespace):
        raise Denied(403, "forbidden", f"this API key may not use namespace {namespace!r}")
    return key


def api_key(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    header: Annotated[str | None, Security(_api_key)],
) -> str:
    """The request's API key (``presented_key``; the two schemes put both headers in the
    API's schema); 401 when it has none."""
    key = presented_key(request.headers)
    if key is None:
        raise Denied(401, "unauthorized", KEY_REQUIRED)
    return key


def namespace_store(
    request: Request,
    namespace: Annotated[
        str, Path(description="The namespace every read and write is confined to.")
    ],
    key: Annotated[str, Depends(api_key)],
) -> Iterator[Store]:
    """The namespace's store, leased for the request (the pool never closes it meanwhile)."""
    state = server_state(request)
    check_key(state.settings.server, key, namespace)
    with state.stores.lease(namespace) as store:
        yield store


#: Released when the route function returns, before the response is sent.
NamespaceStore = Annotated[Store, Depends(namespace_store, scope="function")]


def eraser(request: Request, key: Annotated[str, Depends(api_key)]) -> str:
    """Who erases: the API key, by a short fingerprint (never the key itself); 403 for a
    key that is not in ``server.erase_keys`` (erasing is a right of its own)."""
    if not server_state(request).settings.server.may_erase(key):
        raise Denied(403, "forbidden", ERASE_FORBIDDEN)
    return key_fingerprint(key)


#: The key's fingerprint, for routes that erase.
Eraser = Annotated[str, Depends(eraser)]


REVIEW_FORBIDDEN = (
    "this API key may not review held facts: a review is a person's decision, a right "
    "of the keys in server.erase_keys (MEMSTORE_SERVER__ERASE_KEYS), not of an agent's key"
)


def reviewer(request: Request, key: Annotated[str, Depends(api_key)]) -> str:
    """Who reviews a held fact: the API key, by a short fingerprint (never the key); 403
    for a key that is not in ``server.erase_keys`` (an agent's key does not confirm its
    own memories)."""
    if not server_state(request).settings.server.may_erase(key):
        raise Denied(403, "forbidden", REVIEW_FORBIDDEN)
    return key_fingerprint(key)


#: The key's fingerprint, for routes that review.
Reviewer = Annotated[str, Depends(reviewer)]
