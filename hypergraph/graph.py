"""An in-memory n-ary fact graph: entities and facts as the two sides of a bipartite graph.

A fact (hyperedge) links any number of entities, each in a role. It is stored as a
fact node joined to each member entity node; the edge carries the member's roles.
One hop between entities is entity -> fact -> entity.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

import networkx as nx

EntityId = Hashable
FactId = Hashable

_ENTITY = "entity"
_FACT = "fact"


def _node(side: str, key: Hashable) -> tuple[str, Hashable]:
    return (side, key)


def holds_at(valid_from: datetime | None, valid_to: datetime | None, as_of: datetime) -> bool:
    """Whether a fact holds at world time ``as_of``: ``valid_from <= as_of < valid_to``
    (half-open), a None end being open. The one definition of the rule; the SQL reads
    (``memstore.read.facts.valid_at``) and the search index (``memstore.index.rows.Filter``)
    mirror it, and tests/memstore/read/test_world_time.py checks that all three agree.

    >>> from datetime import datetime
    >>> holds_at(datetime(2020, 1, 1), datetime(2021, 1, 1), datetime(2021, 1, 1))
    False
    """
    return (valid_from is None or valid_from <= as_of) and (valid_to is None or as_of < valid_to)


@dataclass(frozen=True, slots=True)
class FactFilter:
    """Which facts a traversal may use: by relation and by world time (as-of)."""

    relations: frozenset[str] | None = None
    as_of: datetime | None = None

    @classmethod
    def of(cls, relation: str | Iterable[str] | None, as_of: datetime | None) -> FactFilter:
        if relation is None:
            relations = None
        elif isinstance(relation, str):
            relations = frozenset([relation])
        else:
            relations = frozenset(relation)
        return cls(relations, as_of)

    def admits(self, attrs: dict[str, Any]) -> bool:
        if self.relations is not None and attrs.get("relation") not in self.relations:
            return False
        if self.as_of is not None:
            return holds_at(attrs.get("valid_from"), attrs.get("valid_to"), self.as_of)
        return True


@dataclass(frozen=True, slots=True)
class Neighborhood:
    """Entities and facts reachable from a set of seed entities. ``fact_distance``: the
    hop that used each fact (1: a seed is a member); ``complete`` is False when
    ``max_facts`` left out facts within the hops."""

    entities: frozenset[EntityId]
    facts: frozenset[FactId]
    distance: dict[EntityId, int]
    fact_distance: dict[FactId, int] = field(default_factory=dict)
    complete: bool = True


#: How a bounded walk ranks a hop's facts (``HyperGraph.neighborhood``): a key of the
#: fact id and attributes, highest first.
Rank = Callable[[FactId, dict[str, Any]], Any]


def _by_id(fact_id: FactId, attrs: dict[str, Any]) -> Any:
    return fact_id


class HyperGraph:
    """An n-ary fact graph on networkx.

    >>> g = HyperGraph()
    >>> g.add_fact("f1", [("alice", "employee"), ("acme", "employer")], relation="works_at")
    >>> sorted(g.facts_of("alice"))
    ['f1']
    """

    def __init__(self) -> None:
        self._g: nx.Graph = nx.Graph()
        self._fact_count = 0

    # -- writes --------------------------------------------------------------

    def add_fact(
        self,
        fact_id: FactId,
        members: Iterable[tuple[EntityId, str]],
        *,
        relation: str | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        **attrs: Any,
    ) -> None:
        """Add (or replace) a hyperedge linking ``members``, a list of (entity, role)."""
        roles: dict[EntityId, list[str]] = {}
        for entity, role in members:
            roles.setdefault(entity, [])
            if role not in roles[entity]:
                roles[entity].append(role)
        if not roles:
            raise ValueError("a fact needs at least one member")
        if fact_id in self:
            self.remove_fact(fact_id)
        self._fact_count += 1
        fnode = _node(_FACT, fact_id)
        self._g.add_node(
            fnode,
            side=_FACT,
            relation=relation,
            valid_from=valid_from,
            valid_to=valid_to,
            **attrs,
        )
        for entity, entity_roles in roles.items():
            enode = _node(_ENTITY, entity)
            if enode not in self._g:
                self._g.add_node(enode, side=_ENTITY)
            self._g.add_edge(enode, fnode, roles=tuple(entity_roles))

    def remove_fact(self, fact_id: FactId) -> bool:
        """Remove a hyperedge; entities left with no facts are dropped. False if absent."""
        fnode = _node(_FACT, fact_id)
        if fnode not in self._g:
            return False
        members = list(self._g.neighbors(fnode))
        self._g.remove_node(fnode)
        self._fact_count -= 1
        for enode in members:
            if self._g.degree(enode) == 0:
                self._g.remove_node(enode)
        return True

    # -- reads ---------------------------------------------------------------

    def __contains__(self, fact_id: object) -> bool:
        return _node(_FACT, fact_id) in self._g

    def __len__(self) -> int:
        """Number of facts."""
        return self._fact_count

    def facts(self) -> Iterator[FactId]:
        return (key for side, key in self._g.nodes if side == _FACT)

    def entities(self) -> Iterator[EntityId]:
        return (key for side, key in self._g.nodes if side == _ENTITY)

    def has_entity(self, entity: EntityId) -> bool:
        return _node(_ENTITY, entity) in self._g

    def fact_attrs(self, fact_id: FactId) -> dict[str, Any]:
        return {k: v for k, v in self._g.nodes[_node(_FACT, fact_id)].items() if k != "side"}

    def members(self, fact_id: FactId) -> list[tuple[EntityId, str]]:
        """(entity, role) pairs of a fact, one per role."""
        fnode = _node(_FACT, fact_id)
        return [
            (enode[1], role)
            for enode in self._g.neighbors(fnode)
            for role in self._g.edges[enode, fnode]["roles"]
        ]

    def facts_of(
        self,
        entity: EntityId,
        *,
        relation: str | Iterable[str] | None = None,
        as_of: datetime | None = None,
        role: str | None = None,
    ) -> set[FactId]:
        """Facts that have ``entity`` as a member (optionally in ``role``)."""
        enode = _node(_ENTITY, entity)
        if enode not in self._g:
            return set()
        keep = FactFilter.of(relation, as_of)
        found = set()
        for fnode in self._g.neighbors(enode):
            if role is not None and role not in self._g.edges[enode, fnode]["roles"]:
                continue
            if keep.admits(self._g.nodes[fnode]):
                found.add(fnode[1])
        return found

    def linking(
        self,
        entities: Collection[EntityId],
        *,
        relation: str | Iterable[str] | None = None,
        as_of: datetime | None = None,
    ) -> set[FactId]:
        """Facts that have every one of ``entities`` among their members."""
        if not entities:
            return set()
        sets = [self.facts_of(e, relation=relation, as_of=as_of) for e in entities]
        return set.intersection(*sets)

    def _view(self, keep: FactFilter) -> nx.Graph:
        if keep.relations is None and keep.as_of is None:
            return self._g

        def node_ok(node: tuple[str, Hashable]) -> bool:
            return node[0] == _ENTITY or keep.admits(self._g.nodes[node])

        return nx.subgraph_view(self._g, filter_node=node_ok)

    def neighborhood(
        self,
        seeds: EntityId | Collection[EntityId],
        hops: int = 1,
        *,
        relation: str | Iterable[str] | None = None,
        as_of: datetime | None = None,
        max_facts: int | None = None,
        rank: Rank = _by_id,
    ) -> Neighborhood:
        """Entities within ``hops`` entity-fact-entity steps of the seeds, and the facts used.

        A fact is included when at least one of its members is within ``hops - 1``
        steps, i.e. it was traversed. ``hops=0`` returns the seeds and no facts.
        The walk goes a hop at a time; ``max_facts`` bounds the facts it keeps: the
        hop that would pass it keeps the facts ``rank`` puts highest (default: by id)
        and the walk stops there, ``complete`` False.
        """
        if hops < 0:
            raise ValueError("hops must be >= 0")
        if max_facts is not None and max_facts < 0:
            raise ValueError("max_facts must be >= 0")
        if isinstance(seeds, list | tuple | set | frozenset):
            seed_list: list[EntityId] = list(seeds)
        else:
            seed_list = [cast(EntityId, seeds)]
        keep = FactFilter.of(relation, as_of)
        distance = {s: 0 for s in seed_list if self.has_entity(s)}
        used: dict[FactId, int] = {}
        frontier, complete = list(distance), True
        for hop in range(1, hops + 1):
            if not frontier:
                break
            found = self._facts_around(frontier, keep, used)
            if max_facts is not None and len(used) + len(found) > max_facts:
                attrs = self._g.nodes
                found = heapq.nlargest(
                    max_facts - len(used), found, key=lambda f: rank(f, attrs[_node(_FACT, f)])
                )
                complete = False
            used.update((f, hop) for f in found)
            frontier = []
            for fact_id in found:
                for _side, entity in self._g.neighbors(_node(_FACT, fact_id)):
                    if entity not in distance:
                        distance[entity] = hop
                        frontier.append(entity)
            if not complete:
                break
        return Neighborhood(frozenset(distance), frozenset(used), distance, used, complete)

    def _facts_around(
        self, entities: list[EntityId], keep: FactFilter, used: dict[FactId, int]
    ) -> list[FactId]:
        """The facts ``keep`` admits that have a member among ``entities``, not in ``used``."""
        found: dict[FactId, None] = {}
        for entity in entities:
            for fnode in self._g.neighbors(_node(_ENTITY, entity)):
                fact_id = fnode[1]
                if (
                    fact_id not in used
                    and fact_id not in found
                    and keep.admits(self._g.nodes[fnode])
                ):
                    found[fact_id] = None
        return list(found)

    def connection(
        self,
        source: EntityId,
        target: EntityId,
        *,
        relation: str | Iterable[str] | None = None,
        as_of: datetime | None = None,
    ) -> list[EntityId | FactId] | None:
        """Shortest path ``[source, fact, entity, ..., fact, target]``, or None if unlinked."""
        view = self._view(FactFilter.of(relation, as_of))
        a, b = _node(_ENTITY, source), _node(_ENTITY, target)
        if a not in view or b not in view:
            return None
        try:
            path = nx.shortest_path(view, a, b)
        except nx.NetworkXNoPath:
            return None
        return [key for _side, key in path]

    def subgraph(self, facts: Iterable[FactId]) -> HyperGraph:
        """A new graph holding only ``facts`` (and their members)."""
        sub = HyperGraph()
        for fact_id in facts:
            fnode = _node(_FACT, fact_id)
            if fnode not in self._g:
                continue
            attrs = self.fact_attrs(fact_id)
            sub.add_fact(fact_id, self.members(fact_id), **attrs)
        return sub

    def to_dict(self, default: Callable[[Any], Any] | None = None) -> dict[str, Any]:
        """Node-link export: ``{"entities": [...], "facts": [{"id", "members", ...}]}``."""
        conv = default or (lambda v: v.isoformat() if isinstance(v, datetime) else v)
        facts = []
        for fact_id in sorted(self.facts(), key=str):
            attrs = {k: conv(v) for k, v in self.fact_attrs(fact_id).items()}
            members = [{"entity": e, "role": r} for e, r in self.members(fact_id)]
            facts.append({"id": fact_id, "members": members, **attrs})
        return {"entities": sorted(self.entities(), key=str), "facts": facts}

    def to_networkx(self) -> nx.Graph:
        """A copy of the underlying bipartite graph (nodes are ``(side, id)`` tuples)."""
        return self._g.copy()
