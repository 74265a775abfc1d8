"""The openai backend against local servers: logprobs, sampling, retries, silence."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import pytest
from openai_servers import serving, silent_server, top_logprobs

from gate import Gate, VerdictStatus
from gate.backends.llama_server import llama_server as start_llama_server
from gate.backends.openai import BackendError, OpenAIBackend, answer_word, yes_from_top_logprobs

EVIDENCE = ["User: just so you know, I'm allergic to peanuts."]


def test_answer_words() -> None:
    assert [answer_word(t) for t in (" YES", "yes.", "No", " no!", "Yesterday", "")] == [
        "YES",
        "YES",
        "NO",
        "NO",
        None,
        None,
    ]


def test_yes_is_renormalized_against_no() -> None:
    assert yes_from_top_logprobs(top_logprobs(0.9)) == pytest.approx(0.9 / (0.9 + 0.09), rel=1e-9)


def test_a_missing_word_takes_its_least_supportive_bound() -> None:
    assert yes_from_top_logprobs(top_logprobs(0.9, drop="YES")) == 0.0
    top = top_logprobs(0.9, drop="NO")
    kth = math.exp(min(e["logprob"] for e in top))
    assert yes_from_top_logprobs(top) == pytest.approx(0.9 / (0.9 + kth))
    with pytest.raises(BackendError, match="neither YES nor NO"):
        yes_from_top_logprobs([{"token": "The", "logprob": -0.1}])


def test_logprobs_server() -> None:
    with serving("logprobs") as server:
        backend = OpenAIBackend("m", base_url=server.url, mode="logprobs", api_key="k")
        p_true, p_false = backend.estimate_many(
            [("The user is allergic to peanuts.", "[1] x"), ("The user hates tea.", "[1] x")]
        )
        backend.close()
    assert p_true > 0.8 and p_false < 0.2
    request = server.requests[0]
    assert request["logprobs"] is True and request["max_tokens"] == 1
    assert request["temperature"] == 0.0 and request["top_logprobs"] == 10
    assert backend.deterministic


def test_a_server_without_logprobs_is_sampled() -> None:
    with serving("sampling") as server:
        backend = OpenAIBackend("m", base_url=server.url, samples=8)
        p_true = backend.estimate("The user is allergic to peanuts.", "[1] x")
        p_false = backend.estimate("The user hates tea.", "[1] x")
    # 6 YES of 8, then 2 of 8: the Jeffreys posterior means, with their spreads
    assert p_true == pytest.approx(6.5 / 9) and p_false == pytest.approx(2.5 / 9)
    assert p_true.spread == pytest.approx(0.142, abs=0.001)  # type: ignore[attr-defined]
    assert server.requests[0].get("logprobs") is True  # asked once, then sampled
    assert len(server.requests) == 1 + 8 + 8
    assert not any("logprobs" in r for r in server.requests[1:])
    assert all(r["temperature"] == 1.0 and r["max_tokens"] == 4 for r in server.requests[1:])
    assert not backend.deterministic


def test_logprobs_mode_refuses_a_server_without_them() -> None:
    with serving("sampling") as server:
        backend = OpenAIBackend("m", base_url=server.url, mode="logprobs")
        with pytest.raises(BackendError, match="no logprobs"):
            backend.estimate("The user is allergic to peanuts.", "[1] x")


def test_retries_with_backoff_after_a_503() -> None:
    with serving("logprobs", failures=2) as server:
        backend = OpenAIBackend("m", base_url=server.url, retries=2, backoff=0.01)
        assert backend.estimate("The user is allergic to peanuts.", "[1] x") > 0.8
    assert len(server.requests) == 3


def test_a_gate_over_a_failing_server_answers_verifier_error() -> None:
    with serving("logprobs", failures=10) as server:
        backend = OpenAIBackend("m", base_url=server.url, retries=1, backoff=0.01)
        verdict = Gate(backend).check("The user is allergic to peanuts.", EVIDENCE)
    assert verdict.status == VerdictStatus.VERIFIER_ERROR and verdict.accepted
    assert "503" in (verdict.reason or "")


@pytest.mark.parametrize(
    ("timeout", "deadline", "status", "said", "within"),
    [
        pytest.param(0.3, 5.0, VerdictStatus.VERIFIER_ERROR, "Timeout", 5.0, id="request-timeout"),
        pytest.param(30.0, 0.5, VerdictStatus.TIMEOUT, "deadline", 3.0, id="gate-deadline"),
    ],
)
def test_a_silent_server_is_given_up_on(
    timeout: float, deadline: float, status: VerdictStatus, said: str, within: float
) -> None:
    """Whichever comes first, the request's timeout or the gate's deadline, ends the
    wait for a server that never answers; the verdict accepts and says which."""
    with silent_server() as url:
        backend = OpenAIBackend("m", base_url=url, timeout=timeout, retries=0)
        started = time.perf_counter()
        verdict = Gate(backend, deadline=deadline).check(
            "The user is allergic to peanuts.", EVIDENCE
        )
        elapsed = time.perf_counter() - started
        backend.close()
    assert verdict.status == status and verdict.accepted
    assert said in (verdict.reason or ""), verdict.reason
    assert elapsed < within


def test_concurrency_is_bounded() -> None:
    with serving("logprobs", delay=0.05) as server:
        backend = OpenAIBackend("m", base_url=server.url, concurrency=3)
        pairs = [(f"The user is allergic to peanuts #{i}.", "[1] x") for i in range(9)]
        assert all(p > 0.8 for p in backend.estimate_many(pairs))
    assert len(server.requests) == 9
    assert 1 < server.max_in_flight <= 3


def test_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="mode must be"):
        OpenAIBackend("m", mode="guess")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1, serving the SmolLM2 GGUF."""
    with start_llama_server(tmp_path_factory.mktemp("llama")) as url:
        yield url


