"""Re-verification: refreshed sources (real files, a real HTTP server), outcomes, history,
backoff, leases between threads and processes, and the background schedule.

The gate here runs on a scripted backend standing in for the model (``oracle``), so
each outcome is exact; ``test_reverify_cli.py`` runs the real embedded verifier.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
import pytest
import sqlalchemy as sa
from db_rows import rows
from http_site import Site

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED
from memstore import FactPublic, MemstoreError, Store

pytestmark = pytest.mark.both_databases

NS = "user:alice"
V1 = "# Alice\n\nAlice lives in Paris and works as a data engineer at Acme.\n"
UNRELATED = "# Shop\n\nThe bakery on the corner opens at 8am on weekdays.\n"
DENIAL = "# Alice\n\nCorrection: Alice does not live in Paris any more; she moved to Berlin.\n"


def oracle(claim: str, context: str) -> float:
    """Stands in for the model: a denial contradicts, the claim's words support it."""
    if REMOVED in context:
        return 0.3
    flat = " ".join(context.lower().split())
    if "does not" in flat:
        return 0.02
    return 0.97 if claim.lower().rstrip(".") in flat else 0.3


@pytest.fixture
def scripted_backend() -> ScriptedBackend:
    return ScriptedBackend(oracle, deterministic=False)


@pytest.fixture
def scripted_opener(
    opener: Callable[..., Store], scripted_backend: ScriptedBackend
) -> Callable[..., Store]:
    """Opens stores gated by the oracle unless told otherwise."""

    def open_(**options: Any) -> Store:
        options.setdefault("gate", Gate(scripted_backend, REFUSE_UNGROUNDED, deadline=30))
        return opener(**options)

    return open_


@pytest.fixture
def reverify_store(scripted_opener: Callable[..., Store]) -> Store:
    return scripted_opener()


def remember(
    reverify_store: Store,
    text: str,
    source: str,
    quote: str = "Alice lives in Paris",
    statement: str = "Alice lives in Paris.",
) -> FactPublic:
    return reverify_store.add_fact(
        statement=statement,
        members=[("Alice", "person", "resident"), ("Paris", "city", "place")],
        relation="lives_in",
        evidence=[{"text": text, "source": source}],
        citations=[{"evidence": 0, "quote": quote}],
    )


def remember_profile(reverify_store: Store, tmp_path: Path) -> tuple[Path, FactPublic]:
    """A fact cited from a real file, ``profile.md`` holding V1, and that file."""
    path = tmp_path / "profile.md"
    path.write_text(V1, encoding="utf-8")
    return path, remember(reverify_store, V1, path.as_uri())


def remember_many(reverify_store: Store, count: int) -> list[FactPublic]:
    """``count`` distinct facts, each cited from its own inline text."""
    return [
        remember(
            reverify_store,
            V1 + f"\nAlice lives in Paris ({i}).",
            "inline",
            statement=f"Alice lives in Paris ({i}).",
        )
        for i in range(count)
    ]


def recheck(reverify_store: Store, **options: object) -> memstore.ReverifyReport:
    reverify_store.mark_due()
    return reverify_store.reverify(**options)  # type: ignore[arg-type]


def versions(reverify_store: Store, fact_id: str) -> list[list[int]]:
    return [
        [reverify_store.get_evidence(e).version for e in v.evidence_ids]
        for v in reverify_store.verifications(fact_id)
    ]


