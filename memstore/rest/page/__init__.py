"""The audit page: server-rendered HTML at ``/audit/{namespace}`` for the people who
audit an agent's memory (what the gate refused and why, what re-verification moved,
their own verdicts), served by ``memstore serve`` with no script and nothing fetched
from another host.

``session`` (who asks: a key in a header or a sign-in session), ``views`` (what each
page shows, from Store calls), ``charts`` (inline SVG from numbers), ``render`` (the
templates and the headers every page carries), ``errors`` (errors as pages) and
``routes``; ``templates/`` and ``static/`` ship in the package.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from memstore.config import Settings
from memstore.rest.page.errors import PageError, on_page_error
from memstore.rest.page.render import STATIC
from memstore.rest.page.routes import router
from memstore.rest.page.session import Sessions

__all__ = ["STATIC", "add_audit_page", "router"]


def add_audit_page(app: FastAPI, settings: Settings) -> None:
    """Serve the audit page on ``app``: its routes, its stylesheet, its sign-in sessions
    (lasting ``server.session_ttl``) and its error pages."""
    app.state.audit_sessions = Sessions(settings.server.session_ttl)
    app.include_router(router)
    static = StaticFiles(directory=Path(__file__).parent / "static")
    app.mount(STATIC, static, name="audit-static")
    app.add_exception_handler(PageError, on_page_error)
