"""Re-verification: claim due facts with a lease, refresh their evidence, re-run the gate.

One run takes up to ``limit`` due facts (``next_check_at`` passed) of a namespace,
oldest due first, in batches of ``batch``. Each batch is claimed in one UPDATE
that sets a lease (owner token and expiry), so several threads or processes on
one database never check the same fact at once; a crashed worker's leases expire
and are taken over. Each source is fetched once per run; each batch goes through
the gate in one call. Every checked fact gets a ``reverify`` history row, written
in the same transaction as its new status, and only while its lease still holds.

Outcomes: ``verified`` (grounded again, confidence recomputed), ``unverified``
(the gate stored it flagged), ``stale`` (source gone, or the refreshed evidence no
longer supports it), ``contradicted`` (the refreshed evidence contradicts it), and
``error`` (a source or the verifier failed: the status stays and the fact is
retried with exponential backoff). A ``pending`` fact (its write timed out or the
verifier failed, so it was never checked) leaves ``pending`` on its first decision;
after an ``error`` it stays ``pending``, out of default reads.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa
from sqlmodel import Session, col, or_, select

from memstore.audit import chain
from memstore.index import outbox
from memstore.reverify import sources
from memstore.reverify.providers import Outcome, Providers
from memstore.storage import db
from memstore.storage.schedule import ReverifyPolicy, count_due
from memstore.storage.tables import (
    FIXED_SOURCES,
    OPEN_STATUSES,
    Citation,
    Evidence,
    Fact,
    FactStatus,
    OutboxKind,
    Verification,
    new_id,
    utcnow,
)
from memstore.write.evidence import reanchor
from memstore.write.hook import (
    UNVERIFIED_VERDICTS,
    Admission,
    Candidate,
    CitedSpan,
    EvidenceItem,
    WriteHook,
    answers,
)

T = TypeVar("T")

DEFAULT_LIMIT = 1_000
DEFAULT_BATCH = 64
DEFAULT_LEASE = timedelta(minutes=5)
#: History verdicts for checks that never reached the gate.
SOURCE_MISSING = "source_missing"
SOURCE_ERROR = "source_error"
#: What a check can end in; ``skipped`` means the fact changed hands or status meanwhile.
OUTCOMES = ("verified", "unverified", "stale", "contradicted", "error", "skipped")


class Transaction(Protocol):
    """Runs ``work`` in one database transaction (retrying unique-key races)."""

    def __call__(self, work: Callable[[Session], T], /) -> T: ...


@dataclass(frozen=True, slots=True)
class FactCheck:
    """What one re-verification found for one fact."""

    fact_id: str
    statement: str
    outcome: str
    status_before: str
    status_after: str
    verdict_before: str | None
    verdict: str
    confidence_before: float
    confidence: float
    reason: str | None = None

    @property
    def changed(self) -> bool:
        return self.status_before != self.status_after


@dataclass(slots=True)
class ReverifyReport:
    """A run's result: one FactCheck per claimed fact, and the run's totals."""

    namespace: str
    checks: list[FactCheck] = field(default_factory=list)
    new_versions: int = 0
    duration_s: float = 0.0

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.checks if c.outcome == outcome)

    @property
    def checked(self) -> int:
        """Facts whose check was recorded (skipped ones are not)."""
        return sum(1 for c in self.checks if c.outcome != "skipped")

    @property
    def still_pending(self) -> int:
        """Checked facts that are still ``pending`` (never checked: the verifier timed
        out or failed again)."""
        return sum(
            1
            for c in self.checks
            if c.outcome != "skipped" and c.status_after == FactStatus.PENDING.value
        )

    def summary(self) -> dict[str, float]:
        counts = Counter(c.outcome for c in self.checks)
        return {
            "checked": self.checked,
            **{o: counts.get(o, 0) for o in OUTCOMES},
            "still_pending": self.still_pending,
            "new_versions": self.new_versions,
            "duration_s": round(self.duration_s, 3),
        }


def claim(
    session: Session,
    namespace: str,
    *,
    now: datetime,
    due_before: datetime,
    limit: int,
    lease: timedelta,
) -> tuple[str, list[str]]:
    """Lease up to ``limit`` due, unleased facts in one UPDATE; returns (token, fact ids),
    oldest due first (the ids come back from the UPDATE itself).

    The lease test sits in the UPDATE itself, so of two workers racing for a fact
    exactly one gets it (the write lock on SQLite; row locks, skipping locked
    rows, on PostgreSQL). Facts whose lease expired count as unleased.
    """
    token = new_id()
    free = or_(col(Fact.lease_expires_at).is_(None), col(Fact.lease_expires_at) <= now)
    due = (
        select(Fact.id)
        .where(
            Fact.namespace == namespace,
            col(Fact.status).in_(OPEN_STATUSES),
            col(Fact.next_check_at).is_not(None),
            col(Fact.next_check_at) <= due_before,
            free,
        )
        .order_by(col(Fact.next_check_at), col(Fact.id))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    leased = session.exec(
        sa.update(Fact)
        .where(col(Fact.id).in_(due.scalar_subquery()), free)
        .values(lease_owner=token, lease_expires_at=now + lease)
        .returning(col(Fact.id), col(Fact.next_check_at))
    ).all()
    return token, [fact_id for fact_id, _ in sorted(leased, key=lambda r: (r[1], r[0]))]


def release(session: Session, namespace: str, token: str, ids: Sequence[str]) -> None:
    """Drop whatever leases ``token`` still holds on the facts ``ids`` (those it did not
    finish). By primary key: no index has the lease owner, so an UPDATE selecting by it
    alone would scan the namespace (12 ms at 100,000 facts)."""
    for chunk in db.chunks(list(ids)):
        session.exec(
            sa.update(Fact)
            .where(
                col(Fact.id).in_(chunk),
                col(Fact.namespace) == namespace,
                col(Fact.lease_owner) == token,
            )
            .values(lease_owner=None, lease_expires_at=None)
        )


@dataclass(slots=True)
class _CitationMove:
    """Where one citation row points after the refresh."""

    row: Citation
    evidence: Evidence
    start: int | None
    end: int | None
    lost: bool


@dataclass(slots=True)
class _Plan:
    """One claimed fact on its way through a batch."""

    fact: Fact
    moves: list[_CitationMove] = field(default_factory=list)
    candidate: Candidate | None = None
    verdict: str | None = None  # set when the fact never reaches the gate
    reason: str | None = None
    fetch_ms: float = 0.0


@dataclass(kw_only=True)
class Reverifier:
    """Runs re-verification for one namespace; the Store builds one per run."""

    namespace: str
    session: Callable[[], AbstractContextManager[Session]]
    transaction: Transaction
    hook: WriteHook
    policy: ReverifyPolicy
    providers: Providers
    lease: timedelta = DEFAULT_LEASE
    _refreshed: dict[str, sources.Refreshed] = field(default_factory=dict, init=False)
    _fetch_ms: dict[str, float] = field(default_factory=dict, init=False)

    def run(
        self,
        *,
        limit: int = DEFAULT_LIMIT,
        batch: int = DEFAULT_BATCH,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReverifyReport:
        """Check up to ``limit`` facts due now; ``progress(done, total)`` after each batch."""
        started, cutoff = time.perf_counter(), utcnow()
        report = ReverifyReport(self.namespace)
        with self.session() as session:
            total = min(limit, count_due(session, self.namespace, cutoff))
        if progress:
            progress(0, total)
        while len(report.checks) < limit:
            size = min(batch, limit - len(report.checks))
            token, ids = self.transaction(
                partial(
                    claim,
                    namespace=self.namespace,
                    now=utcnow(),
                    due_before=cutoff,
                    limit=size,
                    lease=self.lease,
                )
            )
            if not ids:
                break
            try:
                report.checks.extend(self._check_batch(token, ids))
            finally:
                self.transaction(partial(release, namespace=self.namespace, token=token, ids=ids))
            total = max(total, len(report.checks))
            if progress:
                progress(len(report.checks), total)
        report.new_versions = sum(1 for r in self._refreshed.values() if r.new_version)
        report.duration_s = time.perf_counter() - started
        return report

    # -- one batch ---------------------------------------------------------------

    def _check_batch(self, token: str, ids: list[str]) -> list[FactCheck]:
        plans = self._load(token, ids)
        self._refresh({m.evidence.source for p in plans for m in p.moves})
        for plan in plans:
            self._replan(plan)
        gated = [p for p in plans if p.candidate is not None]
        admissions, share_ms = self._admit(gated)
        return [self._apply(token, plan, admissions.get(plan.fact.id), share_ms) for plan in plans]

    def _load(self, token: str, ids: list[str]) -> list[_Plan]:
        with self.session() as session:
            # By primary key alone, the rest checked here: with the namespace or the
            # lease in the query SQLite may scan the namespace instead.
            read = session.exec(select(Fact).where(col(Fact.id).in_(ids))).all()
            held = {
                f.id: f for f in read if f.namespace == self.namespace and f.lease_owner == token
            }
            # the claim's order (oldest due first), less facts another worker took over
            plans = {i: _Plan(held[i]) for i in ids if i in held}
            cites = session.exec(
                select(Citation)
                .where(col(Citation.fact_id).in_(list(plans)))
                .order_by(col(Citation.id))
            ).all()
            wanted = list({c.evidence_id for c in cites})
            rows = session.exec(select(Evidence).where(col(Evidence.id).in_(wanted))).all()
        by_id = {r.id: r for r in rows}
        for c in cites:
            plans[c.fact_id].moves.append(
                _CitationMove(c, by_id[c.evidence_id], c.span_start, c.span_end, False)
            )
        return list(plans.values())

    def _refresh(self, batch_sources: set[str]) -> None:
        """Fetch every source of the batch not fetched yet in this run; store new versions."""
        todo = sorted(batch_sources - FIXED_SOURCES - set(self._refreshed))
        if not todo:
            return
        with self.session() as session:
            known = sources.validators(session, self.namespace, todo)
        for source in todo:
            started = time.perf_counter()
            fetched = self.providers.fetch(source, known.get(source, sources.Validators()))
            self._fetch_ms[source] = (time.perf_counter() - started) * 1000
            self._refreshed[source] = self.transaction(
                partial(sources.record, namespace=self.namespace, source=source, fetched=fetched)
            )

    def _replan(self, plan: _Plan) -> None:
        """Point each citation at its source's current version and build the gate's view.

        A fact with a missing or failing source never reaches the gate, and its
        citations stay where they were.
        """
        current: list[sources.Refreshed] = []
        for move in plan.moves:
            old = move.evidence
            now = (
                sources.unchanged(old)
                if old.source in FIXED_SOURCES
                else self._refreshed[old.source]
            )
            plan.fetch_ms += self._fetch_ms.pop(old.source, 0.0)  # a source's fetch counts once
            if now.outcome == Outcome.MISSING:
                plan.verdict, plan.reason = SOURCE_MISSING, now.reason
                return
            if not now.usable:
                plan.verdict, plan.reason = SOURCE_ERROR, now.reason
                return
            current.append(now)
        items: dict[str, EvidenceItem] = {}
        spans: list[CitedSpan] = []
        lost: set[str] = set()
        for move, now in zip(plan.moves, current, strict=True):
            old, new = move.evidence, now.evidence
            assert new is not None  # usable
            if new.id != old.id and move.start is not None and move.end is not None:
                span = reanchor(old.text, move.start, move.end, new.text)
                if span is None:
                    move.lost = True
                    lost.add(f"{old.source} version {new.version}")
                else:
                    move.evidence, (move.start, move.end) = new, span
            elif new.id != old.id:
                move.evidence = new
            items.setdefault(new.id, EvidenceItem(new.id, new.text, new.source))
            if move.row.cited:
                # A lost span no longer says which part grounds the fact: cite it all.
                spans.append(
                    CitedSpan(new.id) if move.lost else CitedSpan(new.id, move.start, move.end)
                )
        if lost:
            plan.reason = "cited text not found in " + ", ".join(sorted(lost))
        plan.candidate = Candidate(
            namespace=self.namespace,
            statement=plan.fact.statement,
            stated_confidence=plan.fact.stated_confidence,
            evidence=tuple(items.values()),
            citations=tuple(spans),
        )

    def _admit(self, plans: list[_Plan]) -> tuple[dict[str, Admission], float]:
        """One gate call for the batch: admissions by fact id, and each fact's share in ms."""
        if not plans:
            return {}, 0.0
        started = time.perf_counter()
        candidates = [p.candidate for p in plans if p.candidate is not None]
        try:
            admissions = answers(self.hook, candidates)
        except Exception as exc:  # the verifier failing never stops the job
            for plan in plans:
                plan.verdict, plan.reason = "verifier_error", f"{type(exc).__name__}: {exc}"
                plan.candidate = None
            return {}, 0.0
        share = (time.perf_counter() - started) * 1000 / len(plans)
        return {p.fact.id: a for p, a in zip(plans, admissions, strict=True)}, share

    # -- one fact ----------------------------------------------------------------

    def _apply(
        self, token: str, plan: _Plan, admission: Admission | None, share_ms: float
    ) -> FactCheck:
        """Record the check: new status and history row together, while the lease holds."""
        fact, now = plan.fact, utcnow()
        decision = _decide(plan, admission, self.policy, now)
        check = FactCheck(
            fact_id=fact.id,
            statement=fact.statement,
            outcome=decision.outcome,
            status_before=fact.status,
            status_after=str(decision.values.get("status", fact.status)),
            verdict_before=fact.verdict,
            verdict=decision.verdict,
            confidence_before=fact.confidence,
            confidence=decision.values.get("confidence", fact.confidence),
            reason=decision.reason,
        )
        history = Verification(
            namespace=self.namespace,
            fact_id=fact.id,
            kind="reverify",
            verdict_before=fact.verdict,
            status_before=fact.status,
            status_after=check.status_after,
            confidence=check.confidence,
            evidence_ids=list(dict.fromkeys(self._checked_against(m) for m in plan.moves)),
            reason=decision.reason,
            duration_ms=round(plan.fetch_ms + (share_ms if admission else 0.0), 3),
            created_at=now,
            **{**decision.numbers, "verdict": decision.verdict},
        )

        def work(session: Session) -> bool:
            done = session.exec(
                sa.update(Fact)
                .where(
                    col(Fact.id) == fact.id,
                    col(Fact.namespace) == self.namespace,
                    col(Fact.lease_owner) == token,
                    col(Fact.status) == fact.status,
                )
                .values(lease_owner=None, lease_expires_at=None, **decision.values)
            )
            if done.rowcount != 1:
                return False  # retracted, superseded or taken over meanwhile
            outbox.enqueue(session, self.namespace, OutboxKind.FACT, [fact.id])
            for move in plan.moves:
                session.exec(
                    sa.update(Citation)
                    .where(col(Citation.id) == move.row.id)
                    .values(
                        evidence_id=move.evidence.id,
                        span_start=move.start,
                        span_end=move.end,
                        lost_at=(move.row.lost_at or now) if move.lost else None,
                    )
                )
            chain.append(session, history)
            session.add(history)
            return True

        if not self.transaction(work):
            return replace(check, outcome="skipped", status_after=fact.status, reason=None)
        return check

    def _checked_against(self, move: _CitationMove) -> str:
        """The evidence version a citation was checked against: for a lost citation, its
        source's current version (the citation itself keeps the last one that held it)."""
        if move.lost:
            now = self._refreshed.get(move.evidence.source)
            if now is not None and now.evidence is not None:
                return now.evidence.id
        return move.evidence.id


