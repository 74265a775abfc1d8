"""Duplicates of a new fact: the live fact it repeats exactly (same normalized statement
and members: the write is answered with it), and the near duplicates a write reports
(same members, a statement that embeds close to it)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from memstore.index_handle import IndexHandle
from memstore.models import ACTIVE_STATUSES, Fact, FactMember
from memstore.names import statement_hash
from memstore.schemas import FactCreate, FactPublic, NearDuplicate
from memstore.scope import Scope
from memstore.vectors import FACTS, Filter

#: Cosine similarity from which a new fact with the same members is reported as a near duplicate.
DEFAULT_NEAR_DUPLICATE = 0.9


def same_fact(
    scope: Scope, session: Session, new: FactCreate, member_ids: list[str]
) -> Fact | None:
    """A live fact with the same normalized statement and the same member entities."""
    if any(m.startswith("new:") for m in member_ids):
        return None  # an entity nobody has named yet: nothing can equal it
    wanted = set(member_ids)
    for row in session.exec(
        select(Fact).where(
            Fact.namespace == scope.namespace,
            Fact.statement_hash == statement_hash(new.statement),
            col(Fact.status).in_(ACTIVE_STATUSES),
        )
    ).all():
        members = session.exec(select(FactMember.entity_id).where(FactMember.fact_id == row.id))
        if set(members.all()) == wanted:
            return row
    return None


def near_duplicates(
    scope: Scope,
    handle: IndexHandle,
    threshold: float,
    fact: FactPublic,
    vector: Any,
    earlier: list[FactPublic],
    earlier_vectors: Any,
) -> list[NearDuplicate]:
    """Live facts with the same member entities whose statements embed at least
    ``threshold`` close to this one: those in the index, and those written earlier in
    the same batch."""
    entities = {m.entity_id for m in fact.members}
    where = Filter(
        scope.namespace,
        statuses=sorted(ACTIVE_STATUSES),
        entity_ids=sorted(entities),
        exclude_ids=[fact.id, *(f.id for f in earlier)],
    )
    ranking, _ = handle.ready().rank(FACTS, vector, None, where.sql(FACTS), 10)
    close = {i: s for i, s in zip(ranking.ids, ranking.scores, strict=True) if s >= threshold}
    with scope.session() as session:
        found = [
            NearDuplicate(fact_id=f.id, statement=f.statement, similarity=close[f.id])
            for f in scope.facts_by_id(session, list(close))
            if {m.entity_id for m in f.members} == entities
        ]
    for other, other_vector in zip(earlier, earlier_vectors, strict=True):
        similarity = float(vector @ other_vector)
        if similarity >= threshold and entities == {m.entity_id for m in other.members}:
            found.append(
                NearDuplicate(fact_id=other.id, statement=other.statement, similarity=similarity)
            )
    return sorted(found, key=lambda d: -d.similarity)
