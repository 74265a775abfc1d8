"""Load never opens the gate (issue 24, items 2, 3 and 10).

The deadline grows with the batch and counts only the verifier's own work; a call
queued for the model waits under its own bound; a call past its deadline is
cancelled and frees the model within one mini-batch, so the next write gets a real
verdict; one request's claims and evidence are bounded, and so is the verifier's
work on long evidence; ``memstore verify`` reports a timeout as not checked.

Slow and blocked verifiers are made deterministic with Events: no outcome here
depends on the machine's speed (time bounds are lower bounds, or generous liveness
bounds many times the work they cover).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from db_rows import row_counts
from fastapi.testclient import TestClient
from samples import ALLERGY, allergy

import memstore
from gate import (
    REFUSE_UNGROUNDED,
    CallControl,
    Cancelled,
    Check,
    Gate,
    HallucinationConfig,
    ModelLock,
    ScriptedBackend,
    VerdictStatus,
    VerifierBackend,
)
from gate.backends.embedded import EmbeddedBackend, shared_encoder
from gate.backends.embedded.features import MAX_SCORED_SEGMENTS, split
from gate.evidence import REMOVED
from memstore import ErrFactNotGrounded, FactStatus, InvalidInput, Limits, Store, TooLarge
from memstore.rest import create_app

#: Long enough for any thread hand-over on a loaded machine; only liveness bounds use it.
PATIENCE_S = 30.0


def grounded(claim: str, context: str) -> float:
    return 0.05 if REMOVED in context else 0.97


class Held(VerifierBackend):
    """A backend guarded by a ModelLock, answering like ``grounded`` once it holds it.

    With ``stall`` set, each mini-batch (one pair) holds the model until the call is
    cancelled: work that would otherwise outlive any deadline, but that honours
    cancellation as the real backends do. ``batches_after_cancel`` counts the
    mini-batches begun after the gate gave up.
    """

    name = "held"

    def __init__(self, *, stall: bool = False) -> None:
        self.lock = ModelLock()
        self.stall = stall
        self.batches_after_cancel = 0
        self.finished = threading.Event()

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        try:
            out = []
            for claim, context in pairs:
                with self.lock.hold(control):
                    if control is not None and control.cancelled:
                        self.batches_after_cancel += 1
                    while self.stall and control is not None and not control.cancelled:
                        time.sleep(0.005)
                out.append(grounded(claim, context))
                if control is not None:
                    control.check()
            return out
        finally:
            self.finished.set()


def wait_until(condition: Any, what: str) -> None:
    """Poll ``condition`` until it holds (a liveness bound, not a speed goal)."""
    end = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < end, f"gave up waiting until {what}"
        time.sleep(0.01)


def claims(n: int) -> list[Check]:
    return [
        Check.of(f"The user likes food number {i}.", [f"User: I like food {i}."]) for i in range(n)
    ]


# -- the deadline -------------------------------------------------------------------


def test_the_deadline_is_a_base_plus_an_allowance_per_claim() -> None:
    gate = Gate(ScriptedBackend(grounded), REFUSE_UNGROUNDED, deadline=2.0, deadline_per_claim=0.25)
    assert [gate.deadline_for(n) for n in (1, 8, 32)] == [2.25, 4.0, 10.0]
    defaults = Gate(ScriptedBackend(grounded), REFUSE_UNGROUNDED)
    # The batch of 8 took 2.3 s on a busy machine: well inside its deadline now.
    assert defaults.deadline_for(8) == 3.0 + 8 * 0.5
    assert defaults.deadline_for(8) > 2 * 2.3
    config = HallucinationConfig(timeout=1.0, timeout_per_claim=0.1, lock_wait=7.0)
    built = config.gate()
    assert (built.deadline_for(10), built.lock_wait) == (2.0, 7.0)
    with pytest.raises(ValueError, match="lock_wait"):
        Gate(ScriptedBackend(grounded), REFUSE_UNGROUNDED, lock_wait=0)


@pytest.mark.parametrize("n", [1, 8])
def test_a_call_that_never_answers_gets_the_whole_deadline_of_its_batch(n: int) -> None:
    backend = Held(stall=True)
    gate = Gate(backend, deadline=0.1, deadline_per_claim=0.1, cache_size=0)
    started = time.monotonic()
    verdicts = gate.check_many(claims(n))
    waited = time.monotonic() - started
    assert [v.status for v in verdicts] == [VerdictStatus.TIMEOUT] * n
    assert waited >= gate.deadline_for(n)  # never cut short by the one-claim deadline
    assert f"{gate.deadline_for(n):g}s of work" in (verdicts[0].reason or "")


def test_a_batch_slower_than_one_claims_deadline_is_still_checked() -> None:
    """Eight claims, answered after the one-claim deadline has long passed but inside
    the batch's: every claim gets a real verdict."""
    release = threading.Event()

    def slow(claim: str, context: str) -> float:
        release.wait(PATIENCE_S)
        return grounded(claim, context)

    gate = Gate(
        ScriptedBackend(slow), REFUSE_UNGROUNDED, deadline=0.1, deadline_per_claim=5.0, cache_size=0
    )
    with ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        pending = pool.submit(gate.check_many, claims(8))
        wait_until(lambda: time.monotonic() - started > 2 * gate.deadline_for(1), "past 1 claim")
        release.set()
        verdicts = pending.result()
    assert [v.status for v in verdicts] == [VerdictStatus.GROUNDED] * 8


