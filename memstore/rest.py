"""memstore's REST API (``memstore serve``): FastAPI over one Store per namespace.

Every memory route lives under ``/v1/namespaces/{namespace}/`` and needs an API key
(``Authorization: Bearer <key>`` or ``X-API-Key: <key>``) whose patterns in
``server.api_keys`` match the namespace: a key never reads or writes another
namespace. ``/health`` and ``/metrics`` need no key; ``/docs`` shows the API.

Errors are JSON with an ``error`` code: ``invalid_input`` (400, naming the
``field``), ``unauthorized`` (401), ``forbidden`` (403), ``not_found`` (404),
``not_grounded`` (422: the grounding gate rejected the fact; the body carries the
verdict and the audit log's rejection), ``unavailable`` (503) and ``internal_error``
(500). 422 means only "rejected by the gate"; malformed requests are 400.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from importlib import resources
from typing import Annotated, Any, Literal

import sqlalchemy as sa
from fastapi import (
    APIRouter,
    Depends,
    FastAPI,
    HTTPException,
    Path,
    Query,
    Request,
    Response,
    Security,
)
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client import generate_latest as prometheus_text
from pydantic import BaseModel, BeforeValidator, Field, WithJsonSchema
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

import memstore
from gate import ConfigError, Verdict
from memstore import db
from memstore.config import Settings, key_fingerprint
from memstore.errors import (
    ErrFactNotGrounded,
    InvalidInput,
    MemstoreError,
    NotFound,
    StorageError,
    TooLarge,
)
from memstore.models import MAX_STATEMENT_CHARS
from memstore.names import check_namespace
from memstore.rejections import MAX_PAGE, ORDER_BY
from memstore.schemas import (
    MAX_EVIDENCE_ITEMS,
    MAX_QUERY_CHARS,
    MAX_SEARCH_K,
    ErasurePublic,
    EvidenceHit,
    FactCreate,
    FactPublic,
    NeighborhoodPublic,
    RejectionPublic,
    SearchHit,
    SearchMode,
    VerificationPublic,
)
from memstore.source_policy import refuse_remote_sources
from memstore.store import MAX_BATCH, Store

__all__ = ["NamespaceStores", "create_app", "run"]

log = logging.getLogger("memstore.rest")

PREFIX = "/v1/namespaces/{namespace:path}"
#: Route label of requests that matched no route (keeps the metrics' label set bounded).
UNMATCHED = "<unmatched>"
_KEYS_HINT = (
    "set at least one API key: no key, no access. In the config file, server.api_keys "
    "maps each key to the namespaces it may use, e.g. "
    'MEMSTORE_SERVER__API_KEYS=\'{"<a long random key>": ["user:*"]}\''
)
_LOCATIONS = ("body", "query", "path", "header", "cookie")


# -- API models ------------------------------------------------------------------


class ErrorPublic(BaseModel):
    """An error. ``field`` and ``reason`` are set for ``invalid_input``."""

    error: str = Field(examples=["invalid_input"])
    detail: str
    field: str | None = Field(default=None, examples=["statement"])
    reason: str | None = None


class NotGroundedPublic(BaseModel):
    """The grounding gate rejected the fact; nothing was stored. The rejection is in the
    audit log (``GET .../rejections/{id}``)."""

    error: Literal["not_grounded"] = "not_grounded"
    verdict: str = Field(examples=["insufficient_evidence"])
    reason: str | None = None
    detail: str
    rejection: RejectionPublic


class BatchRequest(BaseModel):
    """Facts to remember, verified together; each is stored or rejected on its own."""

    facts: Annotated[list[FactCreate], Field(max_length=MAX_BATCH)]


class StoredResult(BaseModel):
    stored: Literal[True] = True
    fact: FactPublic


class RejectedResult(BaseModel):
    stored: Literal[False] = False
    rejection: RejectionPublic


class BatchResult(BaseModel):
    """Per submitted fact, in order: the stored fact or its rejection."""

    results: list[StoredResult | RejectedResult]


class RetractRequest(BaseModel):
    reason: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]


class EraseRequest(BaseModel):
    """Why the fact or rejection is erased for good (kept in its tombstone)."""

    reason: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]


class HistoryPublic(BaseModel):
    """Every version of a fact (oldest first) and the verifications of all of them."""

    versions: list[FactPublic]
    verifications: list[VerificationPublic]


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


_Texts = Annotated[
    list[str],
    Field(min_length=1, max_length=MAX_EVIDENCE_ITEMS),
    BeforeValidator(_one_or_many),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}, "maxItems": MAX_EVIDENCE_ITEMS},
            ],
            "title": "Evidence",
        }
    ),
]


class ClaimRequest(BaseModel):
    """A claim to check against evidence (one text or several); nothing is stored."""

    claim: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]
    evidence: _Texts
    confidence: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 0.95


class HealthPublic(BaseModel):
    status: Literal["ok", "unavailable"]
    version: str
    database: Literal["ok", "unavailable"]


# -- stores per namespace -----------------------------------------------------------


class _Entry:
    """One namespace's place in the pool: its store (None while it opens) and leases."""

    __slots__ = ("idle_since", "leases", "store")

    def __init__(self) -> None:
        self.store: Store | None = None
        self.leases = 1
        self.idle_since = 0.0


