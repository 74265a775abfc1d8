"""``llm``: candidate facts from any OpenAI-compatible ``/chat/completions`` endpoint.

The conversation is sent numbered, each message with its speaker, and the model is
asked for JSON that ``language.prompts.FACTS_SCHEMA`` describes (the prompt and schema
live there, with every prompt memstore sends): per fact its statement, members
(the subject first), relation, the time it holds from, the message(s) it came from
and a quote copied from the main one. The request asks for schema-constrained output
(``response_format``), so even a tiny model answers valid JSON:

- ``json_schema``: ``{"type": "json_schema", "json_schema": {"name", "schema"}}``,
  the OpenAI form (vLLM, Ollama, llama.cpp's own ``llama-server``, hosted APIs);
- ``json_object``: ``{"type": "json_object", "schema": ...}``, what llama-cpp-python's
  server accepts (it turns the schema into a grammar; it answers HTTP 500 to the
  ``json_schema`` form);
- ``auto`` (the default) sends ``json_schema`` and, when the server refuses that
  form, switches to ``json_object`` for the rest of the extractor's life.

Every fact is then checked with pydantic and against the conversation. A fact is
dropped, never repaired by guessing, when it does not fit the schema, names a
message that was not sent, has an empty statement or members, or quotes text that
is not in its main message (whitespace, case and apostrophes may differ; the quote
kept is the message's own text). Bad model output never raises: an unusable answer
gives ``[]``. Why each fact (or the whole answer) was dropped is listed in
``last_errors`` (reset by each ``extract``, beside the raw answer in ``last_answer``)
and logged as one warning per call.
Only the endpoint failing (unreachable, timing out, an HTTP error after the retries,
a body that is not a chat completion) raises ``ExtractorError``, before anything is
written: ``remember_conversation`` extracts before its first write.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate.backends.base import Closing, InputRequired
from gate.backends.endpoint import RETRY_STATUS, ChatEndpoint
from gate.backends.sampling import Completer, Request
from language.prompts import EXTRACT_PROMPT, extract_instructions, facts_schema
from memstore.conversations.extractors import Candidate, fact_of
from memstore.conversations.messages import Message
from memstore.errors import MemstoreError
from memstore.names import normalize_key
from memstore.schemas import FactCreate, Name, to_utc
from memstore.storage.tables import MAX_STATEMENT_CHARS

logger = logging.getLogger(__name__)

#: The environment variable the API key is read from when none is given.
API_KEY_ENV = "MEMSTORE_EXTRACTOR_API_KEY"
ResponseFormat = Literal["auto", "json_schema", "json_object"]


class ExtractorError(MemstoreError):
    """The extractor's endpoint failed (unreachable, timed out, HTTP error, not a chat
    completion); nothing was extracted and nothing written."""


class _Member(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: Name
    kind: Name
    role: Name


class _Fact(BaseModel):
    """One fact as the model answers it; extra keys are ignored, missing ones drop it."""

    model_config = ConfigDict(extra="ignore")

    statement: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]
    members: Annotated[list[_Member], Field(min_length=1)]
    relation: str | None = None
    valid_from: str | None = None
    messages: Annotated[list[int], Field(min_length=1)]
    quote: Annotated[str, Field(min_length=1)]


class LLMExtractor(Closing):
    """Candidate facts from an OpenAI-compatible chat endpoint (see the module).

    ``max_messages`` most recent messages are sent, fewer when they exceed
    ``max_chars`` (a message longer than that alone is cut); facts may cite only the
    messages sent. Each request is retried ``retries`` times with exponential backoff
    (``backoff``, doubled per attempt) on transport errors and retryable statuses,
    each under ``timeout`` seconds.
    """

    name = "llm"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        api_key_env: str = API_KEY_ENV,
        timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 0.5,
        max_messages: int = 50,
        max_chars: int = 12_000,
        max_facts: int = 20,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        response_format: ResponseFormat = "auto",
        system_prompt: str = EXTRACT_PROMPT,
        client: httpx.Client | None = None,
        completer: Completer | None = None,
    ) -> None:
        if response_format not in ("auto", "json_schema", "json_object"):
            raise ValueError(
                f"response_format must be auto, json_schema or json_object, not {response_format!r}"
            )
        if max_messages < 1 or max_chars < 1 or max_facts < 1 or max_tokens < 1:
            raise ValueError("max_messages, max_chars, max_facts and max_tokens must be >= 1")
        self.model = model
        self.timeout = timeout
        self.max_messages = max_messages
        self.max_chars = max_chars
        self.max_facts = max_facts
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.response_format = response_format
        self.system_prompt = system_prompt
        self.schema = facts_schema(max_facts)
        #: Why facts (or the whole answer) of the last ``extract`` were dropped.
        self.last_errors: list[str] = []
        #: The model's raw answer (message content) of the last ``extract``, if any.
        self.last_answer: str | None = None
        self._format: Literal["json_schema", "json_object"] = (
            "json_object" if response_format == "json_object" else "json_schema"
        )
        #: Where the prompt goes instead of an endpoint (the MCP host's model): the
        #: schema is then written into the instructions, as no response_format exists.
        self.completer = completer
        if completer is not None:
            self.name = f"llm:{completer.name}"  # reports say whose model extracted
        # No HTTP client where a completer answers instead.
        self._chat = (
            None
            if completer is not None
            else ChatEndpoint(
                base_url,
                api_key,
                api_key_env,
                timeout=timeout,
                retries=retries,
                backoff=backoff,
                client=client,
            )
        )

    @property
    def _endpoint(self) -> ChatEndpoint:
        if self._chat is None:
            raise ExtractorError("this extractor asks its completer, not an endpoint")
        return self._chat

    @property
    def format_in_use(self) -> Literal["json_schema", "json_object"]:
        """The ``response_format`` form requests are sent with (auto may have switched)."""
        return self._format

    def __repr__(self) -> str:  # never shows the key
        if self.completer is not None:
            return f"LLMExtractor(model={self.model!r}, completer={self.completer.name!r})"
        base_url = str(self._endpoint.client.base_url)
        return f"LLMExtractor(model={self.model!r}, base_url={base_url!r})"

    # -- the request -------------------------------------------------------------------

    def window(self, messages: Sequence[Message]) -> tuple[list[int], str]:
        """The indexes of the messages sent and the conversation text that shows them."""
        lines: list[str] = []
        shown: list[int] = []
        total = 0
        for i in range(len(messages) - 1, max(-1, len(messages) - 1 - self.max_messages), -1):
            line = f"[{i}] {_label(messages[i])}: {messages[i].content}"
            if total + len(line) > self.max_chars:
                if lines:
                    break
                line = line[: self.max_chars] + " ..."  # the newest message alone is too long
            lines.append(line)
            shown.append(i)
            total += len(line) + 1
        shown.reverse()
        lines.reverse()
        if shown and shown[0] > 0:
            lines.insert(0, f"(messages 0 to {shown[0] - 1} are not shown)")
        return shown, "\n".join(lines)

    def payload(self, conversation: str) -> dict[str, Any]:
        """The ``/chat/completions`` request body for a rendered conversation."""
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": self.system_prompt},
                {"role": "user", "content": f"Conversation:\n{conversation}"},
            ],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "response_format": self._response_format(),
        }

    def _response_format(self) -> dict[str, Any]:
        if self._format == "json_object":
            return {"type": "json_object", "schema": self.schema}
        return {"type": "json_schema", "json_schema": {"name": "facts", "schema": self.schema}}

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        """Candidate facts, checked; ``[]`` (with ``last_errors`` saying why) for an
        unusable answer. Raises ExtractorError when the endpoint fails."""
        self.last_errors = []
        self.last_answer = None
        if not messages:
            return []
        shown, conversation = self.window(messages)
        body = self._complete(conversation)
        content, finish = _content_of(body)
        self.last_answer = content
        items = self._items(content, finish)
        out: list[Candidate] = []
        seen: set[str] = set()
        for n, raw in enumerate(items[: self.max_facts]):
            try:
                candidate = self._candidate(raw, messages, set(shown))
            except _Dropped as why:
                self.last_errors.append(f"fact {n}: {why}")
                continue
            key = normalize_key(candidate.statement.rstrip("."))
            if key in seen:
                self.last_errors.append(f"fact {n}: repeats an earlier fact")
                continue
            seen.add(key)
            out.append(candidate)
        if len(items) > self.max_facts:
            self.last_errors.append(f"{len(items) - self.max_facts} facts over max_facts ignored")
        if self.last_errors:
            logger.warning(
                "llm extractor kept %d of %d facts: %s",
                len(out),
                len(items),
                "; ".join(self.last_errors),
            )
        return out

    def _complete(self, conversation: str) -> dict[str, Any]:
        if self.completer is not None:
            return self._complete_with(self.completer, conversation)
        try:
            return self._post(self.payload(conversation))
        except _FormatRefused:
            self._format = "json_object"  # llama-cpp-python's form, from now on
            logger.info("%s refused response_format json_schema; using json_object", self)
            return self._post(self.payload(conversation))

    def _complete_with(self, completer: Completer, conversation: str) -> dict[str, Any]:
        """The answer of ``completer`` as a chat completion's body; ExtractorError when it
        fails (InputRequired goes on: the caller fetches the answer and asks again)."""
        request = Request(
            f"Conversation:\n{conversation}",
            self.max_tokens,
            self.temperature,
            system=extract_instructions(self.schema, self.system_prompt),
        )
        try:
            [text] = completer.complete([request])
        except InputRequired:
            raise
        except Exception as exc:
            raise ExtractorError(f"the extractor's model did not answer: {exc}") from exc
        message = {"role": "assistant", "content": text or ""}
        return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """POST /chat/completions, retried with backoff; ExtractorError when it fails."""
        attempts = self._endpoint.retries + 1
        try:
            response, attempts = self._endpoint.post(payload, self._retryable)
        except httpx.TimeoutException as exc:
            raise ExtractorError(
                f"the extractor endpoint did not answer within {self.timeout}s "
                f"({attempts} attempts): {type(exc).__name__}"
            ) from exc
        except httpx.HTTPError as exc:
            raise ExtractorError(
                f"the extractor endpoint could not be reached ({attempts} attempts):"
                f" {type(exc).__name__}: {exc}"
            ) from exc
        status = response.status_code
        if status < 400:
            try:
                body = response.json()
            except ValueError as exc:
                raise ExtractorError("the extractor endpoint's answer is not JSON") from exc
            if not isinstance(body, dict):
                raise ExtractorError("the extractor endpoint's answer is not an object")
            return body
        detail = response.text[:300]
        if self._refuses_format(status, detail):
            raise _FormatRefused(f"HTTP {status}: {detail}")
        raise ExtractorError(
            f"the extractor endpoint answered HTTP {status} ({attempts} attempts): {detail}"
        )

    def _retryable(self, response: httpx.Response) -> bool:
        """A retryable status, unless it is the server refusing the ``json_schema`` form."""
        status = response.status_code
        return status in RETRY_STATUS and not self._refuses_format(status, response.text[:300])

    def _refuses_format(self, status: int, detail: str) -> bool:
        """Whether the server refused the ``json_schema`` form (auto mode falls back)."""
        return (
            self.response_format == "auto"
            and self._format == "json_schema"
            and status in (400, 422, 500)
            and ("response_format" in detail or "json_schema" in detail)
        )

    # -- the answer --------------------------------------------------------------------

    def _items(self, content: str, finish: str | None) -> list[Any]:
        """The answer's list of facts; [] (and the reason in last_errors) if unusable."""
        text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", content)
        try:
            answer = json.loads(text, strict=False)  # raw newlines in strings
        except (ValueError, RecursionError) as exc:
            cut = f" (cut at max_tokens={self.max_tokens})" if finish == "length" else ""
            self.last_errors.append(f"the answer is not valid JSON{cut}: {exc}")
            return []
        facts = answer.get("facts") if isinstance(answer, dict) else answer
        if not isinstance(facts, list):
            self.last_errors.append("the answer has no list of facts")
            return []
        return facts

    def _candidate(self, raw: Any, messages: Sequence[Message], shown: set[int]) -> Candidate:
        try:
            fact = _Fact.model_validate(raw)
        except ValidationError as exc:
            problems = ", ".join(
                f"{'.'.join(map(str, e['loc'])) or 'fact'}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)
            )
            raise _Dropped(f"does not fit the schema ({problems})") from None
        statement = " ".join(fact.statement.split())
        if not any(c.isalnum() for c in statement):
            raise _Dropped("empty statement")
        indexes = list(dict.fromkeys(fact.messages))
        bad = [i for i in indexes if i not in shown]
        if bad:
            raise _Dropped(f"message index {bad[0]} is not one of the {len(shown)} sent")
        main = indexes[0]
        quote = locate(fact.quote, messages[main])
        if quote is None:
            raise _Dropped(f"quote {fact.quote[:80]!r} is not in message {main}")
        candidate = Candidate(
            statement=statement,
            members=_members(fact.members),
            message=main,
            quote=quote,
            relation=_relation(fact.relation),
            also=tuple(indexes[1:]),
            valid_from=self._valid_from(fact.valid_from),
        )
        try:  # what remember_conversation will write must be a valid fact
            FactCreate.model_validate(fact_of(candidate, messages, 0))
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = ".".join(map(str, first["loc"]))
            raise _Dropped(f"not a valid fact ({where}: {first['msg']})") from None
        return candidate

    def _valid_from(self, value: str | None) -> datetime | None:
        if value is None or not value.strip():
            return None
        try:
            return to_utc(datetime.fromisoformat(value.strip()))
        except ValueError:
            self.last_errors.append(f"valid_from {value[:40]!r} is not an ISO time; left out")
            return None

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        if self._chat is not None:
            self._chat.close()


