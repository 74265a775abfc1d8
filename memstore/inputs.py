"""Input checks of the Store's public methods: each turns bad input into InvalidInput.

Nothing here touches the database; every check names the field it rejects.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from memstore.defaults import MAX_BATCH as MAX_BATCH
from memstore.defaults import (
    MAX_HOPS,
    MAX_REVERIFY_LIMIT,
    REJECTION_EXPORT_FORMATS,
    REJECTION_ORDER_BY,
    REJECTIONS_MAX_PAGE,
)
from memstore.defaults import MAX_RECALL_TOKENS as MAX_RECALL_TOKENS
from memstore.errors import InvalidInput
from memstore.index.embeddings import Embedder
from memstore.index.object_store import ObjectStore, is_s3
from memstore.limits import Limits
from memstore.metadata import Metadata
from memstore.metadata import check as check_metadata
from memstore.names import check_namespace
from memstore.reverify.source_policy import SourcePolicy
from memstore.schemas import (
    MAX_CURSOR_CHARS,
    MAX_LIST_LIMIT,
    MAX_NEIGHBORHOOD_FACTS,
    MAX_SEARCH_K,
    ClaimCheck,
    EvidenceQuery,
    FactCreate,
    FactListQuery,
    RejectionFilter,
    SearchQuery,
    to_utc,
)
from memstore.storage import cursors, db
from memstore.storage.scope import required_name as required_name
from memstore.storage.scope import required_text as required_text
from memstore.storage.tables import ACTIVE_STATUSES, FactStatus

M = TypeVar("M", bound=BaseModel)

#: The most facts (or claims) one call may write.


def parse(
    model: type[M],
    value: M | Mapping[str, Any] | None,
    fields: dict[str, Any],
    *,
    prefix: str = "",
) -> M:
    """Build an input model from an instance, a mapping or keyword fields."""
    if value is not None and fields:
        raise InvalidInput(prefix, f"pass a {model.__name__} or keyword fields, not both")
    if isinstance(value, model):
        return value
    data = fields if value is None else value
    if not isinstance(data, Mapping):
        raise InvalidInput(
            prefix, f"expected a {model.__name__} or a mapping, got {type(data).__name__}"
        )
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise InvalidInput.from_validation(exc, prefix) from None


def strings(field: str, value: object, what: str) -> list[str]:
    """``value`` as a list of strings, read once (a generator is read a single time)."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput(field, f"must be a list of {what}")
    items = list(value)
    if not all(isinstance(i, str) for i in items):
        raise InvalidInput(field, f"must be a list of {what}")
    return items


def integer(field: str, value: object, low: int, high: int, shown_high: str = "") -> int:
    """A whole number (not a bool) from ``low`` to ``high``, both included."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(field, f"must be an integer from {low} to {shown_high or high}")
    return value


def flag(field: str, value: object) -> bool:
    """True or False, nothing else."""
    if not isinstance(value, bool):
        raise InvalidInput(field, "must be True or False")
    return value


def one_of(field: str, value: object, allowed: Sequence[str]) -> str:
    """One of the ``allowed`` names."""
    if not isinstance(value, str) or value not in allowed:
        raise InvalidInput(field, f"{value!r} is not one of {list(allowed)}")
    return value


def positive(field: str, value: timedelta) -> timedelta:
    """A positive ``datetime.timedelta``."""
    if not isinstance(value, timedelta) or value <= timedelta(0):
        raise InvalidInput(field, "must be a positive datetime.timedelta")
    return value


def positive_fields(**values: timedelta | None) -> dict[str, timedelta]:
    """The given (not None) durations by name, each checked by ``positive``."""
    return {name: positive(name, value) for name, value in values.items() if value is not None}


def as_utc(when: datetime | None) -> datetime | None:
    """An ``as_of`` moment in UTC (a naive datetime is taken as UTC)."""
    if when is not None and not isinstance(when, datetime):
        raise InvalidInput("as_of", f"must be a datetime, got {type(when).__name__}")
    try:
        return to_utc(when)
    except ValueError as exc:  # out of datetime's range once in UTC
        raise InvalidInput("as_of", str(exc)) from None


def fact_statuses(statuses: Collection[str]) -> list[str]:
    """Fact status names (one or a list), each a ``FactStatus``."""
    if isinstance(statuses, str):
        statuses = [statuses]
    wanted = strings("statuses", statuses, "fact statuses")
    valid = {s.value for s in FactStatus}
    for s in wanted:
        if s not in valid:
            raise InvalidInput("statuses", f"{s!r} is not one of {sorted(valid)}")
    return wanted


def read_statuses(statuses: Collection[str] | None, as_of: datetime | None) -> list[str]:
    """The statuses a read asked for; by default the active ones, and for an ``as_of``
    read also superseded facts, which held in world time until their correction."""
    if statuses is not None:
        return fact_statuses(statuses)
    history = ACTIVE_STATUSES | {FactStatus.SUPERSEDED}
    return fact_statuses(history if as_of is not None else ACTIVE_STATUSES)


def similarity_threshold(value: float | None) -> float | None:
    """A near-duplicate threshold: a cosine similarity in (0, 1], or None for none."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput("near_duplicate", "must be a number from 0 to 1, or None")
    if not 0 < value <= 1:
        raise InvalidInput("near_duplicate", "must be more than 0 and at most 1, or None")
    return float(value)


