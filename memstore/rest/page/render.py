"""Turning a template and its data into the page's HTML answer, with the headers every
page carries: nothing loads from another origin, nothing is cached, no referrer leaks."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from memstore.rest.page import charts

#: Where the page's stylesheet is served (``memstore.rest.page.add_audit_page``).
STATIC = "/audit-static"

HEADERS = {
    # Styles from this server only; no script, no frames, forms post here only.
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

templates = Jinja2Templates(
    env=Environment(
        loader=PackageLoader("memstore.rest.page", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
)
templates.env.globals["swatch"] = charts.swatch


def base_path(request: Request, namespace: str) -> str:
    """The path of ``namespace``'s audit page (under the app's root path)."""
    return f"{request.scope.get('root_path', '')}/audit/{quote(namespace, safe='/:@+')}"


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The template ``name`` filled with ``context`` (plus the stylesheet's path)."""
    context.setdefault("alerts", [])
    context["static"] = f"{request.scope.get('root_path', '')}{STATIC}"
    response = templates.TemplateResponse(request, name, context, status_code=status)
    response.headers.update(HEADERS)
    return response