class _Dropped(Exception):
    """Why one fact of the answer is not a candidate."""


class _FormatRefused(Exception):
    """The server refused the response_format form it was sent."""


def _label(message: Message) -> str:
    return f"{message.name} ({message.role})" if message.name else message.role


def _content_of(body: dict[str, Any]) -> tuple[str, str | None]:
    """The first choice's text and finish reason; ExtractorError if it is not a completion."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ExtractorError("the extractor endpoint returned no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    finish = choices[0].get("finish_reason")
    return (content if isinstance(content, str) else ""), (
        finish if isinstance(finish, str) else None
    )


_APOSTROPHES = "'\u2019\u2018`"
_QUOTE_MARKS = "\"'\u201c\u201d\u2018\u2019`"


def locate(quote: str, message: Message) -> str | None:
    """The text of ``message`` that ``quote`` copies, or None where it is not there.

    Exact text wins. Otherwise a ``[n]`` or speaker label the model copied from the
    prompt and surrounding quote marks are taken off, and the words are looked for with
    any whitespace, case and apostrophe between them; the message's own text is returned.
    """
    content = message.content
    if not any(c.isalnum() for c in quote):
        return None
    if quote in content:
        return quote.strip()
    text = re.sub(r"^\s*\[\d+\]\s*", "", quote)
    label = _label(message) + ":"
    if text.lower().startswith(label.lower()):
        text = text[len(label) :]
    text = text.strip().strip(_QUOTE_MARKS).strip()
    words = text.split()
    if not any(c.isalnum() for c in text):
        return None
    apostrophe = f"[{re.escape(_APOSTROPHES)}]"
    parts = [
        "".join(apostrophe if c in _APOSTROPHES else re.escape(c) for c in word) for word in words
    ]
    found = re.search(r"\s+".join(parts), content, flags=re.IGNORECASE)
    return found.group(0) if found else None


def _members(members: list[_Member]) -> tuple[tuple[str, str, str], ...]:
    """(name, kind, role) triples, the subject first, repeats (same name and role) left out."""
    ordered = sorted(members, key=lambda m: normalize_key(m.role) != "subject")
    out: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for m in ordered:
        key = (normalize_key(m.name), normalize_key(m.role))
        if key not in seen:
            seen.add(key)
            out.append((m.name, m.kind, m.role))
    return tuple(out)


def _relation(value: str | None) -> str | None:
    """A snake_case relation name, or None where the model gave none (or no word)."""
    if value is None:
        return None
    name = re.sub(r"[^a-z0-9]+", "_", value.strip().lower()).strip("_")
    return name if re.search(r"[a-z]", name) else None