def test_a_changed_file_makes_a_fact_stale_and_changing_it_back_verifies_it_again(
    reverify_store: Store, tmp_path: Path
) -> None:
    path, fact = remember_profile(reverify_store, tmp_path)
    assert fact.status == "verified"
    assert reverify_store.count_due() == 0  # due in 24 hours

    path.write_text(UNRELATED, encoding="utf-8")
    report = recheck(reverify_store)
    assert [c.outcome for c in report.checks] == ["stale"]
    assert report.new_versions == 1
    stale = reverify_store.get_fact(fact.id)
    assert stale.status == "stale"
    assert stale.confidence == 0.0
    assert "does not support" in (stale.status_reason or "")
    assert "cited text not found" in (stale.status_reason or "")
    assert stale.citations[0].lost_at is not None  # still pointing at version 1
    assert reverify_store.get_evidence(stale.citations[0].evidence_id).version == 1
    # Out of default reads and the graph, visible on request with its reason.
    assert reverify_store.facts_about("Alice") == []
    assert reverify_store.neighborhood("Alice").facts == []
    assert [f.id for f in reverify_store.facts_about("Alice", statuses=["stale"])] == [fact.id]

    path.write_text(V1, encoding="utf-8")
    report = recheck(reverify_store)
    assert [c.outcome for c in report.checks] == ["verified"]
    assert report.new_versions == 0  # version 1 is stored already
    again = reverify_store.get_fact(fact.id)
    assert (again.status, again.confidence, again.status_reason) == ("verified", 0.95, None)
    assert again.citations == fact.citations  # re-anchored where it was, no longer lost
    assert [f.id for f in reverify_store.neighborhood("Alice").facts] == [fact.id]

    history = reverify_store.verifications(fact.id)
    assert [(v.kind, v.verdict_before, v.verdict) for v in history] == [
        ("write", None, "grounded"),
        ("reverify", "grounded", "unsupported"),
        ("reverify", "unsupported", "grounded"),
    ]
    assert [(v.status_before, v.status_after) for v in history[1:]] == [
        ("verified", "stale"),
        ("stale", "verified"),
    ]
    assert versions(reverify_store, fact.id) == [[1], [2], [1]]
    assert all(v.duration_ms is not None and v.duration_ms >= 0 for v in history[1:])
    assert reverify_store.verify_audit_chain().ok


def test_a_contradicting_version_makes_the_fact_contradicted(
    reverify_store: Store, tmp_path: Path
) -> None:
    path, fact = remember_profile(reverify_store, tmp_path)
    path.write_text(DENIAL, encoding="utf-8")
    report = recheck(reverify_store)
    [check] = report.checks
    assert (check.outcome, check.status_before, check.status_after) == (
        "contradicted",
        "verified",
        "contradicted",
    )
    assert (check.confidence_before, check.confidence) == (0.95, 0.0)
    flagged = reverify_store.facts_about("Alice", statuses=["contradicted"])
    assert [f.id for f in flagged] == [fact.id]
    assert "less likely" in (flagged[0].status_reason or "")
    assert reverify_store.facts_about("Alice") == []


def test_citations_are_re_anchored_across_reformatting(
    reverify_store: Store, tmp_path: Path
) -> None:
    path, fact = remember_profile(reverify_store, tmp_path)
    moved = "Profile\n=======\n\nAbout: ALICE  lives\nin Paris, and works as a data engineer.\n"
    path.write_text(moved, encoding="utf-8")
    [check] = recheck(reverify_store).checks
    assert check.outcome == "verified"
    [citation] = reverify_store.get_fact(fact.id).citations
    assert citation.evidence_id != fact.citations[0].evidence_id
    assert reverify_store.get_evidence(citation.evidence_id).version == 2
    assert citation.lost_at is None
    assert moved[citation.start : citation.end] == "ALICE  lives\nin Paris"


def test_a_deleted_file_makes_its_facts_stale_without_asking_the_model(
    reverify_store: Store, scripted_backend: ScriptedBackend, tmp_path: Path
) -> None:
    path, fact = remember_profile(reverify_store, tmp_path)
    path.unlink()
    asked = len(scripted_backend.batches)
    [check] = recheck(reverify_store).checks
    assert len(scripted_backend.batches) == asked
    assert (check.outcome, check.verdict) == ("stale", "source_missing")
    stale = reverify_store.get_fact(fact.id)
    assert stale.status == "stale"
    assert "no longer exists" in (stale.status_reason or "")
    assert stale.verdict == "grounded"  # the last gate decision is kept; the reason says why


def test_http_sources_use_conditional_gets_and_a_404_makes_facts_stale(
    reverify_store: Store, site: tuple[Site, str]
) -> None:
    state, base = site
    state.put("/alice", V1)
    fact = remember(reverify_store, V1, f"{base}/alice")

    assert [c.outcome for c in recheck(reverify_store).checks] == ["verified"]  # 200, same text
    report = recheck(reverify_store)
    assert [c.outcome for c in report.checks] == ["verified"]
    assert "If-None-Match" in state.requests[-1]  # answered 304
    assert report.new_versions == 0

    state.put("/alice", UNRELATED)
    assert [c.outcome for c in recheck(reverify_store).checks] == ["stale"]
    state.put("/alice", V1)
    assert [c.outcome for c in recheck(reverify_store).checks] == ["verified"]
    state.put("/alice", "gone", status=404)
    [check] = recheck(reverify_store).checks
    assert (check.outcome, check.verdict) == ("stale", "source_missing")
    assert "404" in (reverify_store.get_fact(fact.id).status_reason or "")
    assert versions(reverify_store, fact.id) == [[1], [1], [1], [2], [1], [1]]


