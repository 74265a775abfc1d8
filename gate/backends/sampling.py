"""``sampling``: P(YES) from k sampled text answers, for models that give no log-probabilities.

The verifier's question (``language.prompts.VERIFY_PROMPT``, the same for every LLM
route) is asked ``samples`` times, at a temperature above 0 so the answers may differ,
and each answer is read by ``language.prompts.yes_or_no``: anything but the bare word
(a sentence, a refusal, garbage) is no answer. The estimate is the mean of the Jeffreys
posterior Beta(yes + 1/2, no + 1/2), never exactly 0 or 1, and its standard deviation
is the estimate's ``spread``: the gate holds a fact whose spread is over
``GatePolicy.max_spread`` rather than verify or refuse it (at k = 5, five YES give
0.92 +/- 0.10). Fewer than half of a question's samples answered: no estimate (NaN, with
the reason), and the gate holds that claim, as for any verifier failure. The k samples
are assumed independent: a model server that caches answers or ignores the temperature
gives k copies of one answer, and they read as certainty.

Where the text comes from is a ``Completer``: ``ChatCompleter`` for an
OpenAI-compatible ``/chat/completions`` endpoint, or memstore's MCP host
(``memstore.mcp.host``), which asks the agent host's own model.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import httpx

from gate.backends.base import CallControl, Closing, VerifierBackend
from gate.backends.endpoint import ChatEndpoint
from language.prompts import VERIFY_MAX_TOKENS, VERIFY_PROMPT, yes_or_no

#: Samples per question when none is configured: cheap, and enough that five YES of
#: five verify at the default ``max_spread``.
DEFAULT_SAMPLES = 5


class BackendError(RuntimeError):
    """The model answered, but not with something P(YES) can be read from."""


class Estimate(float):
    """A probability and how it was estimated: ``spread`` (its standard deviation),
    ``yes`` and ``answered`` of the ``asked`` samples. Compares and computes as a float.
    NaN with a ``failure`` (why) where no estimate could be made: the gate holds that
    claim alone, not its whole batch."""

    spread: float
    yes: int
    answered: int
    asked: int
    failure: str | None

    def __new__(
        cls,
        value: float,
        spread: float = 0.0,
        *,
        yes: int = 0,
        answered: int = 0,
        asked: int = 0,
        failure: str | None = None,
    ) -> Estimate:
        made = super().__new__(cls, value)
        made.spread, made.yes, made.answered, made.asked = spread, yes, answered, asked
        made.failure = failure
        return made

    def __repr__(self) -> str:
        return f"Estimate({float(self):.3f} +/- {self.spread:.3f}, {self.yes}/{self.answered})"


def from_answers(words: Sequence[str | None]) -> Estimate:
    """P(YES) from sampled answers ("YES", "NO" or None for no answer): the Jeffreys
    posterior mean and standard deviation. BackendError when under half answered."""
    yes = sum(w == "YES" for w in words)
    answered = sum(w in ("YES", "NO") for w in words)
    if not words or answered * 2 < len(words):
        raise BackendError(
            f"only {answered} of {len(words)} sampled answers were YES or NO "
            "(the model answered something else: a sentence, a refusal, nothing)"
        )
    a, b = yes + 0.5, answered - yes + 0.5
    mean = a / (a + b)
    spread = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    return Estimate(mean, spread, yes=yes, answered=answered, asked=len(words))


def _estimate(words: Sequence[str | None]) -> Estimate:
    """``from_answers``, or a NaN Estimate saying why there is none."""
    try:
        return from_answers(words)
    except BackendError as exc:
        return Estimate(math.nan, math.nan, asked=len(words), failure=str(exc))


@dataclass(frozen=True, slots=True)
class Request:
    """One completion to ask for: ``sample`` tells apart the k asks of one question."""

    prompt: str
    max_tokens: int
    temperature: float
    sample: int = 0
    system: str | None = None

    @property
    def key(self) -> str:
        """A short stable name for this request (a digest of all its fields)."""
        text = f"{self.system}\x00{self.prompt}\x00{self.max_tokens}\x00{self.temperature}"
        return f"{hashlib.sha256(text.encode()).hexdigest()[:20]}.{self.sample}"


class Usage:
    """Requests sent and tokens used (prompt and answer, where the model says), so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.tokens = 0

    def add(self, requests: int, tokens: int) -> None:
        with self._lock:
            self.requests += requests
            self.tokens += tokens


@runtime_checkable
class Completer(Protocol):
    """Completes prompts with a model: one text per request, in order (None where that
    request got no text). Raises when the model cannot be reached at all."""

    name: str
    usage: Usage

    @property
    def identity(self) -> str: ...

    def complete(
        self, requests: Sequence[Request], control: CallControl | None = None
    ) -> list[str | None]: ...


