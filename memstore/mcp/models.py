"""The tools' parameters and results, as the agent sees them in each tool's schema: the
results (pydantic models, described field by field) and the parameter types the tool
signatures of ``memstore.mcp.tools`` name."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gate.verdict import GateNumbers
from memstore.conversations.messages import MAX_MESSAGES
from memstore.conversations.messages import Message as ConversationMessage
from memstore.storage.tables import MAX_NAME_CHARS

# -- results ----------------------------------------------------------------------


class Member(BaseModel):
    """One participant of a fact: an entity, by name, in a role."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The entity's name, e.g. 'Alice', 'Acme', 'peanuts'.")
    kind: str = Field(
        default="entity", description="What sort of thing it is: person, org, place, food, ..."
    )
    role: str = Field(
        default="member", description="Its role in this fact: employee, employer, allergen, ..."
    )


class NearDuplicate(BaseModel):
    """A remembered fact with the same members and a very similar statement."""

    fact_id: str
    statement: str
    similarity: float


# The gate's measurements, in every result that carries a verdict.
P0 = Annotated[float | None, Field(description="P(statement true) with the evidence removed.")]
P1 = Annotated[float | None, Field(description="P(statement true) given the evidence.")]
RequiredBits = Annotated[
    float | None, Field(description="Bits of support the stated confidence needs.")
]
ObservedBits = Annotated[float | None, Field(description="Bits of support the evidence gave.")]
BudgetGap = Annotated[
    float | None,
    Field(description="required_bits - observed_bits; above the threshold, a write is refused."),
]


class _GateNumbers(GateNumbers):
    """The gate's measurements (``gate.verdict.GateNumbers``, described for the agent),
    in every result that carries a verdict."""

    p0: P0 = None
    p1: P1 = None
    required_bits: RequiredBits = None
    observed_bits: ObservedBits = None
    budget_gap: BudgetGap = None


class Remembered(_GateNumbers):
    """What ``remember`` did: stored the fact, or the gate refused it (and why)."""

    stored: bool = Field(description="Whether the fact is now in memory.")
    verdict: str = Field(description="The gate's verdict, e.g. grounded, insufficient_evidence.")
    fact_id: str | None = Field(default=None, description="The stored fact's id.")
    status: str | None = Field(
        default=None,
        description=(
            "verified; unverified if the gate held it (stored, never shown as verified: "
            "reason says why); pending if the gate could not decide yet (stored, not yet "
            "checked, left out of default reads until re-verification checks it)."
        ),
    )
    confidence: float | None = Field(default=None, description="The confidence it is stored with.")
    deduplicated: bool = Field(
        default=False, description="The same fact was already remembered; nothing new was stored."
    )
    near_duplicates: list[NearDuplicate] = Field(default_factory=list)
    rejection_id: str | None = Field(default=None, description="The refusal's audit-log id.")
    reason: str | None = Field(default=None, description="Why the gate decided as it did.")
    hint: str | None = Field(default=None, description="What to do about a refusal.")


class CandidateSummary(BaseModel):
    """What became of one fact extracted from the conversation."""

    statement: str
    outcome: str = Field(
        description="stored, refused, duplicate (already remembered), superseded (replaced "
        "older facts) or conflict (stored beside facts it contradicts)."
    )
    message: int = Field(description="The message it came from (its index).")
    verdict: str | None = Field(default=None, description="The gate's verdict.")
    p1: P1 = None
    fact_id: str | None = Field(default=None, description="The stored fact's id.")
    rejection_id: str | None = Field(default=None, description="The refusal's audit-log id.")
    reason: str | None = Field(default=None, description="Why the gate refused or held it.")
    replaced: list[str] = Field(default_factory=list, description="Ids of the facts it superseded.")
    conflicts: list[str] = Field(
        default_factory=list, description="Ids of the facts it contradicts, kept beside it."
    )


class RememberedConversation(BaseModel):
    """Per fact extracted from the conversation, in order: what was done with it."""

    extractor: str = Field(description="The extractor that read the messages.")
    messages: int = Field(description="How many messages were read.")
    candidates: list[CandidateSummary]


class Memory(BaseModel):
    """A remembered fact, as ``list_memories`` shows it."""

    fact_id: str
    statement: str
    relation: str | None = None
    members: list[Member]
    status: str
    confidence: float
    metadata: dict[str, Any] = Field(default_factory=dict, description="The caller's metadata.")
    recorded_at: datetime = Field(description="When it was remembered.")
    valid_from: datetime | None = Field(default=None, description="When it began to hold.")
    valid_to: datetime | None = Field(default=None, description="When it stopped holding.")


class RecalledFact(Memory):
    """A remembered fact that matches the query."""

    score: float = Field(description="Rank-fusion score; higher is a better match.")
    relevance: float = Field(
        description="How close the statement is to the query in meaning, 0..1 (min_score's scale)."
    )
    similarity: float | None = Field(default=None, description="Cosine similarity to the query.")


class _Paged(BaseModel):
    """A page of a listing, with the cursor of the next one."""

    next_cursor: str | None = Field(
        default=None,
        description="Pass it as cursor, with the same filters, for the next page; "
        "null: this is the last page.",
    )


class MemoryPage(_Paged):
    """One page of remembered facts, oldest first."""

    memories: list[Memory]


class Recalled(BaseModel):
    """The memories relevant to the query, as lines for the agent's context."""

    text: str = Field(
        description="One line per memory, best first: the statement, when it held, "
        "confidence and source; where no memory is relevant, the stored conversation "
        "turns that are, quoted with who said them (what was said, not a checked fact). "
        "Empty when nothing relevant is remembered."
    )
    facts: list[RecalledFact] = Field(description="The memories the text shows, in its order.")
    tokens: int = Field(description="The text's length in tokens (the MiniLM tokenizer's).")
    left_out: int = Field(description="Relevant memories that did not fit the budget.")


