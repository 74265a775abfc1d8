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
    scope: Scope, handle: IndexHandle, threshold: float, facts: list[FactPublic], vectors: Any
) -> list[list[NearDuplicate]]:
    """For each new fact of a batch (``vectors``: their statements' embeddings, in order),
    the live facts with the same member entities whose statements embed at least
    ``threshold`` close to it: those in the index (one query each, run at once), and
    those written before it in the batch. Most similar first."""
    wheres = [
        Filter(
            scope.namespace,
            statuses=sorted(ACTIVE_STATUSES),
            entity_ids=sorted({m.entity_id for m in fact.members}),
            exclude_ids=[f.id for f in facts[: n + 1]],
        ).sql(FACTS)
        for n, fact in enumerate(facts)
    ]
    rankings = handle.ready().by_vectors(FACTS, list(zip(vectors, wheres, strict=True)), 10)
    close = [
        {i: s for i, s in zip(r.ids, r.scores, strict=True) if s >= threshold} for r in rankings
    ]
    with scope.session() as session:
        wanted = list(dict.fromkeys(i for c in close for i in c))
        stored = {f.id: f for f in scope.facts_by_id(session, wanted)} if wanted else {}
    found: list[list[NearDuplicate]] = []
    for n, fact in enumerate(facts):
        entities = members(fact)
        dups = [
            NearDuplicate(fact_id=i, statement=stored[i].statement, similarity=similarity)
            for i, similarity in close[n].items()
            if i in stored and members(stored[i]) == entities
        ]
        earlier = (vectors[:n] @ vectors[n]).tolist() if n else []
        for other, similarity in zip(facts[:n], earlier, strict=True):
            if similarity >= threshold and entities == members(other):
                dups.append(
                    NearDuplicate(
                        fact_id=other.id, statement=other.statement, similarity=similarity
                    )
                )
        found.append(sorted(dups, key=lambda d: -d.similarity))
    return found


def members(fact: FactPublic) -> set[str]:
    """The ids of a fact's member entities."""
    return {m.entity_id for m in fact.members}
