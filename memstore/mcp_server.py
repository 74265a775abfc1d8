"""memstore over the Model Context Protocol: one namespace of one store as an agent's memory.

Tools: ``remember`` (a write through the grounding gate), ``remember_conversation``
(facts extracted from messages, each gated against its turn), ``recall`` (the memories
relevant to a query as lines for the agent's context, within a token budget: what an
agent calls every turn), ``search`` (matching facts, filtered), ``supersede`` (correct
a fact, gated like ``remember``), ``retract`` (forget a fact, keeping its history),
``list_memories`` (what memory holds, a page at a time, filtered by entity, time or
metadata), ``verify_claim`` (the gate's verdict, nothing stored), ``audit_rejections``
(what the gate refused) and, where allowed, ``erase`` (forget a fact or a refusal for
good; a right of its own: over stdio only with ``--allow-erase``, over HTTP only
for the keys of ``server.erase_keys``). A refused write is a normal result
(``stored: false`` with the verdict and why), so the agent learns from it; bad
input is a tool error naming the field. Built on the official MCP SDK 2.x
(``pip install 'memstore[server]'``)::

    python -m memstore.mcp_server --store ./memdata --namespace user:alice
    python -m memstore.mcp_server --store ./memdata --transport http --port 8766

Over HTTP every request needs ``Authorization: Bearer <key>`` with a key of
``server.api_keys`` that may use the served namespace (401 without a known key, 403
for a key of other namespaces), the keys of the REST API. With no keys configured
the server refuses to start, unless it listens on a loopback address and
``--allow-unauthenticated`` says that anyone on this machine may use it. Request
bodies over ``server.max_body_bytes`` are answered 413, as by the REST API.
"""

from __future__ import annotations

import argparse
import inspect
import ipaddress
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager, nullcontext, redirect_stdout
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from gate import ConfigError, Verdict, VerdictStatus
from gate.verdict import GATE_NUMBERS, GateNumbers
from memstore.checks import MAX_RECALL_TOKENS
from memstore.config import (
    ConversationSettings,
    ServerSettings,
    Settings,
    key_fingerprint,
    load_settings,
)
from memstore.conversations.conversation import CandidateOutcome, remember_as_configured
from memstore.conversations.messages import MAX_MESSAGES
from memstore.conversations.messages import Message as ConversationMessage
from memstore.errors import (
    ErrFactNotGrounded,
    InvalidInput,
    MemstoreError,
    SearchIndexError,
    StorageError,
)
from memstore.fronts import (
    LIST_FILTERS,
    RECALL_FILTERS,
    SEARCH_FILTERS,
    given_filters,
    rejection_where,
)
from memstore.models import MAX_NAME_CHARS, FactStatus
from memstore.names import check_namespace
from memstore.recall import DEFAULT_BUDGET_TOKENS, DEFAULT_K, DEFAULT_MIN_SCORE
from memstore.schemas import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_STATED_CONFIDENCE,
    MAX_LIST_LIMIT,
    FactPublic,
    RejectionPublic,
    SearchHit,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from memstore.store import Store

__all__ = ["build_server", "main", "run"]

SERVER_NAME = "memstore"
#: Where the streamable HTTP transport answers.
HTTP_PATH = "/mcp"
INSTALL_HINT = "the MCP server needs the MCP SDK: pip install 'memstore[server]'"
MAX_RECALL = 50
MAX_AUDIT = 100
#: Evidence texts in ``audit_rejections`` are cut to this many characters.
EVIDENCE_PREVIEW = 500
#: What the erase tool answers to a bearer key that may not erase.
ERASE_FORBIDDEN = (
    "forbidden: this API key may not erase; erasing is a separate right: list the key "
    "in server.erase_keys (MEMSTORE_SERVER__ERASE_KEYS) to allow it"
)

log = logging.getLogger("memstore.mcp")

