"""The ``conversations`` settings: how ``remember_conversation`` extracts and reconciles
(a section of ``memstore.config.Settings``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memstore.defaults import SINGLE_VALUED


class LLMExtractorSettings(BaseModel):
    """An OpenAI-compatible chat endpoint that extracts facts (``conversations.llm``)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    base_url: str | None = None
    #: The environment variable holding the endpoint's API key (never the key itself).
    api_key_env: str = "MEMSTORE_EXTRACTOR_API_KEY"
    timeout: float = Field(default=30.0, gt=0.0, le=600.0)
    retries: int = Field(default=2, ge=0, le=10)


class ConversationSettings(BaseModel):
    """How ``remember_conversation`` extracts and reconciles facts from messages."""

    model_config = ConfigDict(extra="forbid")

    #: ``embedded``: rule-based, offline; ``llm``: the endpoint of ``llm``.
    extractor: Literal["embedded", "llm"] = "embedded"
    llm: LLMExtractorSettings = Field(default_factory=LLMExtractorSettings)
    #: What an admitted fact does to an active one it replaces: supersede it, or stay
    #: beside it with the conflict named in the answer.
    on_conflict: Literal["supersede", "flag"] = "supersede"
    #: Relations where a newer fact about the same subject replaces the older one.
    single_valued: list[str] = Field(default_factory=lambda: list(SINGLE_VALUED))
    #: Earlier messages the gate reads (uncited) with each candidate's own message.
    context_turns: int = Field(default=4, ge=0, le=50)
    #: Who the user turns without a ``name`` are (a call's ``user_name`` wins); null:
    #: "the user".
    user_name: str | None = Field(default=None, min_length=1, max_length=256)  # a name

    @model_validator(mode="after")
    def _llm_named(self) -> ConversationSettings:
        if self.extractor == "llm" and not (self.llm.model and self.llm.base_url):
            raise ValueError("extractor 'llm' needs conversations.llm.model and .base_url")
        return self
