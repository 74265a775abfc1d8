"""What the fronts (the CLI, the REST API, the MCP server) pass to the Store and show
the same way, defined once: the names of the rejection, search and listing filters (the
fields of the Store's own input models), the filters a front was given, metadata from
``KEY=VALUE`` items, and a fact's history.
``memstore.surface`` maps every Store method to its name on each front."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from memstore import inputs
from memstore.errors import InvalidInput
from memstore.metadata import Metadata
from memstore.schemas import (
    DEFAULT_READ_LIMIT,
    EvidenceQuery,
    FactListQuery,
    FactPublic,
    RejectionFilter,
    SearchQuery,
    VerificationPublic,
)

if TYPE_CHECKING:
    from memstore.store import Store

#: ``Store.rejections``, ``count_rejections`` and ``export_rejections`` filter by these.
REJECTION_FILTERS: tuple[str, ...] = tuple(RejectionFilter.model_fields)
#: What ``Store.search`` and ``search_evidence`` take besides the query, ``k`` and the page.
SEARCH_FILTERS: tuple[str, ...] = tuple(
    f for f in SearchQuery.model_fields if f not in ("query", "k", "offset")
)
EVIDENCE_FILTERS: tuple[str, ...] = tuple(
    f for f in EvidenceQuery.model_fields if f not in ("query", "k")
)
#: What ``Store.list_facts`` filters by (all it takes but the page: limit and cursor).
LIST_FILTERS: tuple[str, ...] = tuple(
    f for f in FactListQuery.model_fields if f not in ("limit", "cursor")
)
#: What ``Store.recall`` takes besides the query, ``k`` and its token budget.
RECALL_FILTERS: tuple[str, ...] = ("entity", "statuses", "as_of", "min_score")


def rejection_where(**given: Any) -> dict[str, Any]:
    """The rejection filters a front was given, for ``Store.rejections(**where)``: unset
    ones (None, an empty list) left out. A name that is no filter is a TypeError."""
    unknown = sorted(set(given) - set(REJECTION_FILTERS))
    if unknown:
        raise TypeError(f"not rejection filters: {', '.join(unknown)}")
    return {name: value for name, value in given.items() if value is not None and value != []}


def metadata_items(items: Sequence[str] | None, field: str = "meta") -> Metadata | None:
    """Metadata from ``KEY=TEXT`` and ``KEY:=JSON`` items, as HTTPie spells them (the CLI's
    ``--meta`` and the REST API's ``meta``): ``user=alice`` is the text "alice",
    ``priority:=2`` the number 2, ``pinned:=true`` true, ``team:=null`` null. None for no
    items; InvalidInput naming ``field`` for a bad one."""
    if not items:
        return None
    found: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or key in ("", ":"):
            raise InvalidInput(field, f"{item!r} is not KEY=TEXT or KEY:=JSON")
        value: Any = text
        if key.endswith(":"):
            key = key[:-1]
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                reason = f"{item!r}: {text!r} is not JSON (a number, true, false or null)"
                raise InvalidInput(field, reason) from None
        if key in found:
            raise InvalidInput(field, f"{key!r} is given twice")
        found[key] = value
    return inputs.metadata(field, found)


class HistoryPublic(BaseModel):
    """One page of a fact's versions (oldest first) and the verifications of them;
    ``next_cursor`` asks for the next page (None: this is the last)."""

    versions: list[FactPublic]
    verifications: list[VerificationPublic]
    next_cursor: str | None = None


def fact_history(
    store: Store, fact_id: str, limit: int = DEFAULT_READ_LIMIT, cursor: str | None = None
) -> HistoryPublic:
    """A page of the versions along the fact's supersession chain (oldest first,
    ``Store.history``) and every verification of those versions (gate passes and
    re-verifications, oldest first)."""
    versions = store.history(fact_id, limit=limit, cursor=cursor)
    checks = [v for version in versions for v in store.verifications(version.id)]
    checks.sort(key=lambda v: (v.created_at, v.id))
    return HistoryPublic(versions=versions, verifications=checks, next_cursor=versions.next_cursor)


def given_filters(names: Sequence[str], arguments: dict[str, Any]) -> dict[str, Any]:
    """The filters among a front's ``arguments`` (e.g. a tool's ``locals()``), for the
    Store call that takes ``names`` (``SEARCH_FILTERS``, ``LIST_FILTERS``, ...): each
    one the front offers, under the Store's name, as given (None included)."""
    return {name: arguments[name] for name in names if name in arguments}
