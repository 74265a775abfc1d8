"""SQLModel tables: the source of truth. Every table carries ``namespace``.

Base (data) models hold the fields that tables and API models share; only the
``table=True`` classes map to SQL. Schema changes need an Alembic revision in
``migrations/`` (``tests/memstore/storage/test_migrations.py`` fails when the two disagree).
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator
from sqlmodel import JSON, Field, Index, SQLModel, UniqueConstraint

from gate.verdict import GateNumbers

MAX_NAMESPACE_CHARS = 128
MAX_NAME_CHARS = 256
MAX_STATEMENT_CHARS = 4_000
MAX_EVIDENCE_CHARS = 200_000
MAX_SOURCE_CHARS = 2_048


class FactStatus(StrEnum):
    """Lifecycle of a stored fact (docs/design.md, Fact status)."""

    VERIFIED = "verified"
    UNVERIFIED = "unverified"
    #: Stored, not yet checked: the verifier timed out or failed.
    PENDING = "pending"
    STALE = "stale"
    CONTRADICTED = "contradicted"
    SUPERSEDED = "superseded"
    RETRACTED = "retracted"


#: Statuses that default reads return (not ``pending``: the gate has not checked it).
ACTIVE_STATUSES: frozenset[FactStatus] = frozenset({FactStatus.VERIFIED, FactStatus.UNVERIFIED})
#: Statuses from which a fact can still be retracted, superseded or re-verified.
OPEN_STATUSES: frozenset[FactStatus] = frozenset(
    {
        FactStatus.VERIFIED,
        FactStatus.UNVERIFIED,
        FactStatus.PENDING,
        FactStatus.STALE,
        FactStatus.CONTRADICTED,
    }
)


def new_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (stored as naive UTC)."""

    impl = sa.DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


def _ns() -> Any:
    return Field(max_length=MAX_NAMESPACE_CHARS, index=False)


def _when(nullable: bool = True) -> Any:
    if nullable:
        return Field(default=None, sa_type=UTCDateTime)
    return Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


def _text() -> Any:
    return Field(sa_type=sa.Text)


#: JSON on SQLite, JSONB on PostgreSQL (its ``@>`` compares JSON values); None is NULL.
METADATA_TYPE = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def _metadata() -> Any:
    """The ``metadata`` column (the attribute is ``meta``: SQLModel reserves ``metadata``).
    The caller's data about a fact (``memstore.metadata``); NULL when there is none."""
    return Field(default=None, sa_column=sa.Column("metadata", METADATA_TYPE, nullable=True))


class _VerdictName(SQLModel):
    """The first column of ``GateFields`` (a base, so the columns keep their order)."""

    verdict: str = Field(max_length=32)


class GateFields(GateNumbers, _VerdictName):
    """One gate decision (docs/design.md, Verdict): the verdict, the numbers
    (``gate.verdict.GateNumbers``) and the backend, shared by facts, history and
    rejections."""

    backend: str | None = Field(default=None, max_length=128)
    latency_ms: float | None = None


