"""The REST API's routes, one module per area, and ``ROUTERS`` in the order they are
served (and listed in the OpenAPI schema)."""

from __future__ import annotations

from fastapi import APIRouter

from memstore.rest.routes import audit, claims, conversations, facts, operations, search
from memstore.rest.routes.common import PREFIX

ROUTERS: tuple[APIRouter, ...] = (
    facts.router,
    conversations.router,
    search.router,
    audit.router,
    claims.router,
    operations.router,
)

__all__ = ["PREFIX", "ROUTERS"]
