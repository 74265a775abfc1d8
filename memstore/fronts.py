"""What the fronts (the CLI, the REST API, the MCP server) pass to the Store and show
the same way, defined once: the names of the rejection and search filters (the fields
of the Store's own input models), the filters a front was given, and a fact's history.
``memstore.surface`` maps every Store method to its name on each front."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from memstore.schemas import (
    EvidenceQuery,
    FactPublic,
    RejectionFilter,
    SearchQuery,
    VerificationPublic,
)

if TYPE_CHECKING:
    from memstore.store import Store

#: ``Store.rejections``, ``count_rejections`` and ``export_rejections`` filter by these.
REJECTION_FILTERS: tuple[str, ...] = tuple(RejectionFilter.model_fields)
#: What ``Store.search`` and ``search_evidence`` take besides the query and ``k``.
SEARCH_FILTERS: tuple[str, ...] = tuple(
    f for f in SearchQuery.model_fields if f not in ("query", "k")
)
EVIDENCE_FILTERS: tuple[str, ...] = tuple(
    f for f in EvidenceQuery.model_fields if f not in ("query", "k")
)


def rejection_where(**given: Any) -> dict[str, Any]:
    """The rejection filters a front was given, for ``Store.rejections(**where)``: unset
    ones (None, an empty list) left out. A name that is no filter is a TypeError."""
    unknown = sorted(set(given) - set(REJECTION_FILTERS))
    if unknown:
        raise TypeError(f"not rejection filters: {', '.join(unknown)}")
    return {name: value for name, value in given.items() if value is not None and value != []}


class HistoryPublic(BaseModel):
    """Every version of a fact (oldest first) and the verifications of all of them."""

    versions: list[FactPublic]
    verifications: list[VerificationPublic]


def fact_history(store: Store, fact_id: str) -> HistoryPublic:
    """Every version along the fact's supersession chain (oldest first) and every
    verification of those versions (gate passes and re-verifications, oldest first)."""
    versions = store.history(fact_id)
    checks = [v for version in versions for v in store.verifications(version.id)]
    checks.sort(key=lambda v: (v.created_at, v.id))
    return HistoryPublic(versions=versions, verifications=checks)
