"""Gate mechanics: one batched call, the cache, the deadline, and faulty backends."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from gate import (
    REFUSE_UNGROUNDED,
    Check,
    Citation,
    ContextItem,
    Gate,
    ScriptedBackend,
    VerdictStatus,
    VerifierBackend,
)
from gate.evidence import REMOVED


def support(claim: str, context: str) -> float:
    """A toy model: a claim is supported when its last word appears in the context."""
    return 0.9 if claim.rstrip(".").split()[-1] in context else 0.1


def test_check_many_makes_one_backend_call() -> None:
    backend = ScriptedBackend(support)
    gate = Gate(backend)
    checks = [Check.of(f"The user likes {x}.", ["User: I like tea and jam."]) for x in "abc"]
    checks.append(Check.of("no evidence", []))
    verdicts = gate.check_many(checks)
    assert len(verdicts) == 4 and verdicts[3].status == VerdictStatus.NO_EVIDENCE
    assert len(backend.batches) == 1
    assert len(backend.batches[0]) == 6  # p1 and p0 for three claims


def test_p0_sees_the_scrubbed_context() -> None:
    backend = ScriptedBackend(support)
    text = "User: I'm allergic to peanuts. I live in Lisbon."
    start = text.index("peanuts")
    verdict = Gate(backend).check(
        "The user is allergic to peanuts.",
        [ContextItem("m1", text)],
        citations=[Citation("m1", start, start + len("peanuts"))],
    )
    p1_context, p0_context = (ctx for _claim, ctx in backend.batches[0])
    assert "peanuts" in p1_context and "peanuts" not in p0_context
    assert REMOVED in p0_context and "Lisbon" in p0_context
    assert verdict.status == VerdictStatus.GROUNDED


def test_identical_pairs_are_asked_once() -> None:
    backend = ScriptedBackend(support)
    Gate(backend, cache_size=0).check_many([Check.of("I like tea.", ["tea"])] * 3)
    assert len(backend.batches[0]) == 2


def test_deterministic_results_are_cached() -> None:
    backend = ScriptedBackend(support)
    gate = Gate(backend)
    first = gate.check("The user likes tea.", ["User: tea please."])
    second = gate.check("The user likes tea.", ["User: tea please."])
    assert len(backend.batches) == 1
    assert not first.cached and second.cached
    assert second.model_dump(exclude={"cached", "latency_ms"}) == first.model_dump(
        exclude={"cached", "latency_ms"}
    )


def test_non_deterministic_backends_are_not_cached() -> None:
    backend = ScriptedBackend(support, deterministic=False)
    gate = Gate(backend)
    gate.check("The user likes tea.", ["tea"])
    gate.check("The user likes tea.", ["tea"])
    assert len(backend.batches) == 2


def test_cache_entries_expire() -> None:
    backend = ScriptedBackend(support)
    gate = Gate(backend, cache_ttl=0.05)
    gate.check("The user likes tea.", ["tea"])
    time.sleep(0.1)
    gate.check("The user likes tea.", ["tea"])
    assert len(backend.batches) == 2


class NeverAnswers(VerifierBackend):
    name = "never"

    def __init__(self) -> None:
        self.release = threading.Event()

    def estimate_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.release.wait()  # sleeps until the test ends
        return [0.5] * len(pairs)


def test_a_backend_that_never_answers_times_out() -> None:
    backend = NeverAnswers()
    gate = Gate(backend, deadline=0.2)
    started = time.monotonic()
    verdicts = gate.check_many([Check.of("a", ["x"], confidence=0.9), Check.of("b", ["y"])])
    waited = time.monotonic() - started
    backend.release.set()
    # A liveness bound, not a speed goal: the call returns instead of hanging.
    assert waited < 5.0
    assert [v.status for v in verdicts] == [VerdictStatus.TIMEOUT, VerdictStatus.TIMEOUT]
    assert verdicts[0].accepted and verdicts[0].confidence == pytest.approx(0.45)


@pytest.mark.parametrize(
    "answer", [float("nan"), float("inf"), -0.1, 1.5, "yes", None, True], ids=repr
)
def test_invalid_probabilities_are_verifier_errors(answer: object) -> None:
    gate = Gate(ScriptedBackend(lambda _c, _x: answer), REFUSE_UNGROUNDED)  # type: ignore[arg-type,return-value]
    verdict = gate.check("claim", ["evidence"])
    assert verdict.status == VerdictStatus.VERIFIER_ERROR
    assert verdict.accepted and verdict.confidence == pytest.approx(0.95 * 0.5)


def test_wrong_number_of_answers_is_a_verifier_error() -> None:
    class Short(VerifierBackend):
        def estimate_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            return [0.9]

    verdict = Gate(Short()).check("claim", ["evidence"])
    assert verdict.status == VerdictStatus.VERIFIER_ERROR
    assert "wrong number" in (verdict.reason or "")


def test_verdicts_name_the_backend_and_latency() -> None:
    verdict = Gate(ScriptedBackend.fixed(0.2, 0.9)).check("claim", ["evidence"])
    assert verdict.backend == "scripted:0.2/0.9"
    assert verdict.latency_ms is not None and verdict.latency_ms >= 0


def test_a_forgetting_gate_asks_the_verifier_again() -> None:
    backend = ScriptedBackend(support)
    gate = Gate(backend)
    gate.check("The user likes tea.", ["User: tea please."])
    gate.forget()
    again = gate.check("The user likes tea.", ["User: tea please."])
    assert len(backend.batches) == 2 and not again.cached


def test_metrics_count_claims_verdicts_and_cache_hits() -> None:
    gate = Gate(ScriptedBackend(support), REFUSE_UNGROUNDED)
    gate.check_many([Check.of("I like tea.", ["tea"]), Check.of("x", [])])
    gate.check("I like tea.", ["tea"])
    metrics = gate.metrics.as_dict()
    assert metrics["claims"] == 3
    assert metrics["verdicts"] == {"grounded": 2, "no_evidence": 1}
    assert metrics["cache_hit_rate"] == pytest.approx(0.5)  # 2 misses, then 2 hits
    assert metrics["latency_count"] == 2
    text = gate.metrics.prometheus()
    assert 'gate_verdicts_total{status="no_evidence"} 1.0' in text
    assert "gate_backend_latency_seconds_bucket" in text
