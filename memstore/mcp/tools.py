"""The tools: ``MemoryTools``, one short method per tool that calls the Store, and
``register``, which lists them on an MCP server with their hints. The only module of the
package that needs the MCP SDK at import (``build_server`` imports it once the SDK is
known to be there).

A refused write is a normal result (``stored: false``); a MemstoreError becomes a tool
error (``invalid input: <field>: <why>`` for bad input). Tools are plain functions: the
SDK runs them on worker threads, so blocking store calls never stall the event loop."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    InputRequests,
    InputRequiredResult,
    ToolAnnotations,
)
from pydantic import Field

from gate import VerdictStatus
from memstore.config import ConversationSettings, ServerSettings
from memstore.conversations.conversation import (
    Extracted,
    extractor_from,
    rehearse_as_configured,
    remember_as_configured,
)
from memstore.conversations.extractors import Candidate, Extractor
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
from memstore.inputs import MAX_RECALL_TOKENS
from memstore.mcp import answers
from memstore.mcp.models import (
    AsOf,
    ClaimVerdict,
    Confidence,
    ContextTurns,
    Entities,
    Erased,
    Evidence,
    FactId,
    Members,
    MemoryPage,
    Messages,
    MetadataArg,
    MetadataFilter,
    MinScore,
    OnConflictOption,
    QueryText,
    Recalled,
    RecalledFact,
    RecordedAfter,
    RecordedBefore,
    RefusalPage,
    Relation,
    RelationFilter,
    Remembered,
    RememberedConversation,
    Retracted,
    Statement,
    UserName,
)
from memstore.read.recall import DEFAULT_BUDGET_TOKENS, DEFAULT_K, DEFAULT_MIN_SCORE
from memstore.schemas import DEFAULT_LIST_LIMIT, DEFAULT_STATED_CONFIDENCE, MAX_LIST_LIMIT
from memstore.storage.tables import FactStatus

if TYPE_CHECKING:
    from memstore.mcp.host import HostModel
    from memstore.schemas import FactPublic
    from memstore.store import Store

MAX_RECALL = 50
MAX_AUDIT = 100
#: What the erase tool answers to a key that may not erase.
ERASE_FORBIDDEN = (
    "forbidden: this API key may not erase; erasing is a separate right: list the key "
    "in server.erase_keys (MEMSTORE_SERVER__ERASE_KEYS) to allow it"
)

log = logging.getLogger("memstore.mcp")


def failed(exc: MemstoreError) -> ToolError:
    """The tool error the agent sees for ``exc``; the log keeps the details of a failed
    database or search index."""
    if isinstance(exc, InvalidInput):
        return ToolError(f"invalid input: {exc}")
    if isinstance(exc, SearchIndexError):
        log.error("search index error: %s", exc, exc_info=exc)
        return ToolError("the store's search index failed; the server log has the details")
    if isinstance(exc, StorageError):
        log.error("storage error: %s", exc, exc_info=exc)
        return ToolError("the store's database failed; the server log has the details")
    return ToolError(str(exc))


@contextmanager
def tool_errors() -> Iterator[None]:
    """Raise a MemstoreError of the block as the tool error ``failed`` makes of it."""
    try:
        yield
    except MemstoreError as exc:
        raise failed(exc) from exc


class MemoryTools:
    """The tools over ``store``: each public method is one, named as the tool, its
    docstring the tool's description. ``remember_conversation`` extracts facts as
    ``conversations`` says; ``erase`` records ``mcp`` as who erased, or with ``keys``
    (HTTP with API keys) the fingerprint of the request's key, which must be in
    ``keys.erase_keys``. With ``host`` (``--verifier/--extractor host``) the tools that
    check or extract ask the client's model through it (``memstore.mcp.host``)."""

    def __init__(
        self,
        store: Store,
        conversations: ConversationSettings | None = None,
        keys: ServerSettings | None = None,
        host: HostModel | None = None,
    ) -> None:
        self.store = store
        self.conversations = conversations or ConversationSettings()
        self.keys = keys if keys is not None and keys.api_keys else None
        self.host = host

    def _with_host(
        self, ctx: Context | None, work: Callable[[], Any], *, extracts: bool = False
    ) -> Any:
        """``work()`` (a gated write; one that ``extracts`` facts too) with the client's
        model reachable, when the server uses it: its result, or ``input_required`` with
        the questions the model must answer first (protocol 2026-07-28: the client calls
        again with the answers)."""
        if self.host is None:
            return work()
        from memstore.mcp.host import HostUnavailable, QuestionsForClient, sampling_request

        try:
            with self.host.exchange(ctx, gates=True, extracts=extracts):
                return work()
        except HostUnavailable as exc:
            raise ToolError(str(exc)) from None
        except QuestionsForClient as asked:
            requests: InputRequests = {k: sampling_request(r) for k, r in asked.requests.items()}
            return InputRequiredResult(input_requests=requests, request_state=asked.state)

    def _gated(self, write: Callable[[], FactPublic]) -> Remembered:
        """What a gated ``write`` did: stored, or refused by the gate (a normal result)."""
        try:
            return answers.stored(write())
        except ErrFactNotGrounded as exc:
            return answers.refused(exc.rejection)
        except MemstoreError as exc:
            raise failed(exc) from exc

    def _eraser(self, ctx: Context | None) -> str:
        """Who erases (``mcp``, or the request key's fingerprint); a ToolError for a key
        not in ``server.erase_keys``."""
        if self.keys is None:
            return "mcp"
        from memstore.mcp.auth import erase_fingerprint  # the REST API's key check

        by = erase_fingerprint(self.keys, ctx.headers if ctx is not None else None)
        if by is None:
            raise ToolError(ERASE_FORBIDDEN)
        return by

    def remember(
        self,
        statement: Statement,
        members: Members,
        evidence: Evidence,
        relation: Relation = None,
        confidence: Confidence = DEFAULT_STATED_CONFIDENCE,
        metadata: MetadataArg = None,
        ctx: Context | None = None,
    ) -> Remembered | InputRequiredResult:
        """Remember a fact, if the evidence supports it (the write is gated).

        Stored: stored=true with the fact's id. Refused: stored=false with the verdict,
        the reason and the gate's numbers; nothing is remembered. Remembering the
        same fact twice stores it once (deduplicated=true).
        """
        fact = answers.fact_input(statement, members, evidence, relation, confidence, metadata)
        return self._with_host(ctx, lambda: self._gated(lambda: self.store.add_fact(fact)))

    def remember_conversation(
        self,
        messages: Messages,
        on_conflict: OnConflictOption = None,
        context_turns: ContextTurns = None,
        metadata: MetadataArg = None,
        user_name: UserName = None,
        ctx: Context | None = None,
    ) -> RememberedConversation | InputRequiredResult:
        """Remember what a conversation states: facts are extracted from the messages and
        each is gated against the message it came from (refusals are normal results).
        A fact that replaces a remembered one supersedes it (or, with on_conflict='flag',
        is kept beside it); the answer says so per fact.
        """

        def work() -> RememberedConversation:
            extractor = self._ask_client_first(
                messages, self._extractor(), on_conflict, context_turns, metadata, user_name
            )
            with tool_errors():
                report = remember_as_configured(
                    self.store,
                    messages,
                    self.conversations,
                    on_conflict=on_conflict,
                    context_turns=context_turns,
                    metadata=metadata,
                    user_name=user_name,
                    extractor=extractor,
                )
            candidates = [answers.candidate(c) for c in report.candidates]
            return answers.shown(RememberedConversation, report, candidates=candidates)

        return self._with_host(ctx, work, extracts=True)

    def _extractor(self) -> Extractor | None:
        """The client's model as extractor (``--extractor host``), a new one for this
        call, unless this client cannot sample and the server falls back (None: the
        configured extractor)."""
        if self.host is None or not self.host.extractor:
            return None
        exchange = self.host.current()
        if exchange is not None and exchange.falls_back:
            return None
        return self.host.new_extractor()

    def _ask_client_first(
        self,
        messages: Messages,
        extractor: Extractor | None,
        on_conflict: OnConflictOption,
        context_turns: int | None,
        metadata: dict[str, Any] | None,
        user_name: str | None,
    ) -> Extractor | None:
        """Where the client's model answers between calls (protocol 2026-07-28): gather
        every question the conversation's write will ask (a rehearsal that writes
        nothing) and end the call with them; once all are answered, let the write
        begin, after which a question it still asks fails (the fact is held). The
        extractor the write is to use: the rehearsal's candidates, else ``extractor``."""
        if self.host is None:
            return extractor
        exchange = self.host.current()
        if exchange is None or not exchange.retries or not exchange.can_sample:
            return extractor
        failure: MemstoreError | None = None
        candidates: list[Candidate] = []
        rehearsal = extractor or extractor_from(self.conversations)
        try:
            with exchange.collecting():
                candidates = rehearse_as_configured(
                    self.store,
                    messages,
                    self.conversations,
                    rehearsal,
                    on_conflict=on_conflict,
                    context_turns=context_turns,
                    metadata=metadata,
                    user_name=user_name,
                    gate=self.host.verifier,  # the configured gate needs no rehearsal
                )
        except MemstoreError as exc:
            failure = exc
        finally:
            if rehearsal is not extractor:
                close = getattr(rehearsal, "close", None)
                if callable(close):
                    close()
        if exchange.pending:
            raise exchange.questions()
        if failure is not None:
            raise failed(failure) from failure
        exchange.finally_()
        return Extracted(rehearsal.name, tuple(candidates))

    def supersede(
        self,
        fact_id: FactId,
        statement: Statement,
        members: Members,
        evidence: Evidence,
        relation: Relation = None,
        confidence: Confidence = DEFAULT_STATED_CONFIDENCE,
        metadata: MetadataArg = None,
        ctx: Context | None = None,
    ) -> Remembered | InputRequiredResult:
        """Correct a remembered fact: the corrected statement replaces it if the evidence
        supports it (the write is gated like remember).

        Stored: stored=true with the correction's fact_id; the old fact stays in its
        history, superseded. Refused: stored=false with the verdict and why; the old
        fact is unchanged. Without metadata the correction keeps the old fact's.
        """
        fact = answers.fact_input(statement, members, evidence, relation, confidence, metadata)
        return self._with_host(
            ctx, lambda: self._gated(lambda: self.store.supersede(fact_id, fact))
        )

    def retract(
        self,
        fact_id: FactId,
        reason: Annotated[
            str,
            Field(min_length=1, description="Why, e.g. 'the user says they moved away'."),
        ],
    ) -> Retracted:
        """Forget a remembered fact: it leaves recall and search, and its history keeps it
        with the reason (erase, where offered, removes a fact for good)."""
        with tool_errors():
            fact = self.store.retract(fact_id, reason)
        return answers.shown(Retracted, fact, fact_id=fact.id, reason=fact.retraction_reason)

    def recall(
        self,
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
        filters = given_filters(RECALL_FILTERS, locals())
        with tool_errors():
            found = self.store.recall(query, budget_tokens=budget_tokens, k=k, **filters)
        return answers.shown(Recalled, found, facts=[answers.recalled(h) for h in found.hits])

    def search(
        self,
        query: QueryText,
        k: Annotated[int, Field(ge=1, le=MAX_RECALL, description="How many facts.")] = 10,
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
        filters = given_filters(SEARCH_FILTERS, locals())
        with tool_errors():
            hits = self.store.search(query, k, **filters)
        return [answers.recalled(hit) for hit in hits]

    def list_memories(
        self,
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
        with tool_errors():
            page = self.store.list_facts(**filters, limit=limit, cursor=cursor)
        memories = [answers.memory(f) for f in page.items]
        return MemoryPage(memories=memories, next_cursor=page.next_cursor)

    def verify_claim(
        self,
        claim: Annotated[str, Field(description="The claim to check, as one sentence.")],
        evidence: Evidence,
        confidence: Confidence = DEFAULT_STATED_CONFIDENCE,
        ctx: Context | None = None,
    ) -> ClaimVerdict | InputRequiredResult:
        """Check a claim against evidence with the memory's gate; nothing is stored."""

        def check() -> ClaimVerdict:
            with tool_errors():
                verdict = self.store.verify_claim(claim, evidence, confidence)
            return answers.claim_verdict(verdict)

        return self._with_host(ctx, check)

    def audit_rejections(
        self,
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
        with tool_errors():
            found = self.store.rejections(limit=limit, cursor=cursor, **where)
        refusals = [answers.rejection(r) for r in found]
        return RefusalPage(refusals=refusals, next_cursor=found.next_cursor)

    def erase(
        self,
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
        by = self._eraser(ctx)
        if (fact_id is None) == (rejection_id is None):
            raise ToolError("invalid input: fact_id: give fact_id or rejection_id, not both")
        with tool_errors():
            if fact_id is not None:
                done = self.store.erase(fact_id, reason, by=by)
            else:
                done = self.store.erase_rejection(str(rejection_id), reason, by=by)
        evidence_ids = [e["id"] for e in done.evidence]
        return answers.shown(Erased, done, tombstone_id=done.id, evidence_ids=evidence_ids)


WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ERASES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


def register(server: MCPServer, tools: MemoryTools, *, erase: bool) -> None:
    """List ``tools`` on ``server`` in their order, with their hints; ``erase`` too when
    ``erase`` says so."""
    listed: list[tuple[Callable[..., Any], ToolAnnotations]] = [
        (tools.remember, WRITES),
        (tools.remember_conversation, WRITES),
        (tools.recall, READS),
        (tools.search, READS),
        (tools.supersede, WRITES),
        (tools.retract, ERASES),  # out of every read, like an erase (its history stays)
        (tools.verify_claim, READS),
        (tools.audit_rejections, READS),
        (tools.list_memories, READS),
    ]
    if erase:
        listed.append((tools.erase, ERASES))
    for tool, hints in listed:
        doc = inspect.cleandoc(tool.__doc__ or "")
        server.add_tool(tool, description=doc, annotations=hints, structured_output=True)
