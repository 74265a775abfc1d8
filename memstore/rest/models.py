"""The REST API's own request and response models (the store's models are in
``memstore.schemas``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from memstore.conversations.messages import MAX_MESSAGES, Message
from memstore.fronts import HistoryPublic
from memstore.metadata import Metadata
from memstore.schemas import (
    DEFAULT_STATED_CONFIDENCE,
    MAX_EVIDENCE_ITEMS,
    METADATA_DOC,
    FactCreate,
    FactPublic,
    RejectionPublic,
)
from memstore.storage.tables import MAX_NAME_CHARS, MAX_STATEMENT_CHARS
from memstore.store import MAX_BATCH

__all__ = [
    "BatchRequest",
    "BatchResult",
    "ClaimRequest",
    "ConversationRequest",
    "EraseRequest",
    "ErrorPublic",
    "HealthPublic",
    "HistoryPublic",
    "NotGroundedPublic",
    "RejectedResult",
    "RetractRequest",
    "StoredResult",
]


class ErrorPublic(BaseModel):
    """An error. ``field`` and ``reason`` are set for ``invalid_input``."""

    error: str = Field(examples=["invalid_input"])
    detail: str
    field: str | None = Field(default=None, examples=["statement"])
    reason: str | None = None


class NotGroundedPublic(BaseModel):
    """The grounding gate rejected the fact; nothing was stored. The rejection is in the
    audit log (``GET .../rejections/{id}``)."""

    error: Literal["not_grounded"] = "not_grounded"
    verdict: str = Field(examples=["insufficient_evidence"])
    reason: str | None = None
    detail: str
    rejection: RejectionPublic


class BatchRequest(BaseModel):
    """Facts to remember, verified together; each is stored or rejected on its own."""

    facts: Annotated[list[FactCreate], Field(max_length=MAX_BATCH)]


class StoredResult(BaseModel):
    stored: Literal[True] = True
    fact: FactPublic


class RejectedResult(BaseModel):
    stored: Literal[False] = False
    rejection: RejectionPublic


class BatchResult(BaseModel):
    """Per submitted fact, in order: the stored fact or its rejection."""

    results: list[StoredResult | RejectedResult]


class RetractRequest(BaseModel):
    reason: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]


class ReviewRequest(BaseModel):
    """A person's decision on a held fact: ``confirm`` (verified) or ``refuse``
    (retracted), and why (kept in the audit chain with the key that decided)."""

    decision: Literal["confirm", "refuse"]
    reason: Annotated[str, Field(min_length=1, max_length=2_000)]


class EraseRequest(BaseModel):
    """Why the fact or rejection is erased for good (kept in its tombstone)."""

    reason: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


_Texts = Annotated[
    list[str],
    Field(min_length=1, max_length=MAX_EVIDENCE_ITEMS),
    BeforeValidator(_one_or_many),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}, "maxItems": MAX_EVIDENCE_ITEMS},
            ],
            "title": "Evidence",
        }
    ),
]


class ClaimRequest(BaseModel):
    """A claim to check against evidence (one text or several); nothing is stored."""

    claim: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]
    evidence: _Texts
    confidence: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = (
        DEFAULT_STATED_CONFIDENCE
    )


class ConversationRequest(BaseModel):
    """A conversation to remember: its messages, in order, and optionally how conflicts
    with remembered facts are settled and how many earlier turns the gate reads (the
    server's ``conversations`` settings otherwise)."""

    model_config = ConfigDict(extra="forbid")

    messages: Annotated[list[Message], Field(min_length=1, max_length=MAX_MESSAGES)]
    on_conflict: Literal["supersede", "flag"] | None = None
    context_turns: Annotated[
        int | None,
        Field(
            ge=0,
            description="Earlier messages the gate reads with each fact's own (default: the "
            "server's conversations.context_turns).",
        ),
    ] = None
    metadata: Metadata | None = Field(
        default=None, description=f"On every fact written. {METADATA_DOC}"
    )
    user_name: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="Who the user turns without a name are (default: the server's "
        "conversations.user_name, else 'the user').",
    )


class HealthPublic(BaseModel):
    status: Literal["ok", "unavailable"]
    version: str
    database: Literal["ok", "unavailable"]
