"""The Store: memstore's facade. Each public method checks its input (``checks``, ``hooks``)
and hands the work on: ``opening`` wires the parts around one ``scope`` (sessions and
hydration); writes go to ``write_path``, ``remembering`` and ``forgetting``; reads to
``reads``, ``rejection_reads`` and ``graph_view``; search to ``search`` and ``index_handle``;
re-verification to ``reverifying`` and ``background``; human labels (``label_calls``) to
``labels``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from gate import Claim, Gate, GatePolicy, Verdict
from gate.backends.base import Closing
from gate.verdict import GATE_NUMBERS
from memstore import (
    audit,
    checks,
    db,
    drift,
    entities,
    hooks,
    indexing,
    reads,
    rejection_reads,
    reviews,
    search,
)
from memstore import recall as recalling
from memstore.admission import WriteHook
from memstore.background import BackgroundReverifier
from memstore.checks import MAX_BATCH, parse
from memstore.conversations import conversation
from memstore.drift import DriftReport, DriftSettings
from memstore.duplicates import DEFAULT_NEAR_DUPLICATE
from memstore.embeddings import Embedder
from memstore.errors import ErrFactNotGrounded, InvalidInput
from memstore.index_handle import index_uri
from memstore.index_rows import DEFAULT_VECTOR_INDEX_AT
from memstore.label_calls import LabelCalls
from memstore.limits import Limits
from memstore.object_store import ObjectStore
from memstore.opening import open_parts
from memstore.remembering import claims_of, remember
from memstore.reverify_calls import ReverifyCalls
from memstore.schemas import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_NEIGHBORHOOD_FACTS,
    DEFAULT_READ_LIMIT,
    DEFAULT_STATED_CONFIDENCE,
    EntityPublic,
    ErasurePublic,
    EvidenceCreate,
    EvidenceHit,
    EvidencePublic,
    FactCreate,
    FactList,
    FactPage,
    FactPublic,
    NeighborhoodPublic,
    RejectionList,
    RejectionPublic,
    RememberReport,
    SearchHit,
    StoreStats,
    VerificationPublic,
)
from memstore.source_policy import SourcePolicy
from memstore.write_path import check_correction

if TYPE_CHECKING:
    from hypergraph import HyperGraph

__all__ = ["DEFAULT_NAMESPACE", "DEFAULT_NEAR_DUPLICATE", "MAX_BATCH", "Store"]

DEFAULT_NAMESPACE = "default"
#: How a write reaches the search index: before it returns, or by a background thread.
INDEX_WRITES = ("inline", "background")
#: A store opening with more queued index changes than this says it is replaying them.
REPLAY_NOTICE_AT = 1_000


class Store(ReverifyCalls, LabelCalls, Closing):
    """Long-term memory for one namespace. Use as a context manager or call ``close()``.

    ``path_or_url``: a data directory (SQLite at ``<dir>/memstore.db``) or a SQLAlchemy URL.
    Writes pass the grounding gate: ``gate`` (a ``gate.Gate`` or backend name; default the
    process's embedded verifier) with ``policy``, its thresholds; or ``hook``, another
    write hook (``memstore.Ungated()``: unchecked, recorded as ``ungated``).
    A fact is due for re-verification ``recheck_after`` after the gate decided (default
    24 h), at once when the verifier timed out, ``retry_after`` after it failed (default
    5 min, doubling); given, they override the stored policy for this Store only.
    ``index``: the LanceDB search index (default ``<data dir>/index``, or by URL the
    ``MEMSTORE_INDEX_URI`` variable; a path or URI; False: none), embedded by ``embedder``
    (default: packaged all-MiniLM-L6-v2), with a vector index from ``vector_index_at`` rows.
    ``object_store`` (a ``memstore.ObjectStore`` or its fields) says how to reach an
    ``s3://`` index: endpoint, region, credentials, TLS (default: LanceDB's ``AWS_*``).
    A write reports live facts with its members and an at least ``near_duplicate``
    cosine-similar statement (None: never). ``index_writes="background"``: a write
    returns once SQL holds it and a thread of this store indexes it (a search sees it
    within about a second; ``sync_index()`` waits for it; no near duplicates are
    reported); ``"inline"`` (default): the write indexes it before it returns.
    ``sources`` (a ``SourcePolicy`` or its fields) bound what re-verification fetches
    (default: unrestricted); ``limits`` bound one call's claims and evidence (default
    100 claims, 100,000 characters).
    """

    def __init__(
        self,
        path_or_url: str | Path,
        namespace: str = DEFAULT_NAMESPACE,
        *,
        gate: Gate | str | None = None,
        policy: GatePolicy | None = None,
        hook: WriteHook | None = None,
        recheck_after: timedelta | None = None,
        retry_after: timedelta | None = None,
        index: str | Path | bool = True,
        embedder: Embedder | None = None,
        near_duplicate: float | None = DEFAULT_NEAR_DUPLICATE,
        vector_index_at: int = DEFAULT_VECTOR_INDEX_AT,
        sources: SourcePolicy | Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        object_store: ObjectStore | Mapping[str, Any] | None = None,
        index_writes: str = "inline",
    ) -> None:
        self.namespace = checks.namespace(namespace)
        self.limits = checks.limits(limits)
        self.sources = checks.source_policy(sources)
        self.hook: WriteHook = hooks.store_hook(gate, policy, hook)
        override = checks.positive_fields(recheck_after=recheck_after, retry_after=retry_after)
        self.near_duplicate = checks.similarity_threshold(near_duplicate)
        background = checks.one_of("index_writes", index_writes, INDEX_WRITES) == "background"
        checks.index_options(vector_index_at, embedder)
        self.url, self.data_dir = db.database_url(path_or_url)
        self.index_uri = index_uri(index, self.data_dir)
        self.object_store = checks.object_store(object_store, self.index_uri)
        self._reverifier: BackgroundReverifier | None = None
        parts = open_parts(self, override, embedder, vector_index_at, REPLAY_NOTICE_AT)
        self._scope, self._graph, self._index = parts.scope, parts.graph, parts.index
        self._writes, self._forgetting, self._log = parts.writes, parts.forgetting, parts.log
        self._reverification = parts.reverification
        if background:
            self._index.start_writer()

    # -- lifecycle -------------------------------------------------------------

    def close(self) -> None:
        """Stop the background re-verifier and index writer (which first applies what is
        queued) and release the database; idempotent."""
        if not self._scope.closed:
            self.stop_reverifier()
            self._index.stop_writer()
            self._scope.closed = True
            self._log.before_close()  # see ``erase``
            self._scope.engine.dispose()

    def __repr__(self) -> str:
        return f"<Store {self.url} namespace={self.namespace!r}>"

    @property
    def graph(self) -> HyperGraph:
        """The hypergraph of this namespace's active facts (entity and fact ids), built
        from SQL on each access: it reads every active fact, a cost that grows with the
        store (``neighborhood`` reads only what its walk needs)."""
        return self._graph.whole()

    # -- writes ----------------------------------------------------------------

    def add_fact(
        self,
        fact: FactCreate | Mapping[str, Any] | None = None,
        /,
        *,
        gate: Gate | str | None = None,
        policy: GatePolicy | None = None,
        ungated: bool = False,
        **fields: Any,
    ) -> FactPublic:
        """Remember a fact (a FactCreate, a mapping or its fields) if the grounding gate
        admits it; else raise ErrFactNotGrounded. ``gate`` and ``policy`` override the
        store's gate for this write; ``ungated=True`` stores it unchecked (``ungated``).
        ``metadata``: the caller's keys and values, stored with the fact and filterable
        (``memstore.metadata``); not evidence, the gate never reads it."""
        new = parse(FactCreate, fact, fields)
        [result] = self._writes.write([new], [None], self._hook(gate, policy, ungated))
        if isinstance(result, RejectionPublic):
            raise ErrFactNotGrounded(result)
        return result

    def add_facts(
        self,
        facts: Iterable[FactCreate | Mapping[str, Any]],
        *,
        gate: Gate | str | None = None,
        policy: GatePolicy | None = None,
        ungated: bool = False,
    ) -> list[FactPublic | RejectionPublic]:
        """Remember several facts, checked in one gate call; returns per item, in order, the
        stored fact or its rejection. Invalid input (``facts.<i>``) raises before any write.
        Accepted and rejected facts commit together, up to 200 to a transaction, in batch
        order: an error while writing (``StorageError``, say) leaves what committed before
        it; writing the same batch again answers those facts with the stored ones
        (``deduplicated``) and counts its rejections again on the rejections already
        logged (``attempts``)."""
        items = checks.fact_list(facts)
        hook = self._hook(gate, policy, ungated)
        self._writes.check_gated(hook, len(items), "facts")
        news = [parse(FactCreate, item, {}, prefix=f"facts.{i}") for i, item in enumerate(items)]
        return self._writes.write(news, [None] * len(news), hook) if news else []

    def remember(
        self,
        text: str,
        evidence: str | Sequence[str | Mapping[str, Any] | EvidenceCreate] = (),
        *,
        members: Sequence[Any] | Callable[[Claim], Sequence[Any]],
        relation: str | None = None,
        gate: Gate | str | None = None,
        policy: GatePolicy | None = None,
        ungated: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ) -> RememberReport:
        """Split an agent's ``text`` into claims and remember those the gate admits, as
        ``add_facts`` does (``memstore.remembering``). ``[1]`` in the text cites the first
        ``evidence``; ``members``: a list for every claim, or a function of a ``gate.Claim``;
        ``metadata``: stored with every fact (not evidence)."""
        claims = claims_of(text)
        texts = checks.remember_inputs(evidence, members)
        meta = checks.metadata("metadata", metadata)
        hook = self._hook(gate, policy, ungated)
        return remember(self._writes, claims, texts, members, relation, hook, meta)

    #: ``store.remember_conversation(messages, *, extractor, on_conflict, ...)``: the
    #: function of ``memstore.conversations.conversation``, called with this store.
    remember_conversation = conversation.remember_conversation

    def supersede(
        self,
        old_id: str,
        new_fact: FactCreate | Mapping[str, Any] | None = None,
        /,
        *,
        gate: Gate | str | None = None,
        policy: GatePolicy | None = None,
        ungated: bool = False,
        **fields: Any,
    ) -> FactPublic:
        """Replace a fact by a corrected one (gated like ``add_fact``): the old row stays,
        ``superseded``, its world time closed where the correction's begins (``write_path``);
        a rejected correction leaves the old fact untouched. A correction that gives no
        ``metadata`` keeps the old version's."""
        old_id = self._scope.full_id("fact", old_id, "old_id")
        new = check_correction(self._scope, old_id, parse(FactCreate, new_fact, fields))
        [result] = self._writes.write([new], [old_id], self._hook(gate, policy, ungated))
        if isinstance(result, RejectionPublic):
            raise ErrFactNotGrounded(result)
        return result

    def retract(self, fact_id: str, reason: str) -> FactPublic:
        """Soft-delete a fact with a reason; it leaves every default read."""
        reason = checks.required_text("reason", reason)
        fact_id = self._scope.full_id("fact", fact_id, "fact_id")
        self._scope.get_row(fact_id)  # NotFound before anything else
        self._forgetting.retract(fact_id, reason)
        return self.get_fact(fact_id)

    def review(
        self, fact_id: str, decision: str, reason: str, *, by: str | None = None
    ) -> FactPublic:
        """A person's decision on a fact the gate held (``unverified`` or ``pending``):
        ``confirm`` makes it ``verified``, ``refuse`` retracts it. ``reason`` and ``by``
        (who decided) go in a ``verifications`` row that is a link of the audit chain."""
        reason, who = checks.reason_and_author(reason, by)
        fact_id = self._scope.full_id("fact", fact_id, "fact_id")
        self._scope.get_row(fact_id)  # NotFound before anything else
        changed = reviews.review(self._scope, fact_id, decision, reason, who or "python")
        self._index.apply_queued(changed)
        return self.get_fact(fact_id)

    def corroborate(self, fact_id: str, verdict: Verdict, reason: str) -> bool:
        """Make a held fact ``verified`` because later evidence verifies it (``verdict``:
        the gate's, on that evidence); False if it is no longer held. The audit chain
        gets a ``corroborate`` row with the verdict's numbers."""
        if not isinstance(verdict, Verdict):
            raise InvalidInput("verdict", "must be the gate's Verdict on the later evidence")
        if verdict.outcome != "verified":
            raise InvalidInput("verdict", f"must verify the fact, not be {verdict.outcome}")
        reason = checks.required_text("reason", reason)
        fact_id = self._scope.full_id("fact", fact_id, "fact_id")
        numbers = {name: getattr(verdict, name) for name in GATE_NUMBERS}
        changed = reviews.corroborate(self._scope, fact_id, reason, numbers, verdict.backend)
        self._index.apply_queued(changed)
        return bool(changed)

    def erase(self, fact_id: str, reason: str, *, by: str | None = None) -> ErasurePublic:
        """Erase a fact for good, unlike ``retract``: its whole supersession chain and what
        only it uses (see ``memstore.forgetting``). The returned tombstone keeps ids, hashes,
        ``reason`` and ``by`` (who asked), and the erased rows' place in the audit chain."""
        reason, who = checks.reason_and_author(reason, by)
        fact_id = self._scope.full_id("fact", fact_id, "fact_id")
        self._scope.get_row(fact_id)  # NotFound before anything else
        return self._forgetting.erase_fact(fact_id, reason, who)

    def erase_rejection(
        self, rejection_id: str, reason: str, *, by: str | None = None
    ) -> ErasurePublic:
        """Erase a rejection from the audit log for good, with the evidence nothing else
        cites; the returned tombstone is like ``erase``'s."""
        reason, who = checks.reason_and_author(reason, by)
        rejection_id = self._scope.full_id("rejection", rejection_id, "rejection_id")
        self.get_rejection(rejection_id)  # NotFound before anything else
        return self._forgetting.erase_rejection(rejection_id, reason, who)

    def add_alias(self, entity: str, alias: str) -> EntityPublic:
        """Let ``alias`` name the same entity as ``entity`` (within this namespace)."""
        entities.add_alias(self._scope, entity, checks.required_name("alias", alias))
        return self.entity(entity)

    # -- reads -----------------------------------------------------------------

    def get_fact(self, fact_id: str) -> FactPublic:
        """A fact by id (or a unique prefix of 8 or more characters), whatever its status."""
        return reads.get_fact(self._scope, self._scope.full_id("fact", fact_id, "fact_id"))

    def facts_about(
        self,
        entity: str,
        *,
        relation: str | None = None,
        as_of: datetime | None = None,
        statuses: Collection[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        limit: int = DEFAULT_READ_LIMIT,
        cursor: str | None = None,
    ) -> FactList:
        """Facts with ``entity`` (a name or alias) as a member, newest first (by
        ``recorded_at``, then id), at most ``limit`` (up to 1,000); by default active ones,
        and with ``as_of`` those valid then (by default with superseded ones that held);
        with ``metadata``, those whose metadata holds each given key and value. A list;
        its ``next_cursor``, passed as ``cursor`` with the same arguments, reads on."""
        page = checks.read_page(limit, cursor)
        as_of = checks.as_utc(as_of)
        wanted = checks.read_statuses(statuses, as_of)
        meta = checks.metadata("metadata", metadata)
        history = statuses is None
        return reads.facts_about(self._scope, entity, wanted, relation, as_of, history, meta, page)

    def list_facts(
        self,
        *,
        entity: str | Sequence[str] | None = None,
        relation: str | None = None,
        statuses: Collection[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_after: datetime | None = None,
        recorded_before: datetime | None = None,
        as_of: datetime | None = None,
        limit: int = DEFAULT_LIST_LIMIT,
        cursor: str | None = None,
    ) -> FactPage:
        """One page of the namespace's facts, oldest first (by ``recorded_at``, then id),
        filtered as ``search`` filters (every given condition holds); by default the active
        ones. ``next_cursor`` of a page, passed as ``cursor`` with the same filters, asks
        for the next one (``memstore.cursors``; None: that was the last)."""
        given = dict(
            entity=entity, relation=relation, statuses=statuses, metadata=metadata,
            recorded_after=recorded_after, recorded_before=recorded_before, as_of=as_of,
            limit=limit, cursor=cursor,
        )  # fmt: skip
        q, read, after = checks.fact_listing(self.namespace, given)
        wanted = checks.read_statuses(q.statuses, q.as_of)
        return reads.list_facts(self._scope, q, wanted, read, after)

    def neighborhood(
        self,
        entities: str | Sequence[str],
        hops: int = 1,
        *,
        relation: str | None = None,
        as_of: datetime | None = None,
        limit: int = DEFAULT_READ_LIMIT,
        cursor: str | None = None,
        max_facts: int = DEFAULT_NEIGHBORHOOD_FACTS,
    ) -> NeighborhoodPublic:
        """Active facts within ``hops`` entity-fact-entity steps of the seeds, nearest
        first and newest first within a hop, at most ``limit`` a page, with the seeds and
        the page's members. The walk keeps at most ``max_facts`` facts (up to 100,000) in
        that order and reads only as far as the page needs: ``complete`` is False when
        it left some out, True when it kept them all, None when this page did not walk
        far enough to tell (the last page always tells); ``next_cursor`` reads on."""
        names = checks.entity_names(entities, hops, max_facts)
        page = checks.read_page(limit, cursor)
        as_of = checks.as_utc(as_of)
        return self._graph.neighborhood(names, hops, relation, as_of, max_facts, page)

    def history(
        self, fact_id: str, *, limit: int = DEFAULT_READ_LIMIT, cursor: str | None = None
    ) -> FactList:
        """The versions of a fact along its supersession chain, oldest first, at most
        ``limit`` (up to 1,000). A list; its ``next_cursor``, passed as ``cursor`` with the
        same ``fact_id``, reads on."""
        fact_id = self._scope.full_id("fact", fact_id, "fact_id")
        return reads.history(self._scope, fact_id, checks.read_page(limit, cursor))

    def verifications(self, fact_id: str) -> list[VerificationPublic]:
        """The verification history of a fact (its first gate pass, then re-verifications)."""
        return reads.verifications(self._scope, self._scope.full_id("fact", fact_id, "fact_id"))

    def rejections(
        self,
        *,
        order_by: str = "created_at",
        descending: bool = True,
        limit: int = 100,
        offset: int = 0,
        cursor: str | None = None,
        **where: Any,
    ) -> RejectionList:
        """Rejected facts of this namespace, newest first by default, filtered by ``where``
        (``RejectionFilter``'s fields), ordered by ``order_by`` and paged: a list whose
        ``next_cursor``, passed as ``cursor`` with the same filters and order, reads on
        (in the same time at any depth; ``offset`` skips rows one by one)."""
        checks.rejection_page(order_by, descending, limit, offset, cursor)
        query = checks.rejection_filter(where)
        return rejection_reads.page(self._scope, query, order_by, descending, limit, offset, cursor)

    def get_rejection(self, rejection_id: str) -> RejectionPublic:
        """A rejection by id (or a unique prefix of 8 or more characters)."""
        rejection_id = self._scope.full_id("rejection", rejection_id, "rejection_id")
        return rejection_reads.get(self._scope, rejection_id)

    def count_rejections(self, by: str = "verdict", **where: Any) -> dict[str, int]:
        """How many rejections match (``rejections()``'s filters), grouped ``by`` verdict
        or by UTC day (``YYYY-MM-DD``)."""
        if by not in ("verdict", "day"):
            raise InvalidInput("by", f"{by!r} is not 'verdict' or 'day'")
        return rejection_reads.count(self._scope, checks.rejection_filter(where), by)

    def export_rejections(
        self, dest: str | Path | TextIO, *, format: str | None = None, **where: Any
    ) -> int:
        """Write the rejections ``where`` selects, oldest first, as JSON lines or CSV to a path
        (format from its suffix unless given; replaced atomically) or text file; the count."""
        format = checks.export_format(dest, format)
        return rejection_reads.export(self._scope, checks.rejection_filter(where), dest, format)

    def verify_audit_chain(self, span: tuple[int, int] | None = None) -> audit.ChainReport:
        """Report any tampering with this namespace's rejection and verification rows
        (``report.ok``, ``report.problems``); keep ``report.head`` to detect a rewrite.
        ``span`` (first, last chain position) walks only those rows: a row's neighbours
        check its content and links in milliseconds; the whole chain reads every row."""
        return rejection_reads.verify_chain(self._scope, checks.chain_span(span))

    def drift(self, settings: DriftSettings | Mapping[str, Any] | None = None) -> DriftReport:
        """Whether the gate's verdicts drifted: per backend, a CUSUM over the acceptance
        rate and the mean p1 of the latest gated writes (``memstore.drift``); an alarm is
        in ``report.alarms`` and logged once when it starts."""
        return drift.report(self._scope, parse(DriftSettings, settings, {}, prefix="settings"))

    def verify_claim(
        self,
        claim: str,
        evidence: str | Sequence[str],
        confidence: float = DEFAULT_STATED_CONFIDENCE,
    ) -> Verdict:
        """Check ``claim`` against ``evidence`` with this store's gate (an ungated store:
        the embedded one) and return the gate's Verdict; nothing is stored."""
        check = checks.claim_check(claim, evidence, confidence)
        return hooks.check_claim(self.hook, self.limits, check)

    def entity(self, name: str) -> EntityPublic:
        """An entity by name or alias."""
        return reads.entity(self._scope, name)

    def get_evidence(self, evidence_id: str) -> EvidencePublic:
        """One stored evidence version by id, while it backs live memory (a fact whose
        newest version is not retracted cites it); the audit log shows the rest."""
        evidence_id = self._scope.full_id("evidence", evidence_id, "evidence_id")
        return reads.get_evidence(self._scope, evidence_id)

    # -- search ----------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        mode: str = "hybrid",
        relation: str | None = None,
        entity: str | Sequence[str] | None = None,
        statuses: Collection[str] | None = None,
        as_of: datetime | None = None,
        recorded_after: datetime | None = None,
        recorded_before: datetime | None = None,
        expand: bool = False,
        min_score: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        offset: int = 0,
    ) -> list[SearchHit]:
        """The ``k`` facts that best match ``query``, best first, by meaning and full text
        fused (``mode="hybrid"``) or one side (``"vector"``, ``"text"``), filtered as
        ``facts_about`` reads; ``expand`` adds facts one hop away; ``min_score`` drops
        hits whose ``relevance`` (0..1) is below it; ``offset`` skips that many of the best
        hits, for a later page (``memstore.search``)."""
        q = checks.search_query(
            query, k, mode, relation, entity, statuses, as_of, recorded_after, recorded_before,
            expand, min_score, metadata, offset,
        )  # fmt: skip
        wanted = checks.read_statuses(q.statuses, q.as_of)
        return search.search_facts(self._scope, self._index, q, wanted)

    def recall(
        self,
        query: str,
        *,
        budget_tokens: int = recalling.DEFAULT_BUDGET_TOKENS,
        k: int = recalling.DEFAULT_K,
        entity: str | Sequence[str] | None = None,
        statuses: Collection[str] | None = None,
        as_of: datetime | None = None,
        min_score: float | None = recalling.DEFAULT_MIN_SCORE,
    ) -> recalling.Recall:
        """The memories relevant to ``query`` as a block for a prompt, one line each (the
        statement, when it held, confidence, source), best first, within ``budget_tokens``
        (counted with the MiniLM tokenizer); of the ``k`` best active facts (or
        ``statuses``) whose relevance reaches ``min_score``. No match: an empty block
        (``memstore.recall``)."""
        q, budget = checks.recall_query(query, budget_tokens, k, entity, statuses, as_of, min_score)
        wanted = checks.read_statuses(q.statuses, q.as_of)
        return recalling.recall(self._scope, self._index, q, wanted, budget)

    def search_evidence(
        self,
        query: str,
        k: int = 10,
        *,
        mode: str = "hybrid",
        source: str | Sequence[str] | None = None,
        current_only: bool = True,
        recorded_after: datetime | None = None,
        recorded_before: datetime | None = None,
        min_score: float | None = None,
    ) -> list[EvidenceHit]:
        """The ``k`` chunks of live evidence (as ``get_evidence``) that best match ``query``,
        ranked and thresholded like ``search``; ``current_only`` skips versions a refreshed
        source replaced."""
        q = checks.evidence_query(
            query, k, mode, source, current_only, recorded_after, recorded_before, min_score
        )
        return search.search_evidence(self._scope, self._index, q)

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> indexing.Rebuilt:
        """Rebuild the search index from SQL, every namespace, with this store's embedder
        (safe to kill: each namespace's next open, or ``sync_index()``, finishes its part);
        ``progress(done, total)`` counts rows."""
        if progress is not None and not callable(progress):
            raise InvalidInput("progress", "must be a function of (done, total), or None")
        return self._index.rebuild(progress)

    def sync_index(self) -> int:
        """Write every queued change (all namespaces) to the search index now; returns how
        many. Opening a store does this for its own namespace only; a failed index write
        leaves its changes queued."""
        return self._index.sync()

    def index_batch(self) -> AbstractContextManager[None]:
        """``with store.index_batch(): ...``: facts written inside are searchable when the
        block ends, indexed together (one index commit instead of one per write: a loop of
        ``add_fact`` runs several times faster). Reads inside see them in SQL, not yet in
        ``search``; a crash inside leaves them queued for the next open."""
        return self._writes.index_batch()

    def index_backlog(self) -> int:
        """Changes of this namespace queued for the search index but not yet in it."""
        return self._index.backlog()

    def stats(self) -> StoreStats:
        """Counts of this namespace: facts by status, entities, evidence, rejections by
        verdict, facts due for re-verification, changes waiting for the index."""
        return reads.stats(self._scope)

    def _hook(self, gate: Gate | str | None, policy: GatePolicy | None, ungated: bool) -> WriteHook:
        """The write hook of one call (see ``hooks.call_hook``)."""
        return hooks.call_hook(self.hook, gate, policy, ungated)
