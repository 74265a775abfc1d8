"""The agent host's own model, asked over MCP sampling (``memstore mcp --verifier host``
and ``--extractor host``).

An MCP server may ask its client to complete a prompt with the client's model
(``sampling/createMessage``). Started with ``--verifier host``, the gate asks the host's
model the verifier's question (``language.prompts.VERIFY_PROMPT``, the same words as
every LLM route) ``samples`` times per claim and reads the answers as the ``sampling``
backend does: an estimate with its spread, held when too unsure. With ``--extractor
host`` the conversation extractor sends its prompt there too. No key, no second server.

How a question reaches the client follows the protocol version the client speaks:

- up to 2025-11-25, a ``sampling/createMessage`` request mid-call, answered before the
  tool goes on;
- from 2026-07-28 on (no requests mid-call), the tool answers ``input_required`` with
  the questions; the client answers them and calls again with the answers and the
  ``request_state`` this module gave it, and the tool runs again, now finding its
  answers. Nothing is written on a round that ends for questions (the gate asks before
  the first write). The state carries the client's own answers; the MCP SDK seals and
  dates it (``mcp.server.request_state``: encrypted, bound to the request, 600 s to
  live), and a client could only ever change what its own model said.

Each tool call has a budget (``HostBudget``: requests, tokens, seconds). Past it, or
when the client refuses a request, times out or answers something else than text, the
verifier has failed, and the fact is stored ``pending`` with the reason, as for any
verifier failure: never verified, never a crash. A client that does not
support sampling gets a tool error saying so and what to do, unless the server was
started with a fallback (``--host-fallback``), whose verdicts then name that verifier.
"""

from __future__ import annotations

