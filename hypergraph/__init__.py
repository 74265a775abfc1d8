"""hypergraph: a pure in-memory n-ary fact graph on networkx (no SQL, no gate)."""

from hypergraph.graph import FactFilter, HyperGraph, Neighborhood, holds_at

__all__ = ["FactFilter", "HyperGraph", "Neighborhood", "holds_at"]
