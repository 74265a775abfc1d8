"""Opening a store: the parts a ``Store`` hands its work to, wired to one engine and
namespace, and the open sequence (migrate the database, open the search index and
apply what an interrupted writer left queued for this namespace, refresh SQLite's
planner statistics if stale; no fact is read)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Protocol

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from memstore.errors import StorageError
from memstore.index.embeddings import Embedder, MiniLM
from memstore.index.handle import IndexHandle
from memstore.index.object_store import ObjectStore
from memstore.limits import Limits
from memstore.read.graph import GraphView
from memstore.reverify.namespace import Reverification
from memstore.reverify.source_policy import SourcePolicy
from memstore.storage import db
from memstore.storage.scope import Scope
from memstore.storage.sqlite_log import ErasedTextLog
from memstore.write.forgetting import Forgetting
from memstore.write.path import WritePath


class Settings(Protocol):
    """A store's checked settings (the ``Store`` itself), read once here."""

    namespace: str
    url: str
    data_dir: Path | None
    index_uri: str | None
    object_store: ObjectStore | None
    limits: Limits
    sources: SourcePolicy
    near_duplicate: float | None
    #: ``inline``, ``background`` or ``queued`` (``Store``'s ``index_writes``).
    index_writes: str


@dataclass
class Parts:
    """A store's parts, sharing one scope (and so one engine and namespace)."""

    scope: Scope
    graph: GraphView
    index: IndexHandle
    reverification: Reverification
    writes: WritePath
    forgetting: Forgetting
    log: ErasedTextLog


def open_parts(
    settings: Settings,
    override: dict[str, timedelta],
    embedder: Embedder | None,
    vector_index_at: int,
    replay_notice_at: int,
) -> Parts:
    """Wire the parts to a new engine and open them; ``override`` goes on top of the
    stored re-verification policy, ``embedder`` None is the packaged MiniLM. A failure
    disposes the engine and raises StorageError."""
    engine = db.create_engine(settings.url)
    scope = Scope(settings.namespace, engine)
    graph = GraphView(scope)
    index = IndexHandle(scope, settings.index_uri, settings.object_store)
    index.writes = settings.index_writes
    rechecks = Reverification(scope, index, settings.sources, override)
    writes = WritePath(scope, index, settings.limits, settings.near_duplicate, rechecks.policy_in)
    log = ErasedTextLog(engine, settings.namespace)
    parts = Parts(scope, graph, index, rechecks, writes, Forgetting(scope, index, log), log)
    try:
        db.upgrade(engine)
    except SQLAlchemyError as exc:
        engine.dispose()
        raise StorageError(f"cannot open store at {settings.url}: {exc}") from exc
    scope.statistics.refresh()
    # Into advice a REST or MCP client may read: a database URL without its password.
    where = settings.data_dir or sa.make_url(settings.url).render_as_string(hide_password=True)
    embedder = embedder or MiniLM()
    try:
        index.open(embedder, vector_index_at, where)
    except StorageError:
        engine.dispose()
        raise
    # With an applier (background, queued), what is queued is its work, not the open's.
    if index.problem is None and settings.index_writes == "inline":
        index.replay_queued(replay_notice_at)
    return parts