import base64
import binascii
import contextvars
import inspect
import json
import logging
import math
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gate.backends.base import CallControl, InputRequired, VerifierBackend
from gate.backends.sampling import (
    DEFAULT_SAMPLES,
    Request,
    SamplingBackend,
    Usage,
    chat_payload,
    message_text,
    total_tokens,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context
    from mcp_types import CreateMessageRequest

    from memstore import GateHook
    from memstore.config import Settings
    from memstore.conversations.llm import LLMExtractor

log = logging.getLogger("memstore.mcp")

#: The first protocol version with no server requests mid-call (answers ride a retry).
RETRY_SINCE = "2026-07-28"
#: A rough count of tokens in a text: MCP sampling results carry no token counts.
CHARS_PER_TOKEN = 4


def no_sampling(what: str, option: str) -> str:
    """What a client that cannot sample is told: what the server would ask of its model
    (``what``, started with ``option``), and the two ways on."""
    return (
        f"this server asks your agent host's model to {what} (memstore mcp {option} host), "
        "but this client did not declare MCP sampling: enable sampling in the client, or "
        "restart the server with --host-fallback to use the configured one instead"
    )


NO_SAMPLING_VERIFIER = no_sampling("check each write", "--verifier")
NO_SAMPLING_EXTRACTOR = no_sampling("extract facts from conversations", "--extractor")


class HostError(RuntimeError):
    """The host's model could not answer: refused, timed out, past the budget, no text.
    The gate holds the fact; the message says why in plain words."""


class HostUnavailable(HostError):
    """No client that can sample: outside a tool call, or a client without sampling."""


class QuestionsForClient(InputRequired):
    """The tool must answer ``input_required`` with ``requests`` (keyed by
    ``Request.key``) and ``state``; the client answers and calls again."""

    def __init__(self, requests: dict[str, Request], state: str) -> None:
        super().__init__(f"{len(requests)} questions for the client's model")
        self.requests = requests
        self.state = state


@dataclass(frozen=True)
class HostBudget:
    """What one tool call may ask of the host's model: ``requests`` completions (over all
    its rounds), ``tokens`` (prompt and answer, estimated at four characters a token, as
    MCP reports none) and ``seconds`` from the call's start until the last mid-call
    answer."""

    requests: int = 64
    tokens: int = 16_000
    seconds: float = 120.0

    def __post_init__(self) -> None:
        if self.requests < 1 or self.tokens < 1 or not self.seconds > 0:
            raise ValueError("a host budget needs requests, tokens and seconds above 0")


def estimated_tokens(request: Request) -> int:
    """Tokens a request may use: its prompt's (estimated) and its answer's at most."""
    text = len(request.prompt) + len(request.system or "")
    return math.ceil(text / CHARS_PER_TOKEN) + request.max_tokens


class Exchange:
    """One tool call's conversation with the client's model (see the module)."""

    def __init__(self, ctx: Context, budget: HostBudget, fallback: bool) -> None:
        self.ctx = ctx
        self.budget = budget
        caps = ctx.client_capabilities
        self.can_sample = caps is not None and caps.sampling is not None
        self.falls_back = fallback and not self.can_sample
        from mcp_types.version import is_version_at_least

        version = ctx.protocol_version
        self.retries = version is not None and is_version_at_least(version, RETRY_SINCE)
        self.usage = Usage()
        self.answers: dict[str, str | None] = {}
        #: Questions gathered while ``collecting`` (2026-07-28), by key.
        self.pending: dict[str, Request] = {}
        self._collecting = False
        self._final = False
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._token: Any = None
        if self.retries:
            self.answers, tokens = _read_state(ctx.request_state)
            self.answers.update(_texts(ctx.input_responses or {}))
            self.usage.add(len(self.answers), tokens)  # asked on earlier rounds
        elif self.can_sample:
            import anyio.from_thread
            import anyio.lowlevel

            # The tool runs on an AnyIO worker thread; the gate asks from a thread of
            # its own, so the event loop is named explicitly when it sends.
            self._token = anyio.from_thread.run_sync(anyio.lowlevel.current_token)

    def complete(self, requests: Sequence[Request]) -> list[str | None]:
        """One text per request (None where the answer was not text)."""
        if not self.can_sample:
            raise HostUnavailable("this client did not declare MCP sampling")
        if self.retries:
            return self._from_answers(requests)
        self._spend(requests)
        return self._ask(requests)

    def _spend(self, requests: Sequence[Request]) -> None:
        """Count ``requests`` against the budget; HostError past it."""
        tokens = sum(estimated_tokens(r) for r in requests)
        with self._lock:
            if self.usage.requests + len(requests) > self.budget.requests:
                raise HostError(
                    f"the host's model would be asked {self.usage.requests + len(requests)} "
                    f"times for this call, over the budget of {self.budget.requests}"
                )
            if self.usage.tokens + tokens > self.budget.tokens:
                raise HostError(
                    f"the host's model would use about {self.usage.tokens + tokens} tokens "
                    f"for this call, over the budget of {self.budget.tokens}"
                )
            self.usage.add(len(requests), tokens)

    @contextmanager
    def collecting(self) -> Iterator[None]:
        """Within the block, a question without an answer is gathered in ``pending`` and
        fails (the caller's work in the block is a rehearsal), rather than ending the call."""
        self._collecting = True
        try:
            yield
        finally:
            self._collecting = False

    def finally_(self) -> None:
        """From now on, a question without an answer fails (the gate holds the fact)
        instead of ending the call: the writes have begun."""
        self._final = True

    def questions(self) -> QuestionsForClient:
        """The gathered questions, to answer ``input_required`` with."""
        return QuestionsForClient(dict(self.pending), self.state())

    def state(self) -> str:
        """What the next round must bring back: the answers so far, the tokens spent."""
        return _write_state(self.answers, self.usage.tokens)

    def _from_answers(self, requests: Sequence[Request]) -> list[str | None]:
        missing = {
            r.key: r for r in requests if r.key not in self.answers and r.key not in self.pending
        }
        if missing and self._final:
            raise HostError(
                "the client's model was not asked this question on an earlier round "
                "(a fact written in this call changed what the gate asks)"
            )
        if missing:
            self._spend(list(missing.values()))
            if not self._collecting:
                raise QuestionsForClient(missing, self.state())
            self.pending.update(missing)
        if any(r.key not in self.answers for r in requests):
            raise HostError("waiting for the client's model to answer")
        return [self.answers[r.key] for r in requests]

    def _ask(self, requests: Sequence[Request]) -> list[str | None]:
        import anyio
        import anyio.from_thread

        left = self.budget.seconds - (time.monotonic() - self._started)
        if left <= 0:
            raise HostError(self._late())

        async def ask_all() -> list[str | None]:
            texts: list[str | None] = [None] * len(requests)
            limit = anyio.CapacityLimiter(4)

            async def one(i: int) -> None:
                async with limit:
                    texts[i] = await self._sample(requests[i])

            with anyio.fail_after(left):
                async with anyio.create_task_group() as group:
                    for i in range(len(requests)):
                        group.start_soon(one, i)
            return texts

        try:
            return anyio.from_thread.run(ask_all, token=self._token)
        except TimeoutError:
            raise HostError(self._late()) from None
        except HostError:
            raise
        except Exception as exc:  # the client refused, or the connection failed
            raise HostError(f"the client did not sample: {_first_error(exc)}") from None

    def _late(self) -> str:
        return (
            f"the host's model did not answer within {self.budget.seconds:g}s (this call's budget)"
        )

    async def _sample(self, request: Request) -> str | None:
        """One ``sampling/createMessage`` request, sent as the SDK's ``create_message``
        sends it (without its deprecation warning: the capability is deprecated in
        2026-07-28, and still what clients of earlier versions speak)."""
        from mcp.shared.message import ServerMessageMetadata
        from mcp_types import CreateMessageResult

        result = await self.ctx.session.send_request(
            sampling_request(request),
            CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id),
        )
        return _text(result)


