"""Routes for the audit log of rejected facts (list, count, get, erase) and the gate's
drift alarms."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Depends, Query, Request, Response
from pydantic import BaseModel, Field

from memstore.audit.drift import DriftReport
from memstore.defaults import REJECTION_ORDER_BY as ORDER_BY
from memstore.defaults import REJECTIONS_MAX_PAGE as MAX_PAGE
from memstore.fronts import rejection_where
from memstore.rest.auth import Eraser, NamespaceStore
from memstore.rest.models import EraseRequest
from memstore.rest.routes.common import ERASE_ERRORS, NOT_FOUND, Cursor, namespace_router
from memstore.rest.state import drift_report
from memstore.schemas import ErasurePublic, RejectionPublic

router = namespace_router()

#: The most rows a listing may skip: ``Store.rejections``' bound on ``offset`` (a literal
#: in ``memstore.inputs.rejection_page``).
MAX_OFFSET = 2**63 - 1


class RejectionQuery(BaseModel):
    """The audit log's filters as query parameters, under ``Store.rejections``' names."""

    verdict: Annotated[list[str] | None, Field(description="Verdict names.")] = None
    since: Annotated[datetime | None, Field(description="Created at or after.")] = None
    until: Annotated[datetime | None, Field(description="Created before.")] = None
    text: Annotated[str | None, Field(description="Substring of the statement.")] = None
    entity: Annotated[str | None, Field(description="A member, by name or alias.")] = None
    relation: str | None = None
    source: Annotated[str | None, Field(description="Evidence source.")] = None
    min_gap: Annotated[float | None, Field(description="Budget gap >= (bits).")] = None
    max_gap: Annotated[float | None, Field(description="Budget gap <= (bits).")] = None


def _filters(query: Annotated[RejectionQuery, Query()]) -> dict[str, Any]:
    return rejection_where(**query.model_dump())


Filters = Annotated[dict[str, Any], Depends(_filters)]


@router.get("/rejections", tags=["audit"], summary="List rejected facts")
def list_rejections(
    store: NamespaceStore,
    filters: Filters,
    request: Request,
    response: Response,
    order_by: Annotated[str, Query(description=f"One of {', '.join(ORDER_BY)}.")] = "created_at",
    descending: bool = True,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    cursor: Cursor = None,
) -> list[RejectionPublic]:
    """The audit log of facts the gate refused, newest first by default, a page at a
    time: by ``offset``, or by ``cursor`` (as fast at any depth). When more follow, the
    ``Link`` header names the next page (``rel="next"``): the same query with the cursor
    of this page's last row, as a path (never built from the request's Host header)."""
    rows = store.rejections(
        order_by=order_by, descending=descending, limit=limit, offset=offset, cursor=cursor,
        **filters,
    )  # fmt: skip
    if rows.next_cursor is not None:
        following = request.url.remove_query_params("offset").include_query_params(
            cursor=rows.next_cursor
        )
        root = request.scope.get("root_path", "")  # servers put it in the path already
        path = following.path if following.path.startswith(root) else root + following.path
        response.headers["Link"] = f'<{path}?{following.query}>; rel="next"'
    return rows


@router.get("/rejections/counts", tags=["audit"], summary="Count rejected facts")
def count_rejections(
    store: NamespaceStore,
    filters: Filters,
    by: Literal["verdict", "day"] = "verdict",
) -> dict[str, int]:
    """How many rejections match, by verdict or by UTC day (``YYYY-MM-DD``)."""
    return store.count_rejections(by, **filters)


@router.get(
    "/rejections/{rejection_id}", tags=["audit"], summary="Get a rejection", responses=NOT_FOUND
)
def get_rejection(rejection_id: str, store: NamespaceStore) -> RejectionPublic:
    """One rejection with the evidence it was checked against."""
    return store.get_rejection(rejection_id)


@router.post(
    "/rejections/{rejection_id}/erase",
    tags=["audit"],
    summary="Erase a rejection for good",
    responses=ERASE_ERRORS,
)
def erase_rejection(
    rejection_id: str,
    body: EraseRequest,
    store: NamespaceStore,
    by: Eraser,
) -> ErasurePublic:
    """Remove a rejection from the audit log for good, with the evidence nothing else
    cites; answers the tombstone that takes its place in the audit chain. Only keys
    listed in ``server.erase_keys`` may erase (403 ``forbidden`` for the others)."""
    return store.erase_rejection(rejection_id, body.reason, by=by)


@router.get("/drift", tags=["audit"], summary="Drift alarms and the error budget")
def drift(request: Request, store: NamespaceStore) -> DriftReport:
    """Whether the gate's verdicts drifted: per verifier backend, a CUSUM over the
    acceptance rate and the mean p1 of the latest gated writes (``alarms``), and the error
    budgets the audit page's labels spend (``spent``), under the server's ``drift``
    settings. It also sets the drift gauges of ``GET /metrics``."""
    return drift_report(request, store)
