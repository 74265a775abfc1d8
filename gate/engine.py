"""The Gate: checks claims against evidence with one batched backend call and a deadline.

Backend exceptions, bad outputs (NaN, outside [0, 1], wrong count) and missed
deadlines become ``verifier_error`` / ``timeout`` verdicts; they are never raised
(docs/design.md, Failures never block a write).

The deadline grows with the batch: ``deadline + deadline_per_claim x claims``. It
bounds the backend's own work; time the call spends queued for the model behind other
calls is bounded separately (``lock_wait``). A call past either bound is cancelled:
the backend stops at its next mini-batch and frees the model for the next write.
"""

from __future__ import annotations

import atexit
import contextvars
import hashlib
import inspect
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from cachetools import TTLCache

from gate.backends.base import CallControl, InputRequired, VerifierBackend
from gate.backends.registry import DEFAULT_BACKEND, create_backend
from gate.budget import DEFAULT_STATED_CONFIDENCE as DEFAULT_STATED_CONFIDENCE
from gate.checks import Finding
from gate.checks import check_many as check_claims
from gate.evidence import (
    Citation,
    ContextItem,
    as_said,
    quoted,
    render,
    scrub,
    unknown_citations,
)
from gate.metrics import GateMetrics
from gate.policy import GatePolicy, decide, degraded, no_model_call, refused
from gate.verdict import Verdict, VerdictStatus

#: The deadline of a backend call is DEFAULT_DEADLINE_S + DEFAULT_DEADLINE_PER_CLAIM_S per
#: claim checked: six and five times the latency budget (500 ms + 100 ms per claim; see
#: docs/design.md, Latency budget), so that a write the verifier can check is checked on
#: a busy 2-core machine too.
DEFAULT_DEADLINE_S = 3.0
DEFAULT_DEADLINE_PER_CLAIM_S = 0.5
#: How long a call may wait for the model while other calls use it.
DEFAULT_LOCK_WAIT_S = 30.0
#: At interpreter exit, how long to wait for cancelled backend calls to stop.
EXIT_WAIT_S = 30.0
DEFAULT_CACHE_TTL_S = 3600.0
DEFAULT_CACHE_SIZE = 10_000

Evidence = str | Sequence[str] | Sequence[ContextItem]


@dataclass(frozen=True, slots=True)
class Check:
    """One claim to verify against its evidence. No citations: all evidence is cited."""

    claim: str
    evidence: tuple[ContextItem, ...]
    citations: tuple[Citation, ...] = ()
    confidence: float = DEFAULT_STATED_CONFIDENCE

    @classmethod
    def of(
        cls,
        claim: str,
        evidence: Evidence,
        citations: Sequence[Citation] = (),
        confidence: float = DEFAULT_STATED_CONFIDENCE,
    ) -> Check:
        """Build a Check; plain strings become items with ids "1", "2", ..."""
        if isinstance(evidence, str):
            evidence = [evidence]
        items = tuple(
            e if isinstance(e, ContextItem) else ContextItem(str(i), str(e))
            for i, e in enumerate(evidence, start=1)
        )
        return cls(claim, items, tuple(citations), confidence)


@dataclass
class _Job:
    index: int
    check: Check
    p1_pair: tuple[str, str]
    p0_pair: tuple[str, str]
    #: The evidence as said, untagged: what the checks read.
    said: str = ""
    #: The quotes it cites, as said (``evidence.quoted``).
    cited: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    results: dict[tuple[str, str], float] = field(default_factory=dict)
    hits: int = 0