class Entity(SQLModel, table=True):
    """A named thing facts are about; unique per (namespace, normalized key)."""

    __tablename__ = "entities"
    __table_args__ = (UniqueConstraint("namespace", "key", name="uq_entities_namespace_key"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    namespace: str = _ns()
    name: str = Field(max_length=MAX_NAME_CHARS)
    key: str = Field(max_length=MAX_NAME_CHARS)
    kind: str = Field(max_length=64)
    created_at: datetime = _when(nullable=False)


class EntityAlias(SQLModel, table=True):
    """Every name an entity answers to (its own name included), by normalized key."""

    __tablename__ = "entity_aliases"
    __table_args__ = (UniqueConstraint("namespace", "key", name="uq_entity_aliases_namespace_key"),)

    id: int | None = Field(default=None, primary_key=True)
    namespace: str = _ns()
    entity_id: str = Field(foreign_key="entities.id", max_length=32, index=True)
    alias: str = Field(max_length=MAX_NAME_CHARS)
    key: str = Field(max_length=MAX_NAME_CHARS)


class FactBase(GateFields):
    """Stored fields of a fact (the table adds ``id`` and ``namespace``)."""

    statement: str = _text()
    relation: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    stated_confidence: float
    confidence: float
    status: str = Field(max_length=16)
    valid_from: datetime | None = _when()
    valid_to: datetime | None = _when()
    recorded_at: datetime = _when(nullable=False)
    verified_at: datetime | None = _when()
    next_check_at: datetime | None = _when()
    superseded_at: datetime | None = _when()
    supersedes_id: str | None = Field(default=None, max_length=32, foreign_key="facts.id")
    superseded_by_id: str | None = Field(default=None, max_length=32, foreign_key="facts.id")
    retracted_at: datetime | None = _when()
    retraction_reason: str | None = Field(default=None, sa_type=sa.Text)
    #: Why the fact is stale, contradicted or waiting for a retry (set by re-verification).
    status_reason: str | None = Field(default=None, sa_type=sa.Text)
    #: Re-verifications in a row that could not decide (source or verifier errors).
    check_failures: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class Fact(FactBase, table=True):
    """A hyperedge: one statement linking several entities, with its gate metrics."""

    __tablename__ = "facts"
    __table_args__ = (
        Index("ix_facts_namespace_status", "namespace", "status"),
        Index("ix_facts_namespace_relation", "namespace", "relation"),
        Index("ix_facts_namespace_recorded_at", "namespace", "recorded_at"),
        Index("ix_facts_namespace_next_check_at", "namespace", "next_check_at"),
        Index("ix_facts_namespace_statement_hash", "namespace", "statement_hash"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    namespace: str = _ns()
    #: sha256 of the normalized statement (``names.statement_hash``): finds exact duplicates.
    statement_hash: str | None = Field(default=None, max_length=64)
    #: The re-verification claim holding this fact, and when that lease runs out.
    lease_owner: str | None = Field(default=None, max_length=32)
    lease_expires_at: datetime | None = _when()
    meta: dict[str, Any] | None = _metadata()


class FactMember(SQLModel, table=True):
    """One (entity, role) of a fact. ``recorded_at`` copies the fact's (never changed),
    so an entity's facts come newest first from one index (``facts_about``)."""

    __tablename__ = "fact_members"
    __table_args__ = (
        UniqueConstraint("fact_id", "entity_id", "role", name="uq_fact_members_fact_entity_role"),
        Index(
            "ix_fact_members_namespace_entity_recorded",
            "namespace",
            "entity_id",
            "recorded_at",
            "fact_id",
        ),
        # A page's members come from this index alone, in order: no table row is read
        # and nothing is sorted (``Scope.hydrate``, the graph's reads).
        Index("ix_fact_members_fact_position", "fact_id", "position", "entity_id", "role"),
    )

    id: int | None = Field(default=None, primary_key=True)
    namespace: str = _ns()
    fact_id: str = Field(foreign_key="facts.id", max_length=32)
    entity_id: str = Field(foreign_key="entities.id", max_length=32)
    role: str = Field(max_length=MAX_NAME_CHARS)
    position: int
    recorded_at: datetime = _when(nullable=False)


def content_hash(text: str) -> str:
    """SHA-256 of the UTF-8 text, hex (``Evidence.content_hash``, erasure tombstones)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The ``source`` of evidence given inline with a write (not fetched from a source).
INLINE_SOURCE = "inline"
#: The ``source`` of a conversation's turns stored as evidence (``remember_conversation``).
CONVERSATION_SOURCE = "conversation"
#: Sources whose texts are fixed as given: each text is a piece of its own (version 1,
#: always current), never a version of another one, never fetched again.
FIXED_SOURCES = frozenset({INLINE_SOURCE, CONVERSATION_SOURCE})


class Evidence(SQLModel, table=True):
    """A piece of evidence text, stored once per (namespace, source, content hash).

    ``source`` is ``inline`` for text handed in directly, or a URI; a refreshed
    source adds a row with the next ``version``.
    """

    __tablename__ = "evidence"
    __table_args__ = (
        UniqueConstraint(
            "namespace", "source", "content_hash", name="uq_evidence_namespace_source_hash"
        ),
        Index("ix_evidence_namespace_source_version", "namespace", "source", "version"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    namespace: str = _ns()
    source: str = Field(max_length=MAX_SOURCE_CHARS)
    version: int = 1
    content_hash: str = Field(max_length=64)
    text: str = _text()
    created_at: datetime = _when(nullable=False)


class Citation(SQLModel, table=True):
    """Links a fact to evidence. ``cited`` rows are the cited spans (null span: whole text);
    uncited rows are context the fact was checked against."""

    __tablename__ = "citations"
    __table_args__ = (Index("ix_citations_namespace_evidence_id", "namespace", "evidence_id"),)

    id: int | None = Field(default=None, primary_key=True)
    namespace: str = _ns()
    fact_id: str = Field(foreign_key="facts.id", max_length=32, index=True)
    evidence_id: str = Field(foreign_key="evidence.id", max_length=32)
    cited: bool = True
    span_start: int | None = None
    span_end: int | None = None
    #: Set when a refreshed source no longer holds the cited text; the citation keeps
    #: pointing at the last version that did.
    lost_at: datetime | None = _when()


class EvidenceSource(SQLModel, table=True):
    """What the last fetch of a refreshable source found (re-verification's cache state)."""

    __tablename__ = "evidence_sources"
    __table_args__ = (
        UniqueConstraint("namespace", "source", name="uq_evidence_sources_namespace_source"),
    )

    id: int | None = Field(default=None, primary_key=True)
    namespace: str = _ns()
    source: str = Field(max_length=MAX_SOURCE_CHARS)
    #: The stored version the validators below describe (None until a fetch succeeded).
    evidence_id: str | None = Field(default=None, foreign_key="evidence.id", max_length=32)
    etag: str | None = Field(default=None, max_length=512)
    last_modified: str | None = Field(default=None, max_length=64)
    outcome: str = Field(max_length=16)
    reason: str | None = Field(default=None, sa_type=sa.Text)
    fetched_at: datetime = _when(nullable=False)


class ChainFields(SQLModel):
    """A row's place in its namespace's audit hash chain (see ``memstore.audit.chain``)."""

    chain_seq: int | None = None
    chain_prev: str | None = Field(default=None, max_length=64)
    chain_hash: str | None = Field(default=None, max_length=64)


class VerificationBase(GateFields, ChainFields):
    """One verification of a stored fact: the first gate pass or a re-verification."""

    fact_id: str = Field(foreign_key="facts.id", max_length=32)
    kind: str = Field(max_length=16)  # "write" or "reverify"
    verdict_before: str | None = Field(default=None, max_length=32)
    status_before: str | None = Field(default=None, max_length=16)
    status_after: str = Field(max_length=16)
    confidence: float
    evidence_ids: list[str] = Field(default_factory=list, sa_type=JSON, nullable=False)
    reason: str | None = Field(default=None, sa_type=sa.Text)
    #: Wall time of a re-verification (fetching, re-anchoring and the gate), in ms.
    duration_ms: float | None = None
    created_at: datetime = _when(nullable=False)


class Verification(VerificationBase, table=True):
    __tablename__ = "verifications"
    __table_args__ = (
        Index("ix_verifications_namespace_fact_id", "namespace", "fact_id", "created_at"),
        Index("ix_verifications_namespace_chain_seq", "namespace", "chain_seq", unique=True),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    namespace: str = _ns()


class RejectionBase(GateFields, ChainFields):
    """A fact the write hook refused: kept for audit, never in memory."""

    statement: str = _text()
    relation: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    members: list[dict[str, str]] = Field(default_factory=list, sa_type=JSON, nullable=False)
    stated_confidence: float
    evidence_ids: list[str] = Field(default_factory=list, sa_type=JSON, nullable=False)
    citations: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON, nullable=False)
    reason: str | None = Field(default=None, sa_type=sa.Text)
    created_at: datetime = _when(nullable=False)


class Rejection(RejectionBase, table=True):
    __tablename__ = "rejections"
    __table_args__ = (
        Index("ix_rejections_namespace_created_at_seq", "namespace", "created_at", "chain_seq"),
        Index("ix_rejections_namespace_verdict_created_at", "namespace", "verdict", "created_at"),
        Index("ix_rejections_namespace_chain_seq", "namespace", "chain_seq", unique=True),
        Index("ix_rejections_namespace_fingerprint", "namespace", "fingerprint"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    namespace: str = _ns()
    meta: dict[str, Any] | None = _metadata()
    #: sha256 of what makes a refused write the same one again (``write.refusals.fingerprint``);
    #: None on rows written before repeats were counted.
    fingerprint: str | None = Field(default=None, max_length=64)


class RejectionAttemptBase(ChainFields):
    """One more attempt at a write already refused (same fact, evidence and verdict as
    rejection ``rejection_id``): counted on that rejection, not stored again, and a link
    of the audit chain of its own, with this attempt's gate numbers."""

    rejection_id: str = Field(foreign_key="rejections.id", max_length=32)
    p1: float | None = None
    p0: float | None = None
    latency_ms: float | None = None
    created_at: datetime = _when(nullable=False)


class RejectionAttempt(RejectionAttemptBase, table=True):
    __tablename__ = "rejection_attempts"
    __table_args__ = (
        Index(
            "ix_rejection_attempts_namespace_rejection_id",
            "namespace",
            "rejection_id",
            "created_at",
        ),
        Index("ix_rejection_attempts_namespace_chain_seq", "namespace", "chain_seq", unique=True),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    namespace: str = _ns()


class RejectionMember(SQLModel, table=True):
    """Index of a rejection's members by normalized name, for ``entity=`` audit queries."""

    __tablename__ = "rejection_members"
    __table_args__ = (Index("ix_rejection_members_namespace_key", "namespace", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    namespace: str = _ns()
    rejection_id: str = Field(foreign_key="rejections.id", max_length=32, index=True)
    key: str = Field(max_length=MAX_NAME_CHARS)
    role: str = Field(max_length=MAX_NAME_CHARS)


class RejectionEvidence(SQLModel, table=True):
    """Index of the evidence a rejection was checked against, for ``source=`` audit queries."""

    __tablename__ = "rejection_evidence"
    __table_args__ = (
        Index("ix_rejection_evidence_namespace_evidence_id", "namespace", "evidence_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    namespace: str = _ns()
    rejection_id: str = Field(foreign_key="rejections.id", max_length=32, index=True)
    evidence_id: str = Field(foreign_key="evidence.id", max_length=32)


class ErasureBase(ChainFields):
    """A tombstone: what an erase removed for good, by id and content hash, and why.

    It is itself a link of the audit chain. ``links`` keeps the chain position and
    hash of every audit row the erase removed, so the chain verifies without them.
    """

    target: str = Field(max_length=16)  # "fact" or "rejection"
    target_id: str = Field(max_length=32)
    reason: str = _text()
    erased_by: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    #: Every version of the fact (its supersession chain), or empty for a rejection.
    fact_ids: list[str] = Field(default_factory=list, sa_type=JSON, nullable=False)
    rejection_ids: list[str] = Field(default_factory=list, sa_type=JSON, nullable=False)
    #: sha256 of each erased statement, in the order of ``fact_ids`` / ``rejection_ids``.
    statement_hashes: list[str] = Field(default_factory=list, sa_type=JSON, nullable=False)
    #: Erased evidence versions: ``{"id", "content_hash"}`` each.
    evidence: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON, nullable=False)
    #: Evidence that stayed because other facts or rejections still cite it.
    kept_evidence_ids: list[str] = Field(default_factory=list, sa_type=JSON, nullable=False)
    #: Removed audit rows: ``{"table", "id", "seq", "prev", "hash"}`` each.
    links: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON, nullable=False)
    created_at: datetime = _when(nullable=False)


class Erasure(ErasureBase, table=True):
    __tablename__ = "erasures"
    __table_args__ = (
        Index("ix_erasures_namespace_created_at", "namespace", "created_at"),
        Index("ix_erasures_namespace_chain_seq", "namespace", "chain_seq", unique=True),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    namespace: str = _ns()


class AuditHead(SQLModel, table=True):
    """The last link of a namespace's audit chain: its sequence number and hash."""

    __tablename__ = "audit_heads"

    namespace: str = Field(primary_key=True, max_length=MAX_NAMESPACE_CHARS)
    seq: int
    hash: str = Field(max_length=64)


class ReverifyPolicyRow(SQLModel, table=True):
    """A namespace's re-verification policy, so every process and worker uses the same one."""

    __tablename__ = "reverify_policies"

    namespace: str = Field(primary_key=True, max_length=MAX_NAMESPACE_CHARS)
    recheck_after_s: float
    retry_after_s: float
    updated_at: datetime = _when(nullable=False)


class OutboxKind(StrEnum):
    """What an outbox row asks the search index to bring in line with SQL."""

    FACT = "fact"
    EVIDENCE = "evidence"
    #: An erase (target: the tombstone's id): no copy of what it removed may stay.
    ERASURE = "erasure"


class IndexOutbox(SQLModel, table=True):
    """Rows whose search-index entry is behind SQL, written in the same transaction as
    the change; the row is deleted once LanceDB holds the change (docs/design.md, Index
    outbox)."""

    __tablename__ = "index_outbox"
    # Ids are never reused: a syncer deletes the rows it applied by id (revision 0005).
    __table_args__ = {"sqlite_autoincrement": True}

    id: int | None = Field(default=None, primary_key=True)
    namespace: str = _ns()
    kind: str = Field(max_length=16)
    target_id: str = Field(max_length=32, index=True)
    created_at: datetime = _when(nullable=False)


class LabelKind(StrEnum):
    """What a person says of the gate's decision (docs/design.md, Human labels)."""

    #: On a rejection: "this refusal was wrong" (the evidence did carry the fact).
    FALSE_REJECTION = "false_rejection"
    #: On a stored fact: "this fact should not have been stored".
    FALSE_ADMISSION = "false_admission"


class LabelBase(SQLModel):
    """A person's verdict on one gate decision: data for an error budget and for training
    the verifier. ``labelled_by`` names who (an API key's fingerprint, never the key)."""

    kind: str = Field(max_length=32)
    #: The rejection (``false_rejection``) or fact (``false_admission``) it is about.
    target_id: str = Field(max_length=32)
    note: str | None = Field(default=None, sa_type=sa.Text)
    labelled_by: str = Field(max_length=MAX_NAME_CHARS)
    created_at: datetime = _when(nullable=False)


class Label(LabelBase, table=True):
    """A human label; one per (kind, target, person): giving it again changes nothing."""

    __tablename__ = "labels"
    __table_args__ = (
        UniqueConstraint(
            "namespace", "kind", "target_id", "labelled_by", name="uq_labels_target_by"
        ),
        Index("ix_labels_namespace_created_at", "namespace", "created_at"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    namespace: str = _ns()
