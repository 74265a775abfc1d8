"""Human labels: what people say of the gate's decisions (a refusal that was wrong, a
fact that should not have been stored), stored with who and when. Inputs arrive checked.

They are data for an error budget and for training the verifier: the audit page gives
them, ``Store.labels`` lists them and rejection exports carry them.
"""

from __future__ import annotations

from collections.abc import Collection

import sqlalchemy as sa
from sqlmodel import Session, col, select

from memstore.errors import NotFound
from memstore.schemas import LabelCreate, LabelPublic, LabelQuery
from memstore.storage import db
from memstore.storage.scope import Scope
from memstore.storage.tables import Fact, Label, LabelKind, Rejection


def full_target_id(scope: Scope, kind: str, target_id: str) -> str:
    """``target_id`` in full (a unique prefix of 8 or more characters may be given) when
    ``kind`` says what it names; as given otherwise (the label's own checks name the fault)."""
    targets = {
        LabelKind.FALSE_REJECTION.value: "rejection",
        LabelKind.FALSE_ADMISSION.value: "fact",
    }
    target = targets.get(kind) if isinstance(kind, str) else None
    return target_id if target is None else scope.full_id(target, target_id, "target_id")


def add(scope: Scope, new: LabelCreate) -> LabelPublic:
    """Store the label, or answer the one this person gave the same target before;
    NotFound when the target is no row of its kind in this namespace."""

    def work(session: Session) -> LabelPublic:
        target: Rejection | Fact | None
        if new.kind == LabelKind.FALSE_REJECTION:
            name, target = "rejection", session.get(Rejection, new.target_id)
        else:
            name, target = "fact", session.get(Fact, new.target_id)
        if target is None or target.namespace != scope.namespace:
            raise NotFound(name, new.target_id, scope.namespace)
        given = session.exec(
            select(Label).where(
                Label.namespace == scope.namespace,
                Label.kind == new.kind,
                Label.target_id == new.target_id,
                Label.labelled_by == new.by,
            )
        ).first()
        if given is None:
            given = Label(
                namespace=scope.namespace,
                kind=new.kind,
                target_id=new.target_id,
                note=new.note,
                labelled_by=new.by,
            )
            session.add(given)
            session.flush()
        return LabelPublic.model_validate(given, from_attributes=True)

    return scope.transaction(work)


def query(scope: Scope, where: LabelQuery) -> list[LabelPublic]:
    """A page of the labels ``where`` selects, newest first."""
    conditions = [col(Label.namespace) == scope.namespace]
    if where.kind is not None:
        conditions.append(col(Label.kind) == where.kind)
    if where.target_id is not None:
        conditions.append(col(Label.target_id) == where.target_id)
    with scope.session() as session:
        rows = session.exec(
            select(Label)
            .where(*conditions)
            .order_by(col(Label.created_at).desc(), col(Label.id))
            .offset(where.offset)
            .limit(where.limit)
        ).all()
        return [LabelPublic.model_validate(r, from_attributes=True) for r in rows]


def by_target(session: Session, namespace: str, kind: str) -> dict[str, list[LabelPublic]]:
    """Every label of ``kind`` in the namespace (oldest first), by target id. Labels are
    given by hand, one at a time: few enough to read at once for an export."""
    found: dict[str, list[LabelPublic]] = {}
    rows = session.exec(
        select(Label)
        .where(Label.namespace == namespace, Label.kind == kind)
        .order_by(col(Label.created_at), col(Label.id))
    ).all()
    for row in rows:
        found.setdefault(row.target_id, []).append(
            LabelPublic.model_validate(row, from_attributes=True)
        )
    return found


def drop(session: Session, namespace: str, target_ids: Collection[str]) -> None:
    """Delete the labels on these targets (an erase removes them with their rows)."""
    for chunk in db.chunks(sorted(target_ids)):
        chosen = col(Label.target_id).in_(chunk)
        session.exec(sa.delete(Label).where(col(Label.namespace) == namespace, chosen))
