"""A held fact earns or loses trust: a person's review, or later evidence that
corroborates it.

A fact the gate held (stored ``unverified``, or ``pending`` when no verifier answered)
is **confirmed** (made ``verified``) or **refused** (made ``retracted``, out of every
default read) by a person, or **corroborated** (made ``verified``) when a later message
that the gate reads it against verifies it. Each is one guarded UPDATE and one
``verifications`` row (``kind`` ``review`` or ``corroborate``) that is a link of the
audit chain: who decided (``backend``: ``person:<key>`` for a review), why, and the
status before and after.
"""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa
from sqlmodel import Session, col

from memstore.audit import chain
from memstore.errors import InvalidInput
from memstore.index import outbox
from memstore.storage.scope import Scope
from memstore.storage.tables import Fact, FactStatus, OutboxKind, Verification, utcnow
from memstore.write.forgetting import queue_chain_evidence

Decision = Literal["confirm", "refuse"]
DECISIONS: tuple[Decision, ...] = ("confirm", "refuse")
#: Statuses a review or a corroboration may change: facts the gate did not verify.
HELD_STATUSES = frozenset({FactStatus.UNVERIFIED, FactStatus.PENDING})
MAX_REASON_CHARS = 2_000


def review(scope: Scope, fact_id: str, decision: str, reason: str, by: str) -> list[str]:
    """Confirm or refuse the held fact ``fact_id`` (checked first: InvalidInput naming
    ``decision``, ``reason`` or ``fact_id``; ``reason`` comes stripped and non-empty from
    ``checks.reason_and_author``); returns the ids whose index rows changed."""
    if decision not in DECISIONS:
        raise InvalidInput("decision", f"must be one of {', '.join(DECISIONS)}, not {decision!r}")
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput("reason", f"at most {MAX_REASON_CHARS} characters")
    now = utcnow()
    if decision == "confirm":
        values = {"status": FactStatus.VERIFIED, "verified_at": now, "status_reason": None}
    else:
        values = {
            "status": FactStatus.RETRACTED,
            "retracted_at": now,
            "retraction_reason": f"refused on review: {reason}",
        }
    verdict = "confirmed" if decision == "confirm" else "refused"

    def work(session: Session) -> list[str]:
        ids = change(session, scope.namespace, fact_id, values, "review", verdict, reason, by)
        if decision == "refuse":  # its evidence may no longer back live memory
            ids += queue_chain_evidence(session, scope.namespace, fact_id)
        return ids

    return scope.transaction(work)


def corroborate(
    scope: Scope, fact_id: str, reason: str, numbers: dict[str, Any], backend: str | None
) -> list[str]:
    """Make the held fact ``fact_id`` verified because later evidence verifies it
    (``numbers`` and ``backend``: the gate's on that evidence); returns the ids whose
    index rows changed (none if it is no longer held)."""
    values = {"status": FactStatus.VERIFIED, "verified_at": utcnow(), "status_reason": None}

    def work(session: Session) -> list[str]:
        return change(
            session,
            scope.namespace,
            fact_id,
            values,
            "corroborate",
            "grounded",
            reason,
            by=None,
            numbers=numbers,
            backend=backend,
        )

    try:
        return scope.transaction(work)
    except InvalidInput:  # no longer held: another writer or a review decided first
        return []


def change(
    session: Session,
    namespace: str,
    fact_id: str,
    values: dict[str, object],
    kind: str,
    verdict: str,
    reason: str,
    by: str | None,
    numbers: dict[str, Any] | None = None,
    backend: str | None = None,
) -> list[str]:
    """One guarded UPDATE of a held fact and its chained ``verifications`` row; its
    ``backend`` is ``person:<by>`` for a person's decision, else ``backend``."""
    fact = session.get(Fact, fact_id)
    if fact is None or fact.namespace != namespace:
        raise InvalidInput("fact_id", f"no fact {fact_id} in namespace {namespace}")
    if fact.status not in HELD_STATUSES:
        raise InvalidInput(
            "fact_id",
            f"fact {fact_id} is {fact.status}: only held facts (unverified or pending) are "
            "reviewed; correct a verified fact with supersede, or retract it",
        )
    status_before, verdict_before, confidence_before = fact.status, fact.verdict, fact.confidence
    if values["status"] == FactStatus.VERIFIED and "confidence" not in values:
        values = {**values, "confidence": fact.stated_confidence}  # trusted as stated
    done = session.exec(
        sa.update(Fact)
        .where(
            col(Fact.id) == fact_id,
            col(Fact.namespace) == namespace,
            col(Fact.status) == status_before,
        )
        .values(**values)
    )
    if done.rowcount != 1:
        raise InvalidInput("fact_id", f"fact {fact_id} changed meanwhile; read it and try again")
    history = Verification(
        namespace=namespace,
        fact_id=fact_id,
        kind=kind,
        verdict_before=verdict_before,
        status_before=status_before,
        status_after=str(values["status"]),
        confidence=confidence_before,
        evidence_ids=[],
        reason=reason,
        created_at=utcnow(),
        verdict=verdict,
        backend=f"person:{by}" if by else backend,
        **(numbers or {}),  # GateNumbers fields, by name
    )
    chain.append(session, history)
    session.add(history)
    outbox.enqueue(session, namespace, OutboxKind.FACT, [fact_id])
    return [fact_id]
