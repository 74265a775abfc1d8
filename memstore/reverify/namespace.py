"""A store's re-verification: running ``memstore.reverify.run`` over its namespace (with its
gate, fetch policy and index), its schedule policy and the facts that are due.
Inputs arrive checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta

from sqlmodel import Session

from memstore.index.handle import IndexHandle
from memstore.reverify import run as reverification
from memstore.reverify.providers import Providers
from memstore.reverify.run import ReverifyReport
from memstore.reverify.source_policy import SourcePolicy
from memstore.storage import db, schedule
from memstore.storage.schedule import ReverifyPolicy
from memstore.storage.scope import Scope
from memstore.storage.tables import utcnow
from memstore.write.hook import WriteHook


@dataclass
class Reverification:
    """Re-verification of one scope; ``override`` holds what ``open()`` set on top of
    the namespace's stored policy."""

    scope: Scope
    index: IndexHandle
    sources: SourcePolicy
    override: dict[str, timedelta] = field(default_factory=dict)

    def run(
        self,
        hook: WriteHook,
        limit: int,
        batch: int,
        lease: timedelta,
        fetch_timeout: float,
        progress: Callable[[int, int], None] | None,
    ) -> ReverifyReport:
        """Re-verify up to ``limit`` facts whose ``next_check_at`` has passed, then update
        the index.

        Each fact's sources are fetched again (a changed text becomes a new evidence
        version, citations are re-anchored in it), the gate runs on ``batch`` facts per
        call, and the fact becomes ``verified``, ``stale`` or ``contradicted`` with a
        history row saying why. Facts are leased for ``lease`` while being checked, so
        concurrent runs never check one fact twice. ``progress(done, total)`` is called
        after each batch.
        """
        with Providers(timeout=fetch_timeout, policy=self.sources) as providers:
            job = reverification.Reverifier(
                namespace=self.scope.namespace,
                session=self.scope.session,
                transaction=self.scope.transaction,
                hook=hook,
                policy=self.policy(),
                providers=providers,
                lease=lease,
            )
            report = job.run(limit=limit, batch=batch, progress=progress)
        self.index.apply_queued(namespace=self.scope.namespace)  # new statuses and versions
        return report

    def mark_due(self, fact_ids: list[str] | None) -> int:
        """Make these facts (None: every open gated fact) due now; returns how many."""
        when = utcnow()
        namespace = self.scope.namespace

        def work(session: Session) -> int:
            if fact_ids is None:
                return schedule.make_due(session, namespace, None, when)
            return sum(
                schedule.make_due(session, namespace, chunk, when) for chunk in db.chunks(fact_ids)
            )

        return self.scope.transaction(work)

    def policy(self) -> ReverifyPolicy:
        """The namespace's stored policy (or the defaults), with ``override`` on top."""
        with self.scope.session() as session:
            return self.policy_in(session)

    def policy_in(self, session: Session) -> ReverifyPolicy:
        """``policy`` read in ``session`` (a write's transaction: no session of its own)."""
        stored = schedule.load_policy(session, self.scope.namespace)
        return replace(stored or ReverifyPolicy(), **self.override)

    def set_policy(self, changes: dict[str, timedelta]) -> ReverifyPolicy:
        """Store the namespace's policy with ``changes`` applied; returns it."""

        def work(session: Session) -> ReverifyPolicy:
            stored = schedule.load_policy(session, self.scope.namespace)
            policy = replace(stored or ReverifyPolicy(), **changes)
            schedule.save_policy(session, self.scope.namespace, policy)
            return policy

        return self.scope.transaction(work)

    def count_due(self) -> int:
        """Facts whose re-verification is due now."""
        with self.scope.session() as session:
            return schedule.count_due(session, self.scope.namespace, utcnow())