def source_policy(sources: SourcePolicy | Mapping[str, Any] | None) -> SourcePolicy:
    """The fetch policy of a Store: given, built from a mapping, or unrestricted."""
    if sources is None:
        return SourcePolicy.unrestricted()
    return _settings(SourcePolicy, sources, "sources")


def object_store(
    value: ObjectStore | Mapping[str, Any] | None, index_uri: str | None
) -> ObjectStore | None:
    """How a Store reaches its ``s3://`` index: given, built from a mapping, or None
    (LanceDB's own sources, such as the ``AWS_*`` variables)."""
    if value is None:
        return None
    settings = _settings(ObjectStore, value, "object_store")
    if index_uri is not None and not is_s3(index_uri):
        raise InvalidInput(
            "object_store", f"applies to an s3:// index; this store's index is at {index_uri}"
        )
    return settings


def _settings(model: type[M], value: object, field: str) -> M:
    """``value`` as a ``model``: the instance itself, or built from a mapping."""
    if isinstance(value, model):
        return value
    if not isinstance(value, Mapping):
        raise InvalidInput(field, f"must be a {model.__name__} or a mapping of its fields")
    try:
        return model.model_validate(dict(value))
    except ValidationError as exc:
        raise InvalidInput.from_validation(exc, field) from None


def namespace(value: str) -> str:
    """A namespace name (``memstore.names.check_namespace``)."""
    try:
        return check_namespace(value)
    except ValueError as exc:
        raise InvalidInput("namespace", str(exc)) from None


def limits(value: Limits | None) -> Limits:
    """A store's per-call limits: given, or the defaults."""
    if value is not None and not isinstance(value, Limits):
        raise InvalidInput("limits", "must be a memstore.limits.Limits")
    return value or Limits()


def index_options(vector_index_at: int, embedder: Embedder | None) -> None:
    """``open()``'s search-index options: a row count and an ``Embedder`` (or None)."""
    if isinstance(vector_index_at, bool) or not isinstance(vector_index_at, int):
        raise InvalidInput("vector_index_at", "must be a whole number of rows")
    if embedder is not None and not isinstance(embedder, Embedder):
        raise InvalidInput("embedder", "must have name, dimensions and embed(texts)")


def fact_list(facts: object) -> list[Any]:
    """The items of ``add_facts``: a list (not one fact), at most ``MAX_BATCH`` long."""
    if isinstance(facts, str | bytes | Mapping | FactCreate) or not isinstance(facts, Iterable):
        raise InvalidInput("facts", "must be a list of facts")
    items = list(facts)
    if len(items) > MAX_BATCH:
        raise InvalidInput("facts", f"at most {MAX_BATCH} facts per call, got {len(items)}")
    return items