def test_real_llama_cpp_server(llama_server: str) -> None:
    with OpenAIBackend("smollm2", base_url=llama_server, mode="logprobs", timeout=60) as backend:
        pairs = [
            ("The user is allergic to peanuts.", "[1] " + EVIDENCE[0]),
            ("The user has no food allergies.", "[1] " + EVIDENCE[0]),
        ]
        first = backend.estimate_many(pairs)
        assert all(0.0 < p < 1.0 for p in first)
        assert backend.estimate_many(pairs) == pytest.approx(first, abs=1e-6)
        verdict = Gate(backend, deadline=60).check(*pairs[0][:1], EVIDENCE)
        assert verdict.status not in {VerdictStatus.VERIFIER_ERROR, VerdictStatus.TIMEOUT}
        assert verdict.backend == f"openai:{llama_server}:smollm2:" + verdict.backend[-12:]


def test_long_context_is_cut_for_small_servers() -> None:
    with serving("logprobs") as server:
        backend = OpenAIBackend("m", base_url=server.url, max_context_chars=100)
        backend.estimate("The user is allergic to peanuts.", "x" * 5000)
    prompt = server.requests[0]["messages"][0]["content"]
    assert "x" * 100 + " ..." in prompt and "x" * 101 not in prompt


def test_backend_options_given_as_text_are_read_as_their_parameters_types() -> None:
    """Options from environment variables arrive as text ("6"); the backend gets numbers."""
    from gate.backends.registry import create_backend

    backend = create_backend(
        "openai",
        model="m",
        base_url="http://127.0.0.1:9/v1",
        samples="3",
        concurrency="2",
        max_context_chars="null",
        mode="sampling",
    )
    assert isinstance(backend, OpenAIBackend)
    assert (backend.samples, backend.concurrency, backend.max_context_chars) == (3, 2, None)
    with pytest.raises(ValueError, match="samples='three'"):
        create_backend("openai", model="m", samples="three")
    with pytest.raises(ValueError, match="client cannot be given as text"):
        create_backend("openai", model="m", client="http://127.0.0.1:9")
