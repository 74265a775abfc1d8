"""One namespace's view of the database: sessions, transactions, lookups and hydration.

Every other part of the store reads and writes through a ``Scope``: it confines
lookups to its namespace, turns SQLAlchemy errors into ``StorageError`` and table
rows into the public models (``FactPublic``, ``EntityPublic``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError
from sqlmodel import Session, col

from memstore.errors import InvalidInput, MemstoreError, NotFound, StorageError
from memstore.metadata import stored as stored_metadata
from memstore.names import check_text, normalize_key
from memstore.schemas import CitationPublic, EntityPublic, FactPublic, MemberPublic
from memstore.storage import db
from memstore.storage.planner_statistics import PlannerStatistics
from memstore.storage.tables import (
    ACTIVE_STATUSES,
    Citation,
    Entity,
    EntityAlias,
    Evidence,
    Fact,
    FactMember,
    Rejection,
)

T = TypeVar("T")

#: A transaction that lost a race is run again, up to this many times in all: a unique
#: key taken meanwhile (the same new entity from two writers), or on PostgreSQL a
#: deadlock or serialization failure (two batches creating entities in opposite orders).
WRITE_ATTEMPTS = 5
#: SQLSTATEs of a PostgreSQL transaction that lost a race and may simply run again.
RETRY_STATES = frozenset({"40P01", "40001"})
#: Ids are 32 hex digits; a unique prefix of at least this many stands for the whole id
#: (the demo and the CLI's tables print 8).
MIN_ID_PREFIX = 8
ID_CHARS = 32
_HEX = frozenset("0123456789abcdef")
#: What ``full_id`` looks up: the table of each kind of id.
_ID_TABLES: dict[str, Any] = {"fact": Fact, "rejection": Rejection, "evidence": Evidence}
#: At most this many matches of an ambiguous prefix are listed.
_SHOWN_MATCHES = 10


def lost_race(error: BaseException | None) -> bool:
    """Whether a failed transaction lost a race with another writer and may run again."""
    if isinstance(error, IntegrityError):
        return True
    state = getattr(getattr(error, "orig", None), "sqlstate", None)
    return isinstance(error, DBAPIError) and state in RETRY_STATES


#: A fact's row as ``Scope.hydrate`` takes it: the table's object, or a plain dict of
#: ``FACT_COLUMNS`` (``db.dicts``) or ``db.plain_row`` (its columns by attribute name).
FactRow = Fact | dict[str, Any]
#: Every column of the facts table by attribute name (the ``metadata`` column as
#: ``meta``): what reads select to hand plain rows to ``Scope.hydrate`` (building ORM
#: objects cost four times the read itself).
FACT_COLUMNS = tuple(attr.columns[0].label(attr.key) for attr in sa.inspect(Fact).column_attrs)
#: ``Scope.fact_rows``' read: the rows of the facts ``:ids``.
_FACT_ROWS = sa.select(*FACT_COLUMNS).where(db.in_list(col(Fact.id), "ids"))
#: ``Scope.entity_id``'s read: the entity an alias key names in a namespace.
_NAMED = sa.select(col(EntityAlias.entity_id)).where(
    col(EntityAlias.namespace) == sa.bindparam("namespace"),
    col(EntityAlias.key) == sa.bindparam("key"),
)
#: ``Scope.entities_by_id``' read: the entities ``:ids``, one row per alias, in the
#: aliases' order (an entity has at least one: its name).
_ENTITY_ROWS = (
    sa.select(
        col(Entity.id),
        col(Entity.namespace),
        col(Entity.name),
        col(Entity.key),
        col(Entity.kind),
        col(Entity.created_at),
        col(EntityAlias.alias),
    )
    .outerjoin(EntityAlias, col(EntityAlias.entity_id) == col(Entity.id))
    .where(db.in_list(col(Entity.id), "ids"))
    .order_by(col(EntityAlias.id))
)
#: ``Scope.hydrate``'s reads, built once (an ``:ids`` list, ``db.in_list``, bound per call).
_MEMBERS = (
    sa.select(
        col(FactMember.fact_id),
        col(Entity.id),
        col(Entity.name),
        col(Entity.kind),
        col(FactMember.role),
    )
    .join(Entity, col(Entity.id) == FactMember.entity_id)
    .where(db.in_list(col(FactMember.fact_id), "ids"))
    .order_by(col(FactMember.fact_id), col(FactMember.position))
)
_CITATIONS = (
    sa.select(
        col(Citation.fact_id),
        col(Citation.evidence_id),
        col(Citation.cited),
        col(Citation.span_start),
        col(Citation.span_end),
        col(Citation.lost_at),
    )
    .where(db.in_list(col(Citation.fact_id), "ids"))
    .order_by(col(Citation.id))
)


#: A ``FactPublic`` validated from a dict of its fields by pydantic's own validator: the
#: same model and checks as ``FactPublic(**fields)``, without ``SQLModel.__init__``'s
#: steps around them. With ``db.dicts``, reading and building 100 fact rows took 14-15%
#: less time here (bench/results/experiments/floors-2026-11-29/hydration_ab.py).
_build_fact = FactPublic.__pydantic_validator__.validate_python


class Scope:
    """Database access confined to ``namespace``; ``closed`` refuses every new session."""

    def __init__(self, namespace: str, engine: sa.Engine) -> None:
        self.namespace = namespace
        self.engine = engine
        self.closed = False
        self.statistics = PlannerStatistics(engine)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose database errors surface as ``StorageError``."""
        if self.closed:
            raise MemstoreError("the store is closed; open it again with memstore.open()")
        try:
            with Session(self.engine, expire_on_commit=False) as session:
                yield session
        except SQLAlchemyError as exc:
            raise StorageError(f"database error: {exc}") from exc

    def transaction(self, work: Callable[[Session], T]) -> T:
        """Run ``work`` in one transaction; all or nothing. Lost races are retried.
        The planner's statistics are looked after once in a while (``PlannerStatistics``)."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                with self.session() as session, session.begin():
                    done = work(session)
                break
            except StorageError as exc:
                if not lost_race(exc.__cause__) or attempt == WRITE_ATTEMPTS:
                    raise
        if not self.closed:
            self.statistics.wrote()
        return done

    def get_row(self, fact_id: str, session: Session | None = None) -> Fact:
        """The fact row ``fact_id`` of this namespace, whatever its status, or NotFound."""
        if session is None:
            with self.session() as own:
                return self.get_row(fact_id, own)
        row = session.get(Fact, fact_id) if isinstance(fact_id, str) else None
        if row is None or row.namespace != self.namespace:
            raise NotFound("fact", str(fact_id), self.namespace)
        return row

    def full_id(self, kind: str, given: Any, field: str) -> Any:
        """The id of the one ``kind`` (fact, rejection, evidence) of this namespace whose
        id starts with ``given`` when that is a prefix (8 to 31 hex digits); InvalidInput
        on ``field`` listing the matches when several do. Anything else comes back as
        given, for the caller's own lookup (and its NotFound)."""
        if not (
            isinstance(given, str) and MIN_ID_PREFIX <= len(given) < ID_CHARS and set(given) <= _HEX
        ):
            return given
        table = _ID_TABLES[kind]
        with self.session() as session:
            found = list(
                session.connection()
                .execute(
                    sa.select(table.id)
                    .where(table.namespace == self.namespace)
                    .where(col(table.id).startswith(given, autoescape=True))
                    .order_by(col(table.id))
                    .limit(_SHOWN_MATCHES + 1)
                )
                .scalars()
            )
        if len(found) > 1:
            shown = ", ".join(found[:_SHOWN_MATCHES]) + (", ..." if len(found) > 10 else "")
            raise InvalidInput(
                field, f"{given!r} starts more than one {kind} id ({shown}); give more of it"
            )
        return found[0] if found else given

    def entity_id(self, session: Session, name: str, field: str = "entity") -> str:
        """The id of the entity named (or aliased) ``name``; a bad name is InvalidInput
        on ``field``, an unknown one NotFound."""
        key = normalize_key(required_name(field, name))
        params = {"namespace": self.namespace, "key": key}
        found = session.connection().execute(_NAMED, params).scalar()
        if found is None:
            raise NotFound("entity", name, self.namespace)
        return str(found)

    def hydrate(self, session: Session, rows: Sequence[FactRow]) -> list[FactPublic]:
        """Fact rows (``FactRow``) as ``FactPublic``, with their members and citations, in
        order. Members and citations are read as plain columns (no ORM objects: a page of
        a hundred facts builds in about half the time), and each ``FactPublic`` is
        validated from a dict (``_build_fact``)."""
        # Copies: callers keep their rows (search's by id, the write cache's), and the
        # fields below are changed in place.
        fields = [r.model_dump() if isinstance(r, Fact) else dict(r) for r in rows]
        ids = list(dict.fromkeys(f["id"] for f in fields))  # a row may come twice
        rows_of = session.connection().execute
        members: dict[str, list[MemberPublic]] = {i: [] for i in ids}
        citations: dict[str, list[CitationPublic]] = {i: [] for i in ids}
        for chunk in db.chunks(ids):
            for fact_id, entity_id, name, kind, role in rows_of(_MEMBERS, {"ids": chunk}).all():
                members[fact_id].append(
                    MemberPublic(entity_id=entity_id, name=name, kind=kind, role=role)
                )
            for fact_id, evidence_id, cited, start, end, lost_at in rows_of(
                _CITATIONS, {"ids": chunk}
            ).all():
                citations[fact_id].append(
                    CitationPublic(
                        evidence_id=evidence_id, cited=cited, start=start, end=end, lost_at=lost_at
                    )
                )
        public: list[FactPublic] = []
        built: dict[str, FactPublic] = {}
        for f in fields:
            if f["id"] in built:  # the same fact again: a copy of its own
                public.append(built[f["id"]].model_copy(deep=True))
                continue
            f["metadata"] = stored_metadata(f.pop("meta"))
            f["members"], f["citations"] = members[f["id"]], citations[f["id"]]
            built[f["id"]] = _build_fact(f)
            public.append(built[f["id"]])
        return public

    def facts_by_id(
        self,
        session: Session,
        ids: Collection[str],
        statuses: Collection[str] | None = ACTIVE_STATUSES,
    ) -> list[FactPublic]:
        """These facts, keeping only ``statuses`` (None: any). The status is read from SQL,
        so a fact another process made stale never comes back through the graph. The rows
        are looked up by primary key only, then kept by namespace and status: a condition
        on those columns lets SQLite's planner scan the namespace's (namespace, status)
        index instead, a cost that grows with the store."""
        return self.hydrate(session, self.fact_rows(session, ids, statuses))

    def fact_rows(
        self,
        session: Session,
        ids: Collection[str],
        statuses: Collection[str] | None = ACTIVE_STATUSES,
    ) -> list[dict[str, Any]]:
        """The rows of ``facts_by_id`` as plain dicts (``_FACT_ROWS``), not hydrated (no
        members, no citations), in no particular order."""
        wanted = None if statuses is None else set(statuses)
        rows: list[dict[str, Any]] = []
        for chunk in db.chunks(list(ids)):
            for row in db.dicts(session.connection().execute(_FACT_ROWS, {"ids": chunk})):
                if row["namespace"] == self.namespace and (
                    wanted is None or row["status"] in wanted
                ):
                    rows.append(row)
        return rows

    def entities_by_id(self, session: Session, ids: Collection[str]) -> list[EntityPublic]:
        """These entities with their aliases, in the order of ``ids`` (unknown ids left
        out); one read of plain columns, by primary key only (as ``fact_rows``)."""
        found: dict[str, EntityPublic] = {}
        for chunk in db.chunks(list(dict.fromkeys(ids))):  # an entity's aliases read once
            rows = session.connection().execute(_ENTITY_ROWS, {"ids": chunk}).all()
            for entity_id, namespace, name, key, kind, created_at, alias in rows:
                if namespace != self.namespace:
                    continue
                entity = found.get(entity_id)
                if entity is None:
                    entity = found[entity_id] = EntityPublic(
                        id=entity_id, namespace=namespace, name=name, key=key, kind=kind,
                        created_at=created_at, aliases=[],  # not a copy of the default
                    )  # fmt: skip
                if alias is not None:
                    entity.aliases.append(alias)
        return [found[i] for i in ids if i in found]


def required_text(field: str, value: object) -> str:
    """A non-empty string of valid text, stripped."""
    if not isinstance(value, str):
        raise InvalidInput(field, f"must be a string, got {type(value).__name__}")
    try:
        value = check_text(value).strip()
    except ValueError as exc:
        raise InvalidInput(field, str(exc)) from None
    if not value:
        raise InvalidInput(field, "must not be empty")
    return value


def required_name(field: str, value: object) -> str:
    """A name: required text with at least one visible character."""
    value = required_text(field, value)
    if not normalize_key(value):
        raise InvalidInput(field, "must contain a visible character")
    return value
