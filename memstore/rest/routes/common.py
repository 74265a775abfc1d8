"""What the routes of a namespace share: the path prefix, the documented error
answers, the router factory, and the query parameters of the reads (the fact filters
of search and listing as one dependency).

The parameters carry the Store's names (``query``, ``statuses``, ``metadata``); the
names the API first had stay as aliases (``q``, ``status``, ``meta``). ``q`` and
``query`` are one value (both given must agree); ``status`` and ``statuses`` merge, as
do the items of ``meta`` and ``metadata`` (a key given in both is a 400, as a key given
twice in one is)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from memstore import inputs
from memstore.errors import InvalidInput
from memstore.fronts import metadata_items
from memstore.rest.errors import param_names
from memstore.rest.models import ErrorPublic, NotGroundedPublic
from memstore.schemas import MAX_CURSOR_CHARS, MAX_LIST_LIMIT, MAX_QUERY_CHARS

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
#: repetition (``memstore.fronts.metadata_items``), under the Store's name ``metadata``
#: or its alias ``meta``.
_META_ITEMS = (
    "KEY=TEXT (a string) or KEY:=JSON (a number, true, false or null), one item per repetition"
)
MetadataItems = Annotated[
    list[str] | None,
    Query(
        description=f"Metadata every fact holds: {_META_ITEMS}, e.g. "
        "metadata=user=alice&metadata=priority:=2."
    ),
]
Meta = Annotated[
    list[str] | None,
    Query(
        description=f"Alias of metadata ({_META_ITEMS}, e.g. meta=user=alice); the items of "
        "both merge, and a key given in both is a 400 naming metadata."
    ),
]

#: The text of a search, under the Store's name ``query`` or its alias ``q``.
QueryText = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="The query. Required: this or its alias q.",
    ),
]
QAlias = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="Alias of query: give one of them (both must then be the same text).",
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
    Query(
        description="Fact statuses, one per repetition (default: verified, unverified; "
        "pending = not yet checked)."
    ),
]
StatusAlias = Annotated[
    list[str] | None,
    Query(description="Alias of statuses, one per repetition; the two merge."),
]
AsOf = Annotated[datetime | None, Query(description="Valid at this world time.")]
Relation = Annotated[str | None, Query(description="Only facts with this relation.")]

#: The page of a bounded read (listing, facts of an entity, history, neighborhood).
Limit = Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT, description="Facts per page.")]
Cursor = Annotated[
    str | None,
    Query(max_length=MAX_CURSOR_CHARS, description="The previous page's next_cursor."),
]


@dataclass(frozen=True)
class Given:
    """Store arguments read from a request's query parameters (``values``, by the
    Store's names) and, where an alias carried one, its name (``names``: Store argument
    -> parameter, so ``param_names`` names what the request said in an error)."""

    values: dict[str, Any]
    names: dict[str, str] = field(default_factory=dict)


def names_of(*given: Given) -> dict[str, str]:
    """The parameter names of several ``Given``, for ``param_names``."""
    return {name: alias for g in given for name, alias in g.names.items()}


def namespace_router() -> APIRouter:
    """A router for routes under ``/v1/namespaces/{namespace}/`` that answer ``ERRORS``."""
    return APIRouter(prefix=PREFIX, responses=ERRORS)


def _recorded(
    recorded_after: RecordedAfter = None, recorded_before: RecordedBefore = None
) -> dict[str, Any]:
    return {"recorded_after": recorded_after, "recorded_before": recorded_before}


#: The recording-time window of the searches and the listing, as the Store takes it.
Recorded = Annotated[dict[str, Any], Depends(_recorded)]


def _query_text(query: QueryText = None, q: QAlias = None) -> Given:
    if query is None and q is None:
        raise InvalidInput("query", "is required (or its alias q)")
    if query is not None and q is not None and query != q:
        raise InvalidInput("query", "query and its alias q differ; give one of them")
    if query is None:
        return Given({"query": q}, {"query": "q"})
    return Given({"query": query})


#: The text of a search (``query``, or its alias ``q``); neither, or both with different
#: texts, is a 400 naming ``query``.
SearchText = Annotated[Given, Depends(_query_text)]


def _statuses(statuses: Statuses = None, status: StatusAlias = None) -> Given:
    for name, values in (("statuses", statuses), ("status", status)):
        if values:
            with param_names({"statuses": name}):
                inputs.fact_statuses(values)
    merged = list(dict.fromkeys([*(statuses or ()), *(status or ())]))
    aliased = {"statuses": "status"} if status and not statuses else {}
    return Given({"statuses": merged or None}, aliased)


#: The fact statuses a read selects (``statuses``, or its alias ``status``: the two
#: merge); a bad one is a 400 naming the parameter that gave it.
FactStatuses = Annotated[Given, Depends(_statuses)]


def _metadata(metadata: MetadataItems = None, meta: Meta = None) -> Given:
    given = metadata_items(metadata, "metadata") or {}
    aliased = metadata_items(meta, "meta") or {}
    twice = sorted(set(given) & set(aliased))
    if twice:
        raise InvalidInput("metadata", f"{twice[0]!r} is given in both metadata and meta")
    merged = inputs.metadata("metadata", {**given, **aliased}) if given or aliased else None
    return Given({"metadata": merged}, {"metadata": "meta"} if meta and not metadata else {})


#: A metadata filter (``metadata``, or its alias ``meta``: the items of both merge, a key
#: in both is a 400); a bad item is a 400 naming the parameter that gave it.
FactMetadata = Annotated[Given, Depends(_metadata)]


def _fact_filters(
    recorded: Recorded,
    statuses: FactStatuses,
    metadata: FactMetadata,
    entity: Entities = None,
    relation: Relation = None,
    as_of: AsOf = None,
) -> Given:
    values = {
        **recorded,
        "relation": relation,
        "entity": entity,
        **statuses.values,
        **metadata.values,
        "as_of": as_of,
    }
    return Given(values, names_of(statuses, metadata))


#: Which facts search and listing read (``memstore.fronts.LIST_FILTERS``), as the Store
#: takes them, with the aliases the request used.
FactFilters = Annotated[Given, Depends(_fact_filters)]
