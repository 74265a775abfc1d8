"""The Store: memstore's facade over SQL (truth), the write hook, and the hypergraph index."""

from __future__ import annotations

import inspect
import logging
import math
import os
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Session, col, or_, select

from gate import Claim, Gate, GatePolicy, Verdict, VerdictStatus, default_gate, extract_claims
from hypergraph import HyperGraph
from memstore import audit, db, erasure, evidence, indexing, rejections
from memstore import reverify as reverification
from memstore.admission import Admission, Candidate, Ungated, WriteHook
from memstore.embeddings import Embedder, MiniLM
from memstore.errors import (
    ErrFactNotGrounded,
    InvalidInput,
    MemstoreError,
    NotFound,
    StorageError,
    TooLarge,
)
from memstore.evidence import prepare as prepare_evidence
from memstore.gating import UNVERIFIED_VERDICTS, GateHook
from memstore.limits import Limits
from memstore.models import (
    ACTIVE_STATUSES,
    OPEN_STATUSES,
    Citation,
    Entity,
    EntityAlias,
    Evidence,
    Fact,
    FactMember,
    FactStatus,
    OutboxKind,
    Rejection,
    Verification,
    utcnow,
)
from memstore.names import check_namespace, check_text, normalize_key, statement_hash
from memstore.providers import DEFAULT_HTTP_TIMEOUT_S, Providers
from memstore.schemas import (
    DEFAULT_STATED_CONFIDENCE,
    CitationPublic,
    ClaimCheck,
    ClaimOutcome,
    EntityPublic,
    ErasurePublic,
    EvidenceCreate,
    EvidenceHit,
    EvidencePublic,
    EvidenceQuery,
    FactCreate,
    FactPublic,
    MemberPublic,
    NearDuplicate,
    NeighborhoodPublic,
    RejectionFilter,
    RejectionPublic,
    RememberReport,
    SearchHit,
    SearchQuery,
    StoreStats,
    VerificationPublic,
    to_utc,
)
from memstore.source_policy import SourcePolicy
from memstore.vectors import (
    CHUNKS,
    DEFAULT_VECTOR_INDEX_AT,
    FACTS,
    Filter,
    SearchIndex,
    reciprocal_rank_fusion,
)

if TYPE_CHECKING:
    from memstore.scheduler import BackgroundReverifier

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

DEFAULT_NAMESPACE = "default"
#: How often ``start_reverifier()`` looks for due facts.
DEFAULT_REVERIFY_EVERY = timedelta(minutes=5)
MAX_BATCH = 1_000
#: After an erase (SQLite), how often emptying the write-ahead log is tried while a
#: reader holds it, and how many seconds apart (about one second in all).
LOG_CHECKPOINT_TRIES = 20
LOG_CHECKPOINT_WAIT = 0.05
#: The search index's directory inside a data directory.
INDEX_DIRNAME = "index"
#: Where a store opened by URL keeps its search index (a directory or LanceDB URI).
INDEX_URI_ENV = "MEMSTORE_INDEX_URI"
#: Cosine similarity from which a new fact with the same members is reported as a near duplicate.
DEFAULT_NEAR_DUPLICATE = 0.9
#: An expanded hit scores this fraction of the hit it was reached through.
EXPANSION_DECAY = 0.5

log = logging.getLogger("memstore")
_WRITE_ATTEMPTS = 3  # a unique-key race (same new entity from two writers) is retried
#: A store opening with more queued index changes than this says it is replaying them.
REPLAY_NOTICE_AT = 1_000


def open(
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
) -> Store:
    """Open (creating and migrating if needed) a store.

    ``path_or_url`` is a data directory (SQLite at ``<dir>/memstore.db``) or a
    SQLAlchemy URL such as ``postgresql+psycopg://user@host/db``. Every read and
    write of the returned Store is confined to ``namespace``.

    Every write passes the grounding gate: ``gate`` is a ``gate.Gate`` or a backend
    name (default: the embedded verifier, shared by the process and loaded on the
    first write); ``policy`` sets its thresholds. ``hook`` replaces the gate with
    another write hook, e.g. ``memstore.Ungated()`` to store facts unchecked (each
    is recorded as ``ungated``).

    A fact is due for re-verification ``recheck_after`` after the gate decided it
    (default 24 h); one stored ``pending`` because the verifier timed out is due at
    once, one the verifier failed on ``retry_after`` later (default 5 min, doubling
    per failure). Both
    default to the namespace's stored policy (``set_reverify_policy``); given
    here, they hold for this Store only.

    ``index`` is the LanceDB search index (``search``, ``search_evidence``, near-
    duplicate reports): by default ``<data dir>/index``, or for a store opened by URL
    the ``MEMSTORE_INDEX_URI`` environment variable (none set: no search); a path or
    LanceDB URI; or False for none. ``embedder`` embeds for it (default: the packaged
    all-MiniLM-L6-v2). A write whose fact has the same members as a live fact and a
    statement at least ``near_duplicate`` cosine-similar reports it (None: never);
    a table of ``vector_index_at`` rows gets an approximate vector index.

    ``sources`` (a ``SourcePolicy`` or its fields) bounds what re-verification may
    fetch: schemes, hosts, file paths, size and time. Default: any file or URL, with
    the size, time and redirect limits (``SourcePolicy.unrestricted()``).

    ``limits`` bound one call: the claims it puts through the gate and the evidence
    it carries (``memstore.limits.Limits``; default 100 claims, 100,000 characters).
    """
    return Store(
        path_or_url,
        namespace,
        gate=gate,
        policy=policy,
        hook=hook,
        recheck_after=recheck_after,
        retry_after=retry_after,
        index=index,
        embedder=embedder,
        near_duplicate=near_duplicate,
        vector_index_at=vector_index_at,
        sources=sources,
        limits=limits,
    )