INSTRUCTIONS = """\
memstore is your long-term memory for namespace {namespace!r}: facts you remember here
persist across conversations, and only this namespace is visible.

Every write is gated. `remember` stores a fact only when the evidence you pass (verbatim
source text: what the user said, a passage of a document) actually supports it; if not,
it returns stored=false with the verdict and the reason, and nothing is remembered.
Quote the source instead of paraphrasing it, and never invent evidence to get a fact in.

`remember_conversation` takes the conversation itself: facts are extracted from the
messages and each one is gated against the message it came from, like `remember`.

Call `recall` every turn with the user's message: it answers what memory holds about
it as lines to put in your context (each with when it held, confidence and source).
`search` finds facts with filters (entity, time, relevance). When a remembered fact is
wrong or out of date, `supersede` it with the corrected statement and its evidence
(gated like `remember`; the old version stays in the history); `retract` forgets a
fact with a reason. `verify_claim` checks a claim against evidence without storing
it, and `audit_rejections` shows what the gate refused. When the user asks you to
forget something for good, `erase` removes it (where the server allows it).
`list_memories` pages through what memory holds. Writes take `metadata`, your own keys
and values (a session, a topic), which `search` and `list_memories` filter by.
"""

_HINTS: dict[str, str] = {
    VerdictStatus.NO_EVIDENCE: "Pass the source text the fact comes from as evidence.",
    VerdictStatus.CONTRADICTED: "The evidence contradicts the statement; do not remember it.",
    VerdictStatus.UNSUPPORTED: (
        "The evidence does not support the statement: quote the passage that states it, "
        "or do not remember it."
    ),
    VerdictStatus.INSUFFICIENT_EVIDENCE: (
        "The evidence supports the statement only partly: quote the passage that states "
        "it, or state a lower confidence if the evidence only suggests it."
    ),
    VerdictStatus.PRIOR_SUFFICIENT: (
        "The statement does not depend on the evidence; memory keeps facts that the "
        "evidence grounds."
    ),
}


# -- tool parameters and results ------------------------------------------------


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
        "confidence and source. Empty when nothing relevant is remembered."
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
    reason: str | None = None


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


# -- the server -------------------------------------------------------------------


