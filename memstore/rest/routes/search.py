"""Routes for search and the graph: facts, evidence passages, an entity's
neighborhood."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Query

from memstore.rest.auth import NamespaceStore
from memstore.rest.errors import param_names
from memstore.rest.routes.common import NOT_FOUND, namespace_router
from memstore.schemas import (
    MAX_QUERY_CHARS,
    MAX_SEARCH_K,
    EvidenceHit,
    NeighborhoodPublic,
    SearchHit,
    SearchMode,
)

router = namespace_router()

#: Store argument names -> the query parameters that carry them.
_QUERY_NAMES = {"query": "q", "statuses": "status"}

QueryText = Annotated[
    str, Query(min_length=1, max_length=MAX_QUERY_CHARS, description="The query.")
]
K = Annotated[int, Query(ge=1, le=MAX_SEARCH_K, description="How many hits.")]


@router.get("/search", tags=["search"], summary="Search facts", responses=NOT_FOUND)
def search(
    store: NamespaceStore,
    q: QueryText,
    k: K = 10,
    mode: SearchMode = "hybrid",
    relation: str | None = None,
    entity: Annotated[
        list[str] | None, Query(description="Each hit has every named entity as a member.")
    ] = None,
    status: Annotated[
        list[str] | None,
        Query(
            description="Fact statuses (default: verified, unverified; pending = not yet checked)."
        ),
    ] = None,
    expand: Annotated[
        bool, Query(description="Also return facts one hop away through a hit's entities.")
    ] = False,
    as_of: Annotated[datetime | None, Query(description="Valid at this world time.")] = None,
) -> list[SearchHit]:
    """Facts that best match ``q`` by meaning and keywords, best first."""
    with param_names(_QUERY_NAMES):
        return store.search(
            q,
            k,
            mode=mode,
            relation=relation,
            entity=entity,
            statuses=status or None,
            expand=expand,
            as_of=as_of,
        )


@router.get("/search/evidence", tags=["search"], summary="Search evidence")
def search_evidence(
    store: NamespaceStore,
    q: QueryText,
    k: K = 10,
    mode: SearchMode = "hybrid",
    source: Annotated[list[str] | None, Query(description="Evidence sources.")] = None,
    current_only: Annotated[
        bool, Query(description="Skip versions a refreshed source replaced.")
    ] = True,
) -> list[EvidenceHit]:
    """Evidence passages that best match ``q``, best first."""
    with param_names(_QUERY_NAMES):
        return store.search_evidence(q, k, mode=mode, source=source, current_only=current_only)


@router.get(
    "/entities/{name}/neighborhood",
    tags=["search"],
    summary="An entity's neighborhood",
    responses=NOT_FOUND,
)
def neighborhood(
    name: str,
    store: NamespaceStore,
    hops: Annotated[int, Query(ge=0, le=10, description="Entity-fact-entity steps.")] = 1,
    relation: str | None = None,
) -> NeighborhoodPublic:
    """Active facts and entities within ``hops`` steps of the entity (a name or alias)."""
    with param_names({"entities": "name"}):
        return store.neighborhood(name, hops, relation=relation)
