"""AsyncStore: the Store's API for asyncio agents.

Every call runs the blocking Store method on a worker thread
(``asyncio.to_thread``), so the event loop keeps serving other tasks while the
gate's model or the database works. Concurrent calls are safe: the Store is
thread-safe, and writes keep their all-or-nothing guarantees.

>>> async with await AsyncStore.open("./memdata", "user:alice") as store:
...     fact = await store.add_fact(statement=..., members=[...], evidence=[...])
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from memstore.store import DEFAULT_NAMESPACE, Store

P = ParamSpec("P")
R = TypeVar("R")


def _threaded(
    method: Callable[Concatenate[Store, P], R],
) -> Callable[Concatenate[AsyncStore, P], Coroutine[Any, Any, R]]:
    """The Store method as a coroutine method that runs it on a worker thread."""

    @functools.wraps(method)
    async def call(self: AsyncStore, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    return call


class AsyncStore:
    """A Store for asyncio code: the same methods, awaited. ``sync`` is the Store inside."""

    def __init__(self, store: Store) -> None:
        if not isinstance(store, Store):
            raise TypeError(f"AsyncStore wraps a memstore.Store, got {type(store).__name__}")
        self.sync = store

    @classmethod
    async def open(
        cls, path_or_url: str | Path, namespace: str = DEFAULT_NAMESPACE, **options: Any
    ) -> AsyncStore:
        """Open a store off the event loop; takes ``memstore.open``'s arguments."""
        return cls(await asyncio.to_thread(Store, path_or_url, namespace, **options))

    @property
    def namespace(self) -> str:
        return self.sync.namespace

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"<AsyncStore {self.sync.url} namespace={self.namespace!r}>"

    # writes
    add_fact = _threaded(Store.add_fact)
    add_facts = _threaded(Store.add_facts)
    check_facts = _threaded(Store.check_facts)
    remember = _threaded(Store.remember)
    remember_conversation = _threaded(Store.remember_conversation)
    supersede = _threaded(Store.supersede)
    retract = _threaded(Store.retract)
    review = _threaded(Store.review)
    corroborate = _threaded(Store.corroborate)
    erase = _threaded(Store.erase)
    erase_rejection = _threaded(Store.erase_rejection)
    add_alias = _threaded(Store.add_alias)
    # reads
    get_fact = _threaded(Store.get_fact)
    facts_about = _threaded(Store.facts_about)
    list_facts = _threaded(Store.list_facts)
    neighborhood = _threaded(Store.neighborhood)
    history = _threaded(Store.history)
    verifications = _threaded(Store.verifications)
    entity = _threaded(Store.entity)
    get_evidence = _threaded(Store.get_evidence)
    stats = _threaded(Store.stats)
    # search
    search = _threaded(Store.search)
    recall = _threaded(Store.recall)
    search_evidence = _threaded(Store.search_evidence)
    reindex = _threaded(Store.reindex)
    sync_index = _threaded(Store.sync_index)
    index_backlog = _threaded(Store.index_backlog)
    index_status = _threaded(Store.index_status)
    # the gate and the audit log
    verify_claim = _threaded(Store.verify_claim)
    rejections = _threaded(Store.rejections)
    get_rejection = _threaded(Store.get_rejection)
    count_rejections = _threaded(Store.count_rejections)
    export_rejections = _threaded(Store.export_rejections)
    verify_audit_chain = _threaded(Store.verify_audit_chain)
    drift = _threaded(Store.drift)
    # human labels
    add_label = _threaded(Store.add_label)
    labels = _threaded(Store.labels)
    # re-verification
    reverify = _threaded(Store.reverify)
    mark_due = _threaded(Store.mark_due)
    count_due = _threaded(Store.count_due)
    reverify_policy = _threaded(Store.reverify_policy)
    set_reverify_policy = _threaded(Store.set_reverify_policy)
