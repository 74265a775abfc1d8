"""Erasing for good: a fact with every version, or a rejection, with the evidence only
it held, leaving a tombstone (``erasures``) in the audit chain.

Retraction hides a fact; an erase removes its rows: the versions along its
supersession chain, their members, citations and verification history, the evidence
versions no other fact or rejection cites (a URI source goes with all its versions,
or stays whole), the entities no other fact names, a rejection's member and evidence
index rows and its repeated attempts, and the human labels on what it removes
(``labels``). The search index follows through the outbox (``index.outbox``). The
tombstone keeps ids, sha256 content hashes, the reason, who and when, and the chain
links of the removed audit rows so ``audit.verify`` still walks the chain. Everything
here runs inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlmodel import Session, col, select

from memstore.audit import chain as audit
from memstore.audit import labels
from memstore.index import outbox
from memstore.storage import db
from memstore.storage.tables import (
    FIXED_SOURCES,
    AuditHead,
    Citation,
    Entity,
    EntityAlias,
    Erasure,
    Evidence,
    EvidenceSource,
    Fact,
    FactMember,
    OutboxKind,
    Rejection,
    RejectionAttempt,
    RejectionEvidence,
    RejectionMember,
    Verification,
    content_hash,
)

FACT = "fact"
REJECTION = "rejection"


@dataclass
class Erased:
    """What an erase did: its tombstone, and the evidence ids the index must re-check
    (the tombstone's id is queued too: the index purges its files of every copy)."""

    tombstone: Erasure
    evidence_ids: list[str] = field(default_factory=list)


def lock_namespace(session: Session, namespace: str) -> None:
    """Take the namespace's audit-head row lock first (SQLite: the write lock), so no
    write of the namespace commits between what the erase reads and what it deletes."""
    session.exec(
        sa.update(AuditHead).where(col(AuditHead.namespace) == namespace).values(seq=AuditHead.seq)
    )


def erase_fact(
    session: Session, namespace: str, fact_id: str, reason: str, by: str | None
) -> Erased | None:
    """Erase ``fact_id`` with every version of it; None if no such fact."""
    lock_namespace(session, namespace)
    chain = _chain(session, namespace, fact_id)
    if not chain:
        return None
    ids = [f.id for f in chain]
    checks = list(
        session.exec(
            select(Verification)
            .where(col(Verification.fact_id).in_(ids))
            .order_by(col(Verification.chain_seq))
        ).all()
    )
    cited = set(session.exec(select(Citation.evidence_id).where(col(Citation.fact_id).in_(ids))))
    checked = {e for v in checks for e in v.evidence_ids}
    entities = set(
        session.exec(select(FactMember.entity_id).where(col(FactMember.fact_id).in_(ids)))
    )
    links = [audit.erased_link("verifications", v) for v in checks]
    for model in (Citation, FactMember, Verification):
        session.exec(sa.delete(model).where(col(model.fact_id).in_(ids)))
    session.exec(
        sa.update(Fact)
        .where(col(Fact.id).in_(ids))
        .values(supersedes_id=None, superseded_by_id=None)
    )
    session.exec(sa.delete(Fact).where(col(Fact.id).in_(ids)))
    labels.drop(session, namespace, ids)
    _drop_orphan_entities(session, entities)
    dropped, kept, touched = _drop_unheld_evidence(session, namespace, cited | checked)
    outbox.enqueue(session, namespace, OutboxKind.FACT, ids)
    outbox.enqueue(session, namespace, OutboxKind.EVIDENCE, touched)
    tombstone = _tombstone(
        session,
        Erasure(namespace=namespace, target=FACT, target_id=fact_id, fact_ids=ids, links=links),
        reason,
        by,
        [f.statement for f in chain],
        dropped,
        kept,
    )
    return Erased(tombstone, touched)


def erase_rejection(
    session: Session, namespace: str, rejection_id: str, reason: str, by: str | None
) -> Erased | None:
    """Erase the rejection ``rejection_id`` from the audit log; None if no such row."""
    lock_namespace(session, namespace)
    row = session.get(Rejection, rejection_id)
    if row is None or row.namespace != namespace:
        return None
    held = set(
        session.exec(
            select(RejectionEvidence.evidence_id).where(
                RejectionEvidence.rejection_id == rejection_id
            )
        )
    )
    repeats = session.exec(
        select(RejectionAttempt)
        .where(RejectionAttempt.namespace == namespace)
        .where(RejectionAttempt.rejection_id == rejection_id)
        .order_by(col(RejectionAttempt.chain_seq))
    ).all()
    links = [audit.erased_link("rejections", row)]
    links += [audit.erased_link("rejection_attempts", attempt) for attempt in repeats]
    statement = row.statement
    evidence_ids = held | set(row.evidence_ids)
    for model in (RejectionMember, RejectionEvidence, RejectionAttempt):
        session.exec(sa.delete(model).where(col(model.rejection_id) == rejection_id))
    session.exec(sa.delete(Rejection).where(col(Rejection.id) == rejection_id))
    labels.drop(session, namespace, [rejection_id])
    dropped, kept, touched = _drop_unheld_evidence(session, namespace, evidence_ids)
    outbox.enqueue(session, namespace, OutboxKind.EVIDENCE, touched)
    erasure = Erasure(
        namespace=namespace,
        target=REJECTION,
        target_id=rejection_id,
        rejection_ids=[rejection_id],
        links=links,
    )
    tombstone = _tombstone(session, erasure, reason, by, [statement], dropped, kept)
    return Erased(tombstone, touched)


def _tombstone(
    session: Session,
    erasure: Erasure,
    reason: str,
    by: str | None,
    statements: list[str],
    dropped: list[dict[str, str]],
    kept: list[str],
) -> Erasure:
    """Complete ``erasure`` (why, by whom, hashes of what was said, the evidence dropped
    and kept), chain it into the audit log and queue its index rewrite."""
    erasure.reason = reason
    erasure.erased_by = by
    erasure.statement_hashes = [content_hash(s) for s in statements]
    erasure.evidence = dropped
    erasure.kept_evidence_ids = kept
    audit.append(session, erasure)
    session.add(erasure)
    outbox.enqueue(session, erasure.namespace, OutboxKind.ERASURE, [erasure.id])
    return erasure


def _chain(session: Session, namespace: str, fact_id: str) -> list[Fact]:
    """Every version of the fact along its supersession chain, oldest first."""
    row = session.get(Fact, fact_id)
    if row is None or row.namespace != namespace:
        return []
    chain = [row]
    seen = {row.id}
    for step in ("supersedes_id", "superseded_by_id"):
        current = row
        while (next_id := getattr(current, step)) is not None and next_id not in seen:
            found = session.get(Fact, next_id)
            if found is None:
                break
            seen.add(found.id)
            if step == "supersedes_id":
                chain.insert(0, found)
            else:
                chain.append(found)
            current = found
    return chain


def _drop_orphan_entities(session: Session, entity_ids: Collection[str]) -> None:
    """Delete the entities (and their aliases) that no remaining fact names."""
    ids = sorted(entity_ids)
    named: set[str] = set()
    for chunk in db.chunks(ids):
        named.update(
            session.exec(select(FactMember.entity_id).where(col(FactMember.entity_id).in_(chunk)))
        )
    orphans = [i for i in ids if i not in named]
    for chunk in db.chunks(orphans):
        session.exec(sa.delete(EntityAlias).where(col(EntityAlias.entity_id).in_(chunk)))
        session.exec(sa.delete(Entity).where(col(Entity.id).in_(chunk)))


def _drop_unheld_evidence(
    session: Session, namespace: str, candidates: Iterable[str]
) -> tuple[list[dict[str, str]], list[str], list[str]]:
    """Delete the candidate evidence that no remaining fact or rejection cites.

    A URI source is one unit: all its versions go, or, if any version is still cited,
    all stay. Returns the dropped rows (id and content hash), the kept candidate ids,
    and every row looked at (for the index to re-check).
    """
    wanted = sorted(set(candidates))
    rows: dict[str, Evidence] = {}
    for chunk in db.chunks(wanted):
        for r in session.exec(
            select(Evidence).where(Evidence.namespace == namespace, col(Evidence.id).in_(chunk))
        ):
            rows[r.id] = r
    sources = sorted({r.source for r in rows.values() if r.source not in FIXED_SOURCES})
    for chunk in db.chunks(sources):
        for r in session.exec(
            select(Evidence).where(Evidence.namespace == namespace, col(Evidence.source).in_(chunk))
        ):
            rows[r.id] = r
    ids = sorted(rows)
    cited: set[str] = set()
    for chunk in db.chunks(ids):
        cited.update(
            session.exec(
                select(Citation.evidence_id).where(
                    Citation.namespace == namespace, col(Citation.evidence_id).in_(chunk)
                )
            )
        )
        cited.update(
            session.exec(
                select(RejectionEvidence.evidence_id).where(
                    RejectionEvidence.namespace == namespace,
                    col(RejectionEvidence.evidence_id).in_(chunk),
                )
            )
        )
    kept_sources = {rows[i].source for i in cited if rows[i].source not in FIXED_SOURCES}
    drop = [
        r
        for r in rows.values()
        if r.id not in cited and (r.source in FIXED_SOURCES or r.source not in kept_sources)
    ]
    gone_sources = sorted({r.source for r in drop if r.source not in FIXED_SOURCES})
    for chunk in db.chunks(gone_sources):
        session.exec(
            sa.delete(EvidenceSource).where(
                col(EvidenceSource.namespace) == namespace, col(EvidenceSource.source).in_(chunk)
            )
        )
    drop_ids = sorted(r.id for r in drop)
    for chunk in db.chunks(drop_ids):
        session.exec(sa.delete(Evidence).where(col(Evidence.id).in_(chunk)))
    dropped = [
        {"id": r.id, "content_hash": r.content_hash} for r in sorted(drop, key=lambda r: r.id)
    ]
    kept = sorted(i for i in wanted if i in rows and i not in set(drop_ids))
    return dropped, kept, ids
