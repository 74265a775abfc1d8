"""Operations routes, outside every namespace and needing no key: ``/health`` and
``/metrics``."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client import generate_latest as prometheus_text

import memstore
from memstore.rest.models import HealthPublic
from memstore.rest.state import server_state

log = logging.getLogger("memstore.rest")

router = APIRouter(tags=["operations"])


@router.get(
    "/health",
    summary="Health check",
    responses={503: {"model": HealthPublic, "description": "The database does not answer"}},
)
def health(request: Request, response: Response) -> HealthPublic:
    """Whether the server and its database answer. Needs no API key."""
    try:
        server_state(request).ping_database()
    except Exception as exc:
        log.warning("health check: the database does not answer: %s", type(exc).__name__)
        response.status_code = 503
        return HealthPublic(
            status="unavailable", version=memstore.__version__, database="unavailable"
        )
    return HealthPublic(status="ok", version=memstore.__version__, database="ok")


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=PlainTextResponse,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Metrics"}},
)
def metrics(request: Request) -> Response:
    """The gate's metrics (claims, verdicts, latency, cache), HTTP requests by method,
    route and status, and the last drift report's gauges per namespace (``GET /drift``),
    in the Prometheus text format. Needs no API key."""
    state = server_state(request)
    parts = []
    gate = state.settings.gate()
    if gate is not None:
        parts.append(gate.metrics.prometheus())
    parts.append(prometheus_text(request.app.state.http_metrics.registry).decode("utf-8"))
    parts.append(prometheus_text(request.app.state.drift_gauges.registry).decode("utf-8"))
    return Response("".join(parts), media_type=CONTENT_TYPE_LATEST)