def sampling_request(request: Request) -> CreateMessageRequest:
    """A question for the client's model as MCP carries it: sent mid-call, or in an
    ``input_required`` round."""
    from mcp_types import (
        CreateMessageRequest,
        CreateMessageRequestParams,
        SamplingMessage,
        TextContent,
    )

    text = TextContent(type="text", text=request.prompt)
    params = CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=text)],
        max_tokens=request.max_tokens,
        system_prompt=request.system,
        temperature=request.temperature,
    )
    return CreateMessageRequest(params=params)


_current: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar(
    "memstore_host_exchange", default=None
)


class HostModel:
    """The client's model for whoever asks during a tool call (the gate, the extractor):
    ``exchange(ctx)`` opens a tool call's exchange; ``complete`` goes through it."""

    name = "host"

    def __init__(
        self,
        budget: HostBudget | None = None,
        *,
        fallback: bool = False,
        verifier: bool = True,
        extractor: bool = False,
    ) -> None:
        self.budget = budget or HostBudget()
        self.fallback = fallback
        #: What the server asks the client's model: the gate's questions, the extractor's.
        self.verifier = verifier
        self.extractor = extractor
        self.usage = Usage()  # over the server's life, for the bench and the logs

    @property
    def identity(self) -> str:
        return "mcp-host"

    @contextmanager
    def exchange(
        self, ctx: Context | None, *, gates: bool = True, extracts: bool = False
    ) -> Iterator[Exchange | None]:
        """The tool call's exchange, current for the block (None without a context). A
        client that cannot sample, for a call that would ask its model (the call
        ``gates`` a write with ``--verifier host``, ``extracts`` with ``--extractor
        host``) and no fallback: HostUnavailable saying what to do."""
        if ctx is None:
            yield None
            return
        exchange = Exchange(ctx, self.budget, self.fallback)
        if not exchange.can_sample and not self.fallback:
            if gates and self.verifier:
                raise HostUnavailable(NO_SAMPLING_VERIFIER)
            if extracts and self.extractor:
                raise HostUnavailable(NO_SAMPLING_EXTRACTOR)
        carried = (exchange.usage.requests, exchange.usage.tokens)  # earlier rounds'
        token = _current.set(exchange)
        try:
            yield exchange
        finally:
            _current.reset(token)
            self.usage.add(exchange.usage.requests - carried[0], exchange.usage.tokens - carried[1])

    @staticmethod
    def current() -> Exchange | None:
        """The exchange of the tool call in progress, if any."""
        return _current.get()

    def falls_back(self) -> bool:
        """Whether this tool call uses the fallback verifier (a client without sampling)."""
        exchange = _current.get()
        return exchange is not None and exchange.falls_back

    def complete(
        self, requests: Sequence[Request], control: CallControl | None = None
    ) -> list[str | None]:
        exchange = _current.get()
        if exchange is None:
            raise HostUnavailable("the host's model is asked only during an MCP tool call")
        if control is not None:
            control.check()  # the gate gave up: ask nothing more
        return exchange.complete(requests)

    def new_extractor(self) -> LLMExtractor:
        """The ``llm`` extractor with this model: one per tool call (it keeps the last
        answer and its errors)."""
        from memstore.conversations.llm import LLMExtractor

        return LLMExtractor(self.identity, completer=self)


