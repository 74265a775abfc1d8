"""A refused write, recorded in the audit log: the rejection row (or, for a write refused
the same way before, an attempt counted on that rejection), a link of the audit chain,
written in the write path's transaction. ``memstore.audit.rejections`` reads them."""

from __future__ import annotations

import hashlib
import json

from sqlmodel import Session, col, select

from memstore.audit import chain
from memstore.names import normalize_key
from memstore.schemas import FactCreate, RejectionPublic
from memstore.storage.tables import (
    GateFields,
    Rejection,
    RejectionAttempt,
    RejectionEvidence,
    RejectionMember,
)
from memstore.write.evidence import PreparedEvidence
from memstore.write.hook import Admission


def fingerprint(row: Rejection) -> str:
    """What makes a refused write the same one again: its statement, relation, members,
    stated confidence, metadata, evidence, citations, verdict and verifier (not the gate's
    numbers, which a sampling verifier varies; the reason only where no model was asked),
    as a sha256."""
    same = [
        # No model was asked (an unknown citation): the reason is all that tells two apart.
        row.reason if row.p1 is None else None,
        row.statement,
        row.relation,
        row.members,
        repr(float(row.stated_confidence)),
        row.meta,
        row.evidence_ids,
        row.citations,
        row.verdict,
        row.backend,
    ]
    payload = json.dumps(same, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def record(
    session: Session, new: FactCreate, prepared: PreparedEvidence, admission: Admission
) -> tuple[Rejection, bool]:
    """Insert the audit row of a rejected fact (with its member and evidence index rows);
    a write refused the same way before (``fingerprint``) is counted on that rejection
    instead, as an attempt that is a link of the audit chain of its own. The row, and
    whether this was such a repeat."""
    row = Rejection(
        namespace=prepared.namespace,
        statement=new.statement,
        relation=new.relation,
        members=[m.model_dump() for m in new.members],
        stated_confidence=new.confidence,
        evidence_ids=[item.id for item in prepared.items],
        citations=[
            {"evidence_id": c.evidence_id, "start": c.start, "end": c.end}
            for c in prepared.citations
        ],
        reason=admission.reason,
        meta=new.metadata or None,
        **admission.gate_fields(),
    )
    row.fingerprint = fingerprint(row)
    earlier = session.exec(
        select(Rejection)
        .where(Rejection.namespace == row.namespace, Rejection.fingerprint == row.fingerprint)
        .order_by(col(Rejection.chain_seq))
        .limit(1)
    ).first()
    if earlier is not None:
        attempt = RejectionAttempt(
            namespace=row.namespace,
            rejection_id=earlier.id,
            p1=row.p1,
            p0=row.p0,
            latency_ms=row.latency_ms,
        )
        chain.append(session, attempt)
        session.add(attempt)
        return earlier, True
    chain.append(session, row)
    session.add(row)
    session.flush()
    for member in new.members:
        session.add(
            RejectionMember(
                namespace=row.namespace,
                rejection_id=row.id,
                key=normalize_key(member.name),
                role=member.role,
            )
        )
    for item in prepared.items:
        session.add(
            RejectionEvidence(namespace=row.namespace, rejection_id=row.id, evidence_id=item.id)
        )
    return row, False


def as_attempt(rejection: RejectionPublic, admission: Admission | None) -> RejectionPublic:
    """The rejection a repeated write was counted on, answered with this attempt's gate
    numbers and reason (the logged row keeps the first attempt's); unchanged for None."""
    if admission is None:
        return rejection
    fields = admission.gate_fields()
    shown = {name: fields[name] for name in GateFields.model_fields if name in fields}
    return rejection.model_copy(update={**shown, "reason": admission.reason})
