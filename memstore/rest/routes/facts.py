"""Routes for facts: remember (one or a batch), list, get, retract, erase, correct,
history."""

from __future__ import annotations

from fastapi import Response

from memstore.fronts import fact_history
from memstore.rest.auth import Eraser, NamespaceStore, Reviewer
from memstore.rest.errors import param_names
from memstore.rest.models import (
    BatchRequest,
    BatchResult,
    EraseRequest,
    HistoryPublic,
    RejectedResult,
    RetractRequest,
    ReviewRequest,
    StoredResult,
)
from memstore.rest.routes.common import (
    ERASE_ERRORS,
    NOT_FOUND,
    NOT_GROUNDED,
    Cursor,
    FactFilters,
    Limit,
    namespace_router,
)
from memstore.reverify.source_policy import refuse_remote_sources
from memstore.schemas import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_READ_LIMIT,
    ErasurePublic,
    FactCreate,
    FactPage,
    FactPublic,
    RejectionPublic,
)

router = namespace_router()


@router.post(
    "/facts",
    status_code=201,
    tags=["facts"],
    summary="Remember a fact",
    responses={200: {"model": FactPublic, "description": "Already remembered"}, **NOT_GROUNDED},
)
def add_fact(fact: FactCreate, response: Response, store: NamespaceStore) -> FactPublic:
    """Store a fact if the grounding gate finds it grounded in its evidence (201); an
    exact duplicate of a remembered fact answers 200 with ``deduplicated`` set. A
    rejected fact answers 422 and goes to the audit log, never to memory."""
    refuse_remote_sources(store.sources, [fact])
    stored = store.add_fact(fact)
    if stored.deduplicated:
        response.status_code = 200
    return stored


@router.post("/facts/batch", tags=["facts"], summary="Remember several facts")
def add_facts(batch: BatchRequest, store: NamespaceStore) -> BatchResult:
    """Verify facts together (few model calls); per fact, in order, the stored fact or
    the rejection. Invalid input stores nothing and names ``facts.<i>.<field>``."""
    refuse_remote_sources(store.sources, batch.facts, "facts")
    results: list[StoredResult | RejectedResult] = [
        RejectedResult(rejection=r) if isinstance(r, RejectionPublic) else StoredResult(fact=r)
        for r in store.add_facts(batch.facts)
    ]
    return BatchResult(results=results)


@router.get("/facts", tags=["facts"], summary="List facts", responses=NOT_FOUND)
def list_facts(
    store: NamespaceStore,
    filters: FactFilters,
    limit: Limit = DEFAULT_LIST_LIMIT,
    cursor: Cursor = None,
) -> FactPage:
    """The namespace's facts a page at a time, oldest first (by recording time, then id),
    filtered like search; by default the active ones. Pass a page's ``next_cursor`` as
    ``cursor``, with the same filters, for the next page (null: that was the last)."""
    with param_names(filters.names):
        return store.list_facts(limit=limit, cursor=cursor, **filters.values)


@router.get("/facts/{fact_id}", tags=["facts"], summary="Get a fact", responses=NOT_FOUND)
def get_fact(fact_id: str, store: NamespaceStore) -> FactPublic:
    """A fact by id, whatever its status."""
    return store.get_fact(fact_id)


@router.post(
    "/facts/{fact_id}/retract", tags=["facts"], summary="Retract a fact", responses=NOT_FOUND
)
def retract(fact_id: str, body: RetractRequest, store: NamespaceStore) -> FactPublic:
    """Soft-delete a fact with a reason; it leaves search and graph reads."""
    return store.retract(fact_id, body.reason)


@router.post(
    "/facts/{fact_id}/erase",
    tags=["facts"],
    summary="Erase a fact for good",
    responses=ERASE_ERRORS,
)
def erase(fact_id: str, body: EraseRequest, store: NamespaceStore, by: Eraser) -> ErasurePublic:
    """Remove a fact for good: every version, its history, the evidence nothing else
    cites, and its search-index rows. Answers the tombstone (ids and hashes, no
    content), which keeps the audit chain verifying; ``kept_evidence_ids`` names
    evidence that other facts or rejections still cite. Only keys listed in
    ``server.erase_keys`` may erase (403 ``forbidden`` for the others)."""
    return store.erase(fact_id, body.reason, by=by)


@router.post(
    "/facts/{fact_id}/review",
    tags=["facts"],
    summary="Confirm or refuse a held fact",
    responses=NOT_FOUND,
)
def review(fact_id: str, body: ReviewRequest, store: NamespaceStore, by: Reviewer) -> FactPublic:
    """A person's decision on a fact the gate held (``unverified`` or ``pending``):
    ``confirm`` makes it ``verified``, ``refuse`` retracts it; the decision, its reason
    and the key that made it (by fingerprint) are a link of the audit chain. 400 for a
    fact that is not held; only keys in ``server.erase_keys`` may review (403 for the
    others: an agent's key does not confirm its own memories)."""
    return store.review(fact_id, body.decision, body.reason, by=by)


@router.post(
    "/facts/{fact_id}/supersede",
    status_code=201,
    tags=["facts"],
    summary="Correct a fact",
    responses={**NOT_FOUND, **NOT_GROUNDED},
)
def supersede(fact_id: str, fact: FactCreate, store: NamespaceStore) -> FactPublic:
    """Replace a fact by a corrected one, gated like a new fact. The old version stays,
    marked ``superseded``; if the correction is rejected (422) it stays as it was."""
    refuse_remote_sources(store.sources, [fact])
    with param_names({"old_id": "fact_id"}):
        return store.supersede(fact_id, fact)


@router.get(
    "/facts/{fact_id}/history", tags=["facts"], summary="A fact's history", responses=NOT_FOUND
)
def history(
    fact_id: str, store: NamespaceStore, limit: Limit = DEFAULT_READ_LIMIT, cursor: Cursor = None
) -> HistoryPublic:
    """The versions along the fact's supersession chain, oldest first, a page at a time,
    and every verification of those versions (gate passes and re-verifications, oldest
    first). Pass a page's ``next_cursor`` as ``cursor`` for the next page (null: the last)."""
    return fact_history(store, fact_id, limit, cursor)