class NamespaceStores:
    """The stores of the namespaces in use: a bounded pool shared by every request.

    A request leases its namespace's store (``with stores.lease(ns) as store``),
    opening it on first use. At most ``server.max_open_stores`` stay open: to make room,
    the least recently used store that no request holds is closed; and a store no
    request has used for ``server.store_idle_timeout`` is closed by ``sweep()`` (a
    background thread calls it once ``start()`` ran). A leased store is never closed.
    When every open store is leased, a new namespace opens anyway rather than waiting,
    and the pool shrinks back to the limit as those requests end.

    With ``scheduler.enabled`` each open store re-verifies its facts in the background
    (until it is closed). Stores taken out of the pool are closed by the pool's own
    closer thread, in order, never on a request's thread: closing waits for the
    namespace's re-verification run, and a request must not wait for another
    namespace's. A namespace whose old store is still closing is reopened once that
    close is done. ``close()`` closes them all and joins the closer (the app's
    shutdown calls it); ``settle()`` waits until every store handed off is closed.
    ``clock`` (seconds, monotonic) is what idle times are measured with.
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.max_open = settings.server.max_open_stores
        timeout = settings.server.store_idle_timeout
        #: Seconds a store may stay unused before ``sweep()`` closes it; None: never.
        self.idle_timeout = None if timeout is None else timeout.total_seconds()
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # least recently used first
        self._cond = threading.Condition()
        self._closed = False
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        #: Stores handed to the closer thread, and per namespace how many are not closed yet.
        self._to_close: queue.SimpleQueue[Store | None] = queue.SimpleQueue()
        self._closing: dict[str, int] = {}
        self._closer: threading.Thread | None = None
        self._closer_joined = False

    @contextmanager
    def lease(self, namespace: str) -> Iterator[Store]:
        """The namespace's Store (opened if needed), kept open until the block ends."""
        entry = self._acquire(namespace)
        try:
            assert entry.store is not None
            yield entry.store
        finally:
            self._release(namespace, entry)

    def _acquire(self, namespace: str) -> _Entry:
        with self._cond:
            while True:
                if self._closed:
                    raise MemstoreError("the server is shutting down")
                entry = self._entries.get(namespace)
                if entry is None and namespace not in self._closing:
                    break
                if entry is None:
                    self._cond.wait()  # its previous store is still closing
                    continue
                if entry.store is not None:
                    entry.leases += 1
                    self._entries.move_to_end(namespace)
                    return entry
                self._cond.wait()  # another request is opening it
            entry = self._entries[namespace] = _Entry()
            surplus = self._surplus()
        self._close_later(surplus)  # before opening: never more files open than needed
        try:
            store = self._open(namespace)
        except BaseException:
            with self._cond:
                del self._entries[namespace]
                self._cond.notify_all()
            raise
        with self._cond:
            entry.store = store
            self._cond.notify_all()
            if not self._closed:
                return entry
            self._entries.pop(namespace, None)
        self._close([store])
        raise MemstoreError("the server is shutting down")

    def _release(self, namespace: str, entry: _Entry) -> None:
        with self._cond:
            entry.leases -= 1
            if entry.leases == 0:
                entry.idle_since = self._clock()
            if self._entries.get(namespace) is entry:
                self._entries.move_to_end(namespace)
            surplus = self._surplus()
        self._close_later(surplus)

    def _surplus(self) -> list[Store]:
        """Take the least recently used idle stores out while over the limit (locked)."""
        taken: list[Store] = []
        if len(self._entries) <= self.max_open:
            return taken
        for namespace, entry in list(self._entries.items()):
            if len(self._entries) <= self.max_open:
                break
            if entry.leases == 0 and entry.store is not None:
                del self._entries[namespace]
                taken.append(entry.store)
        return taken

    def _open(self, namespace: str) -> Store:
        store = self.settings.open(namespace)
        scheduler = self.settings.scheduler
        if scheduler.enabled:
            try:
                store.start_reverifier(every=scheduler.every, **scheduler.options())
            except BaseException:
                store.close()
                raise
        log.info("opened namespace %s", namespace)
        return store

    def _close_later(self, stores: list[Store]) -> None:
        """Hand ``stores`` to the closer thread (started on first use); after shutdown
        has joined it, close them here."""
        if not stores:
            return
        with self._cond:
            late = self._closer_joined
            if not late:
                for store in stores:
                    self._closing[store.namespace] = self._closing.get(store.namespace, 0) + 1
                    self._to_close.put(store)
                if self._closer is None:
                    self._closer = threading.Thread(
                        target=self._closing_loop, name="memstore-store-closer", daemon=True
                    )
                    self._closer.start()
        if late:
            self._close(stores)

    def _closing_loop(self) -> None:
        while (store := self._to_close.get()) is not None:
            self._close([store])
            with self._cond:
                left = self._closing.pop(store.namespace) - 1
                if left:
                    self._closing[store.namespace] = left
                self._cond.notify_all()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every store handed to the closer is closed; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._closing, timeout)

    @staticmethod
    def _close(stores: list[Store]) -> None:
        for store in stores:
            try:
                store.close()
            except Exception:
                log.exception("closing the store of namespace %s failed", store.namespace)
            else:
                log.info("closed namespace %s", store.namespace)

    def sweep(self, now: float | None = None) -> int:
        """Close every store unused for ``idle_timeout`` (at ``now``, default the clock's
        time) that no request holds; returns how many were closed."""
        if self.idle_timeout is None:
            return 0
        now = self._clock() if now is None else now
        with self._cond:
            idle = [
                namespace
                for namespace, entry in self._entries.items()
                if entry.leases == 0
                and entry.store is not None
                and now - entry.idle_since >= self.idle_timeout
            ]
            stores = [self._entries.pop(namespace).store for namespace in idle]
        self._close_later([store for store in stores if store is not None])
        return len(idle)

    def start(self) -> None:
        """Sweep idle stores on a background thread until ``close()``."""
        if self.idle_timeout is None or self._sweeper is not None:
            return
        every = min(max(self.idle_timeout / 2, 0.5), 60.0)

        def sweeping() -> None:
            while not self._stop.wait(every):
                try:
                    self.sweep()
                except Exception:  # never let one bad sweep stop the sweeper
                    log.exception("closing idle stores failed")

        self._sweeper = threading.Thread(target=sweeping, name="memstore-idle-stores", daemon=True)
        self._sweeper.start()

    def namespaces(self) -> list[str]:
        """The namespaces whose stores are open now."""
        with self._cond:
            return sorted(ns for ns, entry in self._entries.items() if entry.store is not None)

    def leased(self, namespace: str) -> int:
        """How many requests hold the namespace's store now."""
        with self._cond:
            entry = self._entries.get(namespace)
            return 0 if entry is None else entry.leases

    def close(self) -> None:
        """Close every store (stopping their re-verifiers) and join the closer thread;
        later leases fail."""
        self._stop.set()
        with self._cond:
            self._closed = True
            stores = [e.store for e in self._entries.values() if e.store is not None]
            self._entries.clear()
            self._cond.notify_all()
        if self._sweeper is not None:
            self._sweeper.join(timeout=30)
        self._close(stores)
        with self._cond:
            self._closer_joined = True  # from now on _close_later closes in place
            closer = self._closer
        if closer is not None:
            self._to_close.put(None)
            closer.join()


