"""hypergraph: a pure in-memory n-ary fact graph on networkx (no SQL, no gate)."""

from hypergraph.graph import FactFilter, HyperGraph, Neighborhood

__all__ = ["FactFilter", "HyperGraph", "Neighborhood"]
