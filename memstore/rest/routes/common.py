"""What the routes of a namespace share: the path prefix, the documented error
answers, the router factory, and the query parameters of the reads (the fact filters
of search and listing as one dependency)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from memstore.fronts import metadata_items
from memstore.rest.models import ErrorPublic, NotGroundedPublic
from memstore.schemas import MAX_CURSOR_CHARS, MAX_LIST_LIMIT

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

#: The filters of the reads (search, recall, listing) as query parameters.
RecordedAfter = Annotated[datetime | None, Query(description="Recorded at or after.")]
RecordedBefore = Annotated[datetime | None, Query(description="Recorded before.")]
Entities = Annotated[
    list[str] | None, Query(description="Each hit has every named entity as a member.")
]
Statuses = Annotated[
    list[str] | None,
    Query(description="Fact statuses (default: verified, unverified; pending = not yet checked)."),
]
AsOf = Annotated[datetime | None, Query(description="Valid at this world time.")]

#: The page of a bounded read (listing, facts of an entity, history, neighborhood).
Limit = Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT, description="Facts per page.")]
Cursor = Annotated[
    str | None,
    Query(max_length=MAX_CURSOR_CHARS, description="The previous page's next_cursor."),
]


def namespace_router() -> APIRouter:
    """A router for routes under ``/v1/namespaces/{namespace}/`` that answer ``ERRORS``."""
    return APIRouter(prefix=PREFIX, responses=ERRORS)


def _recorded(
    recorded_after: RecordedAfter = None, recorded_before: RecordedBefore = None
) -> dict[str, Any]:
    return {"recorded_after": recorded_after, "recorded_before": recorded_before}


#: The recording-time window of the searches and the listing, as the Store takes it.
Recorded = Annotated[dict[str, Any], Depends(_recorded)]


def _fact_filters(
    recorded: Recorded,
    entity: Entities = None,
    relation: Annotated[str | None, Query(description="Only facts with this relation.")] = None,
    status: Statuses = None,
    meta: Meta = None,
    as_of: AsOf = None,
) -> dict[str, Any]:
    return {
        **recorded,
        "relation": relation,
        "entity": entity,
        "statuses": status or None,
        "metadata": metadata_items(meta),
        "as_of": as_of,
    }


#: Which facts search and listing read (``memstore.fronts.LIST_FILTERS``), as the Store
#: takes them; a bad ``meta`` item is a 400 naming ``meta``.
FactFilters = Annotated[dict[str, Any], Depends(_fact_filters)]