# -- waiting for the model ------------------------------------------------------------


def queued_behind_the_test(gate: Gate, backend: Held) -> tuple[Future[Any], float]:
    """Hold the backend's model from the test thread and start a check that queues for it."""
    backend.lock.acquire()
    pool = ThreadPoolExecutor(1)
    started = time.monotonic()
    pending = pool.submit(gate.check, "The user likes tea.", ["User: I like tea."])
    pool.shutdown(wait=False)
    wait_until(lambda: backend.lock.queued() == 1, "the check queues for the model")
    return pending, started


def test_waiting_for_the_model_behind_another_call_does_not_count() -> None:
    backend = Held()
    gate = Gate(backend, deadline=1.0, deadline_per_claim=0.0, lock_wait=PATIENCE_S)
    pending, started = queued_behind_the_test(gate, backend)
    try:
        wait_until(lambda: time.monotonic() - started > 2.5 * gate.deadline, "past the deadline")
    finally:
        backend.lock.release()
    verdict = pending.result(PATIENCE_S)
    assert verdict.status == VerdictStatus.GROUNDED  # a real verdict, not a timeout


def test_a_call_waits_for_the_model_at_most_lock_wait_then_says_it_was_busy() -> None:
    backend = Held()
    gate = Gate(backend, deadline=PATIENCE_S, lock_wait=0.3)
    pending, started = queued_behind_the_test(gate, backend)
    try:
        verdict = pending.result(PATIENCE_S)
        waited = time.monotonic() - started
        assert verdict.status == VerdictStatus.TIMEOUT and verdict.accepted
        assert "busy" in (verdict.reason or "") and waited >= gate.lock_wait
        wait_until(lambda: backend.lock.queued() == 0, "the cancelled call leaves the queue")
    finally:
        backend.lock.release()
    assert not backend.lock.locked()


def test_the_deadline_holds_for_work_that_starts_after_a_wait_for_the_model() -> None:
    """Queued first, then given the model and stalling: the gate must notice that the
    call got the model and time it out after its deadline, not after lock_wait."""
    backend = Held(stall=True)
    gate = Gate(backend, deadline=0.5, deadline_per_claim=0.0, lock_wait=60.0)
    pending, _ = queued_behind_the_test(gate, backend)
    released = time.monotonic()
    backend.lock.release()
    verdict = pending.result(60.0)
    took = time.monotonic() - released
    assert verdict.status == VerdictStatus.TIMEOUT
    assert "of work" in (verdict.reason or "") and took < PATIENCE_S
    assert backend.finished.wait(PATIENCE_S) and not backend.lock.locked()


class Interrupted(threading.Event):
    """An Event whose wait is interrupted (as by KeyboardInterrupt): at once, or only
    after the lock was handed over (``after_grant``)."""

    after_grant = False

    def wait(self, timeout: float | None = None) -> bool:
        if self.after_grant:
            super().wait(PATIENCE_S)
        raise KeyboardInterrupt


