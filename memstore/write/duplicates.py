"""Near duplicates of a new fact, which a write reports: live facts with the same
members whose statements embed close to it. (The live fact a new one repeats exactly,
same normalized statement and members, answers the write: ``WriteCache.same_fact``.)"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlmodel import Session, col

from memstore.index.handle import IndexHandle
from memstore.index.rows import FACTS, Filter
from memstore.schemas import FactPublic, NearDuplicate
from memstore.storage import db
from memstore.storage.scope import Scope
from memstore.storage.tables import ACTIVE_STATUSES, Fact, FactMember

if TYPE_CHECKING:
    from memstore.index.lance import SearchIndex

#: Cosine similarity from which a new fact with the same members is reported as a near duplicate.
DEFAULT_NEAR_DUPLICATE = 0.9
#: Near duplicates among stored facts reported per new fact, the most similar first.
REPORTED = 10
#: Facts of one member entity that SQL reads to find a new fact's candidates (the live
#: facts with the same members), compared by their stored vectors. When each of a
#: fact's entities is in more facts, the index is asked by vector instead.
CANDIDATES = 64

#: Up to ``:cap`` facts that the entity ``:entity`` is a member of in ``:namespace``,
#: from the members' (namespace, entity_id, ...) index alone.
_FACTS_OF = (
    sa.select(col(FactMember.fact_id))
    .where(col(FactMember.namespace) == sa.bindparam("namespace"))
    .where(col(FactMember.entity_id) == sa.bindparam("entity"))
    .limit(sa.bindparam("cap", type_=sa.Integer))
)
#: The member entities and the statement of each fact of ``:ids`` live in ``:namespace``.
_LIVE_MEMBERS = (
    sa.select(col(FactMember.fact_id), col(FactMember.entity_id), col(Fact.statement))
    .join(Fact, col(Fact.id) == col(FactMember.fact_id))
    .where(db.in_list(col(FactMember.fact_id), "ids"))
    .where(col(Fact.namespace) == sa.bindparam("namespace"))
    .where(col(Fact.status).in_(sorted(ACTIVE_STATUSES)))
)

#: A live fact's member entities and statement.
Live = tuple[frozenset[str], str]


def near_duplicates(
    scope: Scope,
    handle: IndexHandle,
    threshold: float,
    facts: list[FactPublic],
    vectors: Any,
    candidates: int = CANDIDATES,
) -> list[list[NearDuplicate]]:
    """For each new fact of a batch (``vectors``: their statements' embeddings, in order),
    the live facts with the same member entities whose statements embed at least
    ``threshold`` close to it: up to ``REPORTED`` stored ones, then those written
    before it in the batch; most similar first.

    A fact one of whose entities is in at most ``candidates`` facts finds its stored
    candidates in SQL and compares their vectors, read from the index by id for the
    whole batch at once (a fact the index does not hold yet is not reported). A fact
    whose entities are each in more asks the index for the facts nearest its vector
    that hold all its entities (one query each, run at once)."""
    index = handle.ready()
    wanted = [members(fact) for fact in facts]
    # A fact is never its own near duplicate, nor one of those before it in the batch
    # (they are compared below), stored before the write or not (a deduplicated one).
    first: dict[str, int] = {}  # each id's first place in the batch
    for n, fact in enumerate(facts):
        first.setdefault(fact.id, n)

    def skipped(n: int, fact_id: str) -> bool:
        return first.get(fact_id, n + 1) <= n

    picked: list[set[str] | None] = []
    with scope.session() as session:
        known: dict[str, list[str]] = {}  # the facts of an entity, read once a batch
        for entities in wanted:
            picked.append(_candidates(session, scope.namespace, entities, candidates, known))
        live = _live(session, scope.namespace, {i for ids in picked if ids for i in ids})
    similar = _by_stored_vectors(index, picked, live, wanted, vectors, skipped)
    asked = [n for n, ids in enumerate(picked) if ids is None]
    if asked:
        queries = [
            (vectors[n], _holding(scope.namespace, wanted[n], [f.id for f in facts[: n + 1]]))
            for n in asked
        ]
        rankings = index.by_vectors(FACTS, queries, REPORTED)
        with scope.session() as session:
            found = {i for ranking in rankings for i in ranking.ids} - live.keys()
            live.update(_live(session, scope.namespace, found))
        for n, ranking in zip(asked, rankings, strict=True):
            similar[n] = {  # the nearest hold all the fact's entities, maybe more
                i: score
                for i, score in zip(ranking.ids, ranking.scores, strict=True)
                if i in live and live[i][0] == wanted[n]
            }
    reported: list[list[NearDuplicate]] = []
    for n in range(len(facts)):
        dups = [
            NearDuplicate(fact_id=i, statement=live[i][1], similarity=score)
            for i, score in similar[n].items()
            if score >= threshold
        ]
        dups = sorted(dups, key=lambda d: (-d.similarity, d.fact_id))[:REPORTED]
        earlier = (vectors[:n] @ vectors[n]).tolist() if n else []
        for m, score in enumerate(earlier):
            if score >= threshold and wanted[m] == wanted[n]:
                other = facts[m]
                dups.append(
                    NearDuplicate(fact_id=other.id, statement=other.statement, similarity=score)
                )
        reported.append(sorted(dups, key=lambda d: -d.similarity))
    return reported


def _by_stored_vectors(
    index: SearchIndex,
    picked: list[set[str] | None],
    live: dict[str, Live],
    wanted: list[frozenset[str]],
    vectors: Any,
    skipped: Callable[[int, str], bool],
) -> list[dict[str, float]]:
    """Per fact, the similarity of each SQL candidate (``picked``) that is live, has the
    fact's members and is in the index, read from the index by id for all at once."""
    same = [
        sorted(i for i in ids if i in live and live[i][0] == wanted[n] and not skipped(n, i))
        if ids is not None
        else []
        for n, ids in enumerate(picked)
    ]
    needed = sorted({i for ids in same for i in ids})
    stored = {row["id"]: row["vector"] for row in index.rows(FACTS, needed, ["id", "vector"])}
    similar: list[dict[str, float]] = [{} for _ in picked]
    for n, ids in enumerate(same):
        ids = [i for i in ids if stored.get(i) is not None]
        if ids:
            scores = (_matrix([stored[i] for i in ids]) @ vectors[n]).tolist()
            similar[n] = dict(zip(ids, scores, strict=True))
    return similar


def members(fact: FactPublic) -> frozenset[str]:
    """The ids of a fact's member entities."""
    return frozenset(m.entity_id for m in fact.members)


def _candidates(
    session: Session,
    namespace: str,
    entities: frozenset[str],
    cap: int,
    known: dict[str, list[str]],
) -> set[str] | None:
    """The facts of the entity of ``entities`` in the fewest facts, if it is in at most
    ``cap`` (None: each is in more). ``known``: the facts read before, by entity (an
    entity in more than ``cap`` facts holds ``cap + 1`` of them)."""
    fewest: list[str] | None = None
    for entity in sorted(entities):
        if entity not in known:
            params = {"namespace": namespace, "entity": entity, "cap": cap + 1}
            known[entity] = list(session.connection().execute(_FACTS_OF, params).scalars())
        if len(known[entity]) <= cap and (fewest is None or len(known[entity]) < len(fewest)):
            fewest = known[entity]
    return None if fewest is None else set(fewest)


def _live(session: Session, namespace: str, ids: Collection[str]) -> dict[str, Live]:
    """The member entities and statement of each of these facts that is live."""
    entities: dict[str, set[str]] = {}
    statements: dict[str, str] = {}
    for chunk in db.chunks(sorted(ids)):
        params = {"ids": list(chunk), "namespace": namespace}
        for fact_id, entity_id, statement in session.connection().execute(_LIVE_MEMBERS, params):
            entities.setdefault(fact_id, set()).add(entity_id)
            statements[fact_id] = statement
    return {i: (frozenset(entities[i]), statements[i]) for i in entities}


def _holding(namespace: str, entities: frozenset[str], skipped: Collection[str]) -> str:
    """The index filter of live facts holding all ``entities``, less ``skipped``."""
    return Filter(
        namespace,
        statuses=sorted(ACTIVE_STATUSES),
        entity_ids=sorted(entities),
        exclude_ids=sorted(skipped),
    ).sql(FACTS)


def _matrix(rows: list[Any]) -> Any:
    import numpy as np  # here: commands that never write start without it

    return np.asarray(rows, dtype=np.float32)