def remember_inputs(evidence: object, members: object) -> Sequence[Any]:
    """``remember``'s evidence (one text or a list; returned as a list) and members
    (a list, or a function of a claim)."""
    if isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, Sequence):
        raise InvalidInput("evidence", "must be a list of evidence texts")
    if not callable(members) and (
        isinstance(members, str | bytes | Mapping) or not isinstance(members, Sequence)
    ):
        raise InvalidInput("members", "must be a list of members, or a function of a claim")
    return evidence


def entity_names(entities: object, hops: object, max_facts: object) -> list[str]:
    """The seed names of a neighborhood (one name or a list), its ``hops`` and how many
    facts its walk may keep (``max_facts``)."""
    integer("hops", hops, 0, MAX_HOPS)
    integer("max_facts", max_facts, 1, MAX_NEIGHBORHOOD_FACTS)
    names = [entities] if isinstance(entities, str) else entities
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise InvalidInput("entities", "must be an entity name or a list of names")
    return list(names)


def read_page(limit: object, cursor: object) -> cursors.Page:
    """The page of a bounded read (``facts_about``, ``history``, ``neighborhood``): at
    most ``limit`` facts (1 to ``MAX_LIST_LIMIT``) after ``cursor`` (a page's
    ``next_cursor``, or None)."""
    size = integer("limit", limit, 1, MAX_LIST_LIMIT)
    if cursor is not None and (
        not isinstance(cursor, str) or not 0 < len(cursor) <= MAX_CURSOR_CHARS
    ):
        raise InvalidInput(
            "cursor", f"must be a page's next_cursor (1 to {MAX_CURSOR_CHARS} characters), or None"
        )
    return cursors.Page(size, cursor)


def rejection_page(
    order_by: str, descending: object, limit: object, offset: object, cursor: object = None
) -> None:
    """The ordering and paging of a ``rejections()`` read: an ``offset`` or a ``cursor``."""
    if order_by not in REJECTION_ORDER_BY:
        raise InvalidInput("order_by", f"{order_by!r} is not one of {list(REJECTION_ORDER_BY)}")
    flag("descending", descending)
    integer("limit", limit, 1, REJECTIONS_MAX_PAGE)
    integer("offset", offset, 0, 2**63 - 1, "2**63 - 1")
    read_page(1, cursor)
    if cursor is not None and offset:
        raise InvalidInput("offset", "give an offset or a cursor, not both")


def chain_span(span: object) -> tuple[int, int] | None:
    """A range of audit chain positions (first, last), both from 1, first <= last."""
    if span is None:
        return None
    if not isinstance(span, tuple | list) or len(span) != 2:
        raise InvalidInput("span", "must be (first, last) chain positions, or None")
    first = integer("span", span[0], 1, 2**63 - 1, "2**63 - 1")
    last = integer("span", span[1], first, 2**63 - 1, "2**63 - 1")
    return first, last


def export_format(dest: object, format: str | None) -> str:
    """Where an export goes (a path or an open text file) and its format: given, or
    from the path's suffix."""
    if not isinstance(dest, str | Path) and not callable(getattr(dest, "write", None)):
        raise InvalidInput("dest", "must be a file path or an open text file")
    if format is None and isinstance(dest, str | Path):
        format = Path(dest).suffix.lstrip(".").lower()
    if format not in REJECTION_EXPORT_FORMATS:
        raise InvalidInput("format", f"{format!r} is not one of {list(REJECTION_EXPORT_FORMATS)}")
    return format


def reverify_options(limit: object, batch: object, lease: timedelta, fetch_timeout: object) -> None:
    """The size, lease and fetch time limit of one ``reverify()`` run."""
    integer("limit", limit, 1, MAX_REVERIFY_LIMIT)
    integer("batch", batch, 1, db.IN_LIST_CHUNK)
    positive("lease", lease)
    if isinstance(fetch_timeout, bool) or not isinstance(fetch_timeout, int | float):
        raise InvalidInput("fetch_timeout", "must be a number of seconds")
    if not 0 < fetch_timeout <= 600:
        raise InvalidInput("fetch_timeout", "must be more than 0 and at most 600 seconds")


