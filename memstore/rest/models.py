"""The REST API's own request and response models (the store's models are in
``memstore.schemas``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, WithJsonSchema

from memstore.models import MAX_STATEMENT_CHARS
from memstore.schemas import (
    MAX_EVIDENCE_ITEMS,
    FactCreate,
    FactPublic,
    RejectionPublic,
    VerificationPublic,
)
from memstore.store import MAX_BATCH


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


class EraseRequest(BaseModel):
    """Why the fact or rejection is erased for good (kept in its tombstone)."""

    reason: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)]


class HistoryPublic(BaseModel):
    """Every version of a fact (oldest first) and the verifications of all of them."""

    versions: list[FactPublic]
    verifications: list[VerificationPublic]


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
    confidence: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 0.95


class HealthPublic(BaseModel):
    status: Literal["ok", "unavailable"]
    version: str
    database: Literal["ok", "unavailable"]
