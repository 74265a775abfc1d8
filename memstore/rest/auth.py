"""Who may do what: the API key (``Authorization: Bearer`` or ``X-API-Key``), the
namespace's store leased for a request whose key may use it, and the right to erase."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Path, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from memstore.config import key_fingerprint
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


def api_key(
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    header: Annotated[str | None, Security(_api_key)],
) -> str:
    """The request's API key; 401 when it has none."""
    key = bearer.credentials if bearer is not None else header
    if not key:
        raise Denied(
            401, "unauthorized", "an API key is required (Authorization: Bearer or X-API-Key)"
        )
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
    if not state.settings.server.namespaces_for(key):
        raise Denied(401, "unauthorized", "unknown API key")
    try:
        check_namespace(namespace)
    except ValueError as exc:
        raise InvalidInput("namespace", str(exc)) from None
    if not state.settings.server.allows(key, namespace):
        raise Denied(403, "forbidden", f"this API key may not use namespace {namespace!r}")
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
