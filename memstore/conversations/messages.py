"""The messages of a conversation: validated, each with the speaker it is attributed to."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from memstore.errors import InvalidInput
from memstore.models import MAX_EVIDENCE_CHARS, MAX_NAME_CHARS
from memstore.schemas import UTCDatetime, _name

#: At most this many messages in one call.
MAX_MESSAGES = 500

Role = Literal["user", "assistant", "system", "tool"]


def _content(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


class Message(BaseModel):
    """One turn: who spoke (``role``, and ``name`` where several people speak) and what."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)

    role: Role
    content: Annotated[str, Field(max_length=MAX_EVIDENCE_CHARS), AfterValidator(_content)]
    name: Annotated[str, Field(max_length=MAX_NAME_CHARS), AfterValidator(_name)] | None = None
    timestamp: UTCDatetime = None

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


def parse_messages(messages: Iterable[Message | Mapping[str, Any]] | Any) -> list[Message]:
    """Validate a list of messages; a bad one raises InvalidInput naming ``messages.N.field``."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        raise InvalidInput("messages", "must be a list of messages (role, content, name)")
    out: list[Message] = []
    for i, raw in enumerate(messages):
        if i >= MAX_MESSAGES:
            raise InvalidInput("messages", f"at most {MAX_MESSAGES} messages per call")
        if isinstance(raw, Message):
            out.append(raw)
            continue
        if not isinstance(raw, Mapping):
            raise InvalidInput(f"messages.{i}", "must be an object with role and content")
        try:
            out.append(Message.model_validate(dict(raw)))
        except ValidationError as exc:
            raise InvalidInput.from_validation(exc, prefix=f"messages.{i}") from None
    if not out:
        raise InvalidInput("messages", "must hold at least one message")
    return out