@pytest.mark.parametrize("after_grant", [False, True], ids=["queued", "granted"])
@pytest.mark.parametrize("with_control", [False, True], ids=["plain", "control"])
def test_an_exception_while_waiting_for_the_model_never_strands_the_lock(
    monkeypatch: pytest.MonkeyPatch, after_grant: bool, with_control: bool
) -> None:
    from gate.backends import base

    class Waiter(base._Waiter):
        def __init__(self) -> None:
            super().__init__()
            self.event = Interrupted()
            self.event.after_grant = after_grant

    lock = ModelLock()
    lock.acquire()
    monkeypatch.setattr(base, "_Waiter", Waiter)
    raised: list[BaseException] = []

    def take() -> None:
        try:
            lock.acquire(CallControl() if with_control else None)
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=take)
    thread.start()
    if after_grant:
        wait_until(lambda: lock.queued() == 1, "the thread queues")
        lock.release()  # handed to the thread, whose wait is then interrupted
        thread.join(PATIENCE_S)
    else:
        thread.join(PATIENCE_S)  # interrupted while queued: it must have left the queue
        assert lock.queued() == 0 and lock.locked()
        lock.release()
    assert [type(e) for e in raised] == [KeyboardInterrupt]
    assert lock.queued() == 0 and not lock.locked()  # nobody holds it: free for the next
    monkeypatch.undo()
    with lock.hold():
        assert lock.locked()


def test_calls_take_turns_per_mini_batch_in_arrival_order() -> None:
    lock = ModelLock()
    order: list[str] = []
    lock.acquire()

    def turn(name: str) -> None:
        with lock.hold():
            order.append(name)

    threads = []
    for name in "abc":
        thread = threading.Thread(target=turn, args=(name,))
        thread.start()
        threads.append(thread)
        queued = len(threads)
        wait_until(lambda n=queued: lock.queued() == n, f"{name} queues")
    lock.release()
    for thread in threads:
        thread.join(PATIENCE_S)
    assert order == ["a", "b", "c"] and not lock.locked()


# -- cancellation ---------------------------------------------------------------------


def test_a_timed_out_call_is_cancelled_and_frees_the_model() -> None:
    backend = Held(stall=True)
    gate = Gate(backend, deadline=0.2, deadline_per_claim=0.0)
    verdicts = gate.check_many(claims(5))
    assert {v.status for v in verdicts} == {VerdictStatus.TIMEOUT}
    assert backend.finished.wait(PATIENCE_S), "the abandoned call never stopped"
    assert not backend.lock.locked() and backend.batches_after_cancel == 0
    # A call that only reaches the model after the gate gave up never computes.
    control = CallControl()
    control.cancel()
    with pytest.raises(Cancelled):
        Held().estimate_many([("a", "b")], control=control)


class CountingEmbed:
    """Wraps the encoder's model call: counts its calls, cancels ``control`` after the first."""

    def __init__(self, embed: Callable[[list[str]], Any], control: CallControl) -> None:
        self.embed = embed
        self.control = control
        self.calls = 0

    def __call__(self, texts: list[str]) -> Any:
        self.calls += 1
        self.control.cancel()  # the gate gives up while this mini-batch runs
        return self.embed(texts)


def test_the_embedded_backend_stops_within_one_mini_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    encoder = shared_encoder()
    encoder.recent.clear()  # texts kept from an earlier test would not reach the model
    backend = EmbeddedBackend(encoder, max_segments=64)
    context = " ".join(f"Sentence number {i} is about topic {i}." for i in range(64))
    control = CallControl()
    counting = CountingEmbed(encoder._embed, control)
    monkeypatch.setattr(encoder, "_embed", counting)
    with pytest.raises(Cancelled):
        backend.estimate_many([("The user likes topic 3.", context)], control=control)
    assert counting.calls == 1  # of five mini-batches
    assert not encoder._lock.locked()
    monkeypatch.undo()
    assert 0 <= backend.estimate_many([("The user likes topic 3.", context)])[0] <= 1


def test_long_evidence_costs_a_bounded_number_of_embeddings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    filler = [f"Meeting {i} covered the budget of project {i} in detail." for i in range(400)]
    filler.insert(250, ALLERGY)
    pieces = split("The user is allergic to peanuts.", " ".join(filler))
    assert len(pieces.segments) == 401 and len(pieces.scored) == MAX_SCORED_SEGMENTS
    assert 250 in pieces.scored  # the sentence that states it is among those scored
    encoder = shared_encoder()
    encoder.recent.clear()
    seen: list[int] = []
    embed = encoder._embed

    def recording(texts: list[str]) -> Any:
        seen.append(len(texts))
        return embed(texts)

    monkeypatch.setattr(encoder, "_embed", recording)
    verdict = Gate(EmbeddedBackend(encoder), deadline=PATIENCE_S, cache_size=0).check(
        "The user is allergic to peanuts.", [" ".join(filler)]
    )
    assert sum(seen) <= 2 + MAX_SCORED_SEGMENTS  # claim, its sentence, the scored segments
    assert verdict.status == VerdictStatus.GROUNDED


