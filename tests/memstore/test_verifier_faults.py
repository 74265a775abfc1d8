"""A verifier that fails in any way never crashes a write, never holds it past the gate's
deadline, and never loses it: the fact is stored ``pending`` (not checked, so out of
default reads) with reduced confidence, its verdict says what happened, and it is due
again soon."""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from db_rows import row_counts
from samples import allergy

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED
from memstore import FactPublic, FactStatus, Store

DEADLINE = 0.4
#: Time a write may take beyond the deadline for its own SQL and index work (generous:
#: CI machines are loaded); a verifier left alone would have taken far longer.
STORAGE_SLACK = 5.0


def _raises(claim: str, context: str) -> float:
    raise RuntimeError("CUDA error: device-side assert triggered")


FAULTS: dict[str, tuple[Callable[[str, str], Any], str]] = {
    "raises": (_raises, "verifier_error"),
    "nan": (lambda c, x: math.nan, "verifier_error"),
    "negative": (lambda c, x: -0.2, "verifier_error"),
    "above one": (lambda c, x: 1.7, "verifier_error"),
    "infinite": (lambda c, x: math.inf, "verifier_error"),
    "garbage text": (lambda c, x: "Sure! As an AI model I think YES", "verifier_error"),
    "none": (lambda c, x: None, "verifier_error"),
}


@pytest.fixture
def default_store(data_dir: Path) -> Iterator[Store]:
    with memstore.open(data_dir, namespace="user:alice") as opened:
        opened.add_fact(**allergy("peanuts"), ungated=True)  # open everything before timing
        yield opened


def facts(n: int) -> list[dict[str, Any]]:
    """``n`` distinct facts, each with its own evidence."""
    foods = ["sesame", "kiwi", "lupin", "mustard", "celery", "soy", "walnuts", "squid"]
    return [allergy(food) for food in foods[:n]]


def grounded(claim: str, context: str) -> float:
    return 0.05 if REMOVED in context else 0.97


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_faulty_verifier_stores_the_batch_pending_at_reduced_confidence(
    default_store: Store, fault: str
) -> None:
    handler, verdict = FAULTS[fault]
    before = row_counts(default_store.url)
    gate = Gate(
        ScriptedBackend(handler, deterministic=False), deadline=DEADLINE, deadline_per_claim=0
    )
    started = time.perf_counter()
    results = default_store.add_facts(facts(3), gate=gate)
    elapsed = time.perf_counter() - started
    assert [type(r) for r in results] == [FactPublic] * 3
    for fact in results:
        assert isinstance(fact, FactPublic)
        assert (fact.status, fact.verdict) == (FactStatus.PENDING, verdict)
        assert fact.confidence == pytest.approx(0.95 * 0.5)
        assert fact.p0 is None and fact.p1 is None
        assert fact.next_check_at is not None
        assert fact.next_check_at <= fact.recorded_at + default_store.reverify_policy().retry_after
        assert default_store.verifications(fact.id)[0].reason  # says what went wrong
    after = row_counts(default_store.url)
    assert after["facts"] == before["facts"] + 3 and after["rejections"] == before["rejections"]
    assert elapsed < DEADLINE + STORAGE_SLACK
    # The next write, with the verifier healed, is checked as usual.
    healed = default_store.add_fact(
        **allergy("oats"), gate=Gate(ScriptedBackend(grounded), REFUSE_UNGROUNDED)
    )
    assert (healed.status, healed.verdict) == (FactStatus.VERIFIED, "grounded")


def test_a_hanging_verifier_times_out_every_item_of_a_batch(default_store: Store) -> None:
    release = threading.Event()

    def hang(claim: str, context: str) -> float:
        release.wait()
        return 0.97

    gate = Gate(ScriptedBackend(hang), REFUSE_UNGROUNDED, deadline=DEADLINE, deadline_per_claim=0)
    try:
        started = time.perf_counter()
        results = default_store.add_facts(facts(4), gate=gate)
        elapsed = time.perf_counter() - started
    finally:
        release.set()
    assert Counter((r.status, r.verdict) for r in results) == {(FactStatus.PENDING, "timeout"): 4}
    assert elapsed < DEADLINE + STORAGE_SLACK


def test_a_verifier_that_slows_down_under_load_never_holds_a_writer_past_the_deadline(
    default_store: Store,
) -> None:
    """Eight writers at once against a verifier whose answer takes longer the more calls
    are in flight: a write the congestion slows past the deadline times out (with eight
    in flight, every one), one answered in time is grounded; none waits past the deadline
    and none is lost."""
    lock = threading.Lock()
    in_flight = 0

    def congested(claim: str, context: str) -> float:
        nonlocal in_flight
        with lock:
            in_flight += 1
            wait = 0.05 * in_flight
        try:
            time.sleep(wait)
        finally:
            with lock:
                in_flight -= 1
        return grounded(claim, context)

    gate = Gate(
        ScriptedBackend(congested, deterministic=False),
        REFUSE_UNGROUNDED,
        deadline=DEADLINE,
        deadline_per_claim=0,
    )
    before = row_counts(default_store.url)

    def write(food: str) -> tuple[FactPublic, float]:
        started = time.perf_counter()
        fact = default_store.add_fact(**allergy(food), gate=gate)
        return fact, time.perf_counter() - started

    foods = [f"food {n}" for n in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        done = list(pool.map(write, foods))
    outcomes = Counter((fact.status, fact.verdict) for fact, _ in done)
    print(f"8 concurrent writes under a congested verifier: {dict(outcomes)}")
    assert set(outcomes) <= {
        (FactStatus.VERIFIED, "grounded"),
        (FactStatus.PENDING, "timeout"),
    }
    assert outcomes[(FactStatus.PENDING, "timeout")] >= 1  # the load did slow it down
    assert all(elapsed < DEADLINE + STORAGE_SLACK for _, elapsed in done)
    assert row_counts(default_store.url)["facts"] == before["facts"] + 8
    assert sorted(f.statement for f, _ in done) == sorted(
        allergy(food)["statement"] for food in foods
    )
