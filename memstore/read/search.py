"""Search: ranking facts and evidence chunks by meaning and by text, fusing the two,
and expanding fact hits one hop through the entities they share.

The index ranks; SQL has the last word on what a hit may show (a status or a
citation may have changed in another process since the index was written).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, col, select

from memstore.errors import SearchIndexError
from memstore.index import outbox
from memstore.index.handle import IndexHandle
from memstore.index.rows import CHUNKS, FACTS, Filter, reciprocal_rank_fusion
from memstore.names import THE_USER, normalize_key
from memstore.read.facts import filter_conditions
from memstore.schemas import EvidenceHit, EvidenceQuery, FactPublic, SearchHit, SearchQuery
from memstore.storage.scope import Scope
from memstore.storage.tables import Entity, EntityAlias, Evidence, Fact, FactMember, FactStatus

if TYPE_CHECKING:
    from memstore.index.embeddings import Matrix
    from memstore.index.lance import SearchIndex

#: An expanded hit scores this fraction of the hit it was reached through.
EXPANSION_DECAY = 0.5
#: A held fact ranks as if its fused score were this fraction of it (``demote_held``):
#: first on both sides (meaning and text) it ties a verified hit first on one.
HELD_WEIGHT = 0.5


@dataclass(frozen=True)
class Ranked:
    """Ids best first, their fused scores, per id the hit's own fields (``vector_rank``,
    ``similarity``, ``text_rank``, ``relevance``), and ``rate``: the relevance of ids,
    read from their stored vectors."""

    order: list[str]
    fused: dict[str, float]
    sides: dict[str, dict[str, Any]]
    rate: Callable[[list[str]], dict[str, float]]

    def page(self, ids: Sequence[str], min_score: float | None, offset: int, k: int) -> list[str]:
        """``k`` of ``ids`` (in their order), after ``offset``, of those whose relevance
        reaches ``min_score`` (None: all); each has its ``relevance`` in ``sides``."""
        if min_score is None:
            chosen = list(ids[offset : offset + k])
            self.settle(chosen)
            return chosen
        self.settle(ids)
        return [i for i in ids if self.sides[i]["relevance"] >= min_score][offset : offset + k]

    def settle(self, ids: Sequence[str]) -> None:
        """Give each of ``ids`` its relevance (rows the vector side found have it)."""
        missing = [i for i in ids if "relevance" not in self.sides[i]]
        for i, score in self.rate(missing).items():
            self.sides[i]["relevance"] = score


def rank(
    handle: IndexHandle,
    table: str,
    query: str,
    mode: str,
    where: Filter,
    k: int,
    asked: Asked | None = None,
) -> Ranked:
    """The rows of ``table`` that best match ``query`` (see ``Ranked``).

    Each side returns more than ``k`` rows, so hits that SQL drops (a status changed
    by another process) or a ``min_score`` drops leave room for the next ones. The
    fused score (reciprocal rank fusion) only orders; ``relevance`` is what a threshold
    can use: the cosine similarity of the query's and the row's stored embeddings, clipped
    to [0, 1], whichever side found the row. The query is embedded first (even for the
    text side alone, for ``relevance``), then both sides run at once. ``asked``: what
    the query asks of entities many rows name (``asked_of``), where given (not in
    ``text`` mode): the full-text side reads the query without their names, and for each
    such entity, the rows naming it (or an entity of ``asked.rare``) nearest the query
    without its name are one more ranking.
    """
    index = handle.ready()
    window = max(3 * k, 30)
    clause = where.sql(table)
    of = () if asked is None or mode == "text" else asked.of
    with index_errors(handle):
        vectors = index.embed([query, *(q for _, q in of)])
        vector = vectors[0]
        naming = (
            [replace(where, any_entity_ids=[e, *asked.rare]).sql(table) for e, _ in of]
            if asked
            else []
        )
        by_vector, by_text, by_asked = index.ranked(
            table,
            None if mode == "text" else vector,
            None if mode == "vector" else (asked.text if of and asked else query),
            clause,
            window,
            list(zip(vectors[1:], naming, strict=True)),
        )
        fused = reciprocal_rank_fusion([by_vector, by_text, *by_asked])
        sides: dict[str, dict[str, Any]] = {i: {} for i in fused}
        vector_side = zip(by_vector.ids, by_vector.scores, strict=True)
        for position, (i, similarity) in enumerate(vector_side, start=1):
            sides[i].update(
                vector_rank=position, similarity=similarity, relevance=_clip(similarity)
            )
        for position, i in enumerate(by_text.ids, start=1):
            sides[i]["text_rank"] = position
        if by_text.vectors is not None:  # hits found by text alone: relevance at once
            found = zip(by_text.ids, _relevances(by_text.vectors, vector), strict=True)
            for i, score in found:
                sides[i].setdefault("relevance", score)

    def rate(ids: list[str]) -> dict[str, float]:
        with index_errors(handle):
            return relevance(index, table, vector, ids)

    # Equal fused scores (first on one side, second on the other; a tie on one side) go
    # by meaning: the vector side's similarity, else (found by text alone) the relevance
    # read for it.
    def meaning(i: str) -> tuple[float, float, float, str]:
        side = sides[i]
        return (-fused[i], -side.get("similarity", -1.0), -side.get("relevance", -1.0), i)

    order = sorted(fused, key=meaning)
    return Ranked(order, fused, sides, rate)


def relevance(
    index: SearchIndex, table: str, vector: Matrix, ids: Sequence[str]
) -> dict[str, float]:
    """Per id, the cosine similarity of its stored vector and ``vector`` (the query's)
    clipped to [0, 1] (0 for a row the index no longer holds)."""
    rows = index.rows(table, list(ids), ["id", "vector"])
    if not rows:
        return dict.fromkeys(ids, 0.0)
    stored = [row["vector"] for row in rows]
    found = dict(zip([row["id"] for row in rows], _relevances(stored, vector), strict=True))
    return {i: found.get(i, 0.0) for i in ids}


def _relevances(stored: Matrix | Sequence[Sequence[float]], vector: Matrix) -> list[float]:
    """Each stored vector's cosine similarity with ``vector`` (all unit length), clipped
    to [0, 1]."""
    import numpy as np  # here: commands that never search start without it

    similarities = np.asarray(stored, dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
    return [_clip(similarity) for similarity in similarities.tolist()]


def _clip(similarity: float) -> float:
    return min(1.0, max(0.0, similarity))


@contextmanager
def index_errors(handle: IndexHandle) -> Iterator[None]:
    """What LanceDB raises, as a SearchIndexError naming the index."""
    try:
        yield
    except Exception as exc:
        raise SearchIndexError(f"search index query failed ({handle.uri}): {exc}") from exc


def search_facts(
    scope: Scope, handle: IndexHandle, q: SearchQuery, wanted: list[str]
) -> list[SearchHit]:
    """The ``q.k`` facts in ``wanted`` statuses that best match ``q``, best first.

    ``hybrid`` mode fuses the ranking by meaning (cosine similarity of embeddings)
    with the full-text (BM25) ranking by reciprocal rank fusion; ``vector`` or
    ``text`` use one side. Filters: relation; entity (names or aliases, each a member
    of every hit; an unknown name raises NotFound); statuses (default: verified and
    unverified; ``["pending"]`` finds facts not yet checked); ``as_of`` (valid at that
    world time); recorded after / before; metadata (each given key holds an equal
    value, in the index and in SQL); ``min_score``: only hits whose relevance
    (see ``rank``) reaches it. ``expand`` appends, after the hits, up to ``k`` facts
    that share an entity with a hit (same filters but entity and ``min_score``: the
    graph picks them, not the query), each naming the hit in ``via``. ``offset``
    skips that many of the best hits: the page after ``k`` hits is ``offset=k``. Each
    page ranks the best ``offset + k`` afresh, and a deeper page ranks a wider window,
    so a hit near a page's edge can show on both pages or on neither when the two sides
    (meaning, text) disagree about it or its full-text score ties another's.
    """
    handle.ready()  # an index that cannot serve fails before anything is read
    with scope.session() as session:
        entity_ids = [scope.entity_id(session, name) for name in q.entity]
    asked = None if q.entity or q.mode == "text" else asked_of(scope, q.query)
    users = user_names(scope)  # read once for both queries below
    if asked is not None:  # the text side's query names the user as the query does
        asked = replace(asked, text=named_as(users, asked.text))
    q = q.model_copy(update={"query": named_as(users, q.query)})
    where = Filter(
        scope.namespace,
        statuses=wanted,
        relation=q.relation,
        entity_ids=entity_ids,
        as_of=q.as_of,
        closed_statuses=[FactStatus.SUPERSEDED] if q.statuses is None else [],
        recorded_after=q.recorded_after,
        recorded_before=q.recorded_before,
        metadata=q.metadata,
    )
    ranked = rank(handle, FACTS, q.query, q.mode, where, q.offset + q.k, asked)
    with scope.session() as session:
        # SQL has the last word on status: another process may have changed it.
        rows = {row["id"]: row for row in scope.fact_rows(session, ranked.order, wanted)}
        page = ranked.page([i for i in ranked.order if i in rows], q.min_score, q.offset, q.k)
        kept = demote_held(page, rows, ranked.fused)
        found = {f.id: f for f in scope.hydrate(session, [rows[i] for i in kept])}
    hits = [SearchHit(fact=found[i], score=ranked.fused[i], **ranked.sides[i]) for i in kept]
    if q.expand and hits:
        hits += expand(scope, hits, q, wanted, ranked.rate)
    return hits


def demote_held(page: Sequence[str], rows: dict[str, Any], fused: dict[str, float]) -> list[str]:
    """A page of hits, held facts (stored ``unverified``) demoted: each ranks as if its
    fused score were ``HELD_WEIGHT`` of what it is, so it comes below a verified hit
    about as relevant ("Maya has a peanut allergy" before a held "Maya is allergic to
    shellfish", for a query about shellfish) and above one that matches far less. The
    page itself is chosen by relevance alone, so a relevant held fact is never pushed
    off it by a less relevant verified one."""

    def weighted(i: str) -> float:
        held = rows[i]["status"] != FactStatus.VERIFIED
        return fused[i] * (HELD_WEIGHT if held else 1.0)

    return sorted(page, key=lambda i: -weighted(i))


#: A run of capitalised words: a name as a query says it ("Nadia", "Greg Hall").
_NAME_RUN = re.compile(r"(?<![\w'\u2019])[A-Z][\w.&'\u2019-]*(?:\s+[A-Z][\w.&'\u2019-]*)*")
#: Facts that share a name before a query's meaning is also read without it: a page of
#: hits at search's default ``k``, which the name alone could fill (``asked_of``). Not
#: ``k`` itself, so that every page of one query ranks alike.
SHARED = 10
#: Entities a query is asked of at most (one more ranking each).
_MOST_ASKED = 2
#: Words of the longest name looked up.
_LONGEST_NAME = 4
#: Words that ask, and say nothing of what is asked about.
_ASKING = frozenset(
    """a an the and or of to in on at for with about from by is are was were be been
    do does did has have had what who whom whose when where which why how tell me us
    you your i my can could would will should please any some that this it its""".split()
)


@dataclass(frozen=True)
class Asked:
    """What a query asks of the entities it names that many facts share (``asked_of``):
    ``text``, the query without their names; ``of``, per entity, its id and the query
    without its name alone; ``rare``, the entities it names that fewer facts name."""

    text: str
    of: tuple[tuple[str, str], ...]
    rare: tuple[str, ...] = ()


def asked_of(scope: Scope, query: str) -> Asked | None:
    """What ``query`` asks of the entities it names that ``SHARED`` or more facts name
    (at most ``_MOST_ASKED``, the longest names first), or None where it names none or
    would be left asking nothing.

    A short statement is embedded mostly as its names: "Nadia is jealous." is nearer
    "What new position did Nadia get at work?" than "Nadia got promoted to charge
    nurse." is, and in a store with many facts about Nadia the ones that say least come
    first; by full text, a name many facts share orders them by length, the shortest
    first. Asked without the name ("What new position did get at work?"), the question
    is nearest what it asks of her, among the facts naming her (or an entity the query
    names that few facts name: "Did Zed like Nadia's cake?" asks it of Zed's few facts
    too). A name fewer facts share is kept: it picks out its facts by itself ("the
    Ethiopian restaurant"); and so are the other names ("Sybil Smith speaks Spanish."
    asks "speaks Spanish." of Sybil Smith and "Sybil Smith speaks ." of Spanish)."""
    spans: list[tuple[int, int]] = []
    for run in _NAME_RUN.finditer(query):
        words = [
            (run.start() + m.start(), run.start() + m.end())
            for m in re.finditer(r"\S+", run.group(0))
        ]
        for i in range(len(words)):
            for j in range(i, min(len(words), i + _LONGEST_NAME)):
                spans.append((words[i][0], words[j][1]))
    user = rf"(?<!\w){re.escape(THE_USER)}(?!\w)"
    spans += [m.span() for m in re.finditer(user, query, flags=re.IGNORECASE)]
    keys: dict[str, list[tuple[int, int]]] = {}
    for start, end in spans:
        name = re.sub(r"(?:['\u2019][sS]|[.,;:!?])+$", "", query[start:end])
        keys.setdefault(normalize_key(name), []).append((start, start + len(name)))
    if not keys:
        return None
    with scope.session() as session:
        named = dict(
            session.exec(
                select(EntityAlias.key, EntityAlias.entity_id).where(
                    EntityAlias.namespace == scope.namespace, col(EntityAlias.key).in_(list(keys))
                )
            ).all()
        )
        shared = {e for e in set(named.values()) if _facts_naming(scope, session, e) >= SHARED}
    places: dict[str, list[tuple[int, int]]] = {}  # per shared entity, where it is named
    taken: list[tuple[int, int]] = []  # the longest names first, none overlapping
    mentioned: dict[str, None] = {}  # the entities of those names, in order
    for key, found in sorted(keys.items(), key=lambda kv: (-len(kv[0]), kv[0])):
        for start, end in found if key in named else []:
            if all(end <= a or start >= b for a, b in taken):
                taken.append((start, end))
                mentioned.setdefault(named[key], None)
                if named[key] in shared:
                    places.setdefault(named[key], []).append((start, end))
    chosen = list(places)[:_MOST_ASKED]
    of = [(e, q) for e in chosen if _asks(q := _without(query, places[e]))]
    text = _without(query, [span for e in chosen for span in places[e]])
    rare = tuple(e for e in mentioned if e not in shared)
    return Asked(text if _asks(text) else query, tuple(of), rare) if of else None


def _without(query: str, spans: Sequence[tuple[int, int]]) -> str:
    """``query`` without the names at ``spans`` (and the "'s" after one)."""
    for start, end in sorted(spans, reverse=True):
        end += 2 if query[end : end + 2].lower() in ("'s", "\u2019s") else 0
        query = query[:start] + query[end:]
    return " ".join(query.split())


def _asks(query: str) -> bool:
    """Whether ``query`` holds a word that says what it asks about."""
    return any(w not in _ASKING for w in re.findall(r"\w+", query.lower()))


def _facts_naming(scope: Scope, session: Session, entity_id: str) -> int:
    """How many facts name ``entity_id``, counted up to ``SHARED`` (a hub's are not all
    read: no DISTINCT, which PostgreSQL sorts whole before its LIMIT; a fact naming it in
    two roles counts once, so a count may fall short)."""
    naming = (
        select(FactMember.fact_id)
        .where(FactMember.namespace == scope.namespace, FactMember.entity_id == entity_id)
        .limit(SHARED)
    )
    return len(set(session.exec(naming).all()))


def as_named(scope: Scope, query: str) -> str:
    """``query`` naming the user by every name its facts may use: once "the user" and
    "Maya" name one entity (``remember_conversation(user_name=)``), "Where does the user
    live?" is asked as "Where does the user (Maya) live?", so facts written either way
    match, by meaning and by words."""
    return named_as(user_names(scope), query)


def named_as(found: tuple[str, list[str]] | None, query: str) -> str:
    """``as_named`` with the user's names (``user_names``) already read."""
    if found is None or not found[1]:  # nobody, or the user has one name only
        return query
    name, others = found
    names = sorted({name, *others}, key=len, reverse=True)
    for mention in names:
        match = re.search(rf"(?<!\w){re.escape(mention)}(?!\w)", query, flags=re.IGNORECASE)
        if match is not None:
            rest = ", ".join(n for n in sorted(names) if n.lower() != mention.lower())
            return f"{query[: match.end()]} ({rest}){query[match.end() :]}"
    return query


def expand(
    scope: Scope,
    hits: list[SearchHit],
    q: SearchQuery,
    wanted: list[str],
    rate: Callable[[list[str]], dict[str, float]],
) -> list[SearchHit]:
    """Facts one hop from the hits (sharing an entity), in hit order, at most ``k``;
    ``rate`` gives their relevance to the query (which does not select them)."""
    seen = {h.fact.id for h in hits}
    extra: list[tuple[FactPublic, SearchHit]] = []
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
            query = query.where(*filter_conditions(scope, q))
            for fact in scope.hydrate(session, list(session.exec(query).all())):
                seen.add(fact.id)
                extra.append((fact, hit))
            if len(extra) >= q.k:
                break
    scores = rate([fact.id for fact, _ in extra])
    return [
        SearchHit(
            fact=fact,
            score=hit.score * EXPANSION_DECAY,
            relevance=scores[fact.id],
            via=hit.fact.id,
        )
        for fact, hit in extra
    ]


def search_evidence(scope: Scope, handle: IndexHandle, q: EvidenceQuery) -> list[EvidenceHit]:
    """The ``q.k`` chunks that best match ``q``, best first, from evidence that backs live
    memory (not evidence only rejections or retracted facts cite). ``source``: one or
    several sources (``inline`` or a URI); ``current_only``: skip versions a refreshed
    source replaced; recorded after / before: when the evidence was stored;
    ``min_score``: only chunks whose relevance (see ``rank``) reaches it."""
    index = handle.ready()
    where = Filter(
        scope.namespace,
        statuses=["current"] if q.current_only else None,
        sources=q.source,
        recorded_after=q.recorded_after,
        recorded_before=q.recorded_before,
    )
    ranked = rank(handle, CHUNKS, q.query, q.mode, where, q.k)
    chunks = {
        r["id"]: r for r in index.rows(CHUNKS, ranked.order, ["id", "evidence_id", "start", "end"])
    }
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
        current = outbox.current_ids(session, rows.values())
        # SQL has the last word: a fact citing it may have been retracted meanwhile.
        live = outbox.live_ids(session, list(rows.values()))

    def shown(chunk_id: str) -> bool:
        chunk = chunks.get(chunk_id)
        row = rows.get(chunk["evidence_id"]) if chunk else None
        return row is not None and row.id in live and (not q.current_only or row.id in current)

    hits: list[EvidenceHit] = []
    for chunk_id in ranked.page([i for i in ranked.order if shown(i)], q.min_score, 0, q.k):
        chunk = chunks[chunk_id]
        row = rows[chunk["evidence_id"]]
        hits.append(
            EvidenceHit(
                evidence_id=row.id,
                source=row.source,
                version=row.version,
                current=row.id in current,
                start=chunk["start"],
                end=chunk["end"],
                text=row.text[chunk["start"] : chunk["end"]],
                score=ranked.fused[chunk_id],
                **ranked.sides[chunk_id],
            )
        )
    return hits


def user_names(scope: Scope) -> tuple[str, list[str]] | None:
    """The entity "the user" names: its own name and its other names (None when nothing
    answers to "the user")."""
    owner = (
        select(EntityAlias.entity_id)
        .where(EntityAlias.namespace == scope.namespace)
        .where(EntityAlias.key == normalize_key(THE_USER))
        .scalar_subquery()
    )
    query = (
        select(Entity.name, EntityAlias.alias)
        .join(EntityAlias, col(EntityAlias.entity_id) == col(Entity.id))
        .where(col(Entity.id) == owner)
    )
    with scope.session() as session:
        rows = session.exec(query).all()
    if not rows:
        return None
    name = rows[0][0]
    return name, sorted({a for _, a in rows if normalize_key(a) != normalize_key(name)})