# -- the store: timed-out writes, and the next write ------------------------------------


class StallingEmbedded(EmbeddedBackend):
    """The real embedded verifier, except that a claim naming ``STALL`` holds the model
    until its call is cancelled (the 120 kB write of the issue, made deterministic)."""

    STALL = "long report"

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        if any(self.STALL in claim for claim, _ in pairs):
            assert control is not None
            with self.encoder._lock.hold(control):
                while not control.cancelled:
                    time.sleep(0.005)
            control.check()
        return super().estimate_many(pairs, control)


@pytest.fixture
def stalling_store(data_dir: Path, tmp_path: Path) -> Iterator[Store]:
    gate, index = Gate(StallingEmbedded()), tmp_path / "index"
    with memstore.open(data_dir, namespace="user:alice", gate=gate, index=index) as store:
        store.add_fact(**allergy("peanuts"), ungated=True)  # open everything first
        yield store


@pytest.mark.both_databases
def test_after_a_timed_out_write_a_false_fact_is_refused_not_stored(stalling_store: Store) -> None:
    slow = Gate(StallingEmbedded(), deadline=0.2, deadline_per_claim=0.0)
    timed_out = stalling_store.add_fact(
        statement="Alice wrote the long report.",
        members=[("Alice", "person", "author")],
        evidence=["Alice: I wrote the long report last week."],
        gate=slow,
    )
    # Not checked, so not admitted: stored pending, out of default reads and search.
    assert (timed_out.status, timed_out.verdict) == (FactStatus.PENDING, "timeout")
    assert timed_out.confidence == pytest.approx(0.95 * 0.5)
    assert timed_out.next_check_at == timed_out.recorded_at  # due for re-verification now
    assert "deadline" in (stalling_store.verifications(timed_out.id)[0].reason or "")
    assert timed_out.id not in [h.fact.id for h in stalling_store.search("long report")]
    assert [h.fact.id for h in stalling_store.search("long report", statuses=["pending"])] == [
        timed_out.id
    ]
    # The next write shares the model; the abandoned call must have let go of it.
    next_gate = Gate(StallingEmbedded(), REFUSE_UNGROUNDED, deadline=PATIENCE_S, lock_wait=10.0)
    before = row_counts(stalling_store.url)
    with pytest.raises(ErrFactNotGrounded) as refused:
        stalling_store.add_fact(
            statement="Alice is allergic to shellfish.",
            members=[("Alice", "person", "patient"), ("shellfish", "food", "allergen")],
            evidence=["Alice: just so you know, I'm allergic to peanuts."],
            gate=next_gate,
        )
    assert refused.value.verdict != "timeout"
    after = row_counts(stalling_store.url)
    assert after["facts"] == before["facts"] and after["rejections"] == before["rejections"] + 1
    assert not [f for f in stalling_store.facts_about("Alice") if "shellfish" in f.statement]


@pytest.mark.both_databases
def test_too_many_claims_or_too_much_evidence_is_refused_with_nothing_written(
    data_dir: Path,
) -> None:
    backend = ScriptedBackend(grounded)
    limits = Limits(max_claims=3, max_evidence_chars=1_000)
    with memstore.open(
        data_dir, namespace="user:alice", gate=Gate(backend), limits=limits, index=False
    ) as store:
        store.add_fact(**allergy("peanuts"), ungated=True)
        before = row_counts(store.url)
        big = "User: I am allergic to many things. " * 30  # 1,080 characters
        with pytest.raises(TooLarge) as err:
            store.add_fact(**allergy("milk", evidence=[big]))
        assert err.value.field == "evidence" and "1000" in err.value.reason
        with pytest.raises(InvalidInput) as err:
            store.add_facts([allergy(f"food {i}") for i in range(4)])
        assert err.value.field == "facts" and not isinstance(err.value, TooLarge)
        halves = [allergy(f"food {i}", evidence=[f"{i}: " + "x" * 600]) for i in range(2)]
        with pytest.raises(TooLarge) as err:
            store.add_facts(halves)
        assert err.value.field == "facts.1.evidence"
        with pytest.raises(InvalidInput) as err:
            store.remember(
                "The user likes tea. The user likes jam. The user likes cake. The user likes pie.",
                ["User: tea, jam, cake and pie."],
                members=["user"],
            )
        assert err.value.field == "text"
        with pytest.raises(TooLarge) as err:
            store.remember("The user likes tea.", [big], members=["user"])
        assert err.value.field == "evidence"
        with pytest.raises(TooLarge) as err:
            store.verify_claim("The user likes tea.", [big])
        assert err.value.field == "evidence"
        assert row_counts(store.url) == before and backend.batches == []
        # Shared evidence counts once; and writes without the gate are not claims checked.
        shared = [allergy(f"food {i}", evidence=["User: " + "y" * 900]) for i in range(3)]
        assert len(store.add_facts(shared)) == 3
        assert len(store.add_facts([allergy(f"dish {i}") for i in range(5)], ungated=True)) == 5


