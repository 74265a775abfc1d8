"""Drift alarms on the gate's verdicts (``Store.drift``): per backend, the acceptance rate
and the mean p1 of the namespace's latest gated writes, in audit-chain order, each
judged by ``gate.drift.cusum`` against the oldest of them as a baseline; and the error
budget people's labels spend over the same writes (``memstore.audit.error_budget``).

A gated write leaves one audited row: a ``write`` verification when the fact was
admitted (timeouts included: they are stored with less confidence) or a rejection.
Ungated writes (verdict ``ungated``) are not the gate's verdicts and are left out.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field
from sqlmodel import Session, col, select

from gate.drift import Cusum, CusumSettings, cusum
from memstore.audit.error_budget import Budget, budgets
from memstore.storage.tables import LabelKind, Rejection, RejectionAttempt, Verification

if TYPE_CHECKING:
    from memstore.storage.scope import Scope

log = logging.getLogger(__name__)

#: The name a stream of writes no verifier saw (no evidence, an unknown citation) goes by.
NO_BACKEND = "(none)"
Metric = Literal["acceptance", "p1"]

#: (database, namespace, backend, metric) of the streams alarmed at their namespace's last
#: report in this process, so an alarm is logged once, when it starts.
_alarmed: set[tuple[str, str, str, str]] = set()
_alarmed_lock = threading.Lock()


class DriftSettings(BaseModel):
    """What ``Store.drift`` reads (the latest ``window`` gated writes), how it judges each
    stream (``cusum``: baseline, batch, k, h), and the share of refusals and of
    admissions people may mark wrong before the error budget is spent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    window: int = Field(default=5000, ge=20, le=1_000_000, description="Latest writes read.")
    cusum: CusumSettings = CusumSettings()
    false_rejection_budget: float = Field(default=0.05, gt=0, le=1)
    false_admission_budget: float = Field(default=0.02, gt=0, le=1)


class GatedWrite(BaseModel):
    """One gated write as the audit log keeps it."""

    model_config = ConfigDict(frozen=True)

    chain_seq: int
    backend: str
    admitted: bool
    p1: float | None


class DriftStream(BaseModel):
    """One judged stream: a backend's acceptance rate or mean p1."""

    model_config = ConfigDict(frozen=True)

    backend: str
    metric: Metric
    writes: int
    result: Cusum

    @computed_field  # type: ignore[prop-decorator]
    @property
    def alarm(self) -> bool:
        """Whether this stream's CUSUM passed its threshold."""
        return self.result.alarm


class DriftReport(BaseModel):
    """Every stream of a namespace and the ones that raised an alarm; both error budgets
    and the ones spent."""

    model_config = ConfigDict(frozen=True)

    namespace: str
    settings: DriftSettings
    streams: list[DriftStream]
    budgets: list[Budget] = []

    @computed_field  # type: ignore[prop-decorator]
    @property
    def alarms(self) -> list[DriftStream]:
        """The streams that raised an alarm."""
        return [stream for stream in self.streams if stream.alarm]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def spent(self) -> list[Budget]:
        """The error budgets people's labels have spent."""
        return [budget for budget in self.budgets if budget.spent]


def latest_gated_writes(session: Session, namespace: str, limit: int) -> list[GatedWrite]:
    """The namespace's latest ``limit`` gated writes, oldest first (by chain position)."""
    admitted = (
        select(Verification.chain_seq, Verification.backend, Verification.p1)
        .where(Verification.namespace == namespace, Verification.kind == "write")
        .where(col(Verification.verdict) != "ungated", col(Verification.chain_seq).is_not(None))
        .order_by(col(Verification.chain_seq).desc())
        .limit(limit)
    )
    refused = (
        select(Rejection.chain_seq, Rejection.backend, Rejection.p1)
        .where(Rejection.namespace == namespace, col(Rejection.chain_seq).is_not(None))
        .order_by(col(Rejection.chain_seq).desc())
        .limit(limit)
    )
    repeated = (  # a refused write again: judged like any other attempt
        select(RejectionAttempt.chain_seq, Rejection.backend, RejectionAttempt.p1)
        .join(Rejection, col(Rejection.id) == col(RejectionAttempt.rejection_id))
        .where(RejectionAttempt.namespace == namespace)
        .where(col(RejectionAttempt.chain_seq).is_not(None))
        .order_by(col(RejectionAttempt.chain_seq).desc())
        .limit(limit)
    )
    writes = [
        GatedWrite(chain_seq=seq or 0, backend=backend or NO_BACKEND, admitted=kept, p1=p1)
        for kept, query in ((True, admitted), (False, refused), (False, repeated))
        for seq, backend, p1 in session.exec(query)
    ]
    writes.sort(key=lambda write: write.chain_seq)
    return writes[-limit:]


def judge(
    namespace: str,
    writes: Iterable[GatedWrite],
    settings: DriftSettings,
    error_budgets: list[Budget] | None = None,
) -> DriftReport:
    """Split ``writes`` by backend and run the CUSUM over each one's acceptance and p1."""
    by_backend: dict[str, list[GatedWrite]] = {}
    for write in writes:
        by_backend.setdefault(write.backend, []).append(write)
    streams: list[DriftStream] = []
    for backend in sorted(by_backend):
        own = by_backend[backend]
        accepted = [1.0 if write.admitted else 0.0 for write in own]
        p1 = [write.p1 for write in own if write.p1 is not None]
        judged: tuple[tuple[Metric, list[float]], ...] = (("acceptance", accepted), ("p1", p1))
        for metric, values in judged:
            found = cusum(values, settings.cusum)
            streams.append(
                DriftStream(backend=backend, metric=metric, writes=len(values), result=found)
            )
    return DriftReport(
        namespace=namespace, settings=settings, streams=streams, budgets=error_budgets or []
    )


def report(scope: Scope, settings: DriftSettings) -> DriftReport:
    """The namespace's drift report; an alarm is logged as a warning when it starts."""
    allowed = {
        LabelKind.FALSE_REJECTION: settings.false_rejection_budget,
        LabelKind.FALSE_ADMISSION: settings.false_admission_budget,
    }
    with scope.session() as session:
        writes = latest_gated_writes(session, scope.namespace, settings.window)
        since = writes[0].chain_seq if writes else 0
        error_budgets = budgets(session, scope.namespace, since, allowed)
    found = judge(scope.namespace, writes, settings, error_budgets)
    where = (scope.engine.url.render_as_string(hide_password=True), scope.namespace)
    alarmed = {(*where, s.backend, s.metric): s for s in found.alarms}
    with _alarmed_lock:
        started = [s for key, s in alarmed.items() if key not in _alarmed]
        _alarmed.difference_update([key for key in _alarmed if key[:2] == where])
        _alarmed.update(alarmed)
    for stream in started:
        log.warning(
            "gate drift in namespace %r, backend %r: %s went %s (baseline %.3f, recent %.3f)",
            scope.namespace,
            stream.backend,
            stream.metric,
            stream.result.direction,
            stream.result.baseline_mean,
            stream.result.recent_mean,
        )
    return found


__all__ = [
    "NO_BACKEND",
    "DriftReport",
    "DriftSettings",
    "DriftStream",
    "GatedWrite",
    "judge",
    "latest_gated_writes",
    "report",
]