@dataclass(frozen=True, slots=True)
class _Decision:
    """A check's result: the fact's new column values and what the history row says."""

    values: dict[str, Any]
    verdict: str
    outcome: str
    reason: str | None
    numbers: dict[str, Any] = field(default_factory=dict)


def _decide(
    plan: _Plan, admission: Admission | None, policy: ReverifyPolicy, now: datetime
) -> _Decision:
    fact = plan.fact
    if admission is None and plan.verdict == SOURCE_MISSING:
        values = {
            "status": FactStatus.STALE,
            "confidence": 0.0,
            "status_reason": plan.reason,
            "check_failures": 0,
            "next_check_at": policy.after_decision(now),
        }
        return _Decision(values, SOURCE_MISSING, "stale", plan.reason)
    if admission is None or admission.verdict in UNVERIFIED_VERDICTS:
        # A source or the verifier failed: keep the status, retry with backoff.
        verdict = admission.verdict if admission else plan.verdict or SOURCE_ERROR
        reason = admission.reason if admission else plan.reason
        failures = fact.check_failures + 1
        values = {
            "check_failures": failures,
            "next_check_at": policy.after_error(now, failures),
            "status_reason": reason,
        }
        return _Decision(
            values, verdict, "error", reason, admission.gate_fields() if admission else {}
        )
    if admission.accepted:
        status = admission.status
        reason = None if status == FactStatus.VERIFIED else admission.reason
    elif admission.verdict == "contradicted":
        status, reason = FactStatus.CONTRADICTED, admission.reason
    else:
        status, reason = FactStatus.STALE, admission.reason
    if plan.reason:  # e.g. a citation lost in the new version
        reason = f"{reason}; {plan.reason}" if reason else plan.reason
    numbers = admission.gate_fields()
    values = {
        **numbers,
        "status": status,
        "confidence": admission.confidence,
        "status_reason": reason,
        "check_failures": 0,
        "next_check_at": policy.after_decision(now),
    }
    if status == FactStatus.VERIFIED:
        values["verified_at"] = now
    return _Decision(values, admission.verdict, str(status), reason, numbers)