class HostVerifier(VerifierBackend):
    """The gate's verifier over the host's model: ``samples`` answers per question, as
    the ``sampling`` backend; a client without sampling gets ``fallback`` where one is
    given (its verdicts name it), else the gate holds the fact."""

    name = "host"
    deterministic = False

    def __init__(
        self,
        host: HostModel,
        *,
        samples: int = DEFAULT_SAMPLES,
        temperature: float = 1.0,
        fallback: VerifierBackend | None = None,
    ) -> None:
        self.host = host
        self.sampler = SamplingBackend(samples=samples, temperature=temperature, completer=host)
        self.fallback = fallback
        self.model = "mcp-host"

    @property
    def identity(self) -> str:
        if self.fallback is not None and self.host.falls_back():
            return self.fallback.identity
        return self.sampler.identity

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        if self.fallback is not None and self.host.falls_back():
            if (
                control is not None
                and "control" in inspect.signature(self.fallback.estimate_many).parameters
            ):
                return self.fallback.estimate_many(pairs, control=control)  # type: ignore[call-arg]
            return self.fallback.estimate_many(pairs)
        return self.sampler.estimate_many(pairs, control)

    def close(self) -> None:
        """Nothing to release: the fallback is the configured gate's, closed with it."""


# -- the state a retry carries ----------------------------------------------------------


def _write_state(answers: dict[str, str | None], tokens: int) -> str:
    data = {"answers": answers, "tokens": tokens}
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode()


def _read_state(state: str | None) -> tuple[dict[str, str | None], int]:
    """The answers of earlier rounds and the tokens they cost; nothing from a state this
    module did not write."""
    if not state:
        return {}, 0
    try:
        data = json.loads(base64.urlsafe_b64decode(state.encode()))
    except (ValueError, binascii.Error):
        return {}, 0
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, dict):
        return {}, 0
    tokens = data.get("tokens")
    spent = tokens if isinstance(tokens, int) and tokens >= 0 else 0
    return {str(k): v if isinstance(v, str) else None for k, v in answers.items()}, spent


def _texts(responses: dict[str, Any]) -> dict[str, str | None]:
    return {str(key): _text(value) for key, value in responses.items()}


def _text(result: Any) -> str | None:
    """The text of a sampling result (its text blocks, joined), or None: an image, a tool
    use, an error, nothing."""
    content = (
        result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    )
    blocks = content if isinstance(content, list) else [content]
    texts = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if kind == "text" and isinstance(text, str):
            texts.append(text)
    return "\n".join(texts) if texts else None


