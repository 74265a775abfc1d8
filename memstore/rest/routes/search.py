"""Routes for search and the graph: facts, evidence passages, recall for a prompt, an
entity's neighborhood."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query

from memstore.defaults import MAX_HOPS
from memstore.inputs import MAX_RECALL_TOKENS
from memstore.read.recall import DEFAULT_BUDGET_TOKENS, DEFAULT_K, DEFAULT_MIN_SCORE, Recall
from memstore.rest.auth import NamespaceStore
from memstore.rest.errors import param_names
from memstore.rest.routes.common import (
    NOT_FOUND,
    AsOf,
    Cursor,
    Entities,
    FactFilters,
    FactStatuses,
    Limit,
    Recorded,
    Relation,
    SearchText,
    names_of,
    namespace_router,
)
from memstore.schemas import (
    DEFAULT_NEIGHBORHOOD_FACTS,
    DEFAULT_READ_LIMIT,
    MAX_NEIGHBORHOOD_FACTS,
    MAX_SEARCH_K,
    EvidenceHit,
    NeighborhoodPublic,
    SearchHit,
    SearchMode,
)

router = namespace_router()

K = Annotated[int, Query(ge=1, le=MAX_SEARCH_K, description="How many hits.")]
MinScore = Annotated[
    float | None,
    Query(ge=0, le=1, description="Leave out hits whose relevance (0..1) is below it."),
]


def _ranking(k: K = 10, mode: SearchMode = "hybrid", min_score: MinScore = None) -> dict[str, Any]:
    return {"k": k, "mode": mode, "min_score": min_score}


#: How both searches (facts and evidence) rank and cut their hits, as the Store takes it.
Ranking = Annotated[dict[str, Any], Depends(_ranking)]


@router.get("/search", tags=["search"], summary="Search facts", responses=NOT_FOUND)
def search(
    store: NamespaceStore,
    text: SearchText,
    ranking: Ranking,
    filters: FactFilters,
    expand: Annotated[
        bool, Query(description="Also return facts one hop away through a hit's entities.")
    ] = False,
    offset: Annotated[
        int, Query(ge=0, le=MAX_SEARCH_K - 1, description="Skip this many of the best hits.")
    ] = 0,
) -> list[SearchHit]:
    """Facts that best match ``query`` (or its alias ``q``) by meaning and keywords, best
    first; ``offset=k`` for the next page (``offset + k`` at most 1,000)."""
    with param_names(names_of(text, filters)):
        return store.search(
            **text.values, **ranking, expand=expand, offset=offset, **filters.values
        )


@router.get("/recall", tags=["search"], summary="Recall memories for a prompt")
def recall(
    store: NamespaceStore,
    text: SearchText,
    statuses: FactStatuses,
    budget_tokens: Annotated[
        int,
        Query(ge=1, le=MAX_RECALL_TOKENS, description="Tokens the block may hold (MiniLM)."),
    ] = DEFAULT_BUDGET_TOKENS,
    k: Annotated[
        int, Query(ge=1, le=MAX_SEARCH_K, description="Memories considered, best first.")
    ] = DEFAULT_K,
    entity: Entities = None,
    as_of: AsOf = None,
    min_score: Annotated[
        float, Query(ge=0, le=1, description="The relevance (0..1) a memory needs; 0: any.")
    ] = DEFAULT_MIN_SCORE,
) -> Recall:
    """The memories relevant to ``query`` (or its alias ``q``) as a block of text for a
    prompt (``text``: one line per memory with when it held, confidence and source, best
    first, within ``budget_tokens``) and the memories it shows (``hits``). Nothing
    relevant: an empty block."""
    with param_names(names_of(text, statuses)):
        return store.recall(
            **text.values,
            budget_tokens=budget_tokens,
            k=k,
            entity=entity,
            **statuses.values,
            as_of=as_of,
            min_score=min_score,
        )


@router.get("/search/evidence", tags=["search"], summary="Search evidence")
def search_evidence(
    store: NamespaceStore,
    text: SearchText,
    ranking: Ranking,
    recorded: Recorded,
    source: Annotated[list[str] | None, Query(description="Evidence sources.")] = None,
    current_only: Annotated[
        bool, Query(description="Skip versions a refreshed source replaced.")
    ] = True,
) -> list[EvidenceHit]:
    """Evidence passages that best match ``query`` (or its alias ``q``), best first."""
    with param_names(names_of(text)):
        return store.search_evidence(
            **text.values, **ranking, source=source, current_only=current_only, **recorded
        )


@router.get(
    "/entities/{name}/neighborhood",
    tags=["search"],
    summary="An entity's neighborhood",
    responses=NOT_FOUND,
)
def neighborhood(
    name: str,
    store: NamespaceStore,
    hops: Annotated[int, Query(ge=0, le=MAX_HOPS, description="Entity-fact-entity steps.")] = 1,
    relation: Relation = None,
    as_of: AsOf = None,
    limit: Limit = DEFAULT_READ_LIMIT,
    cursor: Cursor = None,
    max_facts: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_NEIGHBORHOOD_FACTS,
            description="The most facts the walk keeps, nearest and newest first.",
        ),
    ] = DEFAULT_NEIGHBORHOOD_FACTS,
) -> NeighborhoodPublic:
    """Active facts within ``hops`` steps of the entity (a name or alias), nearest first
    and newest first within a hop, a page at a time, with the entity and the page's
    members; with ``as_of``, the facts valid at that world time. Pass a page's
    ``next_cursor`` as ``cursor`` for the next page (null: the last); ``complete`` is
    false when the walk stopped at ``max_facts`` facts, true when it kept every fact
    within ``hops``, null when this page did not need to walk that far (the last page
    always tells)."""
    with param_names({"entities": "name"}):
        return store.neighborhood(
            name,
            hops,
            relation=relation,
            as_of=as_of,
            limit=limit,
            cursor=cursor,
            max_facts=max_facts,
        )