class Retracted(BaseModel):
    """A fact ``retract`` took out of memory; its history keeps it, with the reason."""

    fact_id: str
    statement: str
    status: str
    reason: str | None = None


class ClaimVerdict(_GateNumbers):
    """The gate's verdict on a claim; nothing was stored."""

    status: str = Field(description="The verdict, e.g. grounded, unsupported, contradicted.")
    accepted: bool = Field(description="Whether ``remember`` would store the claim.")
    confidence: float = Field(description="The confidence it would be stored with (0 if not).")
    outcome: str = Field(
        description="verified, held (stored unverified, or pending when the verifier "
        "failed) or refused."
    )
    reason: str | None = None
    p1_spread: float | None = Field(
        default=None, description="The standard deviation of p1 where it was sampled."
    )
    p0_spread: float | None = Field(
        default=None, description="The standard deviation of p0 where it was sampled."
    )


class Rejection(_GateNumbers):
    """A fact the gate refused, as the audit log keeps it."""

    rejection_id: str
    statement: str
    verdict: str
    reason: str | None = None
    members: list[Member]
    evidence: list[str] = Field(description="The evidence it was checked against (cut short).")
    created_at: datetime
    attempts: int = Field(
        default=1, description="How often this same write was refused (counted, not repeated)."
    )
    last_attempt_at: datetime | None = None


class RefusalPage(_Paged):
    """One page of the facts the gate refused, newest first."""

    refusals: list[Rejection]


class Erased(BaseModel):
    """What ``erase`` removed for good; a tombstone keeps only ids and hashes."""

    tombstone_id: str
    target: str = Field(description="fact or rejection.")
    target_id: str
    fact_ids: list[str] = Field(description="Every version of the fact that was erased.")
    evidence_ids: list[str] = Field(description="The evidence erased with it.")
    kept_evidence_ids: list[str] = Field(
        description="Evidence kept because other facts or refusals still cite it."
    )
    log_pending: bool = Field(
        default=False,
        description="SQLite: a reader kept the write-ahead log from being emptied; copies "
        "of the erased text stay in it until the next erase or until the store closes.",
    )


# -- parameters -------------------------------------------------------------------

Statement = Annotated[
    str,
    Field(
        description=(
            "The fact as one self-contained sentence that names its entities, "
            "e.g. 'Alice is allergic to peanuts.'"
        )
    ),
]
Members = Annotated[
    list[Member],
    Field(min_length=1, description="The entities the fact links, each in its role."),
]
Evidence = Annotated[
    list[str],
    Field(
        min_length=1,
        description=(
            "Verbatim source texts the fact comes from (what the user said, a document "
            "passage); the gate checks the statement against them."
        ),
    ),
]
Relation = Annotated[
    str | None,
    Field(description="Optional predicate name, e.g. 'allergic_to', 'works_at'."),
]
Confidence = Annotated[
    float,
    Field(ge=0.0, le=1.0, description="How sure the statement is meant to be (0..1)."),
]
Messages = Annotated[
    list[ConversationMessage],
    Field(
        min_length=1,
        max_length=MAX_MESSAGES,
        description=(
            "The conversation, oldest first: each message's role (user, assistant, system, "
            "tool), content, and the speaker's name where several people speak."
        ),
    ),
]
FactId = Annotated[
    str, Field(min_length=1, description="The fact's id (from remember, recall or search).")
]
QueryText = Annotated[
    str,
    Field(description="What to look for: the user's message, a question or keywords."),
]
Entities = Annotated[
    list[str] | None,
    Field(description="Only facts with every one of these entities as a member."),
]
AsOf = Annotated[
    datetime | None,
    Field(description="Only facts that held at this world time (ISO 8601; naive means UTC)."),
]
MinScore = Annotated[
    float | None,
    Field(ge=0.0, le=1.0, description="Leave out facts whose relevance (0..1) is below it."),
]
MetadataArg = Annotated[
    dict[str, str | int | float | bool | None] | None,
    Field(
        description="Your own data about the fact, e.g. {'session': 's-12', 'topic': 'diet'}: "
        "keys (letters, digits, _ - .) to a string, number, true/false or null. Not "
        "evidence: the gate never reads it."
    ),
]
MetadataFilter = Annotated[
    dict[str, str | int | float | bool | None] | None,
    Field(description="Only facts whose metadata holds each of these keys and values."),
]
RelationFilter = Annotated[
    str | None, Field(description="Only facts with this predicate, e.g. 'works_at'.")
]
RecordedAfter = Annotated[
    datetime | None, Field(description="Only facts remembered at or after this time.")
]
RecordedBefore = Annotated[
    datetime | None, Field(description="Only facts remembered before this time.")
]
OnConflictOption = Annotated[
    Literal["supersede", "flag"] | None,
    Field(
        description=(
            "When a new fact contradicts a remembered one: supersede it (the default of "
            "the settings) or flag it, keeping both."
        )
    ),
]
ContextTurns = Annotated[
    int | None,
    Field(
        ge=0,
        description=(
            "Earlier messages the gate reads with each fact's own message (default: the "
            "server's conversations.context_turns)."
        ),
    ),
]
UserName = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description=(
            "Who the user turns without a name are, e.g. the person this agent serves "
            "(default: the server's conversations.user_name, else 'the user')."
        ),
    ),
]
