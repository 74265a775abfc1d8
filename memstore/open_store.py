"""``memstore.open()``: open (creating and migrating if needed) one namespace's store."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from gate import Gate, GatePolicy
from memstore.admission import WriteHook
from memstore.duplicates import DEFAULT_NEAR_DUPLICATE
from memstore.embeddings import Embedder
from memstore.limits import Limits
from memstore.source_policy import SourcePolicy
from memstore.store import DEFAULT_NAMESPACE, Store
from memstore.vectors import DEFAULT_VECTOR_INDEX_AT

__all__ = ["open"]


def open(
    path_or_url: str | Path,
    namespace: str = DEFAULT_NAMESPACE,
    *,
    gate: Gate | str | None = None,
    policy: GatePolicy | None = None,
    hook: WriteHook | None = None,
    recheck_after: timedelta | None = None,
    retry_after: timedelta | None = None,
    index: str | Path | bool = True,
    embedder: Embedder | None = None,
    near_duplicate: float | None = DEFAULT_NEAR_DUPLICATE,
    vector_index_at: int = DEFAULT_VECTOR_INDEX_AT,
    sources: SourcePolicy | Mapping[str, Any] | None = None,
    limits: Limits | None = None,
) -> Store:
    """Open (creating and migrating if needed) a store confined to ``namespace``; the
    options are ``Store``'s."""
    return Store(**locals())  # every argument, as given