def build_server(
    store: Store,
    *,
    allow_erase: bool = False,
    keys: ServerSettings | None = None,
    conversations: ConversationSettings | None = None,
) -> MCPServer:
    """An MCP server named ``memstore`` whose tools read and write ``store``.

    ``remember_conversation`` extracts facts as ``conversations`` (the settings'
    section; default: the embedded extractor) says.

    ``erase`` is a right of its own. With ``keys`` holding API keys (HTTP behind
    BearerAuth) the tool is listed and refuses unless the request's bearer key is in
    ``keys.erase_keys``; it records the key's fingerprint as who erased. Otherwise
    (stdio, or HTTP without keys) it is listed only with ``allow_erase``
    (``--allow-erase``), and records ``mcp``.

    Tools are plain functions: the SDK runs them on worker threads, so blocking
    store calls never stall the event loop.
    """
    _require_sdk()
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ToolAnnotations

    def failed(exc: MemstoreError) -> Exception:
        if isinstance(exc, InvalidInput):
            return ToolError(f"invalid input: {exc}")
        if isinstance(exc, SearchIndexError):
            log.error("search index error: %s", exc, exc_info=exc)
            return ToolError("the store's search index failed; the server log has the details")
        if isinstance(exc, StorageError):
            log.error("storage error: %s", exc, exc_info=exc)
            return ToolError("the store's database failed; the server log has the details")
        return ToolError(str(exc))

    server: MCPServer = MCPServer(
        SERVER_NAME,
        title="memstore: grounded long-term memory",
        instructions=INSTRUCTIONS.format(namespace=store.namespace),
    )

    def gated(write: Callable[[], FactPublic]) -> Remembered:
        """What a gated ``write`` did: stored, or refused by the gate (a normal result)."""
        try:
            return _stored(write())
        except ErrFactNotGrounded as exc:
            return _refused(exc.rejection)
        except MemstoreError as exc:
            raise failed(exc) from exc

    def remember(
        statement: Statement,
        members: Members,
        evidence: Evidence,
        relation: Relation = None,
        confidence: Confidence = DEFAULT_STATED_CONFIDENCE,
        metadata: MetadataArg = None,
    ) -> Remembered:
        """Remember a fact, if the evidence supports it (the write is gated).

        Stored: stored=true with the fact's id. Refused: stored=false with the verdict,
        the reason and the gate's numbers; nothing is remembered. Remembering the
        same fact twice stores it once (deduplicated=true).
        """
        fact = _fact(statement, members, evidence, relation, confidence, metadata)
        return gated(lambda: store.add_fact(fact))

    conversation_settings = conversations or ConversationSettings()

    def remember_conversation(
        messages: Messages,
        on_conflict: OnConflictOption = None,
        metadata: MetadataArg = None,
        user_name: UserName = None,
    ) -> RememberedConversation:
        """Remember what a conversation states: facts are extracted from the messages and
        each is gated against the message it came from (refusals are normal results).
        A fact that replaces a remembered one supersedes it (or, with on_conflict='flag',
        is kept beside it); the answer says so per fact.
        """
        try:
            report = remember_as_configured(
                store,
                messages,
                conversation_settings,
                on_conflict=on_conflict,
                metadata=metadata,
                user_name=user_name,
            )
        except MemstoreError as exc:
            raise failed(exc) from exc
        candidates = [_candidate(c) for c in report.candidates]
        return _shown(RememberedConversation, report, candidates=candidates)

    def supersede(
        fact_id: FactId,
        statement: Statement,
        members: Members,
        evidence: Evidence,
        relation: Relation = None,
        confidence: Confidence = DEFAULT_STATED_CONFIDENCE,
        metadata: MetadataArg = None,
    ) -> Remembered:
        """Correct a remembered fact: the corrected statement replaces it if the evidence
        supports it (the write is gated like remember).

        Stored: stored=true with the correction's fact_id; the old fact stays in its
        history, superseded. Refused: stored=false with the verdict and why; the old
        fact is unchanged. Without metadata the correction keeps the old fact's.
        """
        fact = _fact(statement, members, evidence, relation, confidence, metadata)
        return gated(lambda: store.supersede(fact_id, fact))

    def retract(
        fact_id: FactId,
        reason: Annotated[
            str,
            Field(min_length=1, description="Why, e.g. 'the user says they moved away'."),
        ],
    ) -> Retracted:
        """Forget a remembered fact: it leaves recall and search, and its history keeps it
        with the reason (erase, where offered, removes a fact for good)."""
        try:
            fact = store.retract(fact_id, reason)
        except MemstoreError as exc:
            raise failed(exc) from exc
        return _shown(Retracted, fact, fact_id=fact.id, reason=fact.retraction_reason)

    def recall(
        query: QueryText,
        budget_tokens: Annotated[
            int,
            Field(ge=1, le=MAX_RECALL_TOKENS, description="How many tokens the text may hold."),
        ] = DEFAULT_BUDGET_TOKENS,
        k: Annotated[
            int, Field(ge=1, le=MAX_RECALL, description="Memories considered, best first.")
        ] = DEFAULT_K,
        entity: Entities = None,
        as_of: AsOf = None,
        min_score: Annotated[
            float,
            Field(ge=0.0, le=1.0, description="The relevance (0..1) a memory needs; 0: any."),
        ] = DEFAULT_MIN_SCORE,
    ) -> Recalled:
        """Recall what memory holds about the conversation, as lines for your context: per
        memory its statement, when it held, confidence and source, best first, within
        budget_tokens. Call it every turn with the user's message. An empty text: nothing
        relevant is remembered. The facts carry the ids supersede and retract take.
        """
        try:
            found = store.recall(
                query,
                budget_tokens=budget_tokens,
                k=k,
                **given_filters(RECALL_FILTERS, locals()),
            )
        except MemstoreError as exc:
            raise failed(exc) from exc
        return _shown(Recalled, found, facts=[_recalled(hit) for hit in found.hits])

    def search(
        query: QueryText,
        k: Annotated[int, Field(ge=1, le=MAX_RECALL, description="How many facts.")] = 5,
        entity: Entities = None,
        relation: RelationFilter = None,
        as_of: AsOf = None,
        recorded_after: RecordedAfter = None,
        recorded_before: RecordedBefore = None,
        min_score: MinScore = None,
        metadata: MetadataFilter = None,
    ) -> list[RecalledFact]:
        """Search memory by meaning and keywords, with filters; the best matching facts
        first, each with its id, members, status and relevance."""
        try:
            hits = store.search(query, k, **given_filters(SEARCH_FILTERS, locals()))
        except MemstoreError as exc:
            raise failed(exc) from exc
        return [_recalled(hit) for hit in hits]

    def list_memories(
        entity: Entities = None,
        relation: RelationFilter = None,
        statuses: Annotated[
            list[FactStatus] | None,
            Field(description="Fact statuses (default: verified and unverified, the active ones)."),
        ] = None,
        metadata: MetadataFilter = None,
        recorded_after: RecordedAfter = None,
        recorded_before: RecordedBefore = None,
        as_of: AsOf = None,
        limit: Annotated[
            int, Field(ge=1, le=MAX_LIST_LIMIT, description="Facts per page.")
        ] = DEFAULT_LIST_LIMIT,
        cursor: Annotated[str | None, Field(description="The previous page's next_cursor.")] = None,
    ) -> MemoryPage:
        """List what memory holds, oldest first, a page at a time, with filters (no query:
        every fact that matches them). Pass next_cursor back as cursor, with the same
        filters, for the next page."""
        filters = given_filters(LIST_FILTERS, locals())
        if statuses is not None:
            filters["statuses"] = [s.value for s in statuses]
        try:
            page = store.list_facts(**filters, limit=limit, cursor=cursor)
        except MemstoreError as exc:
            raise failed(exc) from exc
        return MemoryPage(memories=[_memory(f) for f in page.items], next_cursor=page.next_cursor)

    def verify_claim(
        claim: Annotated[str, Field(description="The claim to check, as one sentence.")],
        evidence: Evidence,
        confidence: Confidence = DEFAULT_STATED_CONFIDENCE,
    ) -> ClaimVerdict:
        """Check a claim against evidence with the memory's gate; nothing is stored."""
        try:
            verdict = store.verify_claim(claim, evidence, confidence)
        except MemstoreError as exc:
            raise failed(exc) from exc
        return _claim_verdict(verdict)

    def audit_rejections(
        verdict: Annotated[
            VerdictStatus | None, Field(description="Only refusals with this verdict.")
        ] = None,
        text: Annotated[
            str | None, Field(description="Only refusals whose statement contains this.")
        ] = None,
        since: Annotated[
            datetime | None,
            Field(description="Only refusals from this time on (ISO 8601; naive means UTC)."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_AUDIT, description="How many.")] = 20,
        cursor: Annotated[str | None, Field(description="The previous page's next_cursor.")] = None,
    ) -> RefusalPage:
        """Facts the gate refused to remember, newest first, with the verdict and why, a
        page at a time: pass next_cursor back as cursor, with the same filters."""
        where = rejection_where(
            verdict=None if verdict is None else verdict.value, text=text, since=since
        )
        try:
            found = store.rejections(limit=limit, cursor=cursor, **where)
        except MemstoreError as exc:
            raise failed(exc) from exc
        return RefusalPage(refusals=[_rejection(r) for r in found], next_cursor=found.next_cursor)

    def erase(
        reason: Annotated[
            str,
            Field(min_length=1, description="Why, e.g. 'the user asked to forget their employer'."),
        ],
        fact_id: Annotated[
            str | None, Field(description="The fact to erase (from remember or recall).")
        ] = None,
        rejection_id: Annotated[
            str | None, Field(description="Or a refusal to erase (from audit_rejections).")
        ] = None,
        ctx: Context | None = None,
    ) -> Erased:
        """Erase a fact (every version, and the evidence nothing else cites) or a refusal,
        for good, when the user asks you to forget it. Give fact_id or rejection_id.
        It cannot be undone; a tombstone keeps only ids and hashes."""
        by = eraser(ctx)
        if (fact_id is None) == (rejection_id is None):
            raise ToolError("invalid input: fact_id: give fact_id or rejection_id, not both")
        try:
            if fact_id is not None:
                done = store.erase(fact_id, reason, by=by)
            else:
                done = store.erase_rejection(str(rejection_id), reason, by=by)
        except MemstoreError as exc:
            raise failed(exc) from exc
        evidence_ids = [e["id"] for e in done.evidence]
        return _shown(Erased, done, tombstone_id=done.id, evidence_ids=evidence_ids)

    keyed = keys is not None and bool(keys.api_keys)

    def eraser(ctx: Context | None) -> str:
        """Who erases (``mcp``, or the bearer key's fingerprint); a ToolError for a key
        not in ``server.erase_keys``."""
        if not keyed or keys is None:
            return "mcp"
        headers = ctx.headers if ctx is not None else None
        scheme, _, key = (headers or {}).get("authorization", "").strip().partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key or not keys.may_erase(key):
            raise ToolError(ERASE_FORBIDDEN)
        return key_fingerprint(key)

    # With ``from __future__ import annotations`` the SDK resolves hints in this
    # module's globals, where the lazily imported Context is not: give it the class.
    erase.__annotations__["ctx"] = Context | None
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    erases = ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
    )
    tools: list[tuple[Callable[..., Any], ToolAnnotations]] = [
        (remember, writes),
        (remember_conversation, writes),
        (recall, reads),
        (search, reads),
        (supersede, writes),
        (retract, erases),  # out of every read, like an erase (its history stays)
        (verify_claim, reads),
        (audit_rejections, reads),
        (list_memories, reads),
    ]
    if keyed or allow_erase:
        tools.append((erase, erases))
    for tool, hints in tools:
        doc = inspect.cleandoc(tool.__doc__ or "")
        server.add_tool(tool, description=doc, annotations=hints, structured_output=True)
    return server