class Gate:
    """Grounding gate over one verifier backend.

    ``backend`` is a VerifierBackend, a backend name, or None for the embedded
    default. A ``check_many`` call gives the backend ``deadline + deadline_per_claim x
    claims`` seconds of work (``deadline_for``) and ``lock_wait`` seconds, in all, of
    waiting for the model behind other calls; past either, the claims get ``timeout``
    verdicts and the backend call is cancelled.
    """

    def __init__(
        self,
        backend: VerifierBackend | str | None = None,
        policy: GatePolicy | None = None,
        *,
        deadline: float = DEFAULT_DEADLINE_S,
        deadline_per_claim: float = DEFAULT_DEADLINE_PER_CLAIM_S,
        lock_wait: float = DEFAULT_LOCK_WAIT_S,
        cache_ttl: float = DEFAULT_CACHE_TTL_S,
        cache_size: int = DEFAULT_CACHE_SIZE,
        speakers: bool = True,
    ) -> None:
        if not deadline > 0:
            raise ValueError("deadline must be positive")
        if not deadline_per_claim >= 0:
            raise ValueError("deadline_per_claim must not be negative")
        if not lock_wait > 0:
            raise ValueError("lock_wait must be positive")
        if backend is None or isinstance(backend, str):
            backend = create_backend(backend or DEFAULT_BACKEND)
        self.backend = backend
        self.policy = policy or GatePolicy()
        self.deadline = deadline
        self.deadline_per_claim = deadline_per_claim
        self.lock_wait = lock_wait
        self._takes_control = _takes_control(backend)
        #: Read each turn's first person as its speaker (``evidence.as_said``) before the
        #: verifier sees the evidence; False: the evidence exactly as written.
        self.speakers = speakers
        self._cache: TTLCache[tuple[str, str, str], float] | None = (
            TTLCache(maxsize=cache_size, ttl=cache_ttl)
            if backend.deterministic and cache_size > 0 and cache_ttl > 0
            else None
        )
        self._cache_lock = threading.Lock()
        self.metrics = GateMetrics()

    @property
    def caches(self) -> bool:
        """Whether the verifier's answers are kept (``cache_size``, ``cache_ttl``): asking
        about many claims in one call first makes their later one-by-one checks cheap."""
        return self._cache is not None

    def _read(self, items: Sequence[ContextItem]) -> Sequence[ContextItem]:
        """The evidence as the verifier reads it (see ``speakers``)."""
        return as_said(items) if self.speakers else items

    def deadline_for(self, claims: int) -> float:
        """Seconds of backend work allowed for a call that checks ``claims`` claims."""
        return self.deadline + self.deadline_per_claim * max(1, claims)

    def check(
        self,
        claim: str,
        evidence: Evidence,
        citations: Sequence[Citation] = (),
        confidence: float = DEFAULT_STATED_CONFIDENCE,
        *,
        policy: GatePolicy | None = None,
    ) -> Verdict:
        """Verify one claim; see ``check_many``."""
        return self.check_many([Check.of(claim, evidence, citations, confidence)], policy=policy)[0]

    def check_many(
        self, checks: Sequence[Check], *, policy: GatePolicy | None = None
    ) -> list[Verdict]:
        """Verify claims with at most one backend call for all of them.

        See docs/design.md, One backend call.
        """
        policy = policy or self.policy
        verdicts: list[Verdict | None] = [None] * len(checks)
        jobs: list[_Job] = []
        for i, chk in enumerate(checks):
            early = _before_model(chk)
            if early is not None:
                verdicts[i] = early
                continue
            items = [item for item in chk.evidence if item.text.strip()]
            said = self._read(items)
            jobs.append(
                _Job(
                    i,
                    chk,
                    said="\n\n".join(item.text for item in said),
                    cited=quoted(items, chk.citations, self.speakers) if policy.checks else (),
                    p1_pair=(chk.claim, render(said)),
                    p0_pair=(chk.claim, render(self._read(scrub(items, chk.citations)))),
                )
            )
        missing = self._from_cache(jobs)
        # The checks read on a thread of their own while the backend is asked, where
        # the evidence is short: the model's work (onnxruntime, a server) leaves the
        # interpreter free for the parse. Longer evidence is read first, as the parse
        # would then take cores from the model inside its deadline; with every answer
        # kept, nothing runs beside the parse, and a thread would only cost its start.
        reading: threading.Thread | None = None
        if policy.checks and jobs:
            if missing and sum(len(text) for text in {job.said for job in jobs}) <= BESIDE_CHARS:
                reading = threading.Thread(target=_read_beside, args=(jobs,), name="gate-checks")
                reading.start()
            else:
                _read_beside(jobs)
        started = time.perf_counter()
        try:
            failure = self._estimate(jobs, missing)
            latency_ms = (time.perf_counter() - started) * 1000.0
        finally:
            if reading is not None:
                reading.join()
        for job in jobs:
            verdicts[job.index] = self._verdict(job, failure, policy, latency_ms)
        done = [v for v in verdicts if v is not None]
        hits = sum(job.hits for job in jobs)
        misses = 2 * len(jobs) - hits if self._cache is not None else 0
        self.metrics.observe(done, latency_ms / 1000.0, hits, misses)
        return done

    def _from_cache(self, jobs: list[_Job]) -> list[tuple[str, str]]:
        """Fill each job's results the cache holds; the pairs it lacks, each once."""
        missing: list[tuple[str, str]] = []
        for job in jobs:
            for pair in (job.p1_pair, job.p0_pair):
                hit = self._cache_get(pair)
                if hit is not None:
                    job.results[pair] = hit
                    job.hits += 1
                elif pair not in missing:
                    missing.append(pair)
        return missing

    def _estimate(
        self, jobs: list[_Job], missing: list[tuple[str, str]]
    ) -> tuple[VerdictStatus, str] | None:
        """Fill the ``missing`` results of each job with one backend call; return a failure."""
        if not missing:
            return None
        wanted = set(missing)
        claims = sum(1 for job in jobs if {job.p1_pair, job.p0_pair} & wanted)
        control = CallControl()
        backend = self.backend
        if self._takes_control:

            def call() -> list[float]:
                return backend.estimate_many(missing, control=control)  # type: ignore[call-arg]
        else:

            def call() -> list[float]:
                return backend.estimate_many(missing)

        try:
            answers = _call_with_deadline(call, control, self.deadline_for(claims), self.lock_wait)
        except _TimedOut as exc:
            return VerdictStatus.TIMEOUT, f"{backend.name}: {exc}"
        except InputRequired:
            raise  # not a failure: the caller fetches the answers and asks again
        except Exception as exc:  # any backend failure is a verdict, never a crash
            return VerdictStatus.VERIFIER_ERROR, f"{type(exc).__name__}: {exc}"[:500]
        if not isinstance(answers, list | tuple) or len(answers) != len(missing):
            return VerdictStatus.VERIFIER_ERROR, "the backend returned the wrong number of answers"
        fresh = dict(zip(missing, answers, strict=True))
        for job in jobs:
            for pair in (job.p1_pair, job.p0_pair):
                if pair in fresh:
                    job.results[pair] = fresh[pair]
        for pair, p in fresh.items():
            if _valid(p):
                self._cache_put(pair, float(p))
        return None

    def _verdict(
        self,
        job: _Job,
        failure: tuple[VerdictStatus, str] | None,
        policy: GatePolicy,
        latency_ms: float,
    ) -> Verdict:
        stated = job.check.confidence
        p1, p0 = job.results.get(job.p1_pair), job.results.get(job.p0_pair)
        refute = next((f for f in job.findings if f.effect == "refute"), None)
        if p1 is None or p0 is None:
            status, reason = failure or (VerdictStatus.VERIFIER_ERROR, "no answer")
            verdict = degraded(status, stated, policy, reason)
        elif not (_valid(p1) and _valid(p0)):
            reason = (
                getattr(p1, "failure", None)
                or getattr(p0, "failure", None)
                or f"the backend returned invalid probabilities (p1={p1!r}, p0={p0!r})"
            )
            verdict = degraded(VerdictStatus.VERIFIER_ERROR, stated, policy, reason)
        else:
            refute = None  # decide() weighs it with the verifier's numbers
            spread = (_spread(p1), _spread(p0))
            verdict = decide(float(p0), float(p1), stated, policy, job.findings, spread=spread)
        if refute is not None:  # a check refutes it: refused, whether the verifier answered
            verdict = refused(verdict, refute)
        cached = job.hits == 2  # both p1 and p0 came from the cache
        return verdict.model_copy(
            update={"backend": self.backend.identity, "latency_ms": latency_ms, "cached": cached}
        )

    def forget(self) -> None:
        """Drop the verifier's kept answers: the next check of any claim asks it again."""
        if self._cache is not None:
            with self._cache_lock:
                self._cache.clear()

    def _key(self, pair: tuple[str, str]) -> tuple[str, str, str]:
        claim, context = pair
        return (self.backend.identity, _digest(claim), _digest(context))

    def _cache_get(self, pair: tuple[str, str]) -> float | None:
        if self._cache is None:
            return None
        with self._cache_lock:
            return self._cache.get(self._key(pair))

    def _cache_put(self, pair: tuple[str, str], p: float) -> None:
        if self._cache is not None:
            with self._cache_lock:
                self._cache[self._key(pair)] = p


