"""Near duplicates of a new fact, which a write reports: live facts with the same
members whose statements embed close to it. (The live fact a new one repeats exactly,
same normalized statement and members, answers the write: ``WriteCache.same_fact``.)"""

from __future__ import annotations

from typing import Any

from memstore.index_handle import IndexHandle
from memstore.index_rows import FACTS, Filter
from memstore.models import ACTIVE_STATUSES
from memstore.schemas import FactPublic, NearDuplicate
from memstore.scope import Scope

#: Cosine similarity from which a new fact with the same members is reported as a near duplicate.
DEFAULT_NEAR_DUPLICATE = 0.9


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
    ranking = handle.ready().by_vector(FACTS, vector, where.sql(FACTS), 10)
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
