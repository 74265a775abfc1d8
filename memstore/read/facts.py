"""Reads of one namespace's memory: facts, their history and verifications, entities,
evidence and counts. Inputs arrive checked (``memstore.inputs``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import Session, and_, col, or_, select

from memstore.audit import rejections
from memstore.errors import InvalidInput, NotFound
from memstore.index import outbox
from memstore.schemas import (
    EntityPublic,
    EvidencePublic,
    FactFilters,
    FactList,
    FactListQuery,
    FactPage,
    FactPublic,
    RejectionFilter,
    StoreStats,
    VerificationPublic,
)
from memstore.storage import cursors, db, schedule
from memstore.storage.cursors import Page, Position
from memstore.storage.scope import FACT_COLUMNS, Scope
from memstore.storage.tables import (
    Entity,
    Evidence,
    Fact,
    FactMember,
    FactStatus,
    Verification,
    utcnow,
)


def valid_at(as_of: datetime, *, history: bool) -> list[Any]:
    """SQL conditions: the fact holds at world time ``as_of`` (half-open validity), the
    SQL mirror of ``hypergraph.holds_at`` (tests/memstore/read/test_world_time.py keeps
    them in step).

    With ``history`` (a read on default statuses), a superseded fact counts only with
    a closed world time: facts superseded before ``supersede`` closed it (no
    ``valid_to``) would otherwise seem to hold forever beside their correction.
    """
    conditions = [
        or_(col(Fact.valid_from).is_(None), col(Fact.valid_from) <= as_of),
        or_(col(Fact.valid_to).is_(None), col(Fact.valid_to) > as_of),
    ]
    if history:
        superseded = col(Fact.status) == FactStatus.SUPERSEDED
        conditions.append(or_(~superseded, col(Fact.valid_to).is_not(None)))
    return conditions


def metadata_matches(scope: Scope, wanted: Mapping[str, Any]) -> list[Any]:
    """SQL conditions: the fact's metadata holds every key of ``wanted`` with an equal
    value (``memstore.metadata``); none for an empty filter."""
    return db.json_matches(scope.engine.dialect.name, col(Fact.meta), wanted)


def filter_conditions(scope: Scope, q: FactFilters) -> list[Any]:
    """SQL conditions of a read's filters but its entities and statuses: relation,
    metadata, world time (``as_of``; on default statuses superseded facts need a closed
    validity) and recording time."""
    found = metadata_matches(scope, q.metadata)
    if q.relation is not None:
        found.append(col(Fact.relation) == q.relation)
    if q.as_of is not None:
        found += valid_at(q.as_of, history=q.statuses is None)
    if q.recorded_after is not None:
        found.append(col(Fact.recorded_at) >= q.recorded_after)
    if q.recorded_before is not None:
        found.append(col(Fact.recorded_at) < q.recorded_before)
    return found


def get_fact(scope: Scope, fact_id: str) -> FactPublic:
    """A fact by id, whatever its status."""
    with scope.session() as session:
        return scope.hydrate(session, [scope.get_row(fact_id, session)])[0]


def facts_about(
    scope: Scope,
    entity: str,
    wanted: list[str],
    relation: str | None,
    as_of: datetime | None,
    history: bool,
    metadata: Mapping[str, Any],
    page: Page,
) -> FactList:
    """One page of the facts in ``wanted`` statuses that have ``entity`` as a member,
    newest first (by recorded_at, then id, both descending); with ``as_of``, those valid
    then (``history``: superseded facts need a closed validity); with ``metadata``,
    those whose metadata holds it. The members' (namespace, entity_id, recorded_at,
    fact_id) index gives the order and the keyset: a page reads about ``limit`` rows,
    however many facts the entity has, in one statement (``_about_statement``)."""
    with scope.session() as session:
        target = scope.entity_id(session, entity)
        read = cursors.listing(
            scope.namespace,
            {"read": "facts_about", "entity": target, "relation": relation,
             "statuses": sorted(wanted), "metadata": metadata},
        )  # fmt: skip
        after = cursors.start(page.cursor, read)
        at_time = as_of is not None
        shape = (relation is not None, at_time, history and at_time, after is not None)
        if metadata:
            statement = _about_query(*shape, metadata_matches(scope, metadata))
        else:
            statement = _about_statement(*shape)
        params: dict[str, Any] = {
            "namespace": scope.namespace,
            "entity": target,
            "statuses": wanted,
            "relation": relation,
            "as_of": as_of,
            "limit": page.limit + 1,
        }
        if after is not None:
            params |= {"after_at": after.recorded_at, "after_id": after.id}
        rows = db.dicts(session.connection().execute(statement, params))
        facts = scope.hydrate(session, rows[: page.limit])
    return FactList(facts, cursors.after_page(facts, len(rows) > page.limit, read))


@lru_cache(maxsize=32)
def _about_statement(
    by_relation: bool, at_time: bool, history: bool, paged: bool
) -> sa.Select[Any]:
    """``facts_about``'s statement for each set of its optional filters but metadata,
    built once: building it and its cache key cost as much as running it."""
    return _about_query(by_relation, at_time, history, paged, ())


def _about_query(
    by_relation: bool, at_time: bool, history: bool, paged: bool, where: Sequence[Any]
) -> sa.Select[Any]:
    """The rows (``FACT_COLUMNS``) of the newest ``:limit`` facts in ``:statuses`` with
    the entity ``:entity`` as a member in namespace ``:namespace``, newest first: of
    ``:relation`` (``by_relation``), holding at ``:as_of`` (``at_time``), before the
    keyset (``:after_at``, ``:after_id``) (``paged``) and matching ``where``. The page
    is picked from the members' index (distinct: an entity in two roles of one fact),
    then its fact rows are joined by primary key."""
    at: Any = col(FactMember.recorded_at)  # its column type types the keyset
    fact_id = col(FactMember.fact_id)
    query: sa.Select[Any] = (
        sa.select(fact_id.label("page_id"), at.label("page_at"))
        .join(Fact, col(Fact.id) == fact_id)
        .where(
            col(FactMember.namespace) == sa.bindparam("namespace"),
            col(FactMember.entity_id) == sa.bindparam("entity"),
            col(Fact.namespace) == sa.bindparam("namespace"),
            db.in_list(col(Fact.status), "statuses"),
            *where,
        )
    )
    if by_relation:
        query = query.where(col(Fact.relation) == sa.bindparam("relation"))
    if at_time:
        query = query.where(*valid_at(cast("datetime", sa.bindparam("as_of")), history=history))
    if paged:
        keyset = sa.tuple_(sa.bindparam("after_at", type_=at.type), sa.bindparam("after_id"))
        query = query.where(sa.tuple_(at, fact_id) < keyset)
    newest = (
        query.distinct()
        .order_by(at.desc(), fact_id.desc())
        .limit(sa.bindparam("limit", type_=sa.Integer))
        .subquery("page")
    )
    return (
        sa.select(*FACT_COLUMNS)
        .join_from(Fact, newest, newest.c.page_id == col(Fact.id))
        .order_by(newest.c.page_at.desc(), newest.c.page_id.desc())
    )


def rows_in_order(scope: Scope, session: Session, ids: list[str]) -> list[dict[str, Any]]:
    """The fact rows of ``ids`` (at most a page: one query), in the order of ``ids``."""
    found = {r["id"]: r for r in scope.fact_rows(session, ids, statuses=None)}
    return [found[i] for i in ids if i in found]


def list_facts(
    scope: Scope,
    q: FactListQuery,
    wanted: list[str],
    read: str,
    after: Position | None,
) -> FactPage:
    """One page of the facts ``q`` selects in ``wanted`` statuses, by (recorded_at, id),
    from just after ``after``; the next page's cursor (tied to the listing ``read``)
    when more follow. Keyset paging: facts written meanwhile come after the pages read
    so far (recorded later), and no fact shows twice or is skipped."""
    with scope.session() as session:
        query = select(Fact).where(
            Fact.namespace == scope.namespace,
            col(Fact.status).in_(wanted),
            *filter_conditions(scope, q),
        )
        for name in q.entity:
            member = select(FactMember.fact_id).where(
                FactMember.namespace == scope.namespace,
                FactMember.entity_id == scope.entity_id(session, name),
            )
            query = query.where(col(Fact.id).in_(member))
        if after is not None:
            at = col(Fact.recorded_at)
            query = query.where(
                or_(at > after.recorded_at, and_(at == after.recorded_at, col(Fact.id) > after.id))
            )
        order = query.order_by(col(Fact.recorded_at), col(Fact.id)).limit(q.limit + 1)
        rows = list(session.exec(order).all())
        page = scope.hydrate(session, rows[: q.limit])
    return FactPage(items=page, next_cursor=cursors.after_page(page, len(rows) > q.limit, read))


def history(scope: Scope, fact_id: str, page: Page) -> FactList:
    """One page of the versions along a fact's supersession chain, oldest first (the
    chain's order): recursive SQL walks the ids from the first version (or the cursor's)
    through ``superseded_by_id``, by primary key, and stops after the page."""
    with scope.session() as session:
        scope.get_row(fact_id, session)  # NotFound before anything else
        read = cursors.listing(scope.namespace, {"read": "history", "fact": fact_id})
        after = cursors.start(page.cursor, read)
        first = _chain(session, fact_id, "supersedes_id")[-1]
        if after is not None:
            # The cursor's checksum has no key: a made-up one must still name a version
            # of this very chain (else it could read another chain, or namespace).
            named = _chain(session, after.id, "supersedes_id")
            if not named or named[-1] != first:
                raise InvalidInput("cursor", "names no version of this fact; start again")
            first = after.id
        skip = 0 if after is None else 1  # a cursor names the last version shown
        ids = _chain(session, first, "superseded_by_id", page.limit + skip)[skip:]
        facts = scope.hydrate(session, rows_in_order(scope, session, ids[: page.limit]))
    return FactList(facts, cursors.after_page(facts, len(ids) > page.limit, read))


def _chain(session: Session, start: str, link: str, steps: int | None = None) -> list[str]:
    """Fact ids from ``start`` along ``link`` (``supersedes_id``: to older versions,
    ``superseded_by_id``: to newer ones), in walk order, at most ``steps`` steps (None: to
    the end): one recursive query, each step by primary key."""
    facts = Fact.metadata.tables[str(Fact.__tablename__)]
    step = facts.alias()
    walk = (
        sa.select(facts.c.id, facts.c[link], sa.literal_column("0").label("n"))
        .where(facts.c.id == start)
        .cte("walk", recursive=True)
    )
    bound = [] if steps is None else [walk.c.n < steps]
    walk = walk.union_all(
        sa.select(step.c.id, step.c[link], walk.c.n + 1).where(step.c.id == walk.c[link], *bound)
    )
    return [str(i) for i in session.exec(select(walk.c.id).order_by(walk.c.n)).all()]


def verifications(scope: Scope, fact_id: str) -> list[VerificationPublic]:
    """The verification history of a fact (its first gate pass, then re-verifications)."""
    with scope.session() as session:
        scope.get_row(fact_id, session)
        rows = session.exec(
            select(Verification)
            .where(Verification.namespace == scope.namespace, Verification.fact_id == fact_id)
            .order_by(col(Verification.created_at), col(Verification.id))
        ).all()
        return [VerificationPublic.model_validate(r, from_attributes=True) for r in rows]


def entity(scope: Scope, name: str) -> EntityPublic:
    """An entity by name or alias."""
    with scope.session() as session:
        return scope.entities_by_id(session, [scope.entity_id(session, name, "name")])[0]


def get_evidence(scope: Scope, evidence_id: str) -> EvidencePublic:
    """One stored evidence version by id (history rows name the versions they used),
    while it backs live memory: a fact cites it whose newest version is not retracted.
    Evidence that only rejections cite is shown by the rejection reads (the audit log)."""
    with scope.session() as session:
        row = session.get(Evidence, evidence_id) if isinstance(evidence_id, str) else None
        if (
            row is None
            or row.namespace != scope.namespace
            or row.id not in outbox.live_ids(session, [row])
        ):
            raise NotFound("evidence", str(evidence_id), scope.namespace)
        return EvidencePublic.model_validate(row, from_attributes=True)


def stats(scope: Scope) -> StoreStats:
    """Counts of the namespace: facts by status, entities, evidence versions, rejections
    by verdict, facts due for re-verification and changes waiting for the index."""
    with scope.session() as session:

        def count(model: Any) -> int:
            query = select(sa.func.count()).select_from(model)
            return int(session.exec(query.where(model.namespace == scope.namespace)).one())

        facts = session.exec(
            select(Fact.status, sa.func.count())
            .where(Fact.namespace == scope.namespace)
            .group_by(col(Fact.status))
        ).all()
        return StoreStats(
            namespace=scope.namespace,
            facts={str(status): int(n) for status, n in facts},
            entities=count(Entity),
            evidence=count(Evidence),
            rejections=rejections.count_rows(
                session, scope.namespace, RejectionFilter(), "verdict"
            ),
            due_for_reverification=schedule.count_due(session, scope.namespace, utcnow()),
            index_backlog=outbox.pending(session, scope.namespace),
        )