class _State:
    """What the routes need, kept on ``app.state.memstore``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.stores = NamespaceStores(settings)
        self._db_url = db.database_url(settings.store.url)[0]
        self._engine: sa.Engine | None = None
        self._engine_lock = threading.Lock()

    def ping_database(self) -> None:
        """Raise if the database does not answer ``SELECT 1``."""
        with self._engine_lock:
            if self._engine is None:
                self._engine = db.create_engine(self._db_url)
            engine = self._engine
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))

    def close(self) -> None:
        self.stores.close()
        with self._engine_lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None


def _state(request: Request) -> _State:
    state: _State = request.app.state.memstore
    return state


# -- auth ------------------------------------------------------------------------------


class _Denied(Exception):
    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail


_bearer = HTTPBearer(
    auto_error=False, description="An API key from server.api_keys, as a Bearer token."
)
_api_key = APIKeyHeader(
    name="X-API-Key", auto_error=False, description="An API key from server.api_keys."
)


def _key(
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    header: Annotated[str | None, Security(_api_key)],
) -> str:
    key = bearer.credentials if bearer is not None else header
    if not key:
        raise _Denied(
            401, "unauthorized", "an API key is required (Authorization: Bearer or X-API-Key)"
        )
    return key


def _store(
    request: Request,
    namespace: Annotated[
        str, Path(description="The namespace every read and write is confined to.")
    ],
    key: Annotated[str, Depends(_key)],
) -> Iterator[Store]:
    """The namespace's store, leased for the request (the pool never closes it meanwhile)."""
    state = _state(request)
    if not state.settings.server.namespaces_for(key):
        raise _Denied(401, "unauthorized", "unknown API key")
    try:
        check_namespace(namespace)
    except ValueError as exc:
        raise InvalidInput("namespace", str(exc)) from None
    if not state.settings.server.allows(key, namespace):
        raise _Denied(403, "forbidden", f"this API key may not use namespace {namespace!r}")
    with state.stores.lease(namespace) as store:
        yield store