def _read_beside(jobs: list[_Job]) -> None:
    """Each job's findings (``gate.checks``): the claim beside its evidence as said. A
    failure of the checks holds the claims (a doubt); it never verifies or crashes."""
    try:
        found = check_claims([(job.check.claim, job.said, job.cited) for job in jobs])
        for job, findings in zip(jobs, found, strict=True):
            job.findings = findings
    except Exception as exc:  # the checks are code like any other: never a crash
        reason = f"the checks could not read the evidence ({type(exc).__name__})"
        for job in jobs:
            job.findings = (Finding("checks", "doubt", reason),)


def _before_model(chk: Check) -> Verdict | None:
    """Row 0 of the decision table: verdicts that need no model call."""
    if not chk.evidence or not any(item.text.strip() for item in chk.evidence):
        return no_model_call(VerdictStatus.NO_EVIDENCE, chk.confidence, "no evidence was given")
    unknown = unknown_citations(chk.evidence, chk.citations)
    if unknown:
        return no_model_call(
            VerdictStatus.UNKNOWN_CITATION,
            chk.confidence,
            f"cited evidence not in the context: {', '.join(unknown)}",
        )
    return None


def _spread(p: float) -> float:
    """The standard deviation of an estimate (``sampling``'s Estimate), else 0: a
    log-probability or a classifier's output is read, not estimated."""
    spread = getattr(p, "spread", 0.0)
    return float(spread) if isinstance(spread, int | float) and math.isfinite(spread) else 0.0


