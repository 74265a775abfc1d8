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

LanceDB also marks 105 methods with ``overrides``' ``@override``, which checks at
import that each overrides a base class's method, finding the bases by reading the
class body's bytecode: 0.2-0.4 s of the import on 2 cores, for a check of LanceDB's own
classes that their tests already make. During the import the decorator only marks the
method (``__override__``, what ``overrides``' metaclass reads); it is put back after.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

#: The package whose ``__init__`` is deferred.
CLIENT = "lance_namespace_urllib3_client"


class _DeferredInit(importlib.abc.Loader):
    """Runs a package's ``__init__`` on the first read of a name it does not have.

    Other threads reading a name meanwhile wait for it to finish; reads by the
    ``__init__`` itself (same thread) see what it has defined so far, as in a plain
    import. If it raises, the next read runs it again. Anything else a loader answers
    (``get_data``, ``get_resource_reader``...) is the wrapped loader's.
    """

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader
        self._lock = threading.RLock()
        self._running = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module, with ``__path__`` from the spec

    def exec_module(self, module: ModuleType) -> None:
        def __getattr__(name: str) -> Any:
            with self._lock:
                if not self._running and "__getattr__" in module.__dict__:
                    self._running = True
                    try:
                        self._loader.exec_module(module)
                        del module.__dict__["__getattr__"]
                    finally:
                        self._running = False
            try:
                return module.__dict__[name]
            except KeyError:
                raise AttributeError(f"module {CLIENT!r} has no attribute {name!r}") from None

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


def _marked(method: Callable[..., Any] | None = None, **_checks: Any) -> Any:
    """``overrides.override`` without its checks: the mark alone."""
    if method is None:  # used as ``@override(check_signature=...)``
        return _marked
    method.__override__ = True  # type: ignore[attr-defined]
    return method


@contextmanager
def _unchecked_overrides() -> Iterator[None]:
    """``overrides.override`` (and its old name ``overrides``) only mark, meanwhile."""
    try:
        import overrides
    except ImportError:  # a LanceDB that no longer needs it
        yield
        return
    saved = overrides.override, overrides.overrides
    overrides.override = overrides.overrides = _marked
    try:
        yield
    finally:
        overrides.override, overrides.overrides = saved


#: Held while ``import_lancedb`` imports, so two threads install one finder at a time.
_importing = threading.Lock()


def import_lancedb() -> ModuleType:
    """``lancedb``, imported (once) with the REST client's ``__init__`` deferred and
    without ``overrides``' checks."""
    with _importing:
        if "lancedb" not in sys.modules:
            finder = _Finder()
            sys.meta_path.insert(0, finder)
            try:
                with _unchecked_overrides():
                    import lancedb
            finally:
                sys.meta_path.remove(finder)
    import lancedb  # waits for an import of it still running in another thread

    return lancedb