class ChatCompleter(Closing):
    """Completions from an OpenAI-compatible ``/chat/completions`` endpoint, one request
    per completion (servers differ in whether they honour ``n``), at most
    ``concurrency`` at a time, each retried as ``ChatEndpoint`` does. Log-probabilities
    are never asked for."""

    name = "chat"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 10.0,
        retries: int = 2,
        backoff: float = 0.25,
        concurrency: int = 4,
        client: httpx.Client | None = None,
        endpoint: ChatEndpoint | None = None,
    ) -> None:
        self.model = model
        self.concurrency = max(1, concurrency)
        self.usage = Usage()
        self._owns_endpoint = endpoint is None
        self.endpoint = endpoint or ChatEndpoint(
            base_url, api_key, api_key_env, timeout=timeout, retries=retries, backoff=backoff,
            client=client,
        )  # fmt: skip

    @property
    def identity(self) -> str:
        return f"{str(self.endpoint.client.base_url).rstrip('/')}:{self.model}"

    def complete(
        self, requests: Sequence[Request], control: CallControl | None = None
    ) -> list[str | None]:
        def one(request: Request) -> str | None:
            if control is not None:
                control.check()  # the gate gave up: send no more requests
            return self._one(request)

        if len(requests) <= 1 or self.concurrency == 1:
            return [one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            return list(pool.map(one, requests))

    def _one(self, request: Request) -> str | None:
        body = chat_body(self.endpoint, chat_payload(self.model, request))
        self.usage.add(1, total_tokens(body))
        return message_text(body)

    def close(self) -> None:
        if self._owns_endpoint:
            self.endpoint.close()


def chat_payload(model: str, request: Request) -> dict[str, Any]:
    """The ``/chat/completions`` body that asks ``model`` one ``request`` (no logprobs)."""
    messages = [{"role": "user", "content": request.prompt}]
    if request.system is not None:
        messages.insert(0, {"role": "system", "content": request.system})
    return {
        "model": model,
        "messages": messages,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }


def chat_body(endpoint: ChatEndpoint, payload: dict[str, Any]) -> dict[str, Any]:
    """POST ``payload`` (retried as ``endpoint`` does); the answer's JSON object, or an
    error: an HTTP error status, BackendError for a body that is not an object."""
    response, _ = endpoint.post(payload)
    response.raise_for_status()
    body = response.json()
    if not isinstance(body, dict):
        raise BackendError("the server's answer is not a JSON object")
    return body


def total_tokens(body: dict[str, Any]) -> int:
    """The tokens a chat completion says it used (prompt and answer), else 0."""
    usage = body.get("usage")
    tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) and tokens >= 0 else 0


def message_text(body: dict[str, Any]) -> str | None:
    """The first choice's message text of a chat completion, or None."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BackendError("the server returned no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else None


class SamplingBackend(VerifierBackend):
    """P(YES) and its spread from ``samples`` text answers per question (see the module).

    Give ``model`` and ``base_url`` (and ``api_key``, else ``$OPENAI_API_KEY``) for an
    OpenAI-compatible endpoint, or a ``completer`` of your own. ``max_context_chars``
    cuts long evidence for models with a small context.
    """

    name = "sampling"
    deterministic = False  # samples differ from call to call: never cached

    def __init__(
        self,
        model: str = "",
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        samples: int = DEFAULT_SAMPLES,
        temperature: float = 1.0,
        max_tokens: int = VERIFY_MAX_TOKENS,
        timeout: float = 10.0,
        retries: int = 2,
        backoff: float = 0.25,
        concurrency: int = 4,
        max_context_chars: int | None = None,
        prompt: str = VERIFY_PROMPT,
        completer: Completer | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a whole number >= 1, not {samples!r}")
        if samples > 1 and not temperature > 0:
            raise ValueError(
                "temperature must be above 0 when samples > 1: at 0 every sample is the same "
                "answer, and their agreement would look like certainty"
            )
        if max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        if completer is None and not model:
            raise ValueError("give the model to ask (model=...) or a completer")
        self.samples = samples
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_context_chars = max_context_chars
        self.prompt = prompt
        self.completer: Completer = completer or ChatCompleter(
            model, base_url=base_url, api_key=api_key, timeout=timeout, retries=retries,
            backoff=backoff, concurrency=concurrency, client=client,
        )  # fmt: skip
        self.model = model or self.completer.name
        #: Sampled answers so far, and how many of them were a bare YES or NO.
        self.asked = 0
        self.answered = 0
        self._count = threading.Lock()

    @property
    def identity(self) -> str:
        digest = hashlib.sha256(self.prompt.encode()).hexdigest()[:12]
        return f"{self.name}:{self.completer.identity}:k{self.samples}:{digest}"

    @property
    def usage(self) -> Usage:
        """Requests and tokens the completer has used so far."""
        return self.completer.usage

    def requests_for(self, claim: str, context: str) -> list[Request]:
        """The ``samples`` requests that ask about one (claim, context) pair."""
        if self.max_context_chars is not None and len(context) > self.max_context_chars:
            context = context[: self.max_context_chars] + " ..."
        text = self.prompt.format(claim=claim, context=context)
        return [
            Request(text, self.max_tokens, self.temperature, sample=i) for i in range(self.samples)
        ]

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        requests = [r for claim, context in pairs for r in self.requests_for(claim, context)]
        texts = self.completer.complete(requests, control)
        if len(texts) != len(requests):
            raise BackendError(f"{len(texts)} answers for {len(requests)} requests")
        words = [yes_or_no(t) for t in texts]
        with self._count:
            self.asked += len(words)
            self.answered += sum(w is not None for w in words)
        k = self.samples
        return [_estimate(words[i * k : (i + 1) * k]) for i in range(len(pairs))]

    def close(self) -> None:
        close = getattr(self.completer, "close", None)
        if callable(close):
            close()
