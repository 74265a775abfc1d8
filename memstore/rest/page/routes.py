"""The audit page's routes under ``/audit/{namespace}``: the rejections (list, one,
export), the facts re-verification moved, the audit chain, human labels, signing in
and out.

Every route answers HTML (the export: CSV or JSON lines) and stays out of the OpenAPI
schema. The list is last: ``{namespace:path}`` would take the other routes' paths.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from memstore.names import check_namespace
from memstore.rest.page import session, views
from memstore.rest.page.errors import PageError, as_page_errors
from memstore.rest.page.render import HEADERS, base_path, render
from memstore.rest.state import drift_report, server_state
from memstore.storage.tables import LabelKind
from memstore.store import Store

router = APIRouter(prefix="/audit", include_in_schema=False)

NS = "/{namespace:path}"
EXPORTS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}

FormText = Annotated[str, Form()]


@dataclass(frozen=True)
class Page:
    """One request for a namespace's page: who asks, the namespace's store and the path
    the page's links start from."""

    request: Request
    namespace: str
    viewer: session.Viewer
    store: Store
    base: str

    def show(self, template: str, status: int = 200, **context: object) -> HTMLResponse:
        """The template with the layout's data (namespace, links, CSRF token, banners)."""
        return render(
            self.request,
            template,
            status,
            namespace=self.namespace,
            base=self.base,
            viewer=self.viewer,
            section=template.removesuffix(".html"),
            alerts=views.alerts(drift_report(self.request, self.store)),
            **context,
        )

    def back(self, path: str = "") -> RedirectResponse:
        """See other: the page at ``path`` under this namespace's (after a form)."""
        return RedirectResponse(self.base + path, status_code=303)


def _namespace(namespace: str) -> str:
    try:
        return check_namespace(namespace)
    except ValueError as exc:
        raise PageError(422, str(exc), "namespace") from None


def _page(request: Request, namespace: str) -> Iterator[Page]:
    namespace = _namespace(namespace)
    who = session.viewer(request, namespace)
    with server_state(request).stores.lease(namespace) as store:
        yield Page(request, namespace, who, store, base_path(request, namespace))


#: The page's store, leased while the route runs (the template renders inside it).
AuditPage = Annotated[Page, Depends(_page, scope="function")]


# -- signing in and out -------------------------------------------------------------------


@router.post(NS + "/sign-in")
def sign_in(request: Request, namespace: str, key: FormText = "", next: FormText = "") -> Response:
    """Take the key once; the browser gets a session cookie and goes back where it was."""
    namespace = _namespace(namespace)
    session.check_same_site(request)
    key = key.strip()
    if not key:
        raise PageError(422, "enter an API key", "key")
    session.check_key(request, key, namespace)
    base = base_path(request, namespace)
    target = next if next.startswith(base) else base  # a path here, never another site
    response = RedirectResponse(target, status_code=303)
    session.set_cookie(request, response, session.sessions(request).start(key))
    return response


@router.post(NS + "/sign-out")
def sign_out(page: AuditPage, csrf: FormText = "") -> Response:
    """End the session; the next visit shows the sign-in form."""
    session.check_csrf(page.viewer, csrf)
    if page.viewer.token is not None:
        session.sessions(page.request).end(page.viewer.token)
    response = page.back()
    session.clear_cookie(page.request, response)
    return response


# -- exports, rejections, facts -----------------------------------------------------------


@router.get(NS + "/export")
def export(page: AuditPage) -> Response:
    """Every rejection the list's filters select (all pages), oldest first, with the
    labels people gave them: ``format=csv`` or ``jsonl``."""
    fmt = page.request.query_params.get("format", "")
    if fmt not in EXPORTS:
        raise PageError(422, "must be csv or jsonl", "format")
    with as_page_errors():
        filters = views.parse_filters(_params(page.request))
        out = io.StringIO()
        page.store.export_rejections(out, format=fmt, **filters.where)
    name = quote(page.namespace.replace("/", "_").replace(":", "_"))
    headers = {**HEADERS, "Content-Disposition": f'attachment; filename="rejections-{name}.{fmt}"'}
    return Response(out.getvalue(), media_type=EXPORTS[fmt], headers=headers)


@router.post(NS + "/rejections/{rejection_id}/label")
def label_rejection(
    page: AuditPage, rejection_id: str, csrf: FormText = "", note: FormText = ""
) -> Response:
    """ "This refusal was wrong": a false rejection, by the signed-in key."""
    session.check_csrf(page.viewer, csrf)
    with as_page_errors():
        page.store.add_label(LabelKind.FALSE_REJECTION, rejection_id, by=page.viewer.who, note=note)
    return page.back(f"/rejections/{quote(rejection_id)}#labels")


@router.get(NS + "/rejections/{rejection_id}")
def rejection(page: AuditPage, rejection_id: str) -> HTMLResponse:
    """One rejection: claim, members, evidence, numbers, the audit chain, labels."""
    policy = server_state(page.request).settings.hallucination.policy()
    with as_page_errors():
        detail = views.rejection_detail(page.store, rejection_id, policy)
    return page.show("rejection.html", detail=detail)


@router.post(NS + "/facts/{fact_id}/label")
def label_fact(page: AuditPage, fact_id: str, csrf: FormText = "", note: FormText = "") -> Response:
    """ "This fact should not have been stored": a false admission, by the signed-in key."""
    session.check_csrf(page.viewer, csrf)
    with as_page_errors():
        page.store.add_label(LabelKind.FALSE_ADMISSION, fact_id, by=page.viewer.who, note=note)
    return page.back(f"/facts#fact-{quote(fact_id)}")


@router.get(NS + "/facts")
def moved_facts(page: AuditPage, cursor: str | None = None) -> HTMLResponse:
    """Facts re-verification made stale or contradicted, with the source versions read."""
    with as_page_errors():
        moved = views.moved_facts(page.store, cursor or None)
    return page.show("facts.html", moved=moved)


@router.get(NS + "/chain")
def chain(page: AuditPage) -> HTMLResponse:
    """The whole audit chain walked: every audited row's content and link checked."""
    return page.show("chain.html", chain=page.store.verify_audit_chain())


@router.get(NS)
def rejections(page: AuditPage) -> HTMLResponse:
    """The rejections, newest first, filtered and paged, with counts per day."""
    params = _params(page.request)
    try:
        with as_page_errors():
            filters = views.parse_filters(params)
            listing = views.rejection_list(page.store, filters)
    except PageError as exc:  # bad input: the form again, as given, naming the field
        if exc.status != 422:
            raise
        shown: dict[str, object] = {n: params.get(n, [""])[-1] for n in views.FILTERS}
        shown["verdict"] = params.get("verdict", [])
        given = views.Filters(shown, {})
        return page.show(
            "rejections.html", 422, filters=given, listing=None, error=exc, verdicts=views.VERDICTS
        )
    return page.show(
        "rejections.html", filters=filters, listing=listing, error=None, verdicts=views.VERDICTS
    )


def _params(request: Request) -> dict[str, list[str]]:
    """The query string, each name with all its values."""
    found: dict[str, list[str]] = {}
    for name, value in request.query_params.multi_items():
        found.setdefault(name, []).append(value)
    return found
