"""Import LanceDB without the REST client it loads and memstore never uses.

``import lancedb`` imports ``lance_namespace``, which imports the models of
``lance_namespace_urllib3_client``, a generated OpenAPI client. That package's own
``__init__`` also imports its nine API modules, and their ~370 ``validate_call``
decorators build pydantic validators at import: 0.5-0.9 s of a 1.3-1.7 s
``import lancedb`` on 2 cores. memstore reaches LanceDB on a directory or an object
store, never through a REST namespace, so it needs none of them.

``import_lancedb()`` imports ``lancedb`` while the client package's ``__init__`` is
deferred: the package is created with its path (so its ``models`` import as usual),
and its ``__init__`` runs the first time anyone reads a name from it. Code that does
use the REST client gets it whole, just later. lancedb is pinned ``<0.41``; the test
of this module fails if an upgrade starts to need the client at import.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

#: The package whose ``__init__`` is deferred.
CLIENT = "lance_namespace_urllib3_client"


class _DeferredInit(importlib.abc.Loader):
    """Runs a package's ``__init__`` on the first read of a name it does not have."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader
        self._lock = threading.Lock()

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module, with ``__path__`` from the spec

    def exec_module(self, module: ModuleType) -> None:
        def __getattr__(name: str) -> Any:
            if name.startswith("__"):  # dunders (``__file__``, ``__all__``...) as usual
                raise AttributeError(name)
            with self._lock:
                if "__getattr__" in module.__dict__:  # not run yet by another thread
                    del module.__dict__["__getattr__"]
                    self._loader.exec_module(module)
            return getattr(module, name)

        module.__dict__["__getattr__"] = __getattr__


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``CLIENT`` as usual and hands it a deferring loader."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != CLIENT:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return None  # not installed, or not a package: the usual import and its error
        spec.loader = _DeferredInit(spec.loader)
        return spec


def import_lancedb() -> ModuleType:
    """``lancedb``, imported (once) with the REST client's ``__init__`` deferred."""
    if "lancedb" in sys.modules:
        return sys.modules["lancedb"]
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    try:
        import lancedb
    finally:
        sys.meta_path.remove(finder)
    return lancedb