def _first_error(exc: BaseException) -> str:
    """The first leaf error of an exception group, in words."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:300]


# -- how the server uses it ---------------------------------------------------------------

Choice = Literal["configured", "host"]
REQUESTS_HELP = "Host: completions one tool call may ask of the client's model."
TOKENS_HELP = "Host: tokens one tool call may use (prompts and answers, estimated)."
SECONDS_HELP = "Host: seconds one tool call may wait for the client's model."


@dataclass(frozen=True)
class HostOptions:
    """What ``memstore mcp`` asks the client's model: the gate's questions
    (``verifier="host"``), the extractor's (``extractor="host"``), or neither; with
    ``samples`` answers per question, a ``budget`` per tool call, and ``fallback``: a
    client that cannot sample gets the configured verifier and extractor instead of an
    error."""

    verifier: Choice = "configured"
    extractor: Choice = "configured"
    samples: int = DEFAULT_SAMPLES
    fallback: bool = False
    budget: HostBudget = HostBudget()

    def __post_init__(self) -> None:
        for field, value in (("verifier", self.verifier), ("extractor", self.extractor)):
            if value not in ("configured", "host"):
                raise ValueError(f"{field} must be 'configured' or 'host', not {value!r}")
        if isinstance(self.samples, bool) or not 1 <= self.samples <= 64:
            raise ValueError(f"samples must be a whole number from 1 to 64, not {self.samples!r}")

    @property
    def used(self) -> bool:
        return self.verifier == "host" or self.extractor == "host"


#: Seconds the gate waits past a call's budget: the exchange's own timeout, which names
#: the budget, ends the wait first.
DEADLINE_GRACE_S = 10.0


def host_parts(
    options: HostOptions, settings: Settings
) -> tuple[HostModel | None, GateHook | None]:
    """The client's model as ``options`` ask for it, and a write hook whose gate asks it
    (None for what stays as configured). The gate keeps the settings' policy; its
    deadline is the budget's seconds and a grace, as the client's model answers at its
    pace. Re-verification, which runs with no client to ask, keeps the configured
    verifier (``recheck_backend``, else ``backend``). ConfigError for ``--verifier
    host`` with the gate turned off (``hallucination.enabled: false``)."""
    if not options.used:
        return None, None
    from gate import ConfigError, Gate
    from memstore import GateHook  # the public write hook

    block = settings.hallucination
    if options.verifier == "host" and not block.enabled:
        raise ConfigError(
            "hallucination.enabled",
            "the gate is off, so --verifier host would check nothing: turn it on, or drop "
            "--verifier host",
        )
    host = HostModel(
        options.budget,
        fallback=options.fallback,
        verifier=options.verifier == "host",
        extractor=options.extractor == "host",
    )
    if options.verifier != "host":
        return host, None
    configured = settings.gate() if options.fallback else None
    fallback = configured.backend if configured is not None else None
    verifier = HostVerifier(host, samples=options.samples, fallback=fallback)
    asking = Gate(
        verifier,
        block.policy(),
        deadline=options.budget.seconds + DEADLINE_GRACE_S,
        deadline_per_claim=0.0,
        lock_wait=block.lock_wait,
    )
    hook = GateHook(
        asking, block.policy(), recheck=lambda: settings.recheck_gate() or settings.gate()
    )
    return host, hook


class ChatSampler:
    """An MCP client's sampling callback answered by an OpenAI-compatible
    ``/chat/completions`` server: for a client of your own with no model but a server
    (and for the tests and benchmarks, with llama.cpp). Records what it sent
    (``payloads``), what came back (``answers``) and the tokens the server counted."""

    def __init__(self, base_url: str, model: str, *, timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.payloads: list[dict[str, Any]] = []
        self.answers: list[str] = []
        self.tokens = 0

    async def __call__(self, context: Any, params: Any) -> Any:
        import httpx
        from mcp_types import CreateMessageResult, TextContent

        request = Request(
            _text(params.messages[0]) or "",
            params.max_tokens,
            params.temperature,
            system=params.system_prompt or None,
        )
        payload = chat_payload(self.model, request)
        self.payloads.append(payload)
        async with httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout) as http:
            response = await http.post("/chat/completions", json=payload)
        response.raise_for_status()
        body = response.json()
        text = message_text(body) or ""
        self.answers.append(text)
        self.tokens += total_tokens(body)
        content = TextContent(type="text", text=text)
        return CreateMessageResult(role="assistant", content=content, model=self.model)
