"""The API's docs: operation ids, the OpenAPI schema (422 only for the gate's
rejections) and the ``/docs`` and ``/redoc`` pages, served from local files."""

from __future__ import annotations

from importlib import resources
from typing import Any, TypedDict

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute


def operation_id(route: APIRoute) -> str:
    """The route's operation id in the schema: its function's name."""
    return route.name


#: Where the API docs' scripts, stylesheet and icon are served (Swagger UI 5, ReDoc 2).
DOCS_ASSETS = "/docs-assets"


class _Page(TypedDict):
    """What both docs pages are given alike: the schema's URL and the page's title."""

    openapi_url: str
    title: str


def serve_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc`` from the files of the ``fastapi-offline``
    package, so that they work offline: the pages load nothing from another host."""
    from fastapi.staticfiles import StaticFiles

    assets = resources.files("fastapi_offline") / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(assets)), name="docs-assets")

    def rooted(request: Request, path: str) -> str:
        """``path`` below the root path the app is served under (a proxy's prefix)."""
        return f"{request.scope.get('root_path', '')}{path}"

    def local(request: Request, name: str) -> str:
        return rooted(request, f"{DOCS_ASSETS}/{name}")

    def page(request: Request, name: str) -> _Page:
        """The schema's URL, and the title: the app's, then ``name``."""
        return {
            "openapi_url": rooted(request, str(app.openapi_url)),
            "title": f"{app.title} - {name}",
        }

    async def swagger_ui(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            **page(request, "API docs"),
            swagger_js_url=local(request, "swagger-ui-bundle.js"),
            swagger_css_url=local(request, "swagger-ui.css"),
            swagger_favicon_url=local(request, "favicon.png"),
            oauth2_redirect_url=None,
            swagger_ui_parameters={"validatorUrl": None},  # no badge from validator.swagger.io
        )

    async def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(
            **page(request, "ReDoc"),
            redoc_js_url=local(request, "redoc.standalone.js"),
            redoc_favicon_url=local(request, "favicon.png"),
            with_google_fonts=False,
        )

    # Plain routes (not API routes): they stay out of the OpenAPI schema.
    app.add_route("/docs", swagger_ui, include_in_schema=False)
    app.add_route("/redoc", redoc, include_in_schema=False)


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema without its 422 validation responses: invalid requests are 400
    here, and 422 means only "rejected by the grounding gate"."""
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            responses = operation.get("responses", {})
            if "HTTPValidationError" in str(responses.get("422", "")):
                del responses["422"]
    components = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    return schema