#: Released when the route function returns, before the response is sent.
NamespaceStore = Annotated[Store, Depends(_store, scope="function")]

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorPublic, "description": "Invalid input; `field` names it"},
    401: {"model": ErrorPublic, "description": "No API key, or an unknown one"},
    403: {"model": ErrorPublic, "description": "The key may not use this namespace"},
    413: {"model": ErrorPublic, "description": "Too much evidence, or too large a body"},
    503: {"model": ErrorPublic, "description": "The database is unavailable"},
}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorPublic, "description": "No such row in this namespace"}
}
_NOT_GROUNDED: dict[int | str, dict[str, Any]] = {
    422: {"model": NotGroundedPublic, "description": "Rejected by the grounding gate"}
}

router = APIRouter(prefix=PREFIX, responses=_ERRORS)


# -- facts -----------------------------------------------------------------------------


@router.post(
    "/facts",
    status_code=201,
    tags=["facts"],
    summary="Remember a fact",
    responses={200: {"model": FactPublic, "description": "Already remembered"}, **_NOT_GROUNDED},
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


@router.get("/facts/{fact_id}", tags=["facts"], summary="Get a fact", responses=_NOT_FOUND)
def get_fact(fact_id: str, store: NamespaceStore) -> FactPublic:
    """A fact by id, whatever its status."""
    return store.get_fact(fact_id)


@router.post(
    "/facts/{fact_id}/retract", tags=["facts"], summary="Retract a fact", responses=_NOT_FOUND
)
def retract(fact_id: str, body: RetractRequest, store: NamespaceStore) -> FactPublic:
    """Soft-delete a fact with a reason; it leaves search and graph reads."""
    return store.retract(fact_id, body.reason)


def _eraser(request: Request, key: Annotated[str, Depends(_key)]) -> str:
    """Who erases: the API key, by a short fingerprint (never the key itself); 403 for a
    key that is not in ``server.erase_keys`` (erasing is a right of its own)."""
    if not _state(request).settings.server.may_erase(key):
        raise _Denied(403, "forbidden", ERASE_FORBIDDEN)
    return key_fingerprint(key)


#: Why a key that may use the namespace may still not erase in it.
ERASE_FORBIDDEN = (
    "this API key may not erase: erasing is a separate right; list the key in "
    "server.erase_keys (MEMSTORE_SERVER__ERASE_KEYS) to allow it"
)
_ERASE_ERRORS: dict[int | str, dict[str, Any]] = {
    **_NOT_FOUND,
    403: {
        "model": ErrorPublic,
        "description": "The key may not use this namespace, or may not erase (server.erase_keys)",
    },
}


@router.post(
    "/facts/{fact_id}/erase",
    tags=["facts"],
    summary="Erase a fact for good",
    responses=_ERASE_ERRORS,
)
def erase(
    fact_id: str, body: EraseRequest, store: NamespaceStore, by: Annotated[str, Depends(_eraser)]
) -> ErasurePublic:
    """Remove a fact for good: every version, its history, the evidence nothing else
    cites, and its search-index rows. Answers the tombstone (ids and hashes, no
    content), which keeps the audit chain verifying; ``kept_evidence_ids`` names
    evidence that other facts or rejections still cite. Only keys listed in
    ``server.erase_keys`` may erase (403 ``forbidden`` for the others)."""
    return store.erase(fact_id, body.reason, by=by)


@router.post(
    "/facts/{fact_id}/supersede",
    status_code=201,
    tags=["facts"],
    summary="Correct a fact",
    responses={**_NOT_FOUND, **_NOT_GROUNDED},
)
def supersede(fact_id: str, fact: FactCreate, store: NamespaceStore) -> FactPublic:
    """Replace a fact by a corrected one, gated like a new fact. The old version stays,
    marked ``superseded``; if the correction is rejected (422) it stays as it was."""
    refuse_remote_sources(store.sources, [fact])
    with _param_names({"old_id": "fact_id"}):
        return store.supersede(fact_id, fact)


@router.get(
    "/facts/{fact_id}/history", tags=["facts"], summary="A fact's history", responses=_NOT_FOUND
)
def history(fact_id: str, store: NamespaceStore) -> HistoryPublic:
    """Every version along the fact's supersession chain (oldest first) and every
    verification of those versions (gate passes and re-verifications, oldest first)."""
    versions = store.history(fact_id)
    checks = [v for version in versions for v in store.verifications(version.id)]
    checks.sort(key=lambda v: (v.created_at, v.id))
    return HistoryPublic(versions=versions, verifications=checks)


# -- search and graph ---------------------------------------------------------------------


#: Store argument names -> the query parameters that carry them.
_QUERY_NAMES = {"query": "q", "statuses": "status"}


@contextmanager
def _param_names(names: dict[str, str]) -> Iterator[None]:
    """Name the request parameter, not the Store argument, in InvalidInput errors."""
    try:
        yield
    except InvalidInput as exc:
        head, dot, rest = exc.field.partition(".")
        if head not in names:
            raise
        raise InvalidInput(names[head] + dot + rest, exc.reason) from None


QueryText = Annotated[
    str, Query(min_length=1, max_length=MAX_QUERY_CHARS, description="The query.")
]
K = Annotated[int, Query(ge=1, le=MAX_SEARCH_K, description="How many hits.")]


@router.get("/search", tags=["search"], summary="Search facts", responses=_NOT_FOUND)
def search(
    store: NamespaceStore,
    q: QueryText,
    k: K = 10,
    mode: SearchMode = "hybrid",
    relation: str | None = None,
    entity: Annotated[
        list[str] | None, Query(description="Each hit has every named entity as a member.")
    ] = None,
    status: Annotated[
        list[str] | None,
        Query(
            description="Fact statuses (default: verified, unverified; pending = not yet checked)."
        ),
    ] = None,
    expand: Annotated[
        bool, Query(description="Also return facts one hop away through a hit's entities.")
    ] = False,
    as_of: Annotated[datetime | None, Query(description="Valid at this world time.")] = None,
) -> list[SearchHit]:
    """Facts that best match ``q`` by meaning and keywords, best first."""
    with _param_names(_QUERY_NAMES):
        return store.search(
            q,
            k,
            mode=mode,
            relation=relation,
            entity=entity,
            statuses=status or None,
            expand=expand,
            as_of=as_of,
        )


@router.get("/search/evidence", tags=["search"], summary="Search evidence")
def search_evidence(
    store: NamespaceStore,
    q: QueryText,
    k: K = 10,
    mode: SearchMode = "hybrid",
    source: Annotated[list[str] | None, Query(description="Evidence sources.")] = None,
    current_only: Annotated[
        bool, Query(description="Skip versions a refreshed source replaced.")
    ] = True,
) -> list[EvidenceHit]:
    """Evidence passages that best match ``q``, best first."""
    with _param_names(_QUERY_NAMES):
        return store.search_evidence(q, k, mode=mode, source=source, current_only=current_only)


@router.get(
    "/entities/{name}/neighborhood",
    tags=["search"],
    summary="An entity's neighborhood",
    responses=_NOT_FOUND,
)
def neighborhood(
    name: str,
    store: NamespaceStore,
    hops: Annotated[int, Query(ge=0, le=10, description="Entity-fact-entity steps.")] = 1,
    relation: str | None = None,
) -> NeighborhoodPublic:
    """Active facts and entities within ``hops`` steps of the entity (a name or alias)."""
    with _param_names({"entities": "name"}):
        return store.neighborhood(name, hops, relation=relation)


# -- audit -----------------------------------------------------------------------------


def _filters(
    verdict: Annotated[list[str] | None, Query(description="Verdict names.")] = None,
    since: Annotated[datetime | None, Query(description="Created at or after.")] = None,
    until: Annotated[datetime | None, Query(description="Created before.")] = None,
    text: Annotated[str | None, Query(description="Substring of the statement.")] = None,
    entity: Annotated[str | None, Query(description="A member, by name or alias.")] = None,
    relation: str | None = None,
    source: Annotated[str | None, Query(description="Evidence source.")] = None,
    min_gap: Annotated[float | None, Query(description="Budget gap >= (bits).")] = None,
    max_gap: Annotated[float | None, Query(description="Budget gap <= (bits).")] = None,
) -> dict[str, Any]:
    given = {
        "verdict": verdict,
        "since": since,
        "until": until,
        "text": text,
        "entity": entity,
        "relation": relation,
        "source": source,
        "min_gap": min_gap,
        "max_gap": max_gap,
    }
    return {name: value for name, value in given.items() if value is not None}


Filters = Annotated[dict[str, Any], Depends(_filters)]


@router.get("/rejections", tags=["audit"], summary="List rejected facts")
def list_rejections(
    store: NamespaceStore,
    filters: Filters,
    order_by: Annotated[str, Query(description=f"One of {', '.join(ORDER_BY)}.")] = "created_at",
    descending: bool = True,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[RejectionPublic]:
    """The audit log of facts the gate refused, newest first by default."""
    return store.rejections(
        order_by=order_by, descending=descending, limit=limit, offset=offset, **filters
    )


@router.get("/rejections/counts", tags=["audit"], summary="Count rejected facts")
def count_rejections(
    store: NamespaceStore,
    filters: Filters,
    by: Literal["verdict", "day"] = "verdict",
) -> dict[str, int]:
    """How many rejections match, by verdict or by UTC day (``YYYY-MM-DD``)."""
    return store.count_rejections(by, **filters)


@router.get(
    "/rejections/{rejection_id}", tags=["audit"], summary="Get a rejection", responses=_NOT_FOUND
)
def get_rejection(rejection_id: str, store: NamespaceStore) -> RejectionPublic:
    """One rejection with the evidence it was checked against."""
    return store.get_rejection(rejection_id)


@router.post(
    "/rejections/{rejection_id}/erase",
    tags=["audit"],
    summary="Erase a rejection for good",
    responses=_ERASE_ERRORS,
)
def erase_rejection(
    rejection_id: str,
    body: EraseRequest,
    store: NamespaceStore,
    by: Annotated[str, Depends(_eraser)],
) -> ErasurePublic:
    """Remove a rejection from the audit log for good, with the evidence nothing else
    cites; answers the tombstone that takes its place in the audit chain. Only keys
    listed in ``server.erase_keys`` may erase (403 ``forbidden`` for the others)."""
    return store.erase_rejection(rejection_id, body.reason, by=by)


@router.post("/verify_claim", tags=["gate"], summary="Check a claim against evidence")
def verify_claim(body: ClaimRequest, store: NamespaceStore) -> Verdict:
    """The gate's verdict on the claim (p0, p1, bits, budget gap); nothing is stored."""
    return store.verify_claim(body.claim, body.evidence, body.confidence)


# -- operations --------------------------------------------------------------------------

ops = APIRouter(tags=["operations"])


@ops.get(
    "/health",
    summary="Health check",
    responses={503: {"model": HealthPublic, "description": "The database does not answer"}},
)
def health(request: Request, response: Response) -> HealthPublic:
    """Whether the server and its database answer. Needs no API key."""
    try:
        _state(request).ping_database()
    except Exception as exc:
        log.warning("health check: the database does not answer: %s", type(exc).__name__)
        response.status_code = 503
        return HealthPublic(
            status="unavailable", version=memstore.__version__, database="unavailable"
        )
    return HealthPublic(status="ok", version=memstore.__version__, database="ok")


@ops.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=PlainTextResponse,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Metrics"}},
)
def metrics(request: Request) -> Response:
    """The gate's metrics (claims, verdicts, latency, cache) and HTTP requests by method,
    route and status, in the Prometheus text format. Needs no API key."""
    state = _state(request)
    parts = []
    gate = state.settings.gate()
    if gate is not None:
        parts.append(gate.metrics.prometheus())
    parts.append(prometheus_text(request.app.state.http_metrics.registry).decode("utf-8"))
    return Response("".join(parts), media_type=CONTENT_TYPE_LATEST)


# -- HTTP metrics ------------------------------------------------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _HTTPMetrics:
    """Request counts and latency by method, route template and status (own registry)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "memstore_http_requests",
            "HTTP requests by method, route template and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "memstore_http_request_duration_seconds",
            "HTTP request latency by method and route template",
            ["method", "route"],
            registry=self.registry,
        )


class _MetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: _HTTPMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        start = time.perf_counter()

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            template = getattr(route, "path_format", None) or UNMATCHED
            method = str(scope.get("method", ""))
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.latency.labels(method, template).observe(time.perf_counter() - start)


class BodyLimit:
    """Answers 413 (field ``body``) to a request body over ``limit`` bytes, unread."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reason = f"is larger than {self.limit} bytes (server.max_body_bytes)"
        length = dict(scope.get("headers", [])).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            response = _error(413, "too_large", f"body: {reason}", field="body", reason=reason)
            await response(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:  # a chunked body with no Content-Length
                    raise HTTPException(413, f"body: {reason}")
            return message

        await self.app(scope, counted, send)


# -- errors ----------------------------------------------------------------------------


def _error(status: int, error: str, detail: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail, **extra}, status_code=status)


def _field(loc: tuple[int | str, ...]) -> str:
    parts = list(loc)
    where = str(parts.pop(0)) if parts and parts[0] in _LOCATIONS else "body"
    return ".".join(str(p) for p in parts) or where


def _reason(message: str) -> str:
    return message.removeprefix("Value error, ")


async def _on_invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        if err.get("type") == "json_invalid":
            problems.append(("body", f"is not valid JSON ({err.get('ctx', {}).get('error')})"))
        else:
            problems.append((_field(loc), _reason(str(err.get("msg", "is invalid")))))
    field, reason = problems[0] if problems else ("body", "is invalid")
    detail = "; ".join(f"{f}: {r}" for f, r in problems)
    return _error(400, "invalid_input", detail, field=field, reason=reason)


async def _on_invalid_input(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, InvalidInput)
    if isinstance(exc, TooLarge):
        return _error(413, "too_large", str(exc), field=exc.field, reason=exc.reason)
    return _error(400, "invalid_input", str(exc), field=exc.field, reason=exc.reason)


async def _on_not_found(request: Request, exc: Exception) -> JSONResponse:
    return _error(404, "not_found", str(exc))


async def _on_not_grounded(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ErrFactNotGrounded)
    rejection = exc.rejection
    why = f": {rejection.reason}" if rejection.reason else ""
    detail = (
        f"the grounding gate rejected the fact ({rejection.verdict}{why}); nothing was "
        "stored. Cite evidence that states it. The audit log keeps it: GET "
        f"/v1/namespaces/{rejection.namespace}/rejections/{rejection.id}"
    )
    body = NotGroundedPublic(
        verdict=rejection.verdict, reason=rejection.reason, detail=detail, rejection=rejection
    )
    return JSONResponse(jsonable_encoder(body), status_code=422)


async def _on_storage_error(request: Request, exc: Exception) -> JSONResponse:
    # The message may hold a database URL with its password: log it, don't send it.
    log.error("storage error on %s %s: %s", request.method, request.url.path, exc)
    return _error(503, "unavailable", "the database is unavailable; try again later")


async def _on_memstore_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed: %s", request.method, request.url.path, exc)
    return _error(503, "unavailable", str(exc))


async def _on_denied(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, _Denied)
    response = _error(exc.status, exc.error, exc.detail)
    if exc.status == 401:
        response.headers["WWW-Authenticate"] = "Bearer"
    return response


def _unparsable(cause: BaseException | None) -> str:
    """Why FastAPI could not read a request body (it raises 400 from the cause)."""
    if isinstance(cause, UnicodeError):
        return "is not valid UTF-8 JSON"
    if isinstance(cause, RecursionError):
        return "is not valid JSON (nested too deeply)"
    return "is not valid JSON"


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400:  # a body FastAPI could not parse: bad UTF-8, too deep, ...
        reason = _unparsable(exc.__cause__)
        return _error(400, "invalid_input", f"body: {reason}", field="body", reason=reason)
    if exc.status_code == 413:  # BodyLimit, on a chunked body
        reason = str(exc.detail).removeprefix("body: ")
        return _error(413, "too_large", str(exc.detail), field="body", reason=reason)
    codes = {404: "not_found", 405: "method_not_allowed"}
    response = _error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    # The server logs the traceback (Starlette re-raises after this response is sent).
    log.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    return _error(500, "internal_error", "internal server error; the server log has the details")


# -- the app ----------------------------------------------------------------------------


def create_app(settings: Settings) -> FastAPI:
    """The REST API over the store ``settings`` describe.

    Raises ConfigError when ``server.api_keys`` is empty: no key, no access.
    """
    if not settings.server.api_keys:
        raise ConfigError("server.api_keys", _KEYS_HINT)
    state = _State(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(settings.gate)  # load the verifier before serving
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
        generate_unique_id_function=_operation_id,
        docs_url=None,  # served from local files by _serve_docs, not from a CDN
        redoc_url=None,
    )
    app.state.memstore = state
    app.state.stores = state.stores
    app.state.http_metrics = _HTTPMetrics()
    app.include_router(router)
    app.include_router(ops)
    _serve_docs(app)
    app.add_middleware(BodyLimit, limit=settings.server.max_body_bytes)
    app.add_middleware(_MetricsMiddleware, metrics=app.state.http_metrics)
    handlers: list[tuple[type[Exception], Any]] = [
        (RequestValidationError, _on_invalid_request),
        (InvalidInput, _on_invalid_input),
        (NotFound, _on_not_found),
        (ErrFactNotGrounded, _on_not_grounded),
        (StorageError, _on_storage_error),
        (MemstoreError, _on_memstore_error),
        (_Denied, _on_denied),
        (StarletteHTTPException, _on_http_error),
        (Exception, _on_unexpected),
    ]
    for exc_class, handler in handlers:
        app.add_exception_handler(exc_class, handler)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _openapi_schema(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def _operation_id(route: APIRoute) -> str:
    return route.name


#: Where the API docs' scripts, stylesheet and icon are served (Swagger UI 5, ReDoc 2).
DOCS_ASSETS = "/docs-assets"


def _serve_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc`` from the files of the ``fastapi-offline``
    package, so that they work offline: the pages load nothing from another host."""
    from fastapi.staticfiles import StaticFiles

    assets = resources.files("fastapi_offline") / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(assets)), name="docs-assets")

    def local(request: Request, name: str) -> str:
        return f"{request.scope.get('root_path', '')}{DOCS_ASSETS}/{name}"

    async def swagger_ui(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=f"{request.scope.get('root_path', '')}{app.openapi_url}",
            title=f"{app.title} - API docs",
            swagger_js_url=local(request, "swagger-ui-bundle.js"),
            swagger_css_url=local(request, "swagger-ui.css"),
            swagger_favicon_url=local(request, "favicon.png"),
            oauth2_redirect_url=None,
            swagger_ui_parameters={"validatorUrl": None},  # no badge from validator.swagger.io
        )

    async def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(
            openapi_url=f"{request.scope.get('root_path', '')}{app.openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=local(request, "redoc.standalone.js"),
            redoc_favicon_url=local(request, "favicon.png"),
            with_google_fonts=False,
        )

    # Plain routes (not API routes): they stay out of the OpenAPI schema.
    app.add_route("/docs", swagger_ui, include_in_schema=False)
    app.add_route("/redoc", redoc, include_in_schema=False)


def _openapi_schema(app: FastAPI) -> dict[str, Any]:
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


def run(settings: Settings, host: str | None = None, port: int | None = None) -> None:
    """Serve the REST API with uvicorn on ``settings.server`` (or ``host``/``port``)."""
    import uvicorn

    app = create_app(settings)
    host = host or settings.server.host
    port = settings.server.port if port is None else port
    config = uvicorn.Config(app, host=host, port=port)
    server = uvicorn.Server(config)  # the config has set up uvicorn's loggers by now
    shown = f"[{host}]" if ":" in host else host
    logging.getLogger("uvicorn.error").info(
        "memstore REST API on http://%s:%d (API docs: http://%s:%d/docs)", shown, port, shown, port
    )
    server.run()
