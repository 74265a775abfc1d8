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
from sqlmodel import col

from hypergraph import HyperGraph
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
            for fact_id, relation, valid_from, valid_to, entity_id, role in conn.execute(query):
                if fact_id != current:
                    if current is not None:
                        graph.add_fact(current, members, **attrs)
                    current, members = fact_id, []
                    attrs = {"relation": relation, "valid_from": valid_from, "valid_to": valid_to}
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
            )

    def neighborhood(
        self, names: Sequence[str], hops: int, relation: str | None, as_of: datetime | None
    ) -> NeighborhoodPublic:
        """Active facts and entities within ``hops`` steps of the entities ``names``."""
        with self.scope.session() as session:
            seeds = [self.scope.resolve(session, name, "entities").id for name in names]
            with self.lock:
                hood = self.graph.neighborhood(seeds, hops, relation=relation, as_of=as_of)
            hood_entities = cast("frozenset[str]", hood.entities)
            facts = self.scope.facts_by_id(session, cast("frozenset[str]", hood.facts))
            found = self.scope.entities_by_id(session, hood_entities | set(seeds))
        return NeighborhoodPublic(
            entities=sorted(found, key=lambda e: (hood.distance.get(e.id, 0), e.key)),
            facts=sorted(facts, key=lambda f: (f.recorded_at, f.id)),
            distance={e: hood.distance.get(e, 0) for e in [*seeds, *hood_entities]},
        )