def _require_sdk() -> None:
    """Raise ImportError with the install line if the MCP SDK is missing."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise ImportError(INSTALL_HINT) from None


_Shown = TypeVar("_Shown", bound=BaseModel)


def _shown(model: type[_Shown], source: object, **given: Any) -> _Shown:
    """``model`` with ``given`` and, for each of its other fields, ``source``'s attribute of
    that name (a nested model from attributes too: a ``MemberPublic`` as a ``Member``)."""
    same = {name: getattr(source, name) for name in model.model_fields if name not in given}
    return model.model_validate(same | given, from_attributes=True)


def _numbers(source: Any) -> dict[str, Any]:
    return {name: getattr(source, name) for name in GATE_NUMBERS}


def _stored(fact: FactPublic) -> Remembered:
    # The verdict, status, confidence, duplicates and the gate's numbers: the fact's own.
    return _shown(
        Remembered,
        fact,
        stored=True,
        fact_id=fact.id,
        reason=fact.status_reason,
        rejection_id=None,
        hint=None,
    )


def _refused(rejection: RejectionPublic) -> Remembered:
    return Remembered(
        stored=False,
        verdict=rejection.verdict,
        rejection_id=rejection.id,
        reason=rejection.reason,
        hint=_HINTS.get(rejection.verdict),
        **_numbers(rejection),
    )


def _candidate(outcome: CandidateOutcome) -> CandidateSummary:
    found = outcome.fact or outcome.rejection
    return _shown(
        CandidateSummary,
        outcome,
        verdict=None if found is None else found.verdict,
        p1=None if found is None else found.p1,
        fact_id=None if outcome.fact is None else outcome.fact.id,
        rejection_id=None if outcome.rejection is None else outcome.rejection.id,
        reason=outcome.rejection.reason
        if outcome.rejection is not None
        else (outcome.fact.status_reason if outcome.fact is not None else None),
    )


def _fact(
    statement: str,
    members: list[Member],
    evidence: list[str],
    relation: str | None,
    confidence: float,
    metadata: dict[str, Any] | None,
) -> dict[str, Any]:
    """The fact ``remember`` and ``supersede`` write (no metadata: none given, so a
    correction keeps the old version's)."""
    fact: dict[str, Any] = {
        "statement": statement,
        "members": [m.model_dump() for m in members],
        "evidence": evidence,
        "relation": relation,
        "confidence": confidence,
    }
    if metadata is not None:
        fact["metadata"] = metadata
    return fact


def _memory(fact: FactPublic) -> Memory:
    return _shown(Memory, fact, fact_id=fact.id)


def _recalled(hit: SearchHit) -> RecalledFact:
    """The hit's fact as ``_memory`` shows it, with the hit's score, relevance, similarity."""
    return _shown(RecalledFact, hit, **_memory(hit.fact).model_dump())


def _claim_verdict(verdict: Verdict) -> ClaimVerdict:
    return _shown(ClaimVerdict, verdict, status=verdict.status.value)


def _rejection(rejection: RejectionPublic) -> Rejection:
    return _shown(
        Rejection,
        rejection,
        rejection_id=rejection.id,
        members=[
            Member(name=m["name"], kind=m.get("kind", "entity"), role=m.get("role", "member"))
            for m in rejection.members
        ],
        evidence=[e.text[:EVIDENCE_PREVIEW] for e in rejection.evidence],
    )


# -- running it -------------------------------------------------------------------


def run(
    settings: Settings,
    namespace: str | None = None,
    transport: Literal["stdio", "http"] = "stdio",
    host: str | None = None,
    port: int | None = None,
    *,
    allow_unauthenticated: bool = False,
    allow_erase: bool = False,
) -> None:
    """Serve ``settings.open(namespace)`` until the client leaves (stdio), Ctrl-C or SIGTERM.

    HTTP (streamable, at ``/mcp``) listens on ``host``/``port``, by default
    ``settings.server.host`` and the port after ``settings.server.port``, and needs a
    bearer key of ``settings.server.api_keys`` that allows the namespace. Without keys
    it raises ConfigError, unless ``allow_unauthenticated`` and ``host`` is loopback.
    Over stdio, stdout carries only the protocol; logs go to stderr. The store is
    closed at the end. ``erase`` is offered over stdio (and HTTP without keys) only
    with ``allow_erase``; over HTTP with keys, to the keys of ``server.erase_keys``.
    """
    if transport not in ("stdio", "http"):
        raise InvalidInput("transport", f"{transport!r} is not 'stdio' or 'http'")
    host = host or settings.server.host
    http_port = settings.server.port + 1 if port is None else port
    if transport == "http" and (
        isinstance(http_port, bool) or not isinstance(http_port, int) or not 0 < http_port < 65536
    ):
        raise InvalidInput("port", f"{http_port!r} is not a TCP port (1 to 65535)")
    if namespace is not None:
        try:
            check_namespace(namespace)  # before the models load, not after
        except ValueError as exc:
            raise InvalidInput("namespace", str(exc)) from None
    if transport == "http":
        _check_http_access(settings.server, host, allow_unauthenticated)
    _require_sdk()
    quiet = _stdout_to_stderr() if transport == "stdio" else nullcontext()
    with quiet:  # a stray print while the store and models load must not corrupt the protocol
        store = settings.open(namespace)
    try:
        keys = settings.server if transport == "http" else None
        server = build_server(
            store, allow_erase=allow_erase, keys=keys, conversations=settings.conversations
        )
        log.info("memstore MCP server for %r on %s", store.namespace, transport)
        with _sigterm_interrupts():
            if transport == "stdio":
                server.run("stdio")
            else:
                _serve_http(server, settings.server, store.namespace, host, http_port)
    except KeyboardInterrupt:
        log.info("memstore MCP server stopped")
    finally:
        store.close()


_NO_KEYS = (
    "MCP over HTTP needs API keys: server.api_keys maps each key to the namespaces it "
    'may use, e.g. MEMSTORE_SERVER__API_KEYS=\'{"<a long random key>": ["user:*"]}\', '
    "and clients send Authorization: Bearer <key>. Only on a loopback address (127.0.0.1, "
    "::1, localhost) may --allow-unauthenticated serve without keys"
)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost``, 127.0.0.0/8, ``::1``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _check_http_access(server: ServerSettings, host: str, allow_unauthenticated: bool) -> None:
    """Raise ConfigError unless HTTP clients must authenticate, or may skip it knowingly."""
    if server.api_keys:
        if allow_unauthenticated:
            log.warning("server.api_keys are set: clients need a key all the same")
        return
    if not (allow_unauthenticated and is_loopback(host)):
        raise ConfigError("server.api_keys", _NO_KEYS)
    log.warning(
        "serving without authentication on %s (--allow-unauthenticated): anyone who can "
        "reach this address may read and write the namespace",
        host,
    )


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <key>`` with a key
    of ``server.api_keys`` that allows ``namespace``; else 401 (no key or an unknown one)
    or 403 (a key of other namespaces), as JSON like the REST API's errors."""

    def __init__(self, app: ASGIApp, server: ServerSettings, namespace: str) -> None:
        self.app = app
        self.server = server
        self.namespace = namespace

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            denied = self._denied(scope)
            if denied is not None:
                if scope["type"] == "websocket":  # none is served; refuse before accepting
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await _refuse(send, *denied)
                return
        await self.app(scope, receive, send)

    def _denied(self, scope: Scope) -> tuple[int, str, str] | None:
        headers = [v for k, v in scope.get("headers", ()) if k.lower() == b"authorization"]
        value = headers[0].decode("latin-1") if len(headers) == 1 else ""
        scheme, _, key = value.strip().partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key:
            return 401, "unauthorized", "an API key is required (Authorization: Bearer <key>)"
        if not self.server.namespaces_for(key):
            return 401, "unauthorized", "unknown API key"
        if not self.server.allows(key, self.namespace):
            detail = f"this API key may not use namespace {self.namespace!r}"
            return 403, "forbidden", detail
        return None


async def _refuse(send: Send, status: int, error: str, detail: str) -> None:
    body = json.dumps({"error": error, "detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def http_app(server: MCPServer, settings: ServerSettings, namespace: str, host: str) -> ASGIApp:
    """The streamable HTTP app at ``HTTP_PATH``: behind BearerAuth when keys are set, and
    behind the REST API's body limit (``server.max_body_bytes``, 413 naming ``body``)."""
    from memstore.rest import BodyLimit

    app: ASGIApp = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
    if settings.api_keys:
        app = BearerAuth(app, settings, namespace)
    return BodyLimit(app, settings.max_body_bytes, settings.body_timeout.total_seconds())


def _serve_http(
    server: MCPServer, settings: ServerSettings, namespace: str, host: str, port: int
) -> None:
    """Serve streamable HTTP at ``HTTP_PATH`` with uvicorn, behind BearerAuth when keys are set."""
    import uvicorn

    app = http_app(server, settings, namespace, host)
    from memstore.rest.connections import uvicorn_config

    level = server.settings.log_level.lower()
    config = uvicorn_config(app, settings, host, port, log_level=level)
    uvicorn.Server(config).run()


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C, so a terminated server still closes its store.

    (Uvicorn re-raises the signal after its graceful shutdown; by default that kills
    the process before ``finally`` blocks run.)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what is written to stdout (``sys.stdout`` and file descriptor 1) to stderr."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m memstore.mcp_server``: serve one namespace over stdio or HTTP."""
    parser = argparse.ArgumentParser(
        prog="python -m memstore.mcp_server",
        description="Serve one namespace of a memstore store to MCP clients.",
    )
    parser.add_argument(
        "--store", help="Data directory (SQLite) or database URL (default: from the settings)."
    )
    parser.add_argument(
        "--namespace", help="Namespace to serve (default: store.namespace of the settings)."
    )
    parser.add_argument("--config", help="Settings YAML file (default: $MEMSTORE_CONFIG).")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", help="HTTP: address to listen on (default: server.host).")
    parser.add_argument("--port", type=int, help="HTTP: port (default: server.port + 1).")
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="HTTP: serve without API keys when none are configured (loopback hosts only).",
    )
    parser.add_argument(
        "--allow-erase",
        action="store_true",
        help="Offer the erase tool over stdio (or HTTP without keys); over HTTP with keys "
        "only the keys of server.erase_keys may erase.",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="Also log each schema migration a new or older store goes through.",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    if not args.verbose:  # a new store's first start would print some 20 Alembic lines
        logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        overrides = {} if args.store is None else {"store": {"url": args.store}}
        settings = load_settings(args.config, **overrides)
    except ConfigError as exc:
        parser.exit(2, f"Error: {exc}\n")
    try:
        run(
            settings,
            args.namespace,
            args.transport,
            args.host,
            args.port,
            allow_unauthenticated=args.allow_unauthenticated,
            allow_erase=args.allow_erase,
        )
    except ConfigError as exc:
        parser.exit(2, f"Error: {exc}\n")
    except ImportError as exc:
        if exc.msg != INSTALL_HINT:
            raise
        parser.exit(1, f"Error: {exc}\n")
    except MemstoreError as exc:
        parser.exit(1, f"Error: {exc}\n")
    except KeyboardInterrupt:  # while the store was opening
        parser.exit(130)


if __name__ == "__main__":
    main()
