"""``memstore.open()``: open (creating and migrating if needed) one namespace's store."""

from __future__ import annotations

from memstore.store import Store

__all__ = ["open"]

#: ``memstore.open(path_or_url, namespace, **options)`` opens (creating and migrating if
#: needed) a store confined to ``namespace``: it is ``Store(...)``, whose docstring lists
#: the options; one signature, not a copy of it.
open = Store
