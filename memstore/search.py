"""Search: ranking facts and evidence chunks by meaning and by text, fusing the two,
and expanding fact hits one hop through the entities they share.

The index ranks; SQL has the last word on what a hit may show (a status or a
citation may have changed in another process since the index was written).
"""

from __future__ import annotations

from typing import Any

from sqlmodel import col, select

from memstore import indexing
from memstore.errors import StorageError
from memstore.index_handle import IndexHandle
from memstore.models import Evidence, Fact, FactMember, FactStatus
from memstore.reads import valid_at
from memstore.schemas import EvidenceHit, EvidenceQuery, SearchHit, SearchQuery
from memstore.scope import Scope
from memstore.vectors import CHUNKS, FACTS, Filter, reciprocal_rank_fusion

#: An expanded hit scores this fraction of the hit it was reached through.
EXPANSION_DECAY = 0.5

Ranked = tuple[list[str], dict[str, float], dict[str, dict[str, Any]]]


def rank(handle: IndexHandle, table: str, query: str, mode: str, where: Filter, k: int) -> Ranked:
    """Ids best first, their fused scores, and per id where it ranked on each side
    (``vector_rank``, ``similarity``, ``text_rank``: the hits' fields).

    Each side returns more than ``k`` rows, so hits that SQL drops (a status changed
    by another process) leave room for the next ones.
    """
    index = handle.ready()
    window = max(3 * k, 30)
    try:
        vector = index.embed([query])[0] if mode != "text" else None
        by_vector, by_text = index.rank(
            table, vector, query if mode != "vector" else None, where.sql(table), window
        )
    except Exception as exc:
        raise StorageError(f"search index query failed ({handle.uri}): {exc}") from exc
    fused = reciprocal_rank_fusion([by_vector, by_text])
    sides: dict[str, dict[str, Any]] = {i: {} for i in fused}
    vector_side = zip(by_vector.ids, by_vector.scores, strict=True)
    for position, (i, similarity) in enumerate(vector_side, start=1):
        sides[i].update(vector_rank=position, similarity=similarity)
    for position, i in enumerate(by_text.ids, start=1):
        sides[i]["text_rank"] = position
    # Equal fused scores (first on one side, second on the other) go by meaning.
    order = sorted(fused, key=lambda i: (-fused[i], -sides[i].get("similarity", -1.0), i))
    return order, fused, sides


def search_facts(
    scope: Scope, handle: IndexHandle, q: SearchQuery, wanted: list[str]
) -> list[SearchHit]:
    """The ``q.k`` facts in ``wanted`` statuses that best match ``q``, best first.

    ``hybrid`` mode fuses the ranking by meaning (cosine similarity of embeddings)
    with the full-text (BM25) ranking by reciprocal rank fusion; ``vector`` or
    ``text`` use one side. Filters: relation; entity (names or aliases, each a member
    of every hit; an unknown name raises NotFound); statuses (default: verified and
    unverified; ``["pending"]`` finds facts not yet checked); ``as_of`` (valid at that
    world time); recorded after / before. ``expand`` appends, after the hits, up to
    ``k`` facts that share an entity with a hit (same filters but entity), each
    naming the hit in ``via``.
    """
    handle.ready()
    with scope.session() as session:
        entity_ids = [scope.resolve(session, name).id for name in q.entity]
    where = Filter(
        scope.namespace,
        statuses=wanted,
        relation=q.relation,
        entity_ids=entity_ids,
        as_of=q.as_of,
        closed_statuses=[FactStatus.SUPERSEDED] if q.statuses is None else [],
        recorded_after=q.recorded_after,
        recorded_before=q.recorded_before,
    )
    order, fused, sides = rank(handle, FACTS, q.query, q.mode, where, q.k)
    with scope.session() as session:
        # SQL has the last word on status: another process may have changed it.
        found = {f.id: f for f in scope.facts_by_id(session, order, wanted)}
    hits = [SearchHit(fact=found[i], score=fused[i], **sides[i]) for i in order if i in found][
        : q.k
    ]
    if q.expand and hits:
        hits += expand(scope, hits, q, wanted)
    return hits


def expand(
    scope: Scope, hits: list[SearchHit], q: SearchQuery, wanted: list[str]
) -> list[SearchHit]:
    """Facts one hop from the hits (sharing an entity), in hit order, at most ``k``."""
    seen = {h.fact.id for h in hits}
    extra: list[SearchHit] = []
    with scope.session() as session:
        for hit in hits:
            query = (
                select(Fact)
                .join(FactMember, col(FactMember.fact_id) == Fact.id)
                .where(
                    FactMember.namespace == scope.namespace,
                    col(FactMember.entity_id).in_([m.entity_id for m in hit.fact.members]),
                    Fact.namespace == scope.namespace,
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
                query = query.where(*valid_at(q.as_of, history=q.statuses is None))
            if q.recorded_after is not None:
                query = query.where(col(Fact.recorded_at) >= q.recorded_after)
            if q.recorded_before is not None:
                query = query.where(col(Fact.recorded_at) < q.recorded_before)
            for fact in scope.hydrate(session, list(session.exec(query).all())):
                seen.add(fact.id)
                extra.append(
                    SearchHit(fact=fact, score=hit.score * EXPANSION_DECAY, via=hit.fact.id)
                )
            if len(extra) >= q.k:
                break
    return extra


def search_evidence(scope: Scope, handle: IndexHandle, q: EvidenceQuery) -> list[EvidenceHit]:
    """The ``q.k`` chunks that best match ``q``, best first, from evidence that backs live
    memory (not evidence only rejections or retracted facts cite). ``source``: one or
    several sources (``inline`` or a URI); ``current_only``: skip versions a refreshed
    source replaced; recorded after / before: when the evidence was stored."""
    index = handle.ready()
    where = Filter(
        scope.namespace,
        statuses=["current"] if q.current_only else None,
        sources=q.source,
        recorded_after=q.recorded_after,
        recorded_before=q.recorded_before,
    )
    order, fused, sides = rank(handle, CHUNKS, q.query, q.mode, where, q.k)
    chunks = {r["id"]: r for r in index.rows(CHUNKS, order, ["id", "evidence_id", "start", "end"])}
    hits: list[EvidenceHit] = []
    with scope.session() as session:
        rows: dict[str, Evidence] = {
            e.id: e
            for e in session.exec(
                select(Evidence).where(
                    Evidence.namespace == scope.namespace,
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