class Store:
    """Long-term memory for one namespace. Use as a context manager or call ``close()``."""

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
    ) -> None:
        try:
            self.namespace = check_namespace(namespace)
        except ValueError as exc:
            raise InvalidInput("namespace", str(exc)) from None
        if limits is not None and not isinstance(limits, Limits):
            raise InvalidInput("limits", "must be a memstore.limits.Limits")
        self.limits = limits or Limits()
        self.sources = _source_policy(sources)
        self.hook: WriteHook = _write_hook(gate, policy, hook)
        self._policy_override = {
            name: _positive(name, value)
            for name, value in (("recheck_after", recheck_after), ("retry_after", retry_after))
            if value is not None
        }
        self.near_duplicate = _similarity_threshold(near_duplicate)
        if isinstance(vector_index_at, bool) or not isinstance(vector_index_at, int):
            raise InvalidInput("vector_index_at", "must be a whole number of rows")
        if embedder is not None and not isinstance(embedder, Embedder):
            raise InvalidInput("embedder", "must have name, dimensions and embed(texts)")
        self.url, self.data_dir = db.database_url(path_or_url)
        self.index_uri = _index_uri(index, self.data_dir)
        self._engine = db.create_engine(self.url)
        self._graph = HyperGraph()
        self._graph_lock = threading.RLock()
        self._reverifier: BackgroundReverifier | None = None
        self._closed = False
        #: SQLite: an erase could not empty the write-ahead log (see ``_after_erase``).
        self._log_pending = False
        try:
            db.upgrade(self._engine)
            self._rebuild_graph()
        except SQLAlchemyError as exc:
            self._engine.dispose()
            raise StorageError(f"cannot open store at {self.url}: {exc}") from exc
        self._search, self._search_problem = self._open_search_index(
            embedder or MiniLM(), vector_index_at
        )
        if self._search_problem is None:
            self._replay_queued()

    # -- lifecycle -------------------------------------------------------------

    def close(self) -> None:
        if not self._closed:
            self.stop_reverifier()
            self._closed = True
            if self._log_pending and self._checkpoint_log():  # see _after_erase
                self._log_pending = False
            elif self._log_pending:
                log.warning(
                    "closing %r: the SQLite write-ahead log still holds copies of erased "
                    "text (a reader holds it); SQLite empties it when its last connection "
                    "closes",
                    self.namespace,
                )
            self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Store {self.url} namespace={self.namespace!r}>"

    @property
    def graph(self) -> HyperGraph:
        """The hypergraph of this namespace's active facts (entity and fact ids). Read-only."""
        return self._graph

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
        """Remember a fact if the grounding gate admits it; else raise ErrFactNotGrounded.

        Takes a FactCreate, a mapping, or its fields as keyword arguments. ``gate``
        and ``policy`` override the store's gate settings for this write;
        ``ungated=True`` stores the fact unchecked, recorded as ``ungated``.
        """
        new = _parse(FactCreate, fact, fields)
        [result] = self._write([new], [None], self._hook_for(gate, policy, ungated))
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
        """Remember several facts, verified together in as few model calls as possible.

        Returns, per item and in order, the stored fact or its rejection. Items are
        independent and each is all or nothing. Invalid input raises InvalidInput
        (field ``facts.<i>...``) before anything is checked or written; a database
        failure stops the batch, with the items before it stored.
        """
        if isinstance(facts, str | bytes | Mapping | FactCreate) or not isinstance(facts, Iterable):
            raise InvalidInput("facts", "must be a list of facts")
        items = list(facts)
        if len(items) > MAX_BATCH:
            raise InvalidInput("facts", f"at most {MAX_BATCH} facts per call, got {len(items)}")
        hook = self._hook_for(gate, policy, ungated)
        if not isinstance(hook, Ungated):
            self.limits.check_claims(len(items), "facts")
        news = [_parse(FactCreate, item, {}, prefix=f"facts.{i}") for i, item in enumerate(items)]
        if not news:
            return []
        return self._write(news, [None] * len(news), hook)

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
    ) -> RememberReport:
        """Split an agent's ``text`` into claims (``gate.extract_claims``) and remember
        each one the gate admits, as ``add_facts`` does: one gate call for all of them,
        each claim stored or rejected (into the audit log) on its own.

        ``evidence`` is the texts the agent was given (strings or ``EvidenceCreate``
        mappings); ``[1]`` in the text cites the first, and a marker such as
        ``[ev:ID]`` cites stored evidence by id. A claim with no marker cites all the
        evidence. ``members`` are the entities the facts are about, each as
        ``add_fact`` takes them (a name, a ``(name, kind, role)`` tuple or a mapping):
        a list for every claim, or a function from a ``gate.Claim`` to its members.
        A claim's hedge ("probably") lowers its stated confidence; questions,
        instructions, pleasantries and strong hedges are skipped, never written.

        A claim citing evidence that exists nowhere is rejected with verdict
        ``unknown_citation`` (whatever the write hook) and logged like any rejection.
        Invalid input raises InvalidInput before anything is checked or written.
        """
        try:
            claims = extract_claims(text)
        except (TypeError, ValueError) as exc:
            raise InvalidInput("text", str(exc).removeprefix("text: ")) from None
        if isinstance(evidence, str):
            evidence = [evidence]
        if not isinstance(evidence, Sequence):
            raise InvalidInput("evidence", "must be a list of evidence texts")
        if not callable(members) and (
            isinstance(members, str | bytes | Mapping) or not isinstance(members, Sequence)
        ):
            raise InvalidInput("members", "must be a list of members, or a function of a claim")
        hook = self._hook_for(gate, policy, ungated)
        checkable = [c for c in claims if c.is_evidence]
        if len(checkable) > MAX_BATCH:
            raise InvalidInput("text", f"at most {MAX_BATCH} claims per call, got {len(checkable)}")
        if not isinstance(hook, Ungated):
            self.limits.check_claims(len(checkable), "text", "claims")
        by_id = {i for c in checkable for i in c.citations if _position(i, len(evidence)) is None}
        stored_ids = self._stored_evidence(by_id)
        news: list[FactCreate] = []
        missing: list[list[str]] = []
        for n, claim in enumerate(checkable):
            fact, unknown = _claim_fact(claim, evidence, members, relation, stored_ids)
            news.append(_parse(FactCreate, fact, {}, prefix=f"claims.{n}"))
            missing.append(unknown)
        gated = [n for n, unknown in enumerate(missing) if not unknown]
        try:
            written = (
                self._write([news[n] for n in gated], [None] * len(gated), hook) if gated else []
            )
        except TooLarge as exc:  # the evidence of the call, not of one claim
            raise TooLarge("evidence", exc.reason) from None
        outcomes: dict[int, FactPublic | RejectionPublic] = dict(zip(gated, written, strict=True))
        for n, unknown in enumerate(missing):
            if unknown:
                admission = Admission(
                    accepted=False,
                    verdict=VerdictStatus.UNKNOWN_CITATION.value,
                    status=FactStatus.UNVERIFIED,
                    confidence=0.0,
                    reason=f"cited evidence not in the context: {', '.join(unknown)}",
                )
                with self._session() as session:
                    prepared = prepare_evidence(session, self.namespace, news[n])
                outcomes[n] = self._store_rejection(news[n], prepared, admission)
        done = iter(outcomes[n] for n in range(len(checkable)))
        return RememberReport(
            claims=[_claim_outcome(c, next(done) if c.is_evidence else None) for c in claims]
        )

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
        """Replace a fact by a corrected one (gated like ``add_fact``). The old row stays,
        marked ``superseded``; if the correction is rejected, the old fact is untouched.

        World time is closed too: the correction holds from its ``valid_from`` (the
        moment of the correction when it has none) and the old fact stops holding
        there, so ``as_of`` reads before it find the old fact and after it the new one.
        An old fact that already ended earlier keeps its ``valid_to``. A correction of
        the past, starting at or before the old fact's ``valid_from``, replaces it over
        its whole world time: the old fact's validity becomes empty (``valid_to ==
        valid_from``) and no ``as_of`` read returns it.
        """
        new = _parse(FactCreate, new_fact, fields)
        old = self._get_row(old_id)
        if old.status not in OPEN_STATUSES:
            raise InvalidInput("old_id", f"fact {old_id} is {old.status} and cannot be superseded")
        _check_correction_end(new, utcnow())
        [result] = self._write([new], [old_id], self._hook_for(gate, policy, ungated))
        if isinstance(result, RejectionPublic):
            raise ErrFactNotGrounded(result)
        return result

    def retract(self, fact_id: str, reason: str) -> FactPublic:
        """Soft-delete a fact with a reason; it leaves every default read."""
        reason = _required_text("reason", reason)
        self._get_row(fact_id)  # NotFound before anything else

        def work(session: Session) -> list[str]:
            values = {"retracted_at": utcnow(), "retraction_reason": reason}
            if not self._close_open_fact(session, fact_id, FactStatus.RETRACTED, values):
                status = session.get(Fact, fact_id).status  # type: ignore[union-attr]
                raise InvalidInput("fact_id", f"fact {fact_id} is {status} and cannot be retracted")
            return self._queue_chain_evidence(session, fact_id)

        evidence_ids = self._transaction(work)
        with self._graph_lock:
            self._graph.remove_fact(fact_id)
        self._sync_index([fact_id, *evidence_ids])
        return self.get_fact(fact_id)

    def erase(self, fact_id: str, reason: str, *, by: str | None = None) -> ErasurePublic:
        """Erase a fact for good, unlike ``retract``: every version along its
        supersession chain, their members, citations and verification history, the
        evidence no other fact or rejection cites, entities no other fact names, and
        their search-index rows with every copy on disk.

        One transaction; a tombstone (returned) keeps the ids, sha256 hashes of the
        erased texts, ``reason``, ``by`` (who asked) and when, and takes the erased
        history rows' place in the audit chain, so ``verify_audit_chain()`` still
        verifies. Evidence that stays because something else cites it is listed in
        ``kept_evidence_ids``; erase those rejections too with ``erase_rejection``.
        """
        reason = _required_text("reason", reason)
        who = None if by is None else _required_text("by", by)
        self._get_row(fact_id)  # NotFound before anything else

        def work(session: Session) -> erasure.Erased:
            done = erasure.erase_fact(session, self.namespace, fact_id, reason, who)
            if done is None:  # erased by another process meanwhile
                raise NotFound("fact", fact_id, self.namespace)
            return done

        done = self._transaction(work)
        with self._graph_lock:
            for erased_id in done.tombstone.fact_ids:
                self._graph.remove_fact(erased_id)
        pending = self._after_erase(
            [done.tombstone.id, *done.tombstone.fact_ids, *done.evidence_ids]
        )
        erased = ErasurePublic.model_validate(done.tombstone, from_attributes=True)
        return erased.model_copy(update={"log_pending": pending})

    def erase_rejection(
        self, rejection_id: str, reason: str, *, by: str | None = None
    ) -> ErasurePublic:
        """Erase a rejection from the audit log for good, with the evidence that no fact
        or other rejection cites (its search-index rows too). The tombstone (returned)
        keeps its id, sha256 hashes, ``reason``, ``by`` and when, and its place in the
        audit chain, as ``erase`` does."""
        reason = _required_text("reason", reason)
        who = None if by is None else _required_text("by", by)
        self.get_rejection(rejection_id)  # NotFound before anything else

        def work(session: Session) -> erasure.Erased:
            done = erasure.erase_rejection(session, self.namespace, rejection_id, reason, who)
            if done is None:
                raise NotFound("rejection", rejection_id, self.namespace)
            return done

        done = self._transaction(work)
        pending = self._after_erase([done.tombstone.id, *done.evidence_ids])
        erased = ErasurePublic.model_validate(done.tombstone, from_attributes=True)
        return erased.model_copy(update={"log_pending": pending})

    def add_alias(self, entity: str, alias: str) -> EntityPublic:
        """Let ``alias`` name the same entity as ``entity`` (within this namespace)."""
        alias = _required_name("alias", alias)

        def work(session: Session) -> None:
            target = self._resolve(session, entity)
            key = normalize_key(alias)
            owner = session.exec(
                select(EntityAlias.entity_id).where(
                    EntityAlias.namespace == self.namespace, EntityAlias.key == key
                )
            ).first()
            if owner is None:
                session.add(
                    EntityAlias(namespace=self.namespace, entity_id=target.id, alias=alias, key=key)
                )
            elif owner != target.id:
                raise InvalidInput("alias", f"{alias!r} already names another entity")

        self._transaction(work)
        return self.entity(entity)

    # -- reads -----------------------------------------------------------------

    def get_fact(self, fact_id: str) -> FactPublic:
        """A fact by id, whatever its status."""
        with self._session() as session:
            return self._hydrate(session, [self._get_row(fact_id, session)])[0]

    def facts_about(
        self,
        entity: str,
        *,
        relation: str | None = None,
        as_of: datetime | None = None,
        statuses: Collection[str] | None = None,
    ) -> list[FactPublic]:
        """Facts that have ``entity`` (a name or alias) as a member, oldest first.

        By default only active (verified or unverified) facts, never ``pending`` ones
        (stored but not yet checked); ``as_of`` keeps facts
        valid at that world time, and by default adds the superseded facts that held
        then (see ``supersede``).
        """
        as_of = _as_utc(as_of)
        wanted = _read_statuses(statuses, as_of)
        with self._session() as session:
            target = self._resolve(session, entity)
            query = (
                select(Fact)
                .join(FactMember, col(FactMember.fact_id) == Fact.id)
                .where(
                    FactMember.namespace == self.namespace,
                    FactMember.entity_id == target.id,
                    Fact.namespace == self.namespace,
                    col(Fact.status).in_(wanted),
                )
                .distinct()
                .order_by(col(Fact.recorded_at), col(Fact.id))
            )
            if relation is not None:
                query = query.where(Fact.relation == relation)
            if as_of is not None:
                query = query.where(*_valid_at(as_of, history=statuses is None))
            return self._hydrate(session, list(session.exec(query).all()))

    def neighborhood(
        self,
        entities: str | Sequence[str],
        hops: int = 1,
        *,
        relation: str | None = None,
        as_of: datetime | None = None,
    ) -> NeighborhoodPublic:
        """Active facts and entities within ``hops`` entity-fact-entity steps of the seeds."""
        if isinstance(hops, bool) or not isinstance(hops, int) or not 0 <= hops <= 10:
            raise InvalidInput("hops", "must be an integer from 0 to 10")
        names = [entities] if isinstance(entities, str) else entities
        if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
            raise InvalidInput("entities", "must be an entity name or a list of names")
        as_of = _as_utc(as_of)
        with self._session() as session:
            seeds = [self._resolve(session, name, "entities").id for name in names]
            with self._graph_lock:
                hood = self._graph.neighborhood(seeds, hops, relation=relation, as_of=as_of)
            hood_entities = cast("frozenset[str]", hood.entities)
            facts = self._facts_by_id(session, cast("frozenset[str]", hood.facts))
            found = self._entities_by_id(session, hood_entities | set(seeds))
        return NeighborhoodPublic(
            entities=sorted(found, key=lambda e: (hood.distance.get(e.id, 0), e.key)),
            facts=sorted(facts, key=lambda f: (f.recorded_at, f.id)),
            distance={e: hood.distance.get(e, 0) for e in [*seeds, *hood_entities]},
        )

    def history(self, fact_id: str) -> list[FactPublic]:
        """Every version of a fact along its supersession chain, oldest first."""
        with self._session() as session:
            row = self._get_row(fact_id, session)
            chain = [row]
            while chain[0].supersedes_id is not None:
                chain.insert(0, self._get_row(chain[0].supersedes_id, session))
            while chain[-1].superseded_by_id is not None:
                chain.append(self._get_row(chain[-1].superseded_by_id, session))
            return self._hydrate(session, chain)

    def verifications(self, fact_id: str) -> list[VerificationPublic]:
        """The verification history of a fact (its first gate pass, then re-verifications)."""
        with self._session() as session:
            self._get_row(fact_id, session)
            rows = session.exec(
                select(Verification)
                .where(Verification.namespace == self.namespace, Verification.fact_id == fact_id)
                .order_by(col(Verification.created_at), col(Verification.id))
            ).all()
            return [VerificationPublic.model_validate(r, from_attributes=True) for r in rows]

    def rejections(
        self,
        *,
        order_by: str = "created_at",
        descending: bool = True,
        limit: int = 100,
        offset: int = 0,
        **where: Any,
    ) -> list[RejectionPublic]:
        """Rejected facts of this namespace, newest first by default.

        Filters (all optional, combined with AND): ``since``, ``until``, ``verdict``
        (a name or a list), ``min_gap``, ``max_gap`` (budget gap in bits), ``text``
        (in the statement), ``source`` (of the evidence), ``entity`` (a member, by
        name or alias), ``relation``. ``order_by`` is one of created_at, budget_gap,
        p1, p0, observed_bits, required_bits; page with ``limit`` and ``offset``.
        """
        if order_by not in rejections.ORDER_BY:
            raise InvalidInput(
                "order_by", f"{order_by!r} is not one of {list(rejections.ORDER_BY)}"
            )
        if not isinstance(descending, bool):
            raise InvalidInput("descending", "must be True or False")
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int)
            or not 1 <= limit <= rejections.MAX_PAGE
        ):
            raise InvalidInput("limit", f"must be an integer from 1 to {rejections.MAX_PAGE}")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < 2**63:
            raise InvalidInput("offset", "must be an integer from 0 to 2**63 - 1")
        query = _parse(RejectionFilter, None, where)
        with self._session() as session:
            return rejections.query(
                session,
                self.namespace,
                query,
                order_by=order_by,
                descending=descending,
                limit=limit,
                offset=offset,
            )

    def get_rejection(self, rejection_id: str) -> RejectionPublic:
        """A rejection by id."""
        with self._session() as session:
            row = session.get(Rejection, rejection_id) if isinstance(rejection_id, str) else None
            if row is None or row.namespace != self.namespace:
                raise NotFound("rejection", str(rejection_id), self.namespace)
            return rejections.hydrate(session, [row])[0]

    def count_rejections(self, by: str = "verdict", **where: Any) -> dict[str, int]:
        """How many rejections match, grouped ``by`` verdict or by UTC day (``YYYY-MM-DD``).

        Takes the filters of ``rejections()``.
        """
        if by not in ("verdict", "day"):
            raise InvalidInput("by", f"{by!r} is not 'verdict' or 'day'")
        query = _parse(RejectionFilter, None, where)
        with self._session() as session:
            return rejections.count(session, self.namespace, query, by)

    def export_rejections(
        self, dest: str | Path | TextIO, *, format: str | None = None, **where: Any
    ) -> int:
        """Write every matching rejection (oldest first) as JSON lines or CSV.

        ``dest`` is a path (format from its suffix, ``.jsonl`` or ``.csv``, unless
        ``format`` says; written to a temporary file and moved into place) or an open
        text file. Takes the filters of ``rejections()``. Returns the number written.
        """
        if not isinstance(dest, str | Path) and not callable(getattr(dest, "write", None)):
            raise InvalidInput("dest", "must be a file path or an open text file")
        if format is None and isinstance(dest, str | Path):
            format = Path(dest).suffix.lstrip(".").lower()
        if format not in rejections.EXPORT_FORMATS:
            raise InvalidInput(
                "format", f"{format!r} is not one of {list(rejections.EXPORT_FORMATS)}"
            )
        query = _parse(RejectionFilter, None, where)
        with self._session() as session:
            rows = rejections.iterate(session, self.namespace, query)
            if not isinstance(dest, str | Path):
                return rejections.write(rows, dest, format)
            return _write_atomically(Path(dest), lambda out: rejections.write(rows, out, format))

    def verify_audit_chain(self) -> audit.ChainReport:
        """Walk this namespace's rejection and verification rows and report any tampering.

        ``report.ok`` is False when a row was edited, inserted or deleted behind the
        store's back; ``report.problems`` names each. Keep ``report.head`` elsewhere
        to detect a chain rewritten wholesale.
        """
        with self._session() as session:
            return audit.verify(session, self.namespace)

    def verify_claim(
        self,
        claim: str,
        evidence: str | Sequence[str],
        confidence: float = DEFAULT_STATED_CONFIDENCE,
    ) -> Verdict:
        """Check ``claim`` against ``evidence`` with this store's gate; nothing is stored.

        Returns the gate's Verdict (status, accepted, p0, p1, bits). A store whose
        writes are ungated checks with the process-wide embedded gate.
        """
        check = _parse(
            ClaimCheck, None, {"claim": claim, "evidence": evidence, "confidence": confidence}
        )
        hook = self.hook
        gate = hook.gate if isinstance(hook, GateHook) else default_gate()
        policy = hook.policy if isinstance(hook, GateHook) else None
        texts = [item.text for item in check.evidence]
        self.limits.check_texts(texts, "evidence")
        return gate.check(check.claim, texts, confidence=check.confidence, policy=policy)

    def entity(self, name: str) -> EntityPublic:
        """An entity by name or alias."""
        with self._session() as session:
            return self._entities_by_id(session, [self._resolve(session, name, "name").id])[0]

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
        """Re-verify up to ``limit`` facts whose ``next_check_at`` has passed.

        Each fact's sources are fetched again (a changed text becomes a new evidence
        version, citations are re-anchored in it), the gate runs on ``batch`` facts
        per call, and the fact becomes ``verified``, ``stale`` or ``contradicted``
        with a history row saying why (see ``verifications()``). Facts are leased
        for ``lease`` while being checked, so concurrent runs never check one fact
        twice. The gate is the store's (or ``gate``/``policy``), never ``Ungated``.
        ``progress(done, total)`` is called after each batch.
        """
        for name, value, top in (("limit", limit, 100_000), ("batch", batch, db.IN_LIST_CHUNK)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise InvalidInput(name, f"must be an integer from 1 to {top}")
        lease = _positive("lease", lease)
        if isinstance(fetch_timeout, bool) or not isinstance(fetch_timeout, int | float):
            raise InvalidInput("fetch_timeout", "must be a number of seconds")
        if not 0 < fetch_timeout <= 600:
            raise InvalidInput("fetch_timeout", "must be more than 0 and at most 600 seconds")
        hook = self._reverify_hook(gate, policy)
        with Providers(timeout=fetch_timeout, policy=self.sources) as providers:
            job = reverification.Reverifier(
                namespace=self.namespace,
                session=self._session,
                transaction=self._transaction,
                hook=hook,
                policy=self.reverify_policy(),
                providers=providers,
                lease=lease,
                on_status_change=self._refresh_graph,
            )
            report = job.run(limit=limit, batch=batch, progress=progress)
        self._sync_index(namespace=self.namespace)  # new statuses and evidence versions
        return report

    def mark_due(self, fact_ids: Sequence[str] | None = None) -> int:
        """Make facts due for re-verification now: the listed ones, or every open fact
        the gate looks after (ungated facts are never re-verified). Returns how many."""
        if fact_ids is not None:
            fact_ids = _strings("fact_ids", fact_ids, "fact ids")
        when = utcnow()

        def work(session: Session) -> int:
            if fact_ids is None:
                return reverification.make_due(session, self.namespace, None, when)
            return sum(
                reverification.make_due(session, self.namespace, chunk, when)
                for chunk in db.chunks(fact_ids)
            )

        return self._transaction(work)

    def reverify_policy(self) -> reverification.ReverifyPolicy:
        """The re-verification schedule this store uses: the namespace's stored policy
        (or the defaults), with what was given to ``open()`` on top."""
        with self._session() as session:
            stored = reverification.load_policy(session, self.namespace)
        return replace(stored or reverification.ReverifyPolicy(), **self._policy_override)

    def set_reverify_policy(
        self, *, recheck_after: timedelta | None = None, retry_after: timedelta | None = None
    ) -> reverification.ReverifyPolicy:
        """Store the namespace's re-verification policy, for every process and worker.

        Unset fields keep their stored (or default) value. Facts already scheduled
        keep their ``next_check_at``; ``mark_due()`` re-checks them now.
        """
        changes = {
            name: _positive(name, value)
            for name, value in (("recheck_after", recheck_after), ("retry_after", retry_after))
            if value is not None
        }

        def work(session: Session) -> reverification.ReverifyPolicy:
            stored = reverification.load_policy(session, self.namespace)
            policy = replace(stored or reverification.ReverifyPolicy(), **changes)
            reverification.save_policy(session, self.namespace, policy)
            return policy

        return self._transaction(work)

    def count_due(self) -> int:
        """Facts whose re-verification is due now."""
        with self._session() as session:
            return reverification.count_due(session, self.namespace, utcnow())

    def start_reverifier(
        self, every: timedelta = DEFAULT_REVERIFY_EVERY, **options: Any
    ) -> BackgroundReverifier:
        """Re-verify due facts every ``every`` on a background thread (APScheduler),
        starting now, until ``stop_reverifier()`` or ``close()``. ``options`` go to
        ``reverify()``. Several processes may each run one: leases keep them apart."""
        from memstore.scheduler import BackgroundReverifier

        if self._reverifier is not None and self._reverifier.running:
            raise MemstoreError("a re-verifier is already running; stop_reverifier() first")
        try:
            inspect.signature(self.reverify).bind(**options)
        except TypeError as exc:
            raise InvalidInput("options", f"{exc}; see Store.reverify() for the options") from None
        self._reverifier = BackgroundReverifier(self, _positive("every", every), options)
        self._reverifier.start()
        return self._reverifier

    def stop_reverifier(self, wait: bool = True) -> None:
        """Stop the background re-verifier (waiting for a run in progress by default)."""
        if self._reverifier is not None:
            self._reverifier.stop(wait=wait)
            self._reverifier = None

    def get_evidence(self, evidence_id: str) -> EvidencePublic:
        """One stored evidence version by id (history rows name the versions they used),
        while it backs live memory: a fact cites it whose newest version is not retracted.
        Evidence that only rejections cite is shown by the rejection reads (the audit log)."""
        with self._session() as session:
            row = session.get(Evidence, evidence_id) if isinstance(evidence_id, str) else None
            if (
                row is None
                or row.namespace != self.namespace
                or row.id not in indexing.live_ids(session, [row])
            ):
                raise NotFound("evidence", str(evidence_id), self.namespace)
            return EvidencePublic.model_validate(row, from_attributes=True)

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
    ) -> list[SearchHit]:
        """The ``k`` facts of this namespace that best match ``query``, best first.

        ``mode="hybrid"`` fuses the ranking by meaning (cosine similarity of
        embeddings) with the full-text (BM25) ranking by reciprocal rank fusion;
        ``"vector"`` or ``"text"`` use one side. Filters: ``relation``; ``entity``
        (names or aliases, each a member of every hit; an unknown name raises
        NotFound); ``statuses`` (default: verified and unverified;
        ``["pending"]`` finds facts not yet checked); ``as_of`` (valid at that world time);
        ``recorded_after`` / ``recorded_before``. ``expand=True`` appends, after
        the hits, up to ``k`` facts that share an entity with a hit (same filters
        but ``entity``), each naming the hit in ``via``.
        """
        fields = {
            "query": query,
            "k": k,
            "mode": mode,
            "relation": relation,
            "entity": [] if entity is None else entity,
            "statuses": statuses,
            "as_of": as_of,
            "recorded_after": recorded_after,
            "recorded_before": recorded_before,
            "expand": expand,
        }
        q = _parse(SearchQuery, None, fields)
        wanted = _read_statuses(q.statuses, q.as_of)
        index = self._ready_index()
        with self._session() as session:
            entity_ids = [self._resolve(session, name).id for name in q.entity]
        where = Filter(
            self.namespace,
            statuses=wanted,
            relation=q.relation,
            entity_ids=entity_ids,
            as_of=q.as_of,
            closed_statuses=[FactStatus.SUPERSEDED] if q.statuses is None else [],
            recorded_after=q.recorded_after,
            recorded_before=q.recorded_before,
        )
        order, fused, sides = self._rank(index, FACTS, q.query, q.mode, where, q.k)
        with self._session() as session:
            # SQL has the last word on status: another process may have changed it.
            found = {f.id: f for f in self._facts_by_id(session, order, wanted)}
        hits = [SearchHit(fact=found[i], score=fused[i], **sides[i]) for i in order if i in found][
            : q.k
        ]
        if q.expand and hits:
            hits += self._expand(hits, q, wanted)
        return hits

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
    ) -> list[EvidenceHit]:
        """The ``k`` evidence chunks of this namespace that best match ``query``, from
        evidence that backs live memory (as ``get_evidence``: not evidence that only
        rejections or retracted facts cite).

        Ranked like ``search``. ``source``: one or several sources (``inline`` or a
        URI); ``current_only``: skip versions that a refreshed source has replaced;
        ``recorded_after`` / ``recorded_before``: when the evidence was stored.
        """
        fields = {
            "query": query,
            "k": k,
            "mode": mode,
            "source": [] if source is None else source,
            "current_only": current_only,
            "recorded_after": recorded_after,
            "recorded_before": recorded_before,
        }
        q = _parse(EvidenceQuery, None, fields)
        index = self._ready_index()
        where = Filter(
            self.namespace,
            statuses=["current"] if q.current_only else None,
            sources=q.source,
            recorded_after=q.recorded_after,
            recorded_before=q.recorded_before,
        )
        order, fused, sides = self._rank(index, CHUNKS, q.query, q.mode, where, q.k)
        chunks = {
            r["id"]: r for r in index.rows(CHUNKS, order, ["id", "evidence_id", "start", "end"])
        }
        hits: list[EvidenceHit] = []
        with self._session() as session:
            rows: dict[str, Evidence] = {
                e.id: e
                for e in session.exec(
                    select(Evidence).where(
                        Evidence.namespace == self.namespace,
                        col(Evidence.id).in_({c["evidence_id"] for c in chunks.values()}),
                    )
                ).all()
            }
            current = indexing.current_ids(session, rows.values())
            # SQL has the last word: a fact citing it may have been retracted meanwhile.
            live = indexing.live_ids(session, list(rows.values()))
        for chunk_id in order:
            chunk = chunks.get(chunk_id)
            row = rows.get(chunk["evidence_id"]) if chunk else None
            if chunk is None or row is None or row.id not in live:
                continue
            if q.current_only and row.id not in current:
                continue
            hits.append(
                EvidenceHit(
                    evidence_id=row.id,
                    source=row.source,
                    version=row.version,
                    current=row.id in current,
                    start=chunk["start"],
                    end=chunk["end"],
                    text=row.text[chunk["start"] : chunk["end"]],
                    score=fused[chunk_id],
                    **sides[chunk_id],
                )
            )
            if len(hits) == q.k:
                break
        return hits

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> indexing.Rebuilt:
        """Bring the search index in line with SQL, every namespace of the database, with
        this store's embedder (``indexing.rebuild``: safe to kill, the next open finishes
        it). ``progress(done, total)`` counts facts and evidence rows."""
        if progress is not None and not callable(progress):
            raise InvalidInput("progress", "must be a function of (done, total), or None")
        if self._search is None:
            raise MemstoreError(self._search_problem or "this store has no search index")
        try:
            rebuilt = indexing.rebuild(self._session, self._search, progress)
        except MemstoreError:
            raise
        except Exception as exc:
            raise StorageError(
                f"cannot rebuild the search index at {self.index_uri}: {exc}"
            ) from exc
        self._search_problem = None
        return rebuilt

    def sync_index(self) -> int:
        """Write every queued change (all namespaces) to the search index now; returns how
        many. Opening a store does this; a failed index write leaves its changes queued."""
        index = self._ready_index()
        try:
            return indexing.sync(self._session, index)
        except MemstoreError:
            raise
        except Exception as exc:
            raise StorageError(
                f"cannot update the search index at {self.index_uri}: {exc}"
            ) from exc

    def index_backlog(self) -> int:
        """Changes of this namespace queued for the search index but not yet in it."""
        with self._session() as session:
            return indexing.pending(session, self.namespace)

    def stats(self) -> StoreStats:
        """How many facts (by status), entities, evidence versions and rejections (by
        verdict) this namespace holds, how many facts are due for re-verification and how
        many changes wait for the search index."""
        with self._session() as session:

            def count(model: Any) -> int:
                query = select(sa.func.count()).select_from(model)
                return int(session.exec(query.where(model.namespace == self.namespace)).one())

            facts = session.exec(
                select(Fact.status, sa.func.count())
                .where(Fact.namespace == self.namespace)
                .group_by(col(Fact.status))
            ).all()
            return StoreStats(
                namespace=self.namespace,
                facts={str(status): int(n) for status, n in facts},
                entities=count(Entity),
                evidence=count(Evidence),
                rejections=rejections.count(session, self.namespace, RejectionFilter(), "verdict"),
                due_for_reverification=reverification.count_due(session, self.namespace, utcnow()),
                index_backlog=indexing.pending(session, self.namespace),
            )

    def _reverify_hook(self, gate: Gate | str | None, policy: GatePolicy | None) -> GateHook:
        """The gate re-verification uses: the store's, with per-run settings if given."""
        if isinstance(self.hook, GateHook):
            if gate is None and policy is None:
                return self.hook
            return self.hook.with_settings(_gate(gate), _policy(policy))
        return GateHook(_gate(gate), _policy(policy))

    def _refresh_graph(self, fact_ids: list[str]) -> None:
        """Bring the hypergraph in line with these facts' statuses after they changed."""
        with self._session() as session:
            facts = self._facts_by_id(session, fact_ids, statuses=None)
        with self._graph_lock:
            for fact in facts:
                self._graph.remove_fact(fact.id)
                self._add_to_graph(fact)

    # -- internals: the search index --------------------------------------------

    def _open_search_index(
        self, embedder: Embedder, vector_index_at: int
    ) -> tuple[SearchIndex | None, str | None]:
        """The index and, when search cannot run, why not (in words that say what to do)."""
        if self.index_uri is None:
            return None, (
                "this store has no search index: open it with index='<directory or LanceDB "
                f"URI>' or set {INDEX_URI_ENV}"
            )
        try:
            index = SearchIndex(
                self.index_uri,
                embedder,
                vector_index_at=vector_index_at,
                # PostgreSQL workers may share an index from several machines: they take
                # turns writing it through the database; SQLite's share a lock file.
                write_lock=db.shared_lock(self._engine, f"memstore index {self.index_uri}"),
            )
        except Exception as exc:
            self._engine.dispose()
            raise StorageError(f"cannot open the search index at {self.index_uri}: {exc}") from exc
        mismatch = index.mismatch()
        if mismatch is not None:
            where = self.data_dir if self.data_dir is not None else self.url
            return index, (
                f"{mismatch}: rebuild it with store.reindex() or `memstore reindex {where}`"
            )
        return index, None

    def _replay_queued(self) -> None:
        """Apply what a killed writer or reindex left queued (all namespaces), saying so
        first when it is more than a moment's work."""
        with self._session() as session:
            backlog = indexing.pending(session)
        if backlog > REPLAY_NOTICE_AT:
            log.warning(
                "applying %d queued search-index changes left by an interrupted writer or "
                "reindex (up to about 40 s per 10,000 on 2 cores); the store opens when done",
                backlog,
            )
        if backlog:
            self._sync_index()

    def _ready_index(self) -> SearchIndex:
        if self._search is None or self._search_problem is not None:
            raise MemstoreError(self._search_problem or "this store has no search index")
        return self._search

    def _sync_index(
        self,
        targets: Collection[str] | None = None,
        vectors: Mapping[str, Any] | None = None,
        namespace: str | None = None,
    ) -> None:
        """Apply queued index changes (only ``targets`` / ``namespace`` ones, when given).
        A failure is logged, never raised: SQL already holds the change, and it stays
        queued for a replay."""
        if self._search is None or self._search_problem is not None:
            return
        try:
            indexing.sync(
                self._session,
                self._search,
                namespace=namespace,
                targets=targets,
                vectors=vectors or {},
            )
        except Exception:
            log.warning(
                "the search index at %s is behind; the change stays queued and is applied "
                "at the next open or store.sync_index()",
                self.index_uri,
                exc_info=True,
            )

    def _rank(
        self, index: SearchIndex, table: str, query: str, mode: str, where: Filter, k: int
    ) -> tuple[list[str], dict[str, float], dict[str, dict[str, Any]]]:
        """Ids best first, their fused scores, and per id where it ranked on each side
        (``vector_rank``, ``similarity``, ``text_rank``: the hits' fields).

        Each side returns more than ``k`` rows, so hits that SQL drops (a status changed
        by another process) leave room for the next ones.
        """
        window = max(3 * k, 30)
        try:
            vector = index.embed([query])[0] if mode != "text" else None
            by_vector, by_text = index.rank(
                table, vector, query if mode != "vector" else None, where.sql(table), window
            )
        except Exception as exc:
            raise StorageError(f"search index query failed ({self.index_uri}): {exc}") from exc
        fused = reciprocal_rank_fusion([by_vector, by_text])
        sides: dict[str, dict[str, Any]] = {i: {} for i in fused}
        vector_side = zip(by_vector.ids, by_vector.scores, strict=True)
        for rank, (i, similarity) in enumerate(vector_side, start=1):
            sides[i].update(vector_rank=rank, similarity=similarity)
        for rank, i in enumerate(by_text.ids, start=1):
            sides[i]["text_rank"] = rank
        # Equal fused scores (first on one side, second on the other) go by meaning.
        order = sorted(fused, key=lambda i: (-fused[i], -sides[i].get("similarity", -1.0), i))
        return order, fused, sides

    def _expand(self, hits: list[SearchHit], q: SearchQuery, wanted: list[str]) -> list[SearchHit]:
        """Facts one hop from the hits (sharing an entity), in hit order, at most ``k``."""
        seen = {h.fact.id for h in hits}
        extra: list[SearchHit] = []
        with self._session() as session:
            for hit in hits:
                query = (
                    select(Fact)
                    .join(FactMember, col(FactMember.fact_id) == Fact.id)
                    .where(
                        FactMember.namespace == self.namespace,
                        col(FactMember.entity_id).in_([m.entity_id for m in hit.fact.members]),
                        Fact.namespace == self.namespace,
                        col(Fact.status).in_(wanted),
                        col(Fact.id).not_in(seen),
                    )
                    .distinct()
                    .order_by(col(Fact.recorded_at), col(Fact.id))
                    .limit(q.k - len(extra))
                )
                if q.relation is not None:
                    query = query.where(Fact.relation == q.relation)
                if q.as_of is not None:
                    query = query.where(*_valid_at(q.as_of, history=q.statuses is None))
                if q.recorded_after is not None:
                    query = query.where(col(Fact.recorded_at) >= q.recorded_after)
                if q.recorded_before is not None:
                    query = query.where(col(Fact.recorded_at) < q.recorded_before)
                for fact in self._hydrate(session, list(session.exec(query).all())):
                    seen.add(fact.id)
                    extra.append(
                        SearchHit(fact=fact, score=hit.score * EXPANSION_DECAY, via=hit.fact.id)
                    )
                if len(extra) >= q.k:
                    break
        return extra

    def _duplicate(self, session: Session, new: FactCreate, member_ids: list[str]) -> Fact | None:
        """A live fact with the same normalized statement and the same member entities."""
        if any(m.startswith("new:") for m in member_ids):
            return None  # an entity nobody has named yet: nothing can equal it
        wanted = set(member_ids)
        for row in session.exec(
            select(Fact).where(
                Fact.namespace == self.namespace,
                Fact.statement_hash == statement_hash(new.statement),
                col(Fact.status).in_(ACTIVE_STATUSES),
            )
        ).all():
            members = session.exec(select(FactMember.entity_id).where(FactMember.fact_id == row.id))
            if set(members.all()) == wanted:
                return row
        return None

    def _index_written(self, stored: list[FactPublic], new_evidence: list[str]) -> None:
        """After the commit: report near duplicates of the new facts, then index them
        and the new evidence."""
        if self._search is None or self._search_problem is not None:
            return
        touched = [f.id for f in stored]
        touched += [f.supersedes_id for f in stored if f.supersedes_id]
        touched += new_evidence
        touched += [c.evidence_id for f in stored for c in f.citations]
        vectors: dict[str, Any] = {}
        try:
            embedded = self._search.embed([f.statement for f in stored])
            vectors = {f.id: v for f, v in zip(stored, embedded, strict=True)}
            if self.near_duplicate is not None:
                for n, fact in enumerate(stored):
                    fact.near_duplicates = self._near_duplicates(
                        fact, embedded[n], stored[:n], embedded[:n]
                    )
        except Exception:
            log.warning("near-duplicate check failed for %d new facts", len(stored), exc_info=True)
        self._sync_index(touched, vectors)

    def _near_duplicates(
        self, fact: FactPublic, vector: Any, earlier: list[FactPublic], earlier_vectors: Any
    ) -> list[NearDuplicate]:
        """Live facts with the same member entities whose statements embed close to this
        one: those in the index, and those written earlier in the same batch."""
        assert self._search is not None and self.near_duplicate is not None
        entities = {m.entity_id for m in fact.members}
        where = Filter(
            self.namespace,
            statuses=sorted(ACTIVE_STATUSES),
            entity_ids=sorted(entities),
            exclude_ids=[fact.id, *(f.id for f in earlier)],
        )
        ranking, _ = self._search.rank(FACTS, vector, None, where.sql(FACTS), 10)
        close = {
            i: s
            for i, s in zip(ranking.ids, ranking.scores, strict=True)
            if s >= self.near_duplicate
        }
        with self._session() as session:
            found = [
                NearDuplicate(fact_id=f.id, statement=f.statement, similarity=close[f.id])
                for f in self._facts_by_id(session, list(close))
                if {m.entity_id for m in f.members} == entities
            ]
        for other, other_vector in zip(earlier, earlier_vectors, strict=True):
            similarity = float(vector @ other_vector)
            if similarity >= self.near_duplicate and entities == {
                m.entity_id for m in other.members
            }:
                found.append(
                    NearDuplicate(
                        fact_id=other.id, statement=other.statement, similarity=similarity
                    )
                )
        return sorted(found, key=lambda d: -d.similarity)

    # -- internals: the write path ---------------------------------------------

    def _hook_for(
        self, gate: Gate | str | None, policy: GatePolicy | None, ungated: bool
    ) -> WriteHook:
        """The write hook of one call: the store's, or it with per-call gate settings."""
        if not isinstance(ungated, bool):
            raise InvalidInput("ungated", "must be True or False")
        if ungated:
            if gate is not None or policy is not None:
                raise InvalidInput("ungated", "an ungated write takes no gate or policy")
            return Ungated()
        if gate is None and policy is None:
            return self.hook
        if isinstance(self.hook, GateHook):
            return self.hook.with_settings(_gate(gate), _policy(policy))
        if gate is None:
            raise InvalidInput("policy", "this store's write hook is not the gate; pass gate= too")
        return GateHook(_gate(gate), _policy(policy))

    def _write(
        self, news: Sequence[FactCreate], supersedes: Sequence[str | None], hook: WriteHook
    ) -> list[FactPublic | RejectionPublic]:
        """Check every fact with one hook call, then write each in its own transaction.

        A fact already remembered (same normalized statement and members, live) is
        answered with the stored one, unchecked; superseding facts are never deduplicated.
        """
        single = len(news) == 1
        pending: dict[tuple[str, str], str] = {}  # one id per new evidence text in the batch
        results: list[FactPublic | RejectionPublic | None] = [None] * len(news)
        with self._session() as session:
            prepared = []
            for i, (new, old_id) in enumerate(zip(news, supersedes, strict=True)):
                try:
                    prepared.append(evidence.prepare(session, self.namespace, new, pending))
                    member_ids = self._resolve_members(session, new, create=False)
                except InvalidInput as exc:
                    raise exc if single else exc.under(f"facts.{i}") from None
                same = None if old_id is not None else self._duplicate(session, new, member_ids)
                if same is not None:
                    [results[i]] = self._hydrate(session, [same])
                    results[i].deduplicated = True  # type: ignore[union-attr]
        self.limits.check_evidence(p.candidate(new) for p, new in zip(prepared, news, strict=True))
        todo = [i for i, r in enumerate(results) if r is None]
        admissions = self._admit(hook, [prepared[i].candidate(news[i]) for i in todo])
        policy = self.reverify_policy()
        written: list[FactPublic] = []
        for i, admission in zip(todo, admissions, strict=True):
            if admission.accepted:
                fact = self._store_fact(news[i], prepared[i], admission, supersedes[i], policy)
                results[i] = fact
                if not fact.deduplicated:
                    written.append(fact)
            else:
                results[i] = self._store_rejection(news[i], prepared[i], admission)
        self._index_written(written, [item.id for p in prepared for item in p.new])
        return [r for r in results if r is not None]

    def _admit(self, hook: WriteHook, candidates: list[Candidate]) -> list[Admission]:
        if not candidates:
            return []
        admissions = hook.admit_many(candidates)
        if len(admissions) != len(candidates):
            raise MemstoreError(
                f"write hook {hook.name!r} returned {len(admissions)} answers "
                f"for {len(candidates)} facts"
            )
        return list(admissions)

    def _store_fact(
        self,
        new: FactCreate,
        prepared: evidence.PreparedEvidence,
        admission: Admission,
        supersedes: str | None,
        policy: reverification.ReverifyPolicy,
    ) -> FactPublic:
        def work(session: Session) -> tuple[Fact, bool]:
            return self._insert_fact(session, new, prepared, admission, supersedes, policy)

        row, duplicate = self._transaction(work)
        with self._session() as session:
            stored = self._hydrate(session, [row])[0]
        if duplicate:
            stored.deduplicated = True
            return stored
        with self._graph_lock:
            if supersedes is not None:
                self._graph.remove_fact(supersedes)
            self._add_to_graph(stored)
        return stored

    def _store_rejection(
        self, new: FactCreate, prepared: evidence.PreparedEvidence, admission: Admission
    ) -> RejectionPublic:
        def work(session: Session) -> Rejection:
            return rejections.record(session, new, evidence.persist(session, prepared), admission)

        row = self._transaction(work)
        with self._session() as session:
            return rejections.hydrate(session, [row])[0]

    def _insert_fact(
        self,
        session: Session,
        new: FactCreate,
        prepared: evidence.PreparedEvidence,
        admission: Admission,
        supersedes: str | None,
        policy: reverification.ReverifyPolicy,
    ) -> tuple[Fact, bool]:
        """Insert the fact, or find the live fact it duplicates (then True, nothing added)."""
        inserted = {item.id for item in prepared.new}  # persist queues these for the index
        prepared = evidence.persist(session, prepared)
        member_ids = self._resolve_members(session, new)
        if supersedes is None:  # checked again here: another writer may have stored it
            same = self._duplicate(session, new, member_ids)
            if same is not None:
                return same, True
        now = utcnow()
        valid_from = new.valid_from
        if supersedes is not None and valid_from is None:
            valid_from = _check_correction_end(new, now)  # a correction holds from now
        row = Fact(
            namespace=self.namespace,
            statement=new.statement,
            statement_hash=statement_hash(new.statement),
            relation=new.relation,
            stated_confidence=new.confidence,
            confidence=admission.confidence,
            status=admission.status,
            valid_from=valid_from,
            valid_to=new.valid_to,
            recorded_at=now,
            verified_at=now if admission.status == FactStatus.VERIFIED else None,
            next_check_at=_next_check(admission, policy, now),
            supersedes_id=supersedes,
            **admission.gate_fields(),
        )
        session.add(row)
        session.flush()
        if supersedes is not None:
            values = {"superseded_at": now, "superseded_by_id": row.id}
            bounds = session.exec(
                select(col(Fact.valid_from), col(Fact.valid_to)).where(
                    col(Fact.id) == supersedes, col(Fact.namespace) == self.namespace
                )
            ).first()
            if bounds is not None:  # open facts never change bounds: safe outside the UPDATE
                values["valid_to"] = _world_end(valid_from or now, *bounds)
            if not self._close_open_fact(session, supersedes, FactStatus.SUPERSEDED, values):
                raise InvalidInput(
                    "old_id", f"fact {supersedes} was superseded or retracted meanwhile"
                )
        for position, (member, entity_id) in enumerate(zip(new.members, member_ids, strict=True)):
            session.add(
                FactMember(
                    namespace=self.namespace,
                    fact_id=row.id,
                    entity_id=entity_id,
                    role=member.role,
                    position=position,
                )
            )
        cited = {c.evidence_id for c in prepared.citations}
        for span in prepared.citations:
            session.add(
                Citation(
                    namespace=self.namespace,
                    fact_id=row.id,
                    evidence_id=span.evidence_id,
                    span_start=span.start,
                    span_end=span.end,
                )
            )
        for item in prepared.items:
            if item.id not in cited:
                # Uncited evidence is context; with no citations at all it counts as cited.
                session.add(
                    Citation(
                        namespace=self.namespace,
                        fact_id=row.id,
                        evidence_id=item.id,
                        cited=not prepared.citations,
                    )
                )
        verification = Verification(
            namespace=self.namespace,
            fact_id=row.id,
            kind="write",
            status_after=admission.status,
            confidence=admission.confidence,
            evidence_ids=[item.id for item in prepared.items],
            reason=admission.reason,
            created_at=now,
            **admission.gate_fields(),
        )
        audit.append(session, verification)
        session.add(verification)
        indexing.enqueue(session, self.namespace, OutboxKind.FACT, [row.id])
        # Stored evidence (rejected-only, say) that this fact cites now backs live memory.
        stored = [item.id for item in prepared.items if item.id not in inserted]
        indexing.enqueue(session, self.namespace, OutboxKind.EVIDENCE, stored)
        return row, False

    def _close_open_fact(
        self, session: Session, fact_id: str, status: FactStatus, values: dict[str, Any]
    ) -> bool:
        """Move an open fact to a final status in one guarded UPDATE; False if it was not open.

        The status check lives in the UPDATE itself, so two writers can never both
        retract or supersede the same fact.
        """
        done = session.exec(
            sa.update(Fact)
            .where(
                col(Fact.id) == fact_id,
                col(Fact.namespace) == self.namespace,
                col(Fact.status).in_(OPEN_STATUSES),
            )
            .values(status=status, **values)
        )
        if done.rowcount != 1:
            return False
        indexing.enqueue(session, self.namespace, OutboxKind.FACT, [fact_id])
        return True

    def _queue_chain_evidence(self, session: Session, fact_id: str) -> list[str]:
        """Queue for the index the evidence that a fact and its earlier versions cite,
        with every version of their URI sources (whether it backs live memory may have
        changed); returns the queued ids."""
        chain = [fact_id]
        row = session.get(Fact, fact_id)
        while row is not None and row.supersedes_id is not None and row.supersedes_id not in chain:
            chain.append(row.supersedes_id)
            row = session.get(Fact, row.supersedes_id)
        cited = set(
            session.exec(select(Citation.evidence_id).where(col(Citation.fact_id).in_(chain)))
        )
        sources = set(
            session.exec(
                select(Evidence.source).where(
                    col(Evidence.id).in_(cited), Evidence.source != evidence.INLINE_SOURCE
                )
            )
        )
        for source in sorted(sources):
            cited.update(
                session.exec(
                    select(Evidence.id).where(
                        Evidence.namespace == self.namespace, Evidence.source == source
                    )
                )
            )
        queued = sorted(cited)
        indexing.enqueue(session, self.namespace, OutboxKind.EVIDENCE, queued)
        return queued

    def _after_erase(self, targets: list[str]) -> bool:
        """Apply an erase to the search index now (a failure stays queued for the next
        open) and, on SQLite, fold the write-ahead log (which still holds the erased
        pages) back into the database file and empty it. True when the log could not
        be emptied (a reader held it): the erased text may stay in the ``-wal`` file
        until the next checkpoint, which the next erase and ``close`` retry."""
        self._sync_index(targets)
        if self._engine.dialect.name != "sqlite":
            return False
        self._log_pending = not self._checkpoint_log()
        if self._log_pending:
            log.warning(
                "erase in %r: another connection is reading the SQLite database, so its "
                "write-ahead log (%s-wal) still holds copies of the erased text; they go "
                "at the next checkpoint (the next erase, or when the store closes)",
                self.namespace,
                self._engine.url.database,
            )
        return self._log_pending

    def _checkpoint_log(self) -> bool:
        """``PRAGMA wal_checkpoint(TRUNCATE)``, retried ``LOG_CHECKPOINT_TRIES`` times
        ``LOG_CHECKPOINT_WAIT`` seconds apart while a reader keeps it busy; True once
        the log is copied into the database file and truncated to nothing."""
        try:
            with self._engine.connect() as conn:
                # Not the pool's 30 s busy handler per try: these tries are the waiting.
                conn.exec_driver_sql("PRAGMA busy_timeout=0")
                try:
                    for attempt in range(LOG_CHECKPOINT_TRIES):
                        if attempt:
                            time.sleep(LOG_CHECKPOINT_WAIT)
                        row = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").one()
                        if row[0] == 0:  # (busy, log frames, checkpointed frames)
                            return True
                finally:
                    conn.exec_driver_sql(f"PRAGMA busy_timeout={db.SQLITE_BUSY_TIMEOUT_MS}")
        except SQLAlchemyError:
            log.warning("could not checkpoint the SQLite log after an erase", exc_info=True)
        return False

    def _stored_evidence(self, ids: Collection[str]) -> set[str]:
        """Which of these ids name evidence stored in this namespace (any evidence:
        a write may cite what the audit log showed it)."""
        found: set[str] = set()
        with self._session() as session:
            for chunk in db.chunks(sorted(ids)):
                found.update(
                    session.exec(
                        select(Evidence.id).where(
                            Evidence.namespace == self.namespace, col(Evidence.id).in_(chunk)
                        )
                    )
                )
        return found

    def _resolve_members(
        self, session: Session, new: FactCreate, *, create: bool = True
    ) -> list[str]:
        """Entity ids for the members, creating unknown entities (with their name as alias).

        With ``create=False`` nothing is written (unknown entities get a placeholder
        id): that checks, before a write, that no two members name one entity in
        one role through aliases.
        """
        ids: list[str] = []
        seen: dict[tuple[str, str], int] = {}
        for i, member in enumerate(new.members):
            key = normalize_key(member.name)
            entity_id = session.exec(
                select(EntityAlias.entity_id).where(
                    EntityAlias.namespace == self.namespace, EntityAlias.key == key
                )
            ).first()
            if entity_id is None and not create:
                entity_id = f"new:{key}"
            elif entity_id is None:
                entity = Entity(
                    namespace=self.namespace, name=member.name, key=key, kind=member.kind
                )
                session.add(entity)
                session.add(
                    EntityAlias(
                        namespace=self.namespace, entity_id=entity.id, alias=member.name, key=key
                    )
                )
                session.flush()
                entity_id = entity.id
            slot = (entity_id, normalize_key(member.role))
            if slot in seen:
                raise InvalidInput(
                    f"members.{i}",
                    f"names the same entity as members.{seen[slot]} in the same role",
                )
            seen[slot] = i
            ids.append(entity_id)
        return ids

    # -- internals: reads and plumbing -----------------------------------------

    @contextmanager
    def _session(self) -> Iterator[Session]:
        if self._closed:
            raise MemstoreError("the store is closed; open it again with memstore.open()")
        try:
            with Session(self._engine, expire_on_commit=False) as session:
                yield session
        except SQLAlchemyError as exc:
            raise StorageError(f"database error: {exc}") from exc

    def _transaction(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` in one transaction; all or nothing. Unique-key races are retried."""
        for attempt in range(1, _WRITE_ATTEMPTS + 1):
            try:
                with self._session() as session, session.begin():
                    return work(session)
            except StorageError as exc:
                if not isinstance(exc.__cause__, IntegrityError) or attempt == _WRITE_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    def _get_row(self, fact_id: str, session: Session | None = None) -> Fact:
        if session is None:
            with self._session() as own:
                return self._get_row(fact_id, own)
        row = session.get(Fact, fact_id) if isinstance(fact_id, str) else None
        if row is None or row.namespace != self.namespace:
            raise NotFound("fact", str(fact_id), self.namespace)
        return row

    def _resolve(self, session: Session, name: str, field: str = "entity") -> Entity:
        """The entity named (or aliased) ``name``; a bad name is InvalidInput on ``field``."""
        key = normalize_key(_required_name(field, name))
        row = session.exec(
            select(Entity)
            .join(EntityAlias, col(EntityAlias.entity_id) == Entity.id)
            .where(EntityAlias.namespace == self.namespace, EntityAlias.key == key)
        ).first()
        if row is None:
            raise NotFound("entity", name, self.namespace)
        return row

    def _hydrate(self, session: Session, rows: Sequence[Fact]) -> list[FactPublic]:
        ids = [r.id for r in rows]
        members: dict[str, list[MemberPublic]] = {i: [] for i in ids}
        citations: dict[str, list[CitationPublic]] = {i: [] for i in ids}
        for chunk in db.chunks(ids):
            for m, e in session.exec(
                select(FactMember, Entity)
                .join(Entity, col(Entity.id) == FactMember.entity_id)
                .where(col(FactMember.fact_id).in_(chunk))
                .order_by(col(FactMember.fact_id), col(FactMember.position))
            ).all():
                members[m.fact_id].append(
                    MemberPublic(entity_id=e.id, name=e.name, kind=e.kind, role=m.role)
                )
            for c in session.exec(
                select(Citation).where(col(Citation.fact_id).in_(chunk)).order_by(col(Citation.id))
            ).all():
                citations[c.fact_id].append(
                    CitationPublic(
                        evidence_id=c.evidence_id,
                        cited=c.cited,
                        start=c.span_start,
                        end=c.span_end,
                        lost_at=c.lost_at,
                    )
                )
        return [
            FactPublic(**r.model_dump(), members=members[r.id], citations=citations[r.id])
            for r in rows
        ]

    def _facts_by_id(
        self,
        session: Session,
        ids: Collection[str],
        statuses: Collection[str] | None = ACTIVE_STATUSES,
    ) -> list[FactPublic]:
        """These facts, keeping only ``statuses`` (None: any). The status filter is in SQL,
        so a fact another process made stale never comes back through the graph."""
        rows: list[Fact] = []
        for chunk in db.chunks(list(ids)):
            query = select(Fact).where(Fact.namespace == self.namespace, col(Fact.id).in_(chunk))
            if statuses is not None:
                query = query.where(col(Fact.status).in_(list(statuses)))
            rows.extend(session.exec(query).all())
        return self._hydrate(session, rows)

    def _entities_by_id(self, session: Session, ids: Collection[str]) -> list[EntityPublic]:
        found: dict[str, EntityPublic] = {}
        for chunk in db.chunks(list(ids)):
            for e in session.exec(
                select(Entity).where(Entity.namespace == self.namespace, col(Entity.id).in_(chunk))
            ).all():
                found[e.id] = EntityPublic(
                    id=e.id,
                    namespace=e.namespace,
                    name=e.name,
                    key=e.key,
                    kind=e.kind,
                    created_at=e.created_at,
                )
            for a in session.exec(
                select(EntityAlias)
                .where(col(EntityAlias.entity_id).in_(chunk))
                .order_by(col(EntityAlias.id))
            ).all():
                found[a.entity_id].aliases.append(a.alias)
        return [found[i] for i in ids if i in found]

    def _add_to_graph(self, fact: FactPublic) -> None:
        if fact.status in ACTIVE_STATUSES:
            self._graph.add_fact(
                fact.id,
                [(m.entity_id, m.role) for m in fact.members],
                relation=fact.relation,
                valid_from=fact.valid_from,
                valid_to=fact.valid_to,
            )

    def _rebuild_graph(self) -> None:
        """Load every active fact of the namespace into a fresh hypergraph."""
        graph = HyperGraph()
        query = (
            sa.select(
                col(Fact.id),
                col(Fact.relation),
                col(Fact.valid_from),
                col(Fact.valid_to),
                col(FactMember.entity_id),
                col(FactMember.role),
            )
            .join(FactMember, col(FactMember.fact_id) == Fact.id)
            .where(col(Fact.namespace) == self.namespace, col(Fact.status).in_(ACTIVE_STATUSES))
            .order_by(col(Fact.id), col(FactMember.position))
        )
        with self._engine.connect() as conn:
            current: str | None = None
            members: list[tuple[str, str]] = []
            attrs: dict[str, Any] = {}
            for fact_id, relation, valid_from, valid_to, entity_id, role in conn.execute(query):
                if fact_id != current:
                    if current is not None:
                        graph.add_fact(current, members, **attrs)
                    current, members = fact_id, []
                    attrs = {"relation": relation, "valid_from": valid_from, "valid_to": valid_to}
                members.append((entity_id, role))
            if current is not None:
                graph.add_fact(current, members, **attrs)
        with self._graph_lock:
            self._graph = graph


def _index_uri(index: str | Path | bool, data_dir: Path | None) -> str | None:
    """Where the search index lives: see ``open()``."""
    if index is True:
        if data_dir is not None:
            return str(data_dir / INDEX_DIRNAME)
        return os.environ.get(INDEX_URI_ENV) or None
    if index is False:
        return None
    if isinstance(index, str | Path) and str(index).strip():
        return str(Path(index).expanduser()) if "://" not in str(index) else str(index)
    raise InvalidInput("index", "must be True, False, or a directory or LanceDB URI")


def _similarity_threshold(value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput("near_duplicate", "must be a number from 0 to 1, or None")
    if not 0 < value <= 1:
        raise InvalidInput("near_duplicate", "must be more than 0 and at most 1, or None")
    return float(value)


def _parse(
    model: type[M],
    value: M | Mapping[str, Any] | None,
    fields: dict[str, Any],
    *,
    prefix: str = "",
) -> M:
    """Build an input model from an instance, a mapping or keyword fields."""
    if value is not None and fields:
        raise InvalidInput(prefix, f"pass a {model.__name__} or keyword fields, not both")
    if isinstance(value, model):
        return value
    data = fields if value is None else value
    if not isinstance(data, Mapping):
        raise InvalidInput(
            prefix, f"expected a {model.__name__} or a mapping, got {type(data).__name__}"
        )
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise InvalidInput.from_validation(exc, prefix) from None


def _position(evidence_id: str, count: int) -> int | None:
    """The list index a ``[N]`` marker cites (1-based in the text), if N is in range."""
    if evidence_id.isdigit() and 1 <= int(evidence_id) <= count:
        return int(evidence_id) - 1
    return None


def _claim_fact(
    claim: Claim,
    evidence: Sequence[Any],
    members: Sequence[Any] | Callable[[Claim], Sequence[Any]],
    relation: str | None,
    stored_ids: Collection[str],
) -> tuple[dict[str, Any], list[str]]:
    """The ``add_fact`` fields of one claim, and the ids it cites that exist nowhere."""
    cited: list[int | str] = []
    unknown: list[str] = []
    for evidence_id in claim.citations:
        index = _position(evidence_id, len(evidence))
        if index is not None:
            cited.append(index)
        elif evidence_id in stored_ids:
            cited.append(evidence_id)
        else:
            unknown.append(evidence_id)
    fact = {
        "statement": claim.content,
        "members": members(claim) if callable(members) else members,
        "evidence": list(evidence),
        "citations": [{"evidence": c} for c in cited],
        "relation": relation,
        "confidence": claim.confidence,
    }
    return fact, unknown


def _claim_outcome(claim: Claim, result: FactPublic | RejectionPublic | None) -> ClaimOutcome:
    return ClaimOutcome(
        content=claim.content,
        kind=claim.kind,
        start=claim.start,
        end=claim.end,
        citations=list(claim.citations),
        confidence=claim.confidence,
        fact=result if isinstance(result, FactPublic) else None,
        rejection=result if isinstance(result, RejectionPublic) else None,
    )


def _write_hook(
    gate: Gate | str | None, policy: GatePolicy | None, hook: WriteHook | None
) -> WriteHook:
    """A store's write hook: the given hook, or the grounding gate with its settings."""
    if hook is None:
        return GateHook(_gate(gate), _policy(policy))
    if gate is not None or policy is not None:
        raise InvalidInput("hook", "give a write hook or gate settings (gate, policy), not both")
    if not isinstance(hook, WriteHook):
        raise InvalidInput(
            "hook", f"must be a WriteHook (with admit_many), got {type(hook).__name__}"
        )
    return hook


def _gate(gate: Gate | str | None) -> Gate | None:
    if gate is None or isinstance(gate, Gate):
        return gate
    if isinstance(gate, str):
        try:
            return Gate(gate)
        except (ValueError, ImportError) as exc:
            raise InvalidInput("gate", str(exc)) from None
    raise InvalidInput("gate", f"must be a gate.Gate or a backend name, got {type(gate).__name__}")


def _policy(policy: GatePolicy | None) -> GatePolicy | None:
    if policy is None or isinstance(policy, GatePolicy):
        return policy
    raise InvalidInput("policy", f"must be a gate.GatePolicy, got {type(policy).__name__}")


def _positive(field: str, value: timedelta) -> timedelta:
    if not isinstance(value, timedelta) or value <= timedelta(0):
        raise InvalidInput(field, "must be a positive datetime.timedelta")
    return value


def _write_atomically(path: Path, write: Callable[[TextIO], int]) -> int:
    """Write a text file via a temporary file in the same folder, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            written = write(out)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return written


def _required_text(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput(field, f"must be a string, got {type(value).__name__}")
    try:
        value = check_text(value).strip()
    except ValueError as exc:
        raise InvalidInput(field, str(exc)) from None
    if not value:
        raise InvalidInput(field, "must not be empty")
    return value


def _required_name(field: str, value: object) -> str:
    value = _required_text(field, value)
    if not normalize_key(value):
        raise InvalidInput(field, "must contain a visible character")
    return value


def _check_correction_end(new: FactCreate, now: datetime) -> datetime:
    """When a correction starts holding: its ``valid_from``, else ``now``, which must
    then precede its ``valid_to`` (a correction that ended already needs a start)."""
    if new.valid_from is not None:
        return new.valid_from
    if new.valid_to is not None and new.valid_to <= now:
        raise InvalidInput(
            "valid_to",
            "a correction without valid_from holds from now, so valid_to must be in the "
            "future; give valid_from to correct the past",
        )
    return now


def _world_end(start: datetime, valid_from: datetime | None, valid_to: datetime | None) -> datetime:
    """Where a superseded fact stops holding when its correction holds from ``start``.

    Its own ``valid_to`` when that is earlier; its ``valid_from`` (an empty validity)
    when the correction starts at or before it; else ``start``.
    """
    if valid_to is not None and valid_to <= start:
        return valid_to
    if valid_from is not None and valid_from >= start:
        return valid_from
    return start


def _as_utc(when: datetime | None) -> datetime | None:
    if when is not None and not isinstance(when, datetime):
        raise InvalidInput("as_of", f"must be a datetime, got {type(when).__name__}")
    try:
        return to_utc(when)
    except ValueError as exc:  # out of datetime's range once in UTC
        raise InvalidInput("as_of", str(exc)) from None


def _strings(field: str, value: object, what: str) -> list[str]:
    """``value`` as a list of strings, read once (a generator is read a single time)."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput(field, f"must be a list of {what}")
    items = list(value)
    if not all(isinstance(i, str) for i in items):
        raise InvalidInput(field, f"must be a list of {what}")
    return items


def _read_statuses(statuses: Collection[str] | None, as_of: datetime | None) -> list[str]:
    """The statuses a read asked for; by default the active ones, and for an ``as_of``
    read also superseded facts, which held in world time until their correction."""
    if statuses is not None:
        return _statuses(statuses)
    history = ACTIVE_STATUSES | {FactStatus.SUPERSEDED}
    return _statuses(history if as_of is not None else ACTIVE_STATUSES)


def _valid_at(as_of: datetime, *, history: bool) -> list[Any]:
    """SQL conditions: the fact holds at world time ``as_of`` (half-open validity).

    With ``history`` (a read on default statuses), a superseded fact counts only with
    a closed world time: facts superseded before ``supersede`` closed it (no
    ``valid_to``) would otherwise seem to hold forever beside their correction.
    """
    conditions = [
        or_(col(Fact.valid_from).is_(None), col(Fact.valid_from) <= as_of),
        or_(col(Fact.valid_to).is_(None), col(Fact.valid_to) > as_of),
    ]
    if history:
        superseded = col(Fact.status) == FactStatus.SUPERSEDED
        conditions.append(or_(~superseded, col(Fact.valid_to).is_not(None)))
    return conditions


def _statuses(statuses: Collection[str]) -> list[str]:
    if isinstance(statuses, str):
        statuses = [statuses]
    wanted = _strings("statuses", statuses, "fact statuses")
    valid = {s.value for s in FactStatus}
    for s in wanted:
        if s not in valid:
            raise InvalidInput("statuses", f"{s!r} is not one of {sorted(valid)}")
    return wanted


def _next_check(
    admission: Admission, policy: reverification.ReverifyPolicy, now: datetime
) -> datetime | None:
    """When the re-verification job should look at a newly stored fact."""
    if admission.verdict == Ungated.verdict:
        return None
    if admission.verdict == VerdictStatus.TIMEOUT.value:
        return now  # never checked: due at once, so the next re-verification run checks it
    if admission.verdict in UNVERIFIED_VERDICTS:
        return policy.after_error(now)
    return policy.after_decision(now)


def _source_policy(sources: SourcePolicy | Mapping[str, Any] | None) -> SourcePolicy:
    """The fetch policy of a Store: given, built from a mapping, or unrestricted."""
    if sources is None:
        return SourcePolicy.unrestricted()
    if isinstance(sources, SourcePolicy):
        return sources
    if not isinstance(sources, Mapping):
        raise InvalidInput("sources", "must be a SourcePolicy or a mapping of its fields")
    try:
        return SourcePolicy.model_validate(dict(sources))
    except ValidationError as exc:
        raise InvalidInput.from_validation(exc, "sources") from None
