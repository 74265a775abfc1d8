"""The in-memory hypergraph of a namespace's active facts, kept in step with SQL.

SQL is the truth: the graph is loaded from it when a store opens and updated
after each committed change; reads through it (``neighborhood``) re-read the
facts from SQL, so a status another process changed still counts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import Session, col

from hypergraph import HyperGraph
from memstore import cursors
from memstore.cursors import Page
from memstore.models import ACTIVE_STATUSES, Fact, FactMember
from memstore.schemas import FactPublic, NeighborhoodPublic
from memstore.scope import Scope


class GraphView:
    """A scope's active facts as a hypergraph of entity and fact ids, guarded by a lock."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.graph = HyperGraph()
        self.lock = threading.RLock()

    def rebuild(self) -> None:
        """Load every active fact of the namespace into a fresh hypergraph."""
        graph = HyperGraph()
        query = (
            sa.select(
                col(Fact.id),
                col(Fact.relation),
                col(Fact.valid_from),
                col(Fact.valid_to),
                col(Fact.recorded_at),
                col(FactMember.entity_id),
                col(FactMember.role),
            )
            .join(FactMember, col(FactMember.fact_id) == Fact.id)
            .where(
                col(Fact.namespace) == self.scope.namespace,
                col(Fact.status).in_(ACTIVE_STATUSES),
            )
            .order_by(col(Fact.id), col(FactMember.position))
        )
        with self.scope.engine.connect() as conn:
            current: str | None = None
            members: list[tuple[str, str]] = []
            attrs: dict[str, Any] = {}
            for fact_id, relation, valid_from, valid_to, at, entity_id, role in conn.execute(query):
                if fact_id != current:
                    if current is not None:
                        graph.add_fact(current, members, **attrs)
                    current, members = fact_id, []
                    attrs = {
                        "relation": relation,
                        "valid_from": valid_from,
                        "valid_to": valid_to,
                        "recorded_at": at,
                    }
                members.append((entity_id, role))
            if current is not None:
                graph.add_fact(current, members, **attrs)
        with self.lock:
            self.graph = graph

    def remove(self, fact_ids: Iterable[str]) -> None:
        """Take these facts out of the graph."""
        with self.lock:
            for fact_id in fact_ids:
                self.graph.remove_fact(fact_id)

    def replace(self, old_id: str | None, fact: FactPublic) -> None:
        """Put a newly stored fact in, taking out the one it supersedes (if any)."""
        with self.lock:
            if old_id is not None:
                self.graph.remove_fact(old_id)
            self._add(fact)

    def refresh(self, fact_ids: list[str]) -> None:
        """Bring the hypergraph in line with these facts' statuses after they changed."""
        with self.scope.session() as session:
            facts = self.scope.facts_by_id(session, fact_ids, statuses=None)
        with self.lock:
            for fact in facts:
                self.graph.remove_fact(fact.id)
                self._add(fact)

    def _add(self, fact: FactPublic) -> None:
        if fact.status in ACTIVE_STATUSES:
            self.graph.add_fact(
                fact.id,
                [(m.entity_id, m.role) for m in fact.members],
                relation=fact.relation,
                valid_from=fact.valid_from,
                valid_to=fact.valid_to,
                recorded_at=fact.recorded_at,
            )

    def neighborhood(
        self,
        names: Sequence[str],
        hops: int,
        relation: str | None,
        as_of: datetime | None,
        max_facts: int,
        page: Page,
    ) -> NeighborhoodPublic:
        """One page of the active facts within ``hops`` steps of the entities ``names``:
        by hop, newest first within a hop (recorded_at, then id, descending), of the
        ``max_facts`` the walk keeps in that order. The page's facts are read from SQL
        (their status again: another process may have changed it), with the seeds and
        the page's members."""
        with self.scope.session() as session:
            seeds = [self.scope.resolve(session, name, "entities").id for name in names]
            read = cursors.listing(
                self.scope.namespace,
                {"read": "neighborhood", "seeds": sorted(set(seeds)), "hops": hops,
                 "relation": relation, "max_facts": max_facts},
            )  # fmt: skip
            after = cursors.start(page.cursor, read)
            with self.lock:
                hood = self.graph.neighborhood(
                    seeds, hops, relation=relation, as_of=as_of, max_facts=max_facts, rank=_newest
                )
                order = sorted(
                    (_key(fact_id, hop, self.graph.fact_attrs(fact_id))
                     for fact_id, hop in hood.fact_distance.items()),
                    reverse=True,
                )  # fmt: skip
            if after is not None:
                start = (-after.distance, after.recorded_at, after.id)
                order = [key for key in order if key < start]
            facts, more = self._page(session, order, page.limit)
            members = {m.entity_id for f in facts for m in f.members}
            found = self.scope.entities_by_id(session, [*dict.fromkeys(seeds), *members])
        distance = cast("dict[str, int]", hood.distance)
        last = hood.fact_distance[facts[-1].id] if facts else 0
        return NeighborhoodPublic(
            entities=sorted(found, key=lambda e: (distance.get(e.id, 0), e.key)),
            facts=facts,
            distance={e.id: distance.get(e.id, 0) for e in found},
            next_cursor=cursors.after_page(facts, more, read, last),
            complete=hood.complete,
        )

    def _page(
        self, session: Session, order: list[tuple[int, datetime, str]], limit: int
    ) -> tuple[list[FactPublic], bool]:
        """The first ``limit`` facts of ``order`` still active in SQL, and whether more
        follow; read ``limit + 1`` ids at a time."""
        found: list[FactPublic] = []
        for begin in range(0, len(order), limit + 1):
            ids = [fact_id for _hop, _at, fact_id in order[begin : begin + limit + 1]]
            by_id = {f.id: f for f in self.scope.facts_by_id(session, ids)}
            found += [by_id[i] for i in ids if i in by_id]
            if len(found) > limit:
                return found[:limit], True
        return found, False


def _newest(fact_id: Any, attrs: dict[str, Any]) -> tuple[datetime, str]:
    """The rank of a fact in a bounded walk: newest first (recorded_at, then id)."""
    return attrs["recorded_at"], str(fact_id)


def _key(fact_id: Any, hop: int, attrs: dict[str, Any]) -> tuple[int, datetime, str]:
    """A fact's place in a neighborhood's order, sorted descending: nearest, newest."""
    return (-hop, *_newest(fact_id, attrs))
