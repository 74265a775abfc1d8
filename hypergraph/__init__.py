"""hypergraph: a pure in-memory n-ary fact graph on networkx (no SQL, no gate)."""

from hypergraph.graph import EntityId, FactFilter, FactId, HyperGraph, Neighborhood

__all__ = ["EntityId", "FactFilter", "FactId", "HyperGraph", "Neighborhood"]
