"""Drift alarms on the gate's verdicts, read from the audit log (Store.drift)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from samples import works_at

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.drift import CusumSettings
from gate.evidence import REMOVED
from memstore import FactPublic, InvalidInput, RejectionPublic, Store
from memstore.audit.drift import NO_BACKEND, DriftSettings

pytestmark = pytest.mark.both_databases

#: Judged in batches of 10 against the first 60 writes, so a short test sees an alarm.
SMALL = DriftSettings(cusum=CusumSettings(baseline=60, batch=10))


def admits_kept(claim: str, context: str) -> float:
    """Grounded when the claim's company is called Kept (p1 high, p0 low), else refused."""
    if REMOVED in context:
        return 0.05
    return 0.97 if "Kept" in claim else 0.1


def write(store: Store, pattern: str, start: int) -> list[FactPublic | RejectionPublic]:
    """One gated write per character: ``k`` a fact the gate admits, ``r`` one it refuses."""
    facts = [
        works_at(f"P{start + at}", "Kept" if mark == "k" else "Refused")
        for at, mark in enumerate(pattern)
    ]
    return store.add_facts(facts)


def test_a_drop_in_the_acceptance_rate_raises_an_alarm(
    opener: Callable[..., Store], caplog: pytest.LogCaptureFixture
) -> None:
    store = opener(gate=Gate(ScriptedBackend(admits_kept), REFUSE_UNGROUNDED))
    write(store, "kkkrr" * 12, 0)  # baseline: 60 writes, 3 in 5 admitted
    quiet = store.drift(SMALL)
    assert [(s.backend, s.metric, s.writes) for s in quiet.streams] == [
        ("scripted:handler", "acceptance", 60),
        ("scripted:handler", "p1", 60),
    ]
    assert quiet.alarms == []
    assert quiet.streams[0].result.baseline_mean == pytest.approx(0.6)

    write(store, "krrrr" * 8, 60)  # then 1 in 5
    with caplog.at_level(logging.WARNING, logger="memstore.audit.drift"):
        found = store.drift(SMALL)
        again = store.drift(SMALL)
    alarms = {(s.metric, s.result.direction) for s in found.alarms}
    assert alarms == {("acceptance", "down"), ("p1", "down")}
    acceptance = found.streams[0]
    assert acceptance.result.recent_mean == pytest.approx(0.2)
    assert 60 <= acceptance.result.alarm_at < 100
    assert again.alarms == found.alarms
    # logged when the alarm starts, not on every report
    logged = [r.getMessage() for r in caplog.records if "gate drift" in r.getMessage()]
    assert len(logged) == 2 and all("'scripted:handler'" in line for line in logged)


def test_each_database_logs_its_own_alarm_once(
    opener: Callable[..., Store], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two stores with the same namespace in two databases: one alarm each, logged once."""
    gate = Gate(ScriptedBackend(admits_kept), REFUSE_UNGROUNDED)
    first = opener(gate=gate)
    with memstore.open(tmp_path / "other", namespace="user:alice", gate=gate) as second:
        for store in (first, second):
            write(store, "kkkrr" * 12 + "krrrr" * 8, 0)
        with caplog.at_level(logging.WARNING, logger="memstore.audit.drift"):
            for store in (first, second, first, second):
                assert store.drift(SMALL).alarms
    logged = [r.getMessage() for r in caplog.records if "gate drift" in r.getMessage()]
    assert len(logged) == 4  # acceptance and p1, in each database, when each started


def test_ungated_writes_and_other_backends_are_judged_apart(
    opener: Callable[..., Store],
) -> None:
    store = opener(gate=Gate(ScriptedBackend(admits_kept), REFUSE_UNGROUNDED))
    write(store, "kkkrr" * 12, 0)
    store.add_facts([works_at(f"U{at}", "Refused") for at in range(30)], ungated=True)
    cited = store.remember(  # refused before any verifier call: the evidence exists nowhere
        "Nobody works at Kept [ev:5f2b0c1d9e8a7b6c].", [], members=["Nobody", "Kept"]
    )
    assert cited.claims[0].rejection.backend is None
    found = store.drift(SMALL)
    assert [(s.backend, s.metric, s.writes) for s in found.streams] == [
        (NO_BACKEND, "acceptance", 1),
        (NO_BACKEND, "p1", 0),
        ("scripted:handler", "acceptance", 60),
        ("scripted:handler", "p1", 60),
    ]
    assert found.alarms == []


def test_too_few_writes_are_not_judged(opener: Callable[..., Store]) -> None:
    store = opener(gate=Gate(ScriptedBackend(admits_kept), REFUSE_UNGROUNDED))
    write(store, "rrrrr", 0)
    found = store.drift(SMALL)
    assert all(not s.result.ready and not s.alarm for s in found.streams)
    assert store.drift().settings == DriftSettings()


def test_bad_settings_name_the_field(opener: Callable[..., Store]) -> None:
    store = opener()
    with pytest.raises(InvalidInput) as err:
        store.drift({"window": 1})  # type: ignore[arg-type]
    assert err.value.field == "settings.window"


def test_labels_spend_the_error_budget_over_the_same_writes(opener: Callable[..., Store]) -> None:
    store = opener(gate=Gate(ScriptedBackend(admits_kept), REFUSE_UNGROUNDED))
    old = write(store, "kr", 0)
    written = write(store, "kkkrr" * 4, 2)  # 12 admitted, 8 refused
    refused = [w.id for w in written if isinstance(w, RejectionPublic)]
    admitted = [w.id for w in written if isinstance(w, FactPublic)]
    # two people on one refusal count once; a label on a write outside the window not at all
    store.add_label("false_rejection", refused[0], by="ann")
    store.add_label("false_rejection", refused[0], by="bob")
    store.add_label("false_rejection", old[1].id, by="ann")
    store.add_label("false_admission", admitted[0], by="ann")
    found = store.drift(DriftSettings(window=20, false_rejection_budget=0.1))
    by_kind = {b.kind: b for b in found.budgets}
    wrong_refusals, wrong_admissions = by_kind["false_rejection"], by_kind["false_admission"]
    assert (wrong_refusals.decided, wrong_refusals.labelled) == (8, 1)
    assert wrong_refusals.burn == pytest.approx(0.125 / 0.1)
    assert (wrong_admissions.decided, wrong_admissions.labelled) == (12, 1)
    assert wrong_admissions.burn == pytest.approx((1 / 12) / 0.02)
    assert {b.kind for b in found.spent} == {"false_rejection", "false_admission"}
    calm = store.drift(
        DriftSettings(window=20, false_rejection_budget=0.5, false_admission_budget=0.5)
    )
    assert calm.spent == []
