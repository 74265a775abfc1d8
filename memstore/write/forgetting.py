"""Forgetting: retracting a fact (a soft delete) and erasing a fact or a rejection for
good, with the search index and SQLite's log brought along.

``memstore.audit.erasure`` holds the SQL of an erase; this module runs it in one
transaction and does what must follow the commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, col, select

from memstore.audit import erasure
from memstore.errors import InvalidInput, NotFound
from memstore.index import outbox
from memstore.index.handle import IndexHandle
from memstore.schemas import ErasurePublic
from memstore.storage.scope import Scope
from memstore.storage.sqlite_log import ErasedTextLog
from memstore.storage.tables import (
    FIXED_SOURCES,
    Citation,
    Evidence,
    Fact,
    FactStatus,
    OutboxKind,
    utcnow,
)
from memstore.write.path import close_open_fact


@dataclass
class Forgetting:
    """Retracts and erases in one scope, keeping its index and log in step."""

    scope: Scope
    index: IndexHandle
    log: ErasedTextLog

    def retract(self, fact_id: str, reason: str) -> None:
        """Mark an open fact ``retracted`` with ``reason`` (checked); InvalidInput if it
        is not open."""

        def work(session: Session) -> list[str]:
            values = {"retracted_at": utcnow(), "retraction_reason": reason}
            namespace = self.scope.namespace
            if not close_open_fact(session, namespace, fact_id, FactStatus.RETRACTED, values):
                status = session.get(Fact, fact_id).status  # type: ignore[union-attr]
                raise InvalidInput("fact_id", f"fact {fact_id} is {status} and cannot be retracted")
            return queue_chain_evidence(session, namespace, fact_id)

        evidence_ids = self.scope.transaction(work)
        self.index.apply_queued([fact_id, *evidence_ids])

    def erase_fact(self, fact_id: str, reason: str, who: str | None) -> ErasurePublic:
        """Erase a fact for good: every version along its supersession chain, their
        members, citations and verification history, the evidence no other fact or
        rejection cites, entities no other fact names, and their search-index rows with
        every copy on disk.

        One transaction; the tombstone keeps the ids, sha256 hashes of the erased texts,
        ``reason``, ``who`` asked and when, and takes the erased history rows' place in
        the audit chain, so ``verify_audit_chain()`` still verifies. Evidence that stays
        because something else cites it is listed in ``kept_evidence_ids``.
        """

        def work(session: Session) -> erasure.Erased:
            done = erasure.erase_fact(session, self.scope.namespace, fact_id, reason, who)
            if done is None:  # erased by another process meanwhile
                raise NotFound("fact", fact_id, self.scope.namespace)
            return done

        done = self.scope.transaction(work)
        return self._after_erase(done, [*done.tombstone.fact_ids, *done.evidence_ids])

    def erase_rejection(self, rejection_id: str, reason: str, who: str | None) -> ErasurePublic:
        """Erase a rejection from the audit log for good, with the evidence that no fact
        or other rejection cites (its search-index rows too); the tombstone keeps its id,
        hashes, ``reason``, ``who`` and when, and its place in the audit chain."""

        def work(session: Session) -> erasure.Erased:
            done = erasure.erase_rejection(session, self.scope.namespace, rejection_id, reason, who)
            if done is None:
                raise NotFound("rejection", rejection_id, self.scope.namespace)
            return done

        done = self.scope.transaction(work)
        return self._after_erase(done, list(done.evidence_ids))

    def _after_erase(self, done: erasure.Erased, targets: list[str]) -> ErasurePublic:
        """Apply an erase to the search index now (a failure stays queued for the next
        open), empty SQLite's log, and describe the tombstone."""
        self.index.apply_queued([done.tombstone.id, *targets])
        pending = self.log.after_erase()
        erased = ErasurePublic.model_validate(done.tombstone, from_attributes=True)
        return erased.model_copy(update={"log_pending": pending})


def queue_chain_evidence(session: Session, namespace: str, fact_id: str) -> list[str]:
    """Queue for the index the evidence that a fact and its earlier versions cite,
    with every version of their URI sources (whether it backs live memory may have
    changed); returns the queued ids."""
    chain = [fact_id]
    row = session.get(Fact, fact_id)
    while row is not None and row.supersedes_id is not None and row.supersedes_id not in chain:
        chain.append(row.supersedes_id)
        row = session.get(Fact, row.supersedes_id)
    cited = set(session.exec(select(Citation.evidence_id).where(col(Citation.fact_id).in_(chain))))
    sources = set(
        session.exec(
            select(Evidence.source).where(
                col(Evidence.id).in_(cited), col(Evidence.source).not_in(FIXED_SOURCES)
            )
        )
    )
    for source in sorted(sources):
        cited.update(
            session.exec(
                select(Evidence.id).where(
                    Evidence.namespace == namespace, Evidence.source == source
                )
            )
        )
    queued = sorted(cited)
    outbox.enqueue(session, namespace, OutboxKind.EVIDENCE, queued)
    return queued
