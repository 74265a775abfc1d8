"""The settings and the store a command works on: the global options (kept on the
root context) under the command's own ``--store`` / ``--namespace``.

New commands open their store with ``open_store(...)``, which refuses a missing
store unless told ``create=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer

from memstore.cli.console import Exit, fail
from memstore.defaults import URL_ENV

if TYPE_CHECKING:  # imported when a command runs: ``--help`` loads no store
    from memstore.config import Settings
    from memstore.store import Store


@dataclass
class Globals:
    """Options given before the command."""

    store: str | None = None
    namespace: str | None = None
    config: str | None = None


def settings(ctx: typer.Context, store: str | None, namespace: str | None = None) -> Settings:
    """Settings from --config, the environment, --store and --namespace (a command's
    options over the global ones)."""
    from memstore.config import load_settings

    given: Globals = ctx.find_root().obj or Globals()
    chosen = {
        "url": given.store if store is None else store,
        "namespace": given.namespace if namespace is None else namespace,
    }
    # Given but empty is an error, not the default: `-n ""` must not write to `default`.
    overrides = {name: value for name, value in chosen.items() if value is not None}
    return load_settings(given.config, **({"store": overrides} if overrides else {}))


def open_store(
    ctx: typer.Context,
    store: str | None,
    namespace: str | None,
    index: str | bool | None = None,
    *,
    create: bool = False,
    any_namespace: bool = False,
) -> Store:
    """The store the options and settings name; ``index=False`` skips the search index.

    Unless ``create``, a data directory or SQLite file without a store is refused
    (exit 2) before anything is created, and so (unless ``any_namespace``) is a
    namespace that holds nothing while others do: a mistyped name, not an empty store.
    """
    chosen = settings(ctx, store, namespace)
    if not create:
        require_store(chosen)
        if not any_namespace:
            require_namespace(chosen)
    options: dict[str, Any] = {} if index is None else {"index": index}
    return chosen.open(**options)


def require_store(chosen: Settings) -> None:
    """Exit 2, naming the path, when the settings' SQLite store does not exist."""
    from memstore.storage.probes import missing_sqlite_store

    url = chosen.store.url
    missing = missing_sqlite_store(url)
    if missing is not None:
        fail(
            f"no memstore store at {missing}",
            Exit.BAD_INPUT,
            f"create it with `memstore --store {url} init`, or point --store / "
            f"${URL_ENV} at an existing store",
        )


def require_namespace(chosen: Settings) -> None:
    """Exit 2 when the settings' namespace holds nothing but other namespaces of the
    store do, naming the closest ones."""
    import difflib

    from memstore.storage.probes import namespaces_in_use

    wanted = chosen.store.namespace
    known = namespaces_in_use(chosen.store.url, wanted)
    if not known:  # in use, or the store holds nothing yet (every namespace is empty)
        return
    close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.5)
    shown = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    fail(
        f"namespace {wanted!r} holds nothing in this store",
        Exit.BAD_INPUT,
        f"{hint}namespaces here: {shown}; pass one with -n (a write to a new namespace, "
        "`memstore add` or `remember-conversation`, creates it)",
    )
