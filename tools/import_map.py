"""memstore's import graph, read from the source: every import counts (at the top of a
module, inside a function, under ``TYPE_CHECKING``). ``tests/test_import_map.py`` uses it
to keep the modules free of import cycles and the packages in their layers; run as a
script, it prints the package diagram that docs/design.md shows.

    python tools/import_map.py            # the diagram (Mermaid)
    python tools/import_map.py --cycles   # module cycles, one a line (none: exit 0)
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "memstore"
#: The other first-party packages: memstore builds on them, they never import it.
LIBRARIES = ("gate", "language", "hypergraph")
#: memstore's top-level modules that everything may use: its vocabulary.
BASE = frozenset({"errors", "names", "metadata", "schemas", "defaults", "limits", "durations"})
#: memstore's top-level modules that are programs: the command, the demo, the old MCP name.
ENTRY = frozenset({"__main__", "demo", "quickbench", "mcp_server"})


def modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of ``package`` under ``root``, by dotted name (a package by its own)."""
    found: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def imported(path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The modules of ``known`` that the file at ``path`` imports, wherever it does."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                for a in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in known:  # a name inside a module: the module
                name = name.rpartition(".")[0]
            if name:
                yield name


def module_graph(root: Path = ROOT, package: str = PACKAGE) -> nx.DiGraph:
    """Module -> the modules it imports (of ``package``, and the libraries by name)."""
    known = modules(root, package)
    libraries = {name: root / name for name in LIBRARIES}
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for name, path in known.items():
        targets = set(imported(path, known)) | set(imported(path, libraries))
        graph.add_edges_from((name, target) for target in sorted(targets) if target != name)
    return graph


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Each group of modules that import one another in a loop, sorted."""
    groups = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    return sorted(groups)


def layer_of(module: str) -> str:
    """The layer a module belongs to: its subpackage of ``memstore``; ``tables`` for the
    SQL tables (``storage.tables``: their enums are part of the vocabulary); ``base`` for
    the vocabulary (``BASE``); ``entry`` for the programs (``ENTRY``); ``store`` for the
    other top-level modules (the Store, its settings, its input checks and the parts the
    fronts share); a library by name."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return parts[0]
    if module == f"{PACKAGE}.storage.tables":
        return "tables"
    if len(parts) == 2 and parts[1] in ENTRY:
        return "entry"
    if len(parts) > 2 or (len(parts) == 2 and (ROOT / PACKAGE / parts[1]).is_dir()):
        return parts[1]
    return "base" if len(parts) == 2 and parts[1] in BASE else "store"


def layer_graph(graph: nx.DiGraph) -> nx.DiGraph:
    """Layer -> the layers it imports."""
    layers = nx.DiGraph()
    for a, b in graph.edges:
        la, lb = layer_of(a), layer_of(b)
        layers.add_nodes_from((la, lb))
        if la != lb:
            layers.add_edge(la, lb)
    return layers


def mermaid(layers: nx.DiGraph) -> str:
    """The layers as a Mermaid flowchart, edges sorted."""
    lines = ["flowchart TD"]
    lines += [f"    {a} --> {b}" for a, b in sorted(layers.edges)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    graph = module_graph()
    if "--cycles" in argv:
        found = cycles(graph)
        for group in found:
            print(" <-> ".join(group))
        return 1 if found else 0
    sys.stdout.write(mermaid(layer_graph(graph)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
