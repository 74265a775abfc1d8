"""The sampling backend: answers read defensively, the estimate and its spread, what the
gate makes of an unsure estimate, and the real llama.cpp server with no logprobs asked."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from openai_servers import Reply, scripted

from gate import Check, Gate, GatePolicy, VerdictStatus
from gate.backends.llama_server import llama_server as start_llama_server
from gate.backends.registry import create_backend
from gate.backends.sampling import BackendError, Estimate, SamplingBackend, from_answers
from gate.policy import decide
from language.prompts import VERIFY_PROMPT, yes_or_no

CLAIM = "The user is allergic to peanuts."
EVIDENCE = ["User: just so you know, I'm allergic to peanuts."]


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("YES", "YES"),
        (" yes.", "YES"),
        ("**No**", "NO"),
        ('"No!"', "NO"),
        ("No.\nThe evidence says so.", "NO"),  # read from its first line
        ("Yes, but only on Sundays.", None),  # extra words on the answer's line
        ("The claim is true", None),
        ("I can't help with that.", None),  # a refusal
        ("Yesterday", None),
        ("YES NO", None),
        ("", None),
        (None, None),
    ],
)
def test_an_answer_is_the_bare_word_or_none(text: str | None, word: str | None) -> None:
    assert yes_or_no(text) == word


def test_the_estimate_is_the_jeffreys_posterior() -> None:
    five = from_answers(["YES"] * 5)
    assert five == pytest.approx(5.5 / 6) and five.spread == pytest.approx(0.1045, abs=1e-4)
    assert (five.yes, five.answered, five.asked) == (5, 5, 5)
    mixed = from_answers(["YES", "NO", None, "YES"])  # one unreadable answer is left out
    assert mixed == pytest.approx(2.5 / 4) and mixed.answered == 3 and mixed.asked == 4
    more = from_answers(["YES"] * 20)
    assert more.spread < five.spread and 0.0 < five < more < 1.0


def test_too_few_answers_are_no_estimate() -> None:
    with pytest.raises(BackendError, match="only 1 of 3"):
        from_answers(["YES", None, None])
    with pytest.raises(BackendError):
        from_answers([])


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="samples must be"):
        SamplingBackend("m", samples=0)
    with pytest.raises(ValueError, match="temperature must be above 0"):
        SamplingBackend("m", samples=3, temperature=0.0)
    with pytest.raises(ValueError, match="give the model"):
        SamplingBackend()
    assert SamplingBackend("m", samples=1, temperature=0.0).samples == 1  # one answer: allowed


def test_k_plain_requests_per_question_and_no_logprobs() -> None:
    with scripted(Reply("YES")) as server:
        backend = create_backend("sampling", model="m", base_url=server.url, samples="3")
        assert isinstance(backend, SamplingBackend)
        p = backend.estimate(CLAIM, "[1] " + EVIDENCE[0])
    assert p == pytest.approx(3.5 / 4) and backend.usage.requests == 3
    assert len(server.requests) == 3
    for request in server.requests:
        assert "logprobs" not in request and "top_logprobs" not in request
        assert request["temperature"] == 1.0 and request["max_tokens"] == 4
        content = request["messages"][0]["content"]
        assert content == VERIFY_PROMPT.format(claim=CLAIM, context="[1] " + EVIDENCE[0])
    assert not backend.deterministic
    assert backend.identity.startswith(f"sampling:{server.url}:m:k3:")


@pytest.mark.parametrize(
    "answer",
    ["Sure! Here is my analysis of the claim", "I'm sorry, I can't assess that.", "MAYBE", ""],
)
def test_garbage_refusals_and_extra_text_are_held_never_verified(answer: str) -> None:
    with scripted(Reply(answer)) as server:
        gate = Gate(SamplingBackend("m", base_url=server.url, samples=3))
        verdict = gate.check(CLAIM, EVIDENCE)
    assert verdict.status is VerdictStatus.VERIFIER_ERROR
    assert verdict.outcome == "held" and "sampled answers were YES or NO" in (verdict.reason or "")


def test_an_http_error_is_held() -> None:
    with scripted(Reply(status=500, body={"error": "boom"})) as server:
        verdict = Gate(SamplingBackend("m", base_url=server.url, samples=2, retries=0)).check(
            CLAIM, EVIDENCE
        )
    assert verdict.outcome == "held" and verdict.status is VerdictStatus.VERIFIER_ERROR


def spreads(p1: Estimate, p0: Estimate) -> tuple[float, float]:
    return (p1.spread, p0.spread)


def test_an_unsure_estimate_is_held_where_it_could_change_the_outcome() -> None:
    policy = GatePolicy()
    five, none_of_five = from_answers(["YES"] * 5), from_answers(["NO"] * 5)
    # five of five against none of five: sure enough at the default spread, verified
    verified = decide(none_of_five, five, 0.5, policy, spread=spreads(five, none_of_five))
    assert verified.outcome == "verified"
    assert (verified.p1_spread, verified.p0_spread) == pytest.approx((0.1045, 0.1045), abs=1e-4)
    # four of four: 0.90 +/- 0.12, which could be under verify_p1 or over it: held, in words
    four = from_answers(["YES"] * 4)
    held = decide(none_of_five, four, 0.5, policy, spread=spreads(four, none_of_five))
    assert held.outcome == "held" and "p1 0.90 +/- 0.12 from its sampled" in (held.reason or "")
    assert "p0" not in (held.reason or "")  # p0 is sure enough: not named
    # a stricter policy holds even five of five
    strict = GatePolicy(max_spread=0.05)
    assert decide(none_of_five, five, 0.5, strict, spread=spreads(five, none_of_five)).outcome == (
        "held"
    )


def test_an_unsure_p0_that_cannot_change_a_refusal_leaves_it_refused() -> None:
    policy = GatePolicy()
    p1 = from_answers(["NO"] * 5)  # 0.08 +/- 0.10
    p0 = from_answers(["YES", "YES", "YES", "NO", "NO"])  # 0.58 +/- 0.19: unsure, but
    refused = decide(p0, p1, 0.5, policy, spread=spreads(p1, p0))  # contradicted anywhere in it
    assert refused.outcome == "refused" and refused.status is VerdictStatus.CONTRADICTED
    assert refused.p0_spread == pytest.approx(p0.spread)


def test_an_unsure_refusal_is_held_unless_the_policy_holds_nothing() -> None:
    p1 = from_answers(["NO", "NO"])  # 0.17 +/- 0.19: could be above the contradiction line
    p0 = from_answers(["YES"] * 8)
    assert decide(p0, p1, 0.5, GatePolicy(), spread=(0.0, 0.0)).outcome == "refused"
    held = decide(p0, p1, 0.5, GatePolicy(), spread=spreads(p1, p0))
    assert held.outcome == "held" and held.status is VerdictStatus.INSUFFICIENT_EVIDENCE
    strict = GatePolicy(reject_unsupported=True)  # "hold nothing": a refusal stays one
    assert decide(p0, p1, 0.5, strict, spread=spreads(p1, p0)).outcome == "refused"


def test_one_claim_without_an_estimate_is_held_alone_not_its_batch() -> None:
    # the first claim's p1 and p0 questions (two samples each) get YES, the rest garbage
    replies = [Reply("YES")] * 4 + [Reply("Let me think about this claim.")]
    with scripted(*replies) as server:
        gate = Gate(SamplingBackend("m", base_url=server.url, samples=2, concurrency=1))
        first, second = gate.check_many(
            [
                Check.of(CLAIM, EVIDENCE, confidence=0.5),
                Check.of("The user has an allergy.", EVIDENCE),
            ]
        )
    assert first.status is not VerdictStatus.VERIFIER_ERROR and first.p1 is not None
    assert second.status is VerdictStatus.VERIFIER_ERROR and second.outcome == "held"
    assert "only 0 of 2 sampled answers" in (second.reason or "")


def test_the_gate_reads_the_spread_of_each_estimate() -> None:
    # p1: five YES (0.92 +/- 0.10); p0: the same server, so also YES: at a stated
    # confidence of 0.5 the claim did not need the evidence (stored, not flagged)
    with scripted(Reply("YES")) as server:
        gate = Gate(SamplingBackend("m", base_url=server.url, samples=5))
        verdict = gate.check(CLAIM, EVIDENCE, confidence=0.5)
        strict = gate.check(CLAIM, EVIDENCE, confidence=0.5, policy=GatePolicy(max_spread=0.05))
    assert verdict.outcome == "verified" and verdict.status is VerdictStatus.PRIOR_SUFFICIENT
    assert verdict.p1_spread == pytest.approx(0.1045, abs=1e-4)
    assert verdict.p1 == pytest.approx(5.5 / 6) and math.isfinite(verdict.observed_bits or 0)
    assert strict.outcome == "held" and "unsure" in (strict.reason or "")
    assert len(server.requests) == 2 * 5 * 2  # p1 and p0, five samples each, twice


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1, serving the SmolLM2 GGUF."""
    with start_llama_server(tmp_path_factory.mktemp("llama")) as url:
        yield url


def test_real_llama_cpp_server_without_logprobs(llama_server: str) -> None:
    """The plumbing against a real server, not the small model's quality: k requests per
    question, never a logprob asked, tokens counted, and a verdict either decided with a
    spread or held because too few answers were a bare YES or NO."""
    with SamplingBackend("smollm2", base_url=llama_server, samples=3, timeout=60) as backend:
        verdict = Gate(backend, deadline=120).check(CLAIM, EVIDENCE)
        assert backend.usage.requests == 6 and backend.usage.tokens > 0
    assert verdict.status is not VerdictStatus.TIMEOUT
    if verdict.status is VerdictStatus.VERIFIER_ERROR:
        assert verdict.outcome == "held" and "sampled answers" in (verdict.reason or "")
    else:
        assert verdict.p1_spread is not None and verdict.p1_spread > 0
        assert verdict.p1 is not None and 0.0 < verdict.p1 < 1.0