def test_limits_come_from_the_settings_and_are_checked(tmp_path: Path) -> None:
    settings = memstore.load_settings(
        store={"url": str(tmp_path / "mem"), "max_claims": 2, "max_evidence_chars": 50},
        hallucination={"enabled": False},
    )
    with settings.open("user:alice", index=False) as store:
        assert store.limits == Limits(max_claims=2, max_evidence_chars=50)
    with pytest.raises(memstore.InvalidInput, match=r"limits\.max_claims"):
        Limits(max_claims=0)
    from gate import ConfigError

    with pytest.raises(ConfigError) as err:
        memstore.load_settings(store={"max_evidence_chars": 0})
    assert err.value.field == "store.max_evidence_chars"


# -- REST -------------------------------------------------------------------------------

KEY = "a-long-random-key-for-alice-0001"
BASE = "/v1/namespaces/user:alice"


def test_rest_answers_413_and_400_naming_the_field_and_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "mem"
    settings = memstore.load_settings(
        store={"url": str(data), "max_claims": 2, "max_evidence_chars": 1_000, "index": False},
        server={"api_keys": {KEY: ["user:*"]}, "max_body_bytes": 200_000},
    )
    headers = {"X-API-Key": KEY}
    settings.open("user:alice").close()  # create the database, to count its rows
    before = row_counts(f"sqlite:///{data}/memstore.db")
    with TestClient(create_app(settings)) as client:
        fact = allergy("milk", evidence=["User: " + "z" * 1_200])
        answer = client.post(f"{BASE}/facts", json=fact, headers=headers)
        assert answer.status_code == 413, answer.text
        assert answer.json()["error"] == "too_large" and answer.json()["field"] == "evidence"
        small = {**fact, "evidence": ["User: I'm allergic to milk."]}
        answer = client.post(f"{BASE}/facts/batch", json={"facts": [small] * 3}, headers=headers)
        assert answer.status_code == 400, answer.text
        assert answer.json()["field"] == "facts"
        answer = client.post(
            f"{BASE}/verify_claim",
            json={"claim": "The user likes milk.", "evidence": ["z" * 1_200]},
            headers=headers,
        )
        assert answer.status_code == 413 and answer.json()["field"] == "evidence", answer.text
        huge = {**fact, "evidence": ["z" * 150_000, "y" * 150_000]}
        answer = client.post(f"{BASE}/facts", json=huge, headers=headers)
        assert answer.status_code == 413 and answer.json()["field"] == "body", answer.text
        assert row_counts(f"sqlite:///{data}/memstore.db") == before


# -- the CLI ----------------------------------------------------------------------------


def test_cli_verify_prints_a_timeout_as_not_checked_and_exits_4(tmp_path: Path) -> None:
    """The real CLI and the real embedded verifier with a deadline no model can meet:
    the verifier thread is still inside torch when the command ends, and the process
    must exit cleanly (it used to abort with 'terminate called', exit 134)."""
    evidence = " ".join(f"Note {i}: Alice mentioned peanuts and meeting {i}." for i in range(300))
    env = {
        **os.environ,
        "MEMSTORE_URL": str(tmp_path / "mem"),
        "MEMSTORE_NAMESPACE": "user:alice",
        "MEMSTORE_HALLUCINATION__TIMEOUT": "0.000001",
        "MEMSTORE_HALLUCINATION__TIMEOUT_PER_CLAIM": "0",
    }
    env.pop("MEMSTORE_CONFIG", None)
    command = [sys.executable, "-m", "memstore.cli", "verify"]
    done = subprocess.run(
        [*command, "Alice is allergic to shellfish.", "-e", "-"],
        input=evidence,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert "terminate called" not in done.stderr and done.returncode != 134, done.stderr
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert done.stdout.startswith("not checked (timeout)") and "True" not in done.stdout
    too_big = subprocess.run(
        [*command, "Alice likes tea.", "-e", "-"],
        input="x" * 100_001,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert too_big.returncode == 2 and "evidence" in too_big.stderr, too_big.stderr
