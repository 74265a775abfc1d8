"""``openai``: any OpenAI-compatible chat endpoint (vLLM, llama.cpp server, Ollama, OpenAI).

P(YES) comes from the first answer token's ``top_logprobs`` (docs/design.md, Verifier
backends): YES and NO spellings are summed and renormalized. A word missing from the top k
has probability somewhere in [0, exp(k-th logprob)]; the backend takes the end
of that interval that gives the claim the least support. Servers that return no
logprobs are sampled instead, as the ``sampling`` backend does (``samples`` answers to
the same question, its estimate and spread; ``mode="sampling"`` never asks for
logprobs at all). Requests are retried
with exponential backoff, each under its own timeout, at most ``concurrency`` at
a time. ``max_context_chars`` cuts long evidence for servers with a small context.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import httpx

from gate.backends.base import CallControl, VerifierBackend
from gate.backends.endpoint import ChatEndpoint
from gate.backends.sampling import (
    DEFAULT_SAMPLES,
    BackendError,
    ChatCompleter,
    SamplingBackend,
    Usage,
    chat_body,
    total_tokens,
)
from language.prompts import VERIFY_PROMPT

Mode = Literal["auto", "logprobs", "sampling"]


def answer_word(token: str) -> str | None:
    """ "YES" / "NO" for a token that spells one of them (any case, spaces), else None."""
    word = token.strip().strip(".,!:;\"'").upper()
    return word if word in {"YES", "NO"} else None


def yes_from_top_logprobs(top: Sequence[dict[str, Any]]) -> float:
    """P(YES) renormalized against NO from one position's top-k log-probs.

    A word absent from the top k lies in [0, exp(k-th logprob)]: a missing YES
    counts as 0, a missing NO at its upper bound (the least support either way).
    """
    if not top:
        raise BackendError("the server returned an empty top_logprobs list")
    mass = {"YES": 0.0, "NO": 0.0}
    seen = set()
    for entry in top:
        word = answer_word(str(entry.get("token", "")))
        if word is not None:
            mass[word] += math.exp(float(entry["logprob"]))
            seen.add(word)
    if not seen:
        raise BackendError("neither YES nor NO is among the top log-probs")
    if "NO" not in seen:
        mass["NO"] = math.exp(min(float(e["logprob"]) for e in top))
    return mass["YES"] / (mass["YES"] + mass["NO"])


class OpenAIBackend(VerifierBackend):
    """YES/NO probability from an OpenAI-compatible ``/chat/completions`` endpoint."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        prompt: str = VERIFY_PROMPT,
        mode: Mode = "auto",
        top_logprobs: int = 10,
        samples: int = DEFAULT_SAMPLES,
        timeout: float = 10.0,
        retries: int = 2,
        backoff: float = 0.25,
        concurrency: int = 4,
        max_context_chars: int | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        if mode not in ("auto", "logprobs", "sampling"):
            raise ValueError(f"mode must be auto, logprobs or sampling, not {mode!r}")
        self.model = model
        self.prompt = prompt
        self.mode = mode
        self.top_logprobs = top_logprobs
        self.concurrency = max(1, concurrency)
        self.max_context_chars = max_context_chars
        self.deterministic = mode == "logprobs"
        self._endpoint = ChatEndpoint(
            base_url,
            api_key,
            "OPENAI_API_KEY",
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            client=client,
        )
        self._sampling = mode == "sampling"
        self.sampler = SamplingBackend(
            samples=samples,
            prompt=prompt,
            # one sample at a time per question: ``estimate_many`` already asks up to
            # ``concurrency`` questions at once, and the bound holds for both
            completer=ChatCompleter(model, endpoint=self._endpoint, concurrency=1),
        )

    @property
    def samples(self) -> int:
        """Answers sampled per question on a server without logprobs."""
        return self.sampler.samples

    @property
    def identity(self) -> str:
        digest = hashlib.sha256(self.prompt.encode()).hexdigest()[:12]
        base_url = str(self._endpoint.client.base_url).rstrip("/")
        return f"{self.name}:{base_url}:{self.model}:{digest}"

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        def one(pair: tuple[str, str]) -> float:
            if control is not None:
                control.check()  # the gate gave up: send no more requests
            return self._one(*pair)

        if len(pairs) <= 1 or self.concurrency == 1:
            return [one(pair) for pair in pairs]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(pairs))) as pool:
            return list(pool.map(one, pairs))

    def _one(self, claim: str, context: str) -> float:
        if self.max_context_chars is not None and len(context) > self.max_context_chars:
            context = context[: self.max_context_chars] + " ..."  # small-context servers
        messages = [{"role": "user", "content": self.prompt.format(claim=claim, context=context)}]
        if not self._sampling:
            body = self._post(
                {
                    "model": self.model,
                    "messages": messages,
                    "max_tokens": 1,
                    "temperature": 0.0,
                    "logprobs": True,
                    "top_logprobs": self.top_logprobs,
                }
            )
            top = _first_top_logprobs(body)
            if top is not None:
                return yes_from_top_logprobs(top)
            if self.mode == "logprobs":
                raise BackendError("the server returned no logprobs (mode='logprobs')")
            self._sampling = True  # this server has none: sample from now on
        return self.sampler.estimate_many([(claim, context)])[0]

    @property
    def usage(self) -> Usage:
        """Requests sent and tokens used so far, read from log-probabilities or sampled."""
        return self.sampler.usage

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST /chat/completions with retries on transport errors and retryable statuses."""
        body = chat_body(self._endpoint, payload)
        self.usage.add(1, total_tokens(body))
        return body

    def close(self) -> None:
        self._endpoint.close()


def _first_top_logprobs(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The top_logprobs of the first generated token, or None when the server sent none."""
    choices = body.get("choices") or []
    if not choices:
        raise BackendError("the server returned no choices")
    logprobs = choices[0].get("logprobs") or {}
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    top = content[0].get("top_logprobs")
    return list(top) if top else None
