"""Lazy package exports (PEP 562): a package lists each public name with the module that
defines it, and the module is imported when the name is first used, so importing the
package (or one light part of it) loads nothing heavy. ``gate`` and ``memstore`` use it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__``: a name of ``exports`` is imported
    from its module on first use and kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        """Import a public name's module when the name is first used."""
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
