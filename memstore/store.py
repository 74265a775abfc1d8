"""The Store: memstore's facade, one class body. Each public method checks its input
(``memstore.inputs``, ``write.hook``) and hands the work on: ``opening`` wires the parts
around one ``storage.scope`` (sessions and hydration); writes go to ``write.path``,
``write.remember`` and ``write.forgetting``, conversations to ``memstore.conversations``;
reads to ``read.facts``, ``read.graph`` and ``audit.rejections``; search to ``read.search``
and ``index.handle``; re-verification to ``reverify.namespace`` and
``reverify.background``; human labels to ``audit.labels``.
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
from memstore import inputs
from memstore.audit import chain, drift, labels
from memstore.audit import rejections as rejection_log
from memstore.audit.drift import DriftReport, DriftSettings
from memstore.conversations.conversation import CONTEXT_TURNS, ConversationReport, OnConflict
from memstore.conversations.extractors import Extractor
from memstore.conversations.messages import Message
from memstore.conversations.parts import remember_in_parts
from memstore.conversations.reconcile import SINGLE_VALUED
from memstore.errors import ErrFactNotGrounded, InvalidInput, MemstoreError
from memstore.index import outbox
from memstore.index.embeddings import Embedder
from memstore.index.handle import IndexStatus, index_uri
from memstore.index.object_store import ObjectStore
from memstore.index.rows import DEFAULT_VECTOR_INDEX_AT
from memstore.inputs import MAX_BATCH, parse
from memstore.limits import Limits
from memstore.opening import open_parts
from memstore.read import facts as reads
from memstore.read import recall as recalling
from memstore.read import search
from memstore.reverify import reviews
from memstore.reverify import run as reverification
from memstore.reverify.background import DEFAULT_REVERIFY_EVERY, BackgroundReverifier
from memstore.reverify.providers import DEFAULT_HTTP_TIMEOUT_S
from memstore.reverify.source_policy import SourcePolicy
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
    LabelCreate,
    LabelPublic,
    LabelQuery,
    NeighborhoodPublic,
    RejectionList,
    RejectionPublic,
    RememberReport,
    SearchHit,
    StoreStats,
    VerificationPublic,
)
from memstore.storage import db, schedule
from memstore.write import entities
from memstore.write import hook as hooks
from memstore.write.duplicates import DEFAULT_NEAR_DUPLICATE
from memstore.write.hook import Admission, WriteHook
from memstore.write.path import check_correction
from memstore.write.remember import claims_of, remember

if TYPE_CHECKING:
    from hypergraph import HyperGraph

__all__ = ["DEFAULT_NAMESPACE", "DEFAULT_NEAR_DUPLICATE", "MAX_BATCH", "Store", "open"]

DEFAULT_NAMESPACE = "default"
#: How a write reaches the search index: before it returns; by a background thread (of
#: this process, or of another that holds the applier lease); or only by another
#: process (``memstore index-worker``).
INDEX_WRITES = ("inline", "background", "queued")
#: A store opening with more queued index changes than this says it is replaying them.
REPLAY_NOTICE_AT = 1_000


class Store(Closing):
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
    reported), or, when another process holds the applier lease (one process of all
    that share the database applies the queue), that process indexes it;
    ``"queued"``: the same, but this process never applies the queue (``memstore
    index-worker`` does: docs/deployment.md); ``"inline"`` (default): the write indexes
    it before it returns.
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
        self.namespace = inputs.namespace(namespace)
        self.limits = inputs.limits(limits)
        self.sources = inputs.source_policy(sources)
        self.hook: WriteHook = hooks.store_hook(gate, policy, hook)
        override = inputs.positive_fields(recheck_after=recheck_after, retry_after=retry_after)
        self.near_duplicate = inputs.similarity_threshold(near_duplicate)
        #: How writes reach the search index (``INDEX_WRITES``).
        self.index_writes = inputs.one_of("index_writes", index_writes, INDEX_WRITES)
        inputs.index_options(vector_index_at, embedder)
        self.url, self.data_dir = db.database_url(path_or_url)
        self.index_uri = index_uri(index, self.data_dir)
        self.object_store = inputs.object_store(object_store, self.index_uri)
        self._reverifier: BackgroundReverifier | None = None
        parts = open_parts(self, override, embedder, vector_index_at, REPLAY_NOTICE_AT)
        self._scope, self._graph, self._index = parts.scope, parts.graph, parts.index
        self._writes, self._forgetting, self._log = parts.writes, parts.forgetting, parts.log
        self._reverification = parts.reverification
        if self.index_writes == "background":
            self._index.start_writer()

    # -- lifecycle -------------------------------------------------------------

    def close(self) -> None:
        """Stop the background re-verifier and index writer (which, when it leads, first
        applies what is queued, for at most 60 s), the read cache's refresh, and release
        the database; idempotent."""
        if not self._scope.closed:
            self.stop_reverifier()
            self._index.stop_writer()
            self._index.close()
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
        items = inputs.fact_list(facts)
        hook = self._hook(gate, policy, ungated)
        self._writes.check_gated(hook, len(items), "facts")
        news = [parse(FactCreate, item, {}, prefix=f"facts.{i}") for i, item in enumerate(items)]
        return self._writes.write(news, [None] * len(news), hook) if news else []

    def check_facts(
        self,
        facts: Iterable[FactCreate | Mapping[str, Any]],
        *,
        gate: Gate | str | None = None,
        policy: GatePolicy | None = None,
    ) -> list[Admission | None]:
        """What ``add_facts`` would decide for each fact (its verdict, the status it would
        be stored with, the gate's numbers and reason), nothing stored: a dry run that
        asks the gate the very questions the write would. None for a fact already
        remembered (the write answers it with the stored one, unchecked)."""
        items = inputs.fact_list(facts)
        hook = self._hook(gate, policy, False)
        self._writes.check_gated(hook, len(items), "facts")
        news = [parse(FactCreate, item, {}, prefix=f"facts.{i}") for i, item in enumerate(items)]
        return self._writes.check(news, hook) if news else []

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
        ``add_facts`` does (``memstore.write.remember``). ``[1]`` in the text cites the first
        ``evidence``; ``members``: a list for every claim, or a function of a ``gate.Claim``;
        ``metadata``: stored with every fact (not evidence)."""
        claims = claims_of(text)
        texts = inputs.remember_inputs(evidence, members)
        meta = inputs.metadata("metadata", metadata)
        hook = self._hook(gate, policy, ungated)
        return remember(self._writes, claims, texts, members, relation, hook, meta)

    def remember_conversation(
        self,
        messages: Iterable[Message | Mapping[str, Any]],
        *,
        extractor: Extractor | None = None,
        on_conflict: OnConflict = "supersede",
        single_valued: Collection[str] = SINGLE_VALUED,
        context_turns: int = CONTEXT_TURNS,
        metadata: Mapping[str, Any] | None = None,
        user_name: str | None = None,
    ) -> ConversationReport:
        """Extract facts from ``messages`` (default: the embedded extractor), gate each against
        its turn and supersede what it replaces (``memstore.conversations``); ``metadata``
        goes on every fact written (a correction without it keeps the old version's);
        ``user_name``: who the user turns without a ``name`` are (None: "the user").
        A conversation over the store's ``limits`` (more message text than
        ``max_evidence_chars``, more candidates than ``max_claims``) is remembered in
        consecutive parts that each fit them (``memstore.conversations.parts``); one
        message over the text limit alone raises TooLarge."""
        options = (on_conflict, single_valued, context_turns, metadata, user_name)
        return remember_in_parts(self, messages, extractor, *options)

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
        ``superseded``, its world time closed where the correction's begins (``write.path``);
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
        reason = inputs.required_text("reason", reason)
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
        reason, who = inputs.reason_and_author(reason, by)
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
        reason = inputs.required_text("reason", reason)
        fact_id = self._scope.full_id("fact", fact_id, "fact_id")
        numbers = {name: getattr(verdict, name) for name in GATE_NUMBERS}
        changed = reviews.corroborate(self._scope, fact_id, reason, numbers, verdict.backend)
        self._index.apply_queued(changed)
        return bool(changed)

    def erase(self, fact_id: str, reason: str, *, by: str | None = None) -> ErasurePublic:
        """Erase a fact for good, unlike ``retract``: its whole supersession chain and what
        only it uses (see ``memstore.write.forgetting``). The returned tombstone keeps ids, hashes,
        ``reason`` and ``by`` (who asked), and the erased rows' place in the audit chain."""
        reason, who = inputs.reason_and_author(reason, by)
        fact_id = self._scope.full_id("fact", fact_id, "fact_id")
        self._scope.get_row(fact_id)  # NotFound before anything else
        return self._forgetting.erase_fact(fact_id, reason, who)

    def erase_rejection(
        self, rejection_id: str, reason: str, *, by: str | None = None
    ) -> ErasurePublic:
        """Erase a rejection from the audit log for good, with the evidence nothing else
        cites; the returned tombstone is like ``erase``'s."""
        reason, who = inputs.reason_and_author(reason, by)
        rejection_id = self._scope.full_id("rejection", rejection_id, "rejection_id")
        self.get_rejection(rejection_id)  # NotFound before anything else
        return self._forgetting.erase_rejection(rejection_id, reason, who)

    def add_alias(self, entity: str, alias: str) -> EntityPublic:
        """Let ``alias`` name the same entity as ``entity`` (within this namespace)."""
        entities.add_alias(self._scope, entity, inputs.required_name("alias", alias))
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
        page = inputs.read_page(limit, cursor)
        as_of = inputs.as_utc(as_of)
        wanted = inputs.read_statuses(statuses, as_of)
        meta = inputs.metadata("metadata", metadata)
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
        for the next one (``memstore.storage.cursors``; None: that was the last)."""
        given = dict(
            entity=entity, relation=relation, statuses=statuses, metadata=metadata,
            recorded_after=recorded_after, recorded_before=recorded_before, as_of=as_of,
            limit=limit, cursor=cursor,
        )  # fmt: skip
        q, read, after = inputs.fact_listing(self.namespace, given)
        wanted = inputs.read_statuses(q.statuses, q.as_of)
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
        names = inputs.entity_names(entities, hops, max_facts)
        page = inputs.read_page(limit, cursor)
        as_of = inputs.as_utc(as_of)
        return self._graph.neighborhood(names, hops, relation, as_of, max_facts, page)

    def history(
        self, fact_id: str, *, limit: int = DEFAULT_READ_LIMIT, cursor: str | None = None
    ) -> FactList:
        """The versions of a fact along its supersession chain, oldest first, at most
        ``limit`` (up to 1,000). A list; its ``next_cursor``, passed as ``cursor`` with the
        same ``fact_id``, reads on."""
        fact_id = self._scope.full_id("fact", fact_id, "fact_id")
        return reads.history(self._scope, fact_id, inputs.read_page(limit, cursor))

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
        inputs.rejection_page(order_by, descending, limit, offset, cursor)
        query = inputs.rejection_filter(where)
        return rejection_log.page(self._scope, query, order_by, descending, limit, offset, cursor)

    def get_rejection(self, rejection_id: str) -> RejectionPublic:
        """A rejection by id (or a unique prefix of 8 or more characters)."""
        rejection_id = self._scope.full_id("rejection", rejection_id, "rejection_id")
        return rejection_log.get(self._scope, rejection_id)

    def count_rejections(self, by: str = "verdict", **where: Any) -> dict[str, int]:
        """How many rejections match (``rejections()``'s filters), grouped ``by`` verdict
        or by UTC day (``YYYY-MM-DD``)."""
        if by not in ("verdict", "day"):
            raise InvalidInput("by", f"{by!r} is not 'verdict' or 'day'")
        return rejection_log.count(self._scope, inputs.rejection_filter(where), by)

    def export_rejections(
        self, dest: str | Path | TextIO, *, format: str | None = None, **where: Any
    ) -> int:
        """Write the rejections ``where`` selects, oldest first, as JSON lines or CSV to a path
        (format from its suffix unless given; replaced atomically) or text file; the count."""
        format = inputs.export_format(dest, format)
        return rejection_log.export(self._scope, inputs.rejection_filter(where), dest, format)

    def verify_audit_chain(self, span: tuple[int, int] | None = None) -> chain.ChainReport:
        """Report any tampering with this namespace's rejection and verification rows
        (``report.ok``, ``report.problems``); keep ``report.head`` to detect a rewrite.
        ``span`` (first, last chain position) walks only those rows: a row's neighbours
        check its content and links in milliseconds; the whole chain reads every row."""
        return rejection_log.verify_chain(self._scope, inputs.chain_span(span))

    def add_label(
        self, kind: str, target_id: str, *, by: str, note: str | None = None
    ) -> LabelPublic:
        """Record a person's verdict on a gate decision: ``false_rejection`` on a rejection
        ("this refusal was wrong") or ``false_admission`` on a fact ("this fact should not
        have been stored"). ``by`` names who (never an API key itself); ``note`` is
        optional. The same person labelling the same target again changes nothing (the
        first label is returned); NotFound when the target is not in this namespace.
        ``target_id`` may be a unique prefix of 8 or more characters."""
        target_id = labels.full_target_id(self._scope, kind, target_id)
        given: dict[str, Any] = {"kind": kind, "target_id": target_id, "by": by, "note": note}
        return labels.add(self._scope, parse(LabelCreate, None, given))

    def labels(
        self,
        *,
        kind: str | None = None,
        target_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[LabelPublic]:
        """This namespace's human labels, newest first, of one ``kind`` or on one target."""
        given = {"kind": kind, "target_id": target_id, "limit": limit, "offset": offset}
        return labels.query(self._scope, parse(LabelQuery, None, given))

    def drift(self, settings: DriftSettings | Mapping[str, Any] | None = None) -> DriftReport:
        """Whether the gate's verdicts drifted: per backend, a CUSUM over the acceptance
        rate and the mean p1 of the latest gated writes (``memstore.audit.drift``); an alarm is
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
        check = inputs.claim_check(claim, evidence, confidence)
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
        hits, for a later page (``memstore.read.search``)."""
        q = inputs.search_query(
            query, k, mode, relation, entity, statuses, as_of, recorded_after, recorded_before,
            expand, min_score, metadata, offset,
        )  # fmt: skip
        wanted = inputs.read_statuses(q.statuses, q.as_of)
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
        ``statuses``) whose relevance reaches ``min_score``; where none does, the stored
        conversation turns that do, quoted (``turns``). No match: an empty block
        (``memstore.read.recall``)."""
        q, budget = inputs.recall_query(query, budget_tokens, k, entity, statuses, as_of, min_score)
        wanted = inputs.read_statuses(q.statuses, q.as_of)
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
        q = inputs.evidence_query(
            query, k, mode, source, current_only, recorded_after, recorded_before, min_score
        )
        return search.search_evidence(self._scope, self._index, q)

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> outbox.Rebuilt:
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
        """``with store.index_batch(): ...``: facts written (or retracted, reviewed)
        inside are searchable as such when the block ends, indexed together (one index
        commit instead of one per write: a loop of ``add_fact`` runs several times
        faster). Reads inside see them in SQL, not yet in ``search``; a crash inside
        leaves them queued for the next open."""
        return self._index.batch()

    def index_backlog(self) -> int:
        """Changes of this namespace queued for the search index but not yet in it."""
        return self._index.backlog()

    def index_status(self) -> IndexStatus:
        """Where the search index stands: how it is written (inline, background, queued),
        whether this process applies the queue, how many changes of every namespace wait
        and how old the oldest is (how far behind search is)."""
        return self._index.status()

    def stats(self) -> StoreStats:
        """Counts of this namespace: facts by status, entities, evidence, rejections by
        verdict, facts due for re-verification, changes waiting for the index."""
        return reads.stats(self._scope)

    # -- re-verification -------------------------------------------------------

    def reverify(
        self,
        *,
        limit: int = reverification.DEFAULT_LIMIT,
        batch: int = reverification.DEFAULT_BATCH,
        lease: timedelta = reverification.DEFAULT_LEASE,
        gate: Gate | str | None = None,
        policy: GatePolicy | None = None,
        fetch_timeout: float = DEFAULT_HTTP_TIMEOUT_S,
        progress: Callable[[int, int], None] | None = None,
    ) -> reverification.ReverifyReport:
        """Re-verify up to ``limit`` due facts against their refetched sources, ``batch`` per
        call of the store's gate (or ``gate``/``policy``), each leased for ``lease``."""
        inputs.reverify_options(limit, batch, lease, fetch_timeout)
        hook = hooks.reverify_hook(self.hook, gate, policy)
        return self._reverification.run(hook, limit, batch, lease, fetch_timeout, progress)

    def mark_due(self, fact_ids: Sequence[str] | None = None) -> int:
        """Make facts due for re-verification now: the listed ones, or every open fact
        the gate looks after (ungated facts are never re-verified). Returns how many."""
        ids = None if fact_ids is None else inputs.strings("fact_ids", fact_ids, "fact ids")
        return self._reverification.mark_due(ids)

    def reverify_policy(self) -> schedule.ReverifyPolicy:
        """The re-verification schedule this store uses: the namespace's stored policy
        (or the defaults), with what was given to ``open()`` on top."""
        return self._reverification.policy()

    def set_reverify_policy(
        self, *, recheck_after: timedelta | None = None, retry_after: timedelta | None = None
    ) -> schedule.ReverifyPolicy:
        """Store the namespace's re-verification policy for every process; unset fields
        keep their value. Scheduled facts keep their time (``mark_due()`` moves them)."""
        changes = inputs.positive_fields(recheck_after=recheck_after, retry_after=retry_after)
        return self._reverification.set_policy(changes)

    def count_due(self) -> int:
        """Facts whose re-verification is due now."""
        return self._reverification.count_due()

    def start_reverifier(
        self, every: timedelta = DEFAULT_REVERIFY_EVERY, **options: Any
    ) -> BackgroundReverifier:
        """Run ``reverify(**options)`` every ``every`` on a background thread, from now until
        ``stop_reverifier()`` or ``close()``; leases keep several processes' runs apart."""
        if self._reverifier is not None and self._reverifier.running:
            raise MemstoreError("a re-verifier is already running; stop_reverifier() first")
        inputs.call_options(self.reverify, options)
        self._reverifier = BackgroundReverifier(self, inputs.positive("every", every), options)
        self._reverifier.start()
        return self._reverifier

    def stop_reverifier(self, wait: bool = True) -> None:
        """Stop the background re-verifier (waiting for a run in progress by default)."""
        if self._reverifier is not None:
            self._reverifier.stop(wait=wait)
            self._reverifier = None

    def _hook(self, gate: Gate | str | None, policy: GatePolicy | None, ungated: bool) -> WriteHook:
        """The write hook of one call (see ``hooks.call_hook``)."""
        return hooks.call_hook(self.hook, gate, policy, ungated)


#: ``memstore.open(path_or_url, namespace, **options)`` opens (creating and migrating if
#: needed) a store confined to ``namespace``: it is ``Store(...)``, whose docstring lists
#: the options; one signature, not a copy of it.
open = Store
