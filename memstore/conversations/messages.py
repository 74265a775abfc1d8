"""The messages of a conversation: validated, each with the speaker it is attributed to.

Messages come as agent frameworks send them: OpenAI chat messages (``content`` a
string, a list of content parts or null; ``tool_calls`` on an assistant turn;
``tool_call_id`` on a tool result; the ``developer`` role) and mem0's
``{"role", "content"}``. Fields memstore does not read are ignored, not refused. A
turn without a ``name`` whose text is one labelled turn ("Caroline: ...") is that
person's; another user turn without a ``name`` is the namespace's user's when the call
names one (``user_name``), else "the user".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    model_validator,
)

from language.speakers import turn_label
from memstore.errors import InvalidInput
from memstore.schemas import UTCDatetime, _name
from memstore.storage.tables import MAX_EVIDENCE_CHARS, MAX_NAME_CHARS

#: At most this many messages in one call.
MAX_MESSAGES = 500

Role = Literal["user", "assistant", "system", "tool"]
#: Roles other frameworks use, by the role memstore reads them as.
ROLE_ALIASES = {"developer": "system", "function": "tool"}
#: Content parts whose ``text`` is read (OpenAI chat and responses); others (images,
#: audio, files) carry no text and are skipped.
TEXT_PARTS = frozenset({"text", "input_text", "output_text"})

#: How ``content`` may come: text, a list of content parts, or null (a tool call turn).
_CONTENT_SCHEMA = {
    "anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "object"}},
        {"type": "null"},
    ],
    "description": "The text; or OpenAI content parts (their text is read); or null "
    "on an assistant turn that calls tools.",
}


def _content(value: str) -> str:
    if not value.strip():
        raise ValueError("must hold text (or, on an assistant turn, tool_calls)")
    return value


def _text_of(content: Any, field: str = "content") -> str:
    """The text of a message's ``content``: the string itself, the text parts of a
    list of content parts joined by blank lines, or "" for null."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and str(part.get("type")) in TEXT_PARTS:
                text = part.get("text")
                if not isinstance(text, str):
                    raise ValueError(f"{field}: a {part.get('type')} part needs its text")
                texts.append(text)
        return "\n\n".join(t for t in texts if t.strip())
    raise ValueError(f"{field}: must be text, a list of content parts, or null")


def _calls_text(calls: Any) -> str:
    """An assistant turn's ``tool_calls`` as text the gate can read: one line a call,
    ``called NAME with ARGUMENTS``."""
    if not isinstance(calls, list):
        raise ValueError("tool_calls: must be a list")
    lines = []
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise ValueError("tool_calls: each call needs function.name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False, default=str)
        lines.append(f"called {function['name']} with {arguments}")
    return "\n".join(lines)


class Message(BaseModel):
    """One turn: who spoke (``role``, and ``name`` where several people speak) and what."""

    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=False)

    role: Role
    content: Annotated[
        str,
        Field(max_length=MAX_EVIDENCE_CHARS),
        AfterValidator(_content),
        WithJsonSchema(_CONTENT_SCHEMA),
    ]
    name: Annotated[str, Field(max_length=MAX_NAME_CHARS), AfterValidator(_name)] | None = None
    timestamp: UTCDatetime = None
    #: A tool result's call (OpenAI ``tool_call_id``): kept, not read.
    tool_call_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _as_sent(cls, data: Any) -> Any:
        """A message in the shape a framework sends it, as memstore reads it."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        role = data.get("role")
        if isinstance(role, str):
            data["role"] = ROLE_ALIASES.get(role, role)
        if "content" not in data and "tool_calls" not in data:
            return data  # "content": field required
        text = _text_of(data.get("content"))
        calls = data.pop("tool_calls", None)
        if calls:
            text = "\n".join(t for t in (text, _calls_text(calls)) if t)
        data["content"] = text
        return data

    @property
    def speaker(self) -> str:
        """Whom a first-person statement in this message is about: the ``name`` when given,
        else "the user" or "the assistant" (system and tool turns speak for nobody)."""
        if self.name:
            return self.name
        return {"user": "the user", "assistant": "the assistant"}.get(self.role, self.role)

    def rendered(self) -> str:
        """The message as evidence text: ``Speaker: content``."""
        label = self.name or self.role.capitalize()
        return f"{label}: {self.content}"

    @property
    def when(self) -> datetime | None:
        return self.timestamp


def _as_labelled(message: Message) -> Message:
    """A user or assistant turn without a ``name`` whose text is one labelled turn
    ("Caroline: I went to a support group.", as transcripts and mem0's examples send
    them) is that person's: the label becomes its ``name`` and a user turn's, the text
    after it its content."""
    if message.name is not None or message.role not in ("user", "assistant"):
        return message
    found = turn_label(message.content)
    if found is None:
        return message
    who, start = found
    return message.model_copy(
        update={"name": who, "role": "user", "content": message.content[start:]}
    )


def parse_messages(
    messages: Iterable[Message | Mapping[str, Any]] | Any,
    user_name: str | None = None,
    most: int | None = MAX_MESSAGES,
) -> list[Message]:
    """Validate a list of messages; a bad one raises InvalidInput naming ``messages.N.field``.
    ``user_name``: who the user turns without a ``name`` are (None: "the user"). ``most``:
    how many one call may hold (None: any number, for a conversation read in parts)."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        raise InvalidInput("messages", "must be a list of messages (role, content, name)")
    if user_name is not None:
        if not isinstance(user_name, str) or len(user_name) > MAX_NAME_CHARS:
            raise InvalidInput(
                "user_name", f"must be a name of at most {MAX_NAME_CHARS} characters"
            )
        try:
            user_name = _name(user_name)
        except ValueError as exc:
            raise InvalidInput("user_name", str(exc)) from None
    out: list[Message] = []
    for i, raw in enumerate(messages):
        if most is not None and i >= most:
            raise InvalidInput("messages", f"at most {most} messages per call")
        if not isinstance(raw, Message):
            if not isinstance(raw, Mapping):
                raise InvalidInput(f"messages.{i}", "must be an object with role and content")
            try:
                raw = Message.model_validate(dict(raw))
            except ValidationError as exc:
                raise InvalidInput.from_validation(exc, prefix=f"messages.{i}") from None
        raw = _as_labelled(raw)
        if user_name is not None and raw.role == "user" and raw.name is None:
            raw = raw.model_copy(update={"name": user_name})
        out.append(raw)
    if not out:
        raise InvalidInput("messages", "must hold at least one message")
    return out
