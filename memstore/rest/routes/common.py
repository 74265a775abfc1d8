"""What the routes of a namespace share: the path prefix, the documented error
answers, and the router factory."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memstore.rest.models import ErrorPublic, NotGroundedPublic

PREFIX = "/v1/namespaces/{namespace:path}"

#: The errors every namespace route may answer.
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorPublic, "description": "Invalid input; `field` names it"},
    401: {"model": ErrorPublic, "description": "No API key, or an unknown one"},
    403: {"model": ErrorPublic, "description": "The key may not use this namespace"},
    413: {"model": ErrorPublic, "description": "Too much evidence, or too large a body"},
    503: {"model": ErrorPublic, "description": "The database is unavailable"},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorPublic, "description": "No such row in this namespace"}
}
NOT_GROUNDED: dict[int | str, dict[str, Any]] = {
    422: {"model": NotGroundedPublic, "description": "Rejected by the grounding gate"}
}
ERASE_ERRORS: dict[int | str, dict[str, Any]] = {
    **NOT_FOUND,
    403: {
        "model": ErrorPublic,
        "description": "The key may not use this namespace, or may not erase (server.erase_keys)",
    },
}


#: A metadata filter in a query string: one ``KEY=TEXT`` or ``KEY:=JSON`` item per
#: repetition (``memstore.fronts.metadata_items``).
Meta = Annotated[
    list[str] | None,
    Query(
        description="Metadata every fact holds: KEY=TEXT (a string) or KEY:=JSON (a number, "
        "true, false or null), e.g. meta=user=alice&meta=priority:=2."
    ),
]


def namespace_router() -> APIRouter:
    """A router for routes under ``/v1/namespaces/{namespace}/`` that answer ``ERRORS``."""
    return APIRouter(prefix=PREFIX, responses=ERRORS)
