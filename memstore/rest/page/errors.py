"""The audit page's errors as pages: the sign-in form for 401, a short page naming the
problem (and the field, for bad input: 422) for the rest."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import Request
from fastapi.responses import HTMLResponse

from memstore.errors import InvalidInput, NotFound
from memstore.rest.page.render import base_path, render


class PageError(Exception):
    """The page cannot be shown: 401 (no key or an unknown one), 403 (a key for another
    namespace, a form without its CSRF token), 404, or 422 (bad input, naming ``field``)."""

    def __init__(self, status: int, reason: str, field: str | None = None) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.status = status
        self.reason = reason
        self.field = field


@contextmanager
def as_page_errors() -> Iterator[None]:
    """Store errors a page shows: InvalidInput as 422 naming the field, NotFound as 404."""
    try:
        yield
    except InvalidInput as exc:
        raise PageError(422, exc.reason, exc.field) from None
    except NotFound as exc:
        raise PageError(404, str(exc)) from None


def sign_in_target(request: Request, base: str) -> str:
    """Where a sign-in returns to: the page that asked (path and query), or ``base`` when
    a form asked (a POST route is no page to return to)."""
    if request.method != "GET":
        return base
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


async def on_page_error(request: Request, exc: Exception) -> HTMLResponse:
    """Answer a PageError with the sign-in form (401) or an error page."""
    assert isinstance(exc, PageError)
    namespace = str(request.path_params.get("namespace", ""))
    base = base_path(request, namespace)
    if exc.status == 401:
        response = render(
            request,
            "signin.html",
            401,
            namespace=namespace,
            base=base,
            reason=exc.reason,
            next=sign_in_target(request, base),
        )
        response.headers["WWW-Authenticate"] = 'Bearer realm="memstore audit"'
        return response
    return render(
        request,
        "error.html",
        exc.status,
        namespace=namespace,
        base=base,
        code=exc.status,
        reason=exc.reason,
        field=exc.field,
    )