def _valid(p: object) -> bool:
    return (
        isinstance(p, int | float) and not isinstance(p, bool) and math.isfinite(p) and 0 <= p <= 1
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _takes_control(backend: VerifierBackend) -> bool:
    """Whether ``backend.estimate_many`` accepts the ``control`` keyword."""
    try:
        params = inspect.signature(backend.estimate_many).parameters
    except (TypeError, ValueError):
        return False
    return "control" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class _TimedOut(Exception):
    """A backend call ran past its deadline, or waited past ``lock_wait`` for the model."""


#: The most distinct evidence text (characters) of one ``check_many`` whose checks read
#: beside the backend's call rather than before it (a conversation's batch of 16 claims,
#: each with its turn and four before it: about 10,000).
BESIDE_CHARS = 20_000

#: Backend calls still running, with their controls (cancelled and awaited at exit).
_running: dict[threading.Thread, CallControl] = {}
_running_lock = threading.Lock()


def _call_with_deadline(
    fn: Callable[[], list[float]], control: CallControl, deadline: float, lock_wait: float
) -> list[float]:
    """Run ``fn`` on a daemon thread; raise _TimedOut and cancel it past its bounds.

    ``deadline`` bounds the call's own work: its time since it started, less the time
    it spent in ``control.waiting()`` (queued for the model), which ``lock_wait`` bounds.
    A daemon thread, so a backend that never answers cannot block interpreter exit. The
    call runs in a copy of the caller's context (its context variables: which MCP request
    a host model answers for).
    """
    future: Future[list[float]] = Future()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            future.set_result(context.run(fn))
        except BaseException as exc:
            future.set_exception(exc)
        finally:
            with _running_lock:
                _running.pop(threading.current_thread(), None)
            control.finished()  # wake the watcher

    thread = threading.Thread(target=run, name="gate-verifier", daemon=True)
    with _running_lock:
        _running[thread] = control
    started = time.monotonic()
    thread.start()
    while True:
        seen = control.changes()
        waited = control.waited()
        worked = time.monotonic() - started - waited
        if future.done():  # an answer that came just in time is kept
            return future.result()
        if worked >= deadline:
            control.cancel()
            raise _TimedOut(f"no answer after {deadline:g}s of work (the deadline for this batch)")
        if waited >= lock_wait:
            control.cancel()
            raise _TimedOut(
                f"the verifier was busy with other checks: waited {waited:.1f}s for it "
                f"(lock_wait {lock_wait:g}s)"
            )
        # Only one of the two clocks runs at a time, and the call switches between them
        # (queued, then holding the model, then queued again): sleep until the running
        # clock could run out, but wake on every switch and when the call finishes. A
        # switch after ``seen`` was read ends the wait at once, so none is missed.
        step = lock_wait - waited if control.is_waiting else deadline - worked
        control.wait_for_change(seen, max(step, 0.001))


@atexit.register
def _stop_running_calls(timeout: float = EXIT_WAIT_S) -> None:
    """Cancel backend calls still running and give them ``timeout`` seconds to stop, so
    the interpreter does not exit while a verifier thread is inside torch (which aborts)."""
    with _running_lock:
        running = list(_running.items())
    for _thread, control in running:
        control.cancel()
    end = time.monotonic() + timeout
    for thread, _control in running:
        thread.join(max(0.0, end - time.monotonic()))


_default_gate: Gate | None = None
_default_lock = threading.Lock()


def default_gate() -> Gate:
    """The process-wide Gate over the embedded backend, built on first use."""
    global _default_gate
    with _default_lock:
        if _default_gate is None:
            _default_gate = Gate()
        return _default_gate


def verify_claim(
    claim: str,
    evidence: Evidence,
    confidence: float = DEFAULT_STATED_CONFIDENCE,
    *,
    citations: Sequence[Citation] = (),
    gate: Gate | None = None,
    policy: GatePolicy | None = None,
) -> Verdict:
    """Check one claim against evidence (a string or a list of them).

    See docs/design.md, Verdict.

    Uses ``gate`` or the process-wide default gate (embedded backend), under ``policy``
    (None: the gate's own).
    """
    return (gate or default_gate()).check(claim, evidence, citations, confidence, policy=policy)
