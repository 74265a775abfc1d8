"""The re-verification schedule as SQL holds it: when a stored fact is next due
(``Fact.next_check_at``), the namespace's policy that decides it (``ReverifyPolicy``,
its ``reverify_policies`` row) and the counts and moves of due facts. The write path
stamps a new fact's due time with it; ``memstore.reverify`` checks what is due."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, func, select

from memstore.storage.tables import OPEN_STATUSES, Fact, ReverifyPolicyRow, utcnow

#: When a decided fact is due again, and when a failed check is first retried.
DEFAULT_RECHECK_AFTER = timedelta(hours=24)
DEFAULT_RETRY_AFTER = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class ReverifyPolicy:
    """When a namespace's facts are due: ``recheck_after`` after a decision (and after a
    write the gate decided); after an error (timeout, verifier or source failure),
    ``retry_after`` doubled per failure in a row, capped at ``recheck_after``."""

    recheck_after: timedelta = DEFAULT_RECHECK_AFTER
    retry_after: timedelta = DEFAULT_RETRY_AFTER

    def __post_init__(self) -> None:
        for name in ("recheck_after", "retry_after"):
            value = getattr(self, name)
            if not isinstance(value, timedelta) or value <= timedelta(0):
                raise ValueError(f"{name} must be a positive datetime.timedelta")

    def after_decision(self, now: datetime) -> datetime:
        return now + self.recheck_after

    def after_error(self, now: datetime, failures: int = 1) -> datetime:
        """``failures`` counts this one: 1 -> retry_after, 2 -> twice that, ..."""
        return now + min(self.retry_after * 2 ** min(failures - 1, 30), self.recheck_after)


def load_policy(session: Session, namespace: str) -> ReverifyPolicy | None:
    """The namespace's stored policy, if one was set."""
    row = session.get(ReverifyPolicyRow, namespace)
    if row is None:
        return None
    return ReverifyPolicy(
        timedelta(seconds=row.recheck_after_s), timedelta(seconds=row.retry_after_s)
    )


def save_policy(session: Session, namespace: str, policy: ReverifyPolicy) -> None:
    row = session.get(ReverifyPolicyRow, namespace) or ReverifyPolicyRow(
        namespace=namespace, recheck_after_s=0, retry_after_s=0
    )
    row.recheck_after_s = policy.recheck_after.total_seconds()
    row.retry_after_s = policy.retry_after.total_seconds()
    row.updated_at = utcnow()
    session.add(row)


def count_due(session: Session, namespace: str, due_before: datetime) -> int:
    """Facts of ``namespace`` due by ``due_before`` (leased or not)."""
    return int(
        session.exec(
            select(func.count())
            .select_from(Fact)
            .where(
                Fact.namespace == namespace,
                col(Fact.status).in_(OPEN_STATUSES),
                col(Fact.next_check_at).is_not(None),
                col(Fact.next_check_at) <= due_before,
            )
        ).one()
    )


def make_due(
    session: Session, namespace: str, fact_ids: Sequence[str] | None, when: datetime
) -> int:
    """Set ``next_check_at = when`` on open, gate-checked facts (all, or those listed)."""
    query = sa.update(Fact).where(
        col(Fact.namespace) == namespace,
        col(Fact.status).in_(OPEN_STATUSES),
        col(Fact.next_check_at).is_not(None),
    )
    if fact_ids is not None:
        query = query.where(col(Fact.id).in_(list(fact_ids)))
    return int(session.exec(query.values(next_check_at=when)).rowcount)