def test_source_errors_keep_the_status_and_back_off(
    scripted_opener: Callable[..., Store], site: tuple[Site, str]
) -> None:
    reverify_store = scripted_opener(retry_after=timedelta(minutes=5))
    state, base = site
    state.put("/alice", V1)
    fact = remember(reverify_store, V1, f"{base}/alice")
    state.put("/alice", "try later", status=503)
    for failures, wait in ((1, 5), (2, 10), (3, 20)):
        [check] = recheck(reverify_store).checks
        assert (check.outcome, check.verdict) == ("error", "source_error")
        now = reverify_store.get_fact(fact.id)
        assert (now.status, now.confidence, now.check_failures) == ("verified", 0.95, failures)
        assert "503" in (now.status_reason or "")
        last = reverify_store.verifications(fact.id)[-1]
        assert now.next_check_at == last.created_at + timedelta(minutes=wait)
    state.put("/alice", V1)
    [check] = recheck(reverify_store).checks
    healed = reverify_store.get_fact(fact.id)
    assert (check.outcome, healed.check_failures, healed.status_reason) == ("verified", 0, None)
    assert healed.next_check_at == reverify_store.verifications(fact.id)[-1].created_at + timedelta(
        hours=24
    )


def test_backoff_is_capped_at_the_recheck_period() -> None:
    policy = memstore.ReverifyPolicy(
        recheck_after=timedelta(hours=1), retry_after=timedelta(minutes=5)
    )
    now = datetime(2026, 11, 21, tzinfo=UTC)
    waits = [policy.after_error(now, n) - now for n in range(1, 7)]
    assert [w.total_seconds() / 60 for w in waits] == [5, 10, 20, 40, 60, 60]
    with pytest.raises(ValueError, match="retry_after"):
        memstore.ReverifyPolicy(retry_after=timedelta(0))


def test_the_namespace_policy_is_stored_for_every_process(
    scripted_opener: Callable[..., Store], data_dir: Path
) -> None:
    app = scripted_opener()
    assert app.reverify_policy() == memstore.ReverifyPolicy(
        timedelta(hours=24), timedelta(minutes=5)
    )
    app.set_reverify_policy(recheck_after=timedelta(hours=6))
    worker = scripted_opener()  # another process would see the same
    assert worker.reverify_policy() == memstore.ReverifyPolicy(
        timedelta(hours=6), timedelta(minutes=5)
    )
    fact = remember(worker, V1, "inline")
    assert fact.next_check_at == fact.recorded_at + timedelta(hours=6)
    recheck(worker)
    last = worker.verifications(fact.id)[-1]
    assert worker.get_fact(fact.id).next_check_at == last.created_at + timedelta(hours=6)
    # open(..., recheck_after=) holds for that store only; other namespaces keep the default.
    assert scripted_opener(recheck_after=timedelta(hours=1)).reverify_policy().recheck_after == (
        timedelta(hours=1)
    )
    assert worker.reverify_policy().recheck_after == timedelta(hours=6)
    with memstore.open(data_dir, "user:bob", hook=memstore.Ungated()) as bob:
        assert bob.reverify_policy() == memstore.ReverifyPolicy()
    with pytest.raises(memstore.InvalidInput) as caught:
        app.set_reverify_policy(retry_after=timedelta(seconds=-1))
    assert caught.value.field == "retry_after"


def test_a_failing_verifier_keeps_the_status_and_retries(
    scripted_opener: Callable[..., Store], tmp_path: Path
) -> None:
    broken = {"on": False}

    def flaky(claim: str, context: str) -> float:
        if broken["on"]:
            raise RuntimeError("model server down")
        return oracle(claim, context)

    reverify_store = scripted_opener(
        gate=Gate(ScriptedBackend(flaky, deterministic=False), REFUSE_UNGROUNDED, deadline=30)
    )
    fact = remember(reverify_store, V1, "inline")
    broken["on"] = True
    [check] = recheck(reverify_store).checks
    assert (check.outcome, check.verdict) == ("error", "verifier_error")
    now = reverify_store.get_fact(fact.id)
    assert (now.status, now.confidence, now.check_failures) == ("verified", 0.95, 1)
    broken["on"] = False
    assert [c.outcome for c in recheck(reverify_store).checks] == ["verified"]


