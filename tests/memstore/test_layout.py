"""The package layout holds: no import cycle among memstore's modules (every import
counts: at the top, inside a function, under ``TYPE_CHECKING``), each layer imports
only the layers its package docstring names, the libraries (gate, language,
hypergraph) never import memstore, at most 20 modules sit at memstore's top level, and
docs/design.md shows the import diagram as ``tools/import_map.py`` draws it today."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Each layer and the layers it may import (besides itself and the libraries).
#: ``tables`` is storage.tables (its enums are vocabulary), ``base`` the top-level
#: vocabulary, ``store`` the Store with its settings and input checks, ``entry`` the
#: programs. Below the Store the layers form one order: storage, index, audit (the
#: log a refusal goes to), write and read beside each other, reverify.
ALLOWED: dict[str, set[str]] = {
    "tables": set(),
    "base": {"tables"},
    "storage": {"base", "tables"},
    "index": {"base", "storage", "tables"},
    "audit": {"base", "index", "storage", "tables"},
    "write": {"audit", "base", "index", "storage", "tables"},
    "read": {"audit", "base", "index", "storage", "tables"},
    "reverify": {"audit", "base", "index", "storage", "tables", "write"},
    "conversations": {"base", "tables"},
    "store": {
        "audit", "base", "conversations", "index", "read", "reverify", "storage", "tables",
        "write",
    },
    "rest": {"audit", "base", "conversations", "read", "reverify", "storage", "store", "tables"},
    "mcp": {"base", "conversations", "read", "rest", "store", "tables"},
    "cli": {
        "base", "conversations", "entry", "index", "mcp", "rest", "reverify", "storage",
        "store", "write",
    },
    "entry": {"base", "cli", "mcp", "store"},
}  # fmt: skip


def load_import_map() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_map", ROOT / "tools" / "import_map.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_map", module)
    spec.loader.exec_module(module)
    return module


import_map = load_import_map()


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    return import_map.module_graph()


def test_memstore_has_no_import_cycle(graph: nx.DiGraph) -> None:
    assert import_map.cycles(graph) == []


def test_a_cycle_through_a_function_or_type_checking_import_is_found(tmp_path: Path) -> None:
    """The check can fail: a loop that only an in-function import closes, or only a
    ``TYPE_CHECKING`` one, is a cycle."""
    package = tmp_path / "memstore"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "a.py").write_text("from memstore.inner.b import B\n")
    (package / "inner" / "b.py").write_text(
        "def f():\n    from memstore import c\n\nclass B: ...\n"
    )
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from memstore.a import A\n"
    )
    found = import_map.cycles(import_map.module_graph(tmp_path))
    assert found == [["memstore.a", "memstore.c", "memstore.inner.b"]]


def test_each_layer_imports_only_what_it_may(graph: nx.DiGraph) -> None:
    wrong = [
        f"{a} -> {b}"
        for a, b in sorted(graph.edges)
        if (la := import_map.layer_of(a)) != (lb := import_map.layer_of(b))
        and lb not in import_map.LIBRARIES
        and lb not in ALLOWED[la]
    ]
    assert wrong == []


def test_every_layer_is_a_package_with_a_docstring_that_names_what_it_may_import() -> None:
    for layer in ALLOWED:
        folder = ROOT / "memstore" / layer
        if not folder.is_dir():
            continue
        text = (folder / "__init__.py").read_text(encoding="utf-8")
        assert text.startswith('"""'), f"memstore/{layer}/__init__.py has no docstring"
        assert "import" in text.split('"""')[1], f"memstore/{layer}: say what it may import"


def test_the_libraries_never_import_memstore() -> None:
    known = import_map.modules(ROOT, "memstore")
    for library in import_map.LIBRARIES:
        for path in sorted((ROOT / library).rglob("*.py")):
            assert list(import_map.imported(path, known)) == [], path


def test_at_most_twenty_modules_at_the_top_of_memstore() -> None:
    top = sorted(p.name for p in (ROOT / "memstore").glob("*.py"))
    assert len(top) <= 20, top


def test_design_md_shows_todays_import_diagram(graph: nx.DiGraph) -> None:
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    start = design.index("```mermaid\n") + len("```mermaid\n")
    shown = design[start : design.index("```", start)]
    assert shown == import_map.mermaid(import_map.layer_graph(graph)), (
        "docs/design.md's import diagram is out of date: "
        "python tools/import_map.py, and paste its output there"
    )
