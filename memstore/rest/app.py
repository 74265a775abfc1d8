"""The app factory (``create_app``) and the server (``run``, behind ``memstore serve``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

import memstore
from gate import ConfigError
from memstore.config import Settings
from memstore.rest.body_limit import BodyLimit
from memstore.rest.docs import openapi_schema, operation_id, serve_docs
from memstore.rest.errors import add_exception_handlers
from memstore.rest.metrics import DriftGauges, HTTPMetrics, MetricsMiddleware
from memstore.rest.page import add_audit_page
from memstore.rest.routes import ROUTERS
from memstore.rest.state import ServerState

_KEYS_HINT = (
    "set at least one API key: no key, no access. In the config file, server.api_keys "
    "maps each key to the namespaces it may use, e.g. "
    'MEMSTORE_SERVER__API_KEYS=\'{"<a long random key>": ["user:*"]}\''
)


def _load_gate(settings: Settings) -> None:
    """Load the configured verifier; a failure is logged (the first gated write reports it)."""
    try:
        settings.gate()
    except Exception:
        logging.getLogger("memstore.rest").exception("loading the verifier failed")


def create_app(settings: Settings) -> FastAPI:
    """The REST API over the store ``settings`` describe.

    Raises ConfigError when ``server.api_keys`` is empty: no key, no access.
    """
    if not settings.server.api_keys:
        raise ConfigError("server.api_keys", _KEYS_HINT)
    state = ServerState(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The verifier loads in the background: the server answers at once, and a gated
        # write that comes before it is ready waits for it (``Settings.gate``'s lock).
        threading.Thread(target=_load_gate, args=(settings,), name="load-gate", daemon=True).start()
        state.stores.start()  # closes idle stores
        try:
            yield
        finally:
            await run_in_threadpool(state.close)

    app = FastAPI(
        title="memstore",
        version=memstore.__version__,
        description=(
            "A memory-gated knowledge store for AI agents: facts are remembered only when "
            "the grounding gate finds them supported by their evidence. Authenticate with "
            "`Authorization: Bearer <key>` or `X-API-Key: <key>`."
        ),
        lifespan=lifespan,
        generate_unique_id_function=operation_id,
        docs_url=None,  # served from local files by serve_docs, not from a CDN
        redoc_url=None,
    )
    app.state.memstore = state
    app.state.stores = state.stores
    app.state.http_metrics = HTTPMetrics()
    app.state.drift_gauges = DriftGauges()
    for router in ROUTERS:
        app.include_router(router)
    serve_docs(app)
    add_audit_page(app, settings)
    app.add_middleware(
        BodyLimit,
        limit=settings.server.max_body_bytes,
        timeout=settings.server.body_timeout.total_seconds(),
    )
    app.add_middleware(MetricsMiddleware, metrics=app.state.http_metrics)
    add_exception_handlers(app)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi_schema(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def run(settings: Settings, host: str | None = None, port: int | None = None) -> None:
    """Serve the REST API with uvicorn on ``settings.server`` (or ``host``/``port``)."""
    import uvicorn

    from memstore.rest.connections import uvicorn_config

    app = create_app(settings)
    host = host or settings.server.host
    port = settings.server.port if port is None else port
    config = uvicorn_config(app, settings.server, host, port)
    server = uvicorn.Server(config)  # the config has set up uvicorn's loggers by now
    shown = f"[{host}]" if ":" in host else host
    logging.getLogger("uvicorn.error").info(
        "memstore REST API on http://%s:%d (API docs: http://%s:%d/docs)", shown, port, shown, port
    )
    server.run()