def test_registered_callables_are_refreshed(reverify_store: Store) -> None:
    calendar = {"text": "Alice lives in Paris (calendar, home address)."}
    source = memstore.register_source("calendar", lambda: calendar["text"])
    try:
        fact = remember(reverify_store, calendar["text"], source)
        calendar["text"] = "No events this week."
        [check] = recheck(reverify_store).checks
        assert check.outcome == "stale"
        assert reverify_store.get_fact(fact.id).status == "stale"
    finally:
        memstore.unregister_source("calendar")


def test_only_due_facts_are_checked_in_due_order_up_to_the_limit(reverify_store: Store) -> None:
    facts = remember_many(reverify_store, 5)
    assert reverify_store.reverify().checks == []
    assert reverify_store.mark_due([facts[3].id, facts[1].id, facts[4].id]) == 3
    assert reverify_store.count_due() == 3
    report = reverify_store.reverify(limit=2, batch=1)
    assert len(report.checks) == 2
    assert reverify_store.count_due() == 1
    assert reverify_store.mark_due([]) == 0


def test_a_run_claims_oldest_due_first_and_finds_its_leases_by_primary_key(
    reverify_store: Store,
) -> None:
    """The facts come back from the leasing UPDATE itself, oldest due first; the run
    reads and releases them by id, never by the lease owner alone (no index has it: at
    100,000 facts each such read scanned the namespace)."""
    facts = remember_many(reverify_store, 4)
    for fact in reversed(facts):  # due in reverse order of writing
        reverify_store.mark_due([fact.id])
    engine = reverify_store._scope.engine
    seen: list[str] = []

    def capture(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        seen.append(" ".join(statement.split()))

    sa.event.listen(engine, "before_cursor_execute", capture)
    try:
        report = reverify_store.reverify(batch=3)
    finally:
        sa.event.remove(engine, "before_cursor_execute", capture)
    assert [c.fact_id for c in report.checks] == [f.id for f in reversed(facts)]
    wheres = [s.partition(" WHERE ")[2].partition(" ORDER BY ")[0] for s in seen]
    by_lease = [w for w in wheres if "lease_owner =" in w]
    assert by_lease, "the run's lease statements were not seen"
    assert all("facts.id IN" in w or "facts.id =" in w for w in by_lease), by_lease


def test_a_lease_taken_over_between_claim_and_read_leaves_the_rest_of_the_batch(
    reverify_store: Store,
) -> None:
    """Another worker takes one fact's lease (it had expired) just as the run reads its
    batch: the run checks the others and leaves that fact to the other worker."""
    facts = remember_many(reverify_store, 3)
    reverify_store.mark_due()
    engine = reverify_store._scope.engine
    taken: list[str] = []

    def take_over(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if taken or not statement.lstrip().startswith("SELECT") or "lease_owner" not in statement:
            return
        if "FROM facts" not in statement or "facts.id IN" not in statement:
            return
        taken.append(facts[1].id)
        with engine.begin() as other:
            other.execute(
                sa.text("UPDATE facts SET lease_owner = 'other-worker' WHERE id = :id"),
                {"id": facts[1].id},
            )

    sa.event.listen(engine, "before_cursor_execute", take_over)
    try:
        report = reverify_store.reverify()
    finally:
        sa.event.remove(engine, "before_cursor_execute", take_over)
    assert taken == [facts[1].id]
    assert sorted(c.fact_id for c in report.checks) == sorted([facts[0].id, facts[2].id])
    assert {c.outcome for c in report.checks} == {"verified"}
    assert len(reverify_store.verifications(facts[1].id)) == 1  # its first gate pass only


def test_ungated_facts_are_never_re_verified(scripted_opener: Callable[..., Store]) -> None:
    reverify_store = scripted_opener(gate=None, hook=memstore.Ungated())
    fact = remember(reverify_store, V1, "inline")
    assert fact.next_check_at is None
    assert reverify_store.mark_due() == 0
    assert reverify_store.reverify().checks == []


def test_bad_run_settings_name_the_field(reverify_store: Store) -> None:
    for options, field in (
        ({"limit": 0}, "limit"),
        ({"batch": 10_000}, "batch"),
        ({"lease": timedelta(0)}, "lease"),
        ({"fetch_timeout": -1}, "fetch_timeout"),
        ({"gate": "no-such-backend"}, "gate"),
    ):
        with pytest.raises(memstore.InvalidInput) as caught:
            reverify_store.reverify(**options)  # type: ignore[arg-type]
        assert caught.value.field == field
    with pytest.raises(memstore.InvalidInput) as caught:
        reverify_store.mark_due("abc")  # type: ignore[arg-type]
    assert caught.value.field == "fact_ids"


class Blocking:
    """A backend that holds every call until released (a worker stuck mid-run)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, claim: str, context: str) -> float:
        self.entered.set()
        assert self.release.wait(30)
        return oracle(claim, context)


@dataclass
class StuckRun:
    """A worker that claimed every due fact and hangs in the gate, and a second store."""

    blocking: Blocking
    other: Store
    facts: list[FactPublic]
    thread: threading.Thread
    result: list[memstore.ReverifyReport]

    def finish(self) -> memstore.ReverifyReport:
        self.blocking.release.set()
        self.thread.join(30)
        return self.result[0]


def stuck_run(scripted_opener: Callable[..., Store], facts: int, lease: timedelta) -> StuckRun:
    blocking = Blocking()
    stuck = scripted_opener(
        gate=Gate(ScriptedBackend(blocking, deterministic=False), REFUSE_UNGROUNDED, deadline=60)
    )
    other = scripted_opener()
    written = remember_many(other, facts)
    other.mark_due()
    result: list[memstore.ReverifyReport] = []
    thread = threading.Thread(target=lambda: result.append(stuck.reverify(lease=lease)))
    thread.start()
    assert blocking.entered.wait(30)
    return StuckRun(blocking, other, written, thread, result)


def test_a_leased_fact_is_not_checked_by_another_worker(
    scripted_opener: Callable[..., Store],
) -> None:
    run = stuck_run(scripted_opener, 3, lease=timedelta(hours=1))
    facts = run.facts
    assert run.other.reverify().checks == []  # everything is leased
    run.other.retract(facts[2].id, "moved out")
    outcomes = {c.fact_id: c.outcome for c in run.finish().checks}
    assert outcomes == {facts[0].id: "verified", facts[1].id: "verified", facts[2].id: "skipped"}
    assert [len(run.other.verifications(f.id)) for f in facts] == [2, 2, 1]


def test_an_expired_lease_is_taken_over_and_the_late_worker_records_nothing(
    scripted_opener: Callable[..., Store],
) -> None:
    run = stuck_run(scripted_opener, 2, lease=timedelta(seconds=1))
    time.sleep(1.2)  # the stuck worker's lease runs out
    taken = run.other.reverify()
    assert sorted(c.fact_id for c in taken.checks) == sorted(f.id for f in run.facts)
    assert {c.outcome for c in taken.checks} == {"verified"}
    assert {c.outcome for c in run.finish().checks} == {"skipped"}
    assert [len(run.other.verifications(f.id)) for f in run.facts] == [2, 2]


WORKER = """
import json, sys, time
from pathlib import Path
import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED

data, namespace, go, ready, mine, peer = sys.argv[1:7]

def slow(claim, context):
    # Each worker's first check waits (a minute at most) for the other's: each holds a
    # batch by then, so both get a share however the machine schedules them.
    Path(mine).touch()
    deadline = time.monotonic() + 60
    while not Path(peer).exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.01)
    return 0.3 if REMOVED in context else 0.97

gate = Gate(ScriptedBackend(slow, deterministic=False), REFUSE_UNGROUNDED, deadline=30)
store = memstore.open(data, namespace, gate=gate)
Path(ready).touch()
while not Path(go).exists():
    time.sleep(0.005)
report = store.reverify(batch=2)
print(json.dumps([c.fact_id for c in report.checks if c.outcome != "skipped"]))
"""


def test_two_worker_processes_never_check_a_fact_twice(
    reverify_store: Store, data_dir: Path, tmp_path: Path
) -> None:
    facts = remember_many(reverify_store, 24)
    reverify_store.mark_due()
    script, go = tmp_path / "worker.py", tmp_path / "go"
    script.write_text(WORKER, encoding="utf-8")
    ready = [tmp_path / f"ready{i}" for i in range(2)]
    checking = [tmp_path / f"checking{i}" for i in range(2)]
    workers = [
        subprocess.Popen(
            [
                *(sys.executable, str(script), str(data_dir), NS, str(go), str(ready[i])),
                *(str(checking[i]), str(checking[1 - i])),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    # Both start together once both have opened the store (opening is slow on a busy machine).
    deadline = time.monotonic() + 120
    while not all(flag.exists() for flag in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    outputs = [w.communicate(timeout=120) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], [e for _, e in outputs]
    first, second = (json.loads(o) for o, _ in outputs)
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(f.id for f in facts)
    assert first and second, "both workers should have had a share"
    per_fact = rows(
        reverify_store.url,
        "SELECT fact_id, count(*) FROM verifications WHERE kind = 'reverify' GROUP BY fact_id",
    )
    assert sorted(n for _, n in per_fact) == [1] * len(facts)
    assert reverify_store.verify_audit_chain().ok


def test_the_background_reverifier_runs_on_schedule_and_stops(reverify_store: Store) -> None:
    fact = remember(reverify_store, V1, "inline")
    reverify_store.mark_due()
    runner = reverify_store.start_reverifier(every=timedelta(seconds=0.2))
    with pytest.raises(MemstoreError):
        reverify_store.start_reverifier()
    deadline = time.monotonic() + 20
    while len(reverify_store.verifications(fact.id)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    reverify_store.stop_reverifier()
    assert not runner.running
    assert runner.runs >= 1 and runner.last_error is None
    assert [v.kind for v in reverify_store.verifications(fact.id)] == ["write", "reverify"]
    assert reverify_store.get_fact(fact.id).next_check_at is not None


def test_unchanged_evidence_is_answered_from_the_gate_cache(
    scripted_opener: Callable[..., Store],
) -> None:
    cached = ScriptedBackend(oracle)  # deterministic: the gate caches its answers
    reverify_store = scripted_opener(gate=Gate(cached, deadline=30))
    text = V1 + "Alice lives in Paris with her cat.\n"
    facts = reverify_store.add_facts(
        [
            {"statement": s, "members": ["Alice"], "evidence": [text]}
            for s in ("Alice lives in Paris.", "Alice lives in Paris with her cat.")
        ]
    )
    assert len({f.citations[0].evidence_id for f in facts}) == 1  # one text, one id
    asked = len(cached.batches)
    assert [c.outcome for c in recheck(reverify_store).checks] == ["verified", "verified"]
    assert len(cached.batches) == asked  # same claims, same context: no model call


def test_another_process_making_a_fact_stale_hides_it_from_this_stores_reads(
    scripted_opener: Callable[..., Store], tmp_path: Path
) -> None:
    reader, worker = scripted_opener(), scripted_opener()
    path, fact = remember_profile(reader, tmp_path)
    assert [f.id for f in reader.neighborhood("Alice").facts] == [fact.id]
    path.unlink()
    assert [c.outcome for c in recheck(worker).checks] == ["stale"]
    # The reader's in-memory graph still links the fact; its reads check the status in SQL.
    assert reader.neighborhood("Alice").facts == []
    assert reader.facts_about("Alice") == []


def test_start_reverifier_rejects_unknown_options(reverify_store: Store) -> None:
    with pytest.raises(memstore.InvalidInput) as caught:
        reverify_store.start_reverifier(batchsize=5)
    assert caught.value.field == "options"


def test_the_search_index_follows_re_verification(
    scripted_opener: Callable[..., Store], tmp_path: Path
) -> None:
    index = tmp_path / "search-index"
    reverify_store = scripted_opener(index=index)
    path, fact = remember_profile(reverify_store, tmp_path)
    assert [h.fact.id for h in reverify_store.search("Where does Alice live?")] == [fact.id]

    path.write_text(UNRELATED, encoding="utf-8")
    recheck(reverify_store)
    assert reverify_store.search("Where does Alice live?") == []
    stale = reverify_store.search("Where does Alice live?", statuses=["stale"])
    assert [h.fact.id for h in stale] == [fact.id]
    # The index itself holds the new status, and which evidence version is current.
    db = lancedb.connect(index)
    facts = db.open_table("facts").to_arrow().to_pylist()
    assert [(r["id"], r["status"]) for r in facts] == [(fact.id, "stale")]
    chunks = db.open_table("evidence_chunks").to_arrow().to_pylist()
    assert {(r["version"], r["status"]) for r in chunks} == {(1, "replaced"), (2, "current")}
    assert reverify_store.index_backlog() == 0