def search_query(
    query: str,
    k: int,
    mode: str,
    relation: str | None,
    entity: str | Sequence[str] | None,
    statuses: Collection[str] | None,
    as_of: datetime | None,
    recorded_after: datetime | None,
    recorded_before: datetime | None,
    expand: bool,
    min_score: float | None,
    metadata: Mapping[str, Any] | None = None,
    offset: int = 0,
) -> SearchQuery:
    """A checked fact search (``Store.search``'s arguments)."""
    fields = {
        "metadata": metadata,
        "query": query,
        "k": k,
        "mode": mode,
        "relation": relation,
        "entity": [] if entity is None else entity,
        "statuses": statuses,
        "as_of": as_of,
        "recorded_after": recorded_after,
        "recorded_before": recorded_before,
        "expand": expand,
        "min_score": min_score,
        "offset": offset,
    }
    q = parse(SearchQuery, None, fields)
    if q.offset + q.k > MAX_SEARCH_K:
        raise InvalidInput("offset", f"offset + k may be at most {MAX_SEARCH_K}")
    return q


def recall_query(
    query: str,
    budget_tokens: int,
    k: int,
    entity: str | Sequence[str] | None,
    statuses: Collection[str] | None,
    as_of: datetime | None,
    min_score: float | None,
) -> tuple[SearchQuery, int]:
    """A checked recall (``Store.recall``'s arguments): its search and its token budget."""
    budget = integer("budget_tokens", budget_tokens, 1, MAX_RECALL_TOKENS, "100,000")
    q = search_query(
        query, k, "hybrid", None, entity, statuses, as_of, None, None, False, min_score
    )
    return q, budget


def evidence_query(
    query: str,
    k: int,
    mode: str,
    source: str | Sequence[str] | None,
    current_only: bool,
    recorded_after: datetime | None,
    recorded_before: datetime | None,
    min_score: float | None,
) -> EvidenceQuery:
    """A checked evidence search (``Store.search_evidence``'s arguments)."""
    fields = {
        "query": query,
        "k": k,
        "mode": mode,
        "source": [] if source is None else source,
        "current_only": current_only,
        "recorded_after": recorded_after,
        "recorded_before": recorded_before,
        "min_score": min_score,
    }
    return parse(EvidenceQuery, None, fields)


def reason_and_author(reason: object, by: object) -> tuple[str, str | None]:
    """An erase's ``reason`` (required) and ``by`` (who asked; optional)."""
    reason = required_text("reason", reason)
    return reason, None if by is None else required_text("by", by)


def call_options(method: Callable[..., Any], options: Mapping[str, Any]) -> None:
    """``options`` are keyword arguments that ``method`` takes."""
    try:
        inspect.signature(method).bind(**options)
    except TypeError as exc:
        name = getattr(method, "__qualname__", "the method")
        raise InvalidInput("options", f"{exc}; see {name}() for the options") from None


def rejection_filter(where: dict[str, Any]) -> RejectionFilter:
    """Checked rejection filters (the fields of ``RejectionFilter``)."""
    return parse(RejectionFilter, None, where)


def claim_check(claim: object, evidence: object, confidence: object) -> ClaimCheck:
    """A checked ``verify_claim`` call."""
    return parse(ClaimCheck, None, {"claim": claim, "evidence": evidence, "confidence": confidence})


def metadata(field: str, value: object) -> Metadata:
    """A fact's metadata, or a metadata filter (``memstore.metadata``; None: none)."""
    try:
        return check_metadata(value)
    except ValueError as exc:
        raise InvalidInput(field, str(exc)) from None


def fact_listing(
    namespace: str, fields: dict[str, Any]
) -> tuple[FactListQuery, str, cursors.Position | None]:
    """A checked ``Store.list_facts`` call (its arguments by name), the digest that ties
    its cursors to it, and where its cursor says the page starts (``memstore.storage.cursors``);
    a cursor of another listing, or a damaged one, is InvalidInput on ``cursor``."""
    fields = {**fields, "entity": [] if fields.get("entity") is None else fields["entity"]}
    q = parse(FactListQuery, None, fields)
    read = cursors.listing(namespace, q.model_dump(mode="json", include=cursors.LISTING))
    return q, read, None if q.cursor is None else cursors.decode(q.cursor, read)
