"""The ``memstore`` command line.

Global options (before the command, or after it): ``--store`` / ``$MEMSTORE_URL``
(a data directory or database URL), ``--namespace`` / ``$MEMSTORE_NAMESPACE``,
``--config`` / ``$MEMSTORE_CONFIG`` (a YAML settings file).

Exit codes: 0 done; 1 internal error (the database or the index failed);
2 bad input (bad option or value, unknown id, bad config, no store where one is
needed); 3 the grounding gate rejected a fact; 4 ``verify`` could not check the claim
(the verifier timed out or failed: no verdict either way); 5 ``drift`` found an alarm
or a spent error budget.

Which commands may create a store: only ``init``, ``add`` and
``remember-conversation`` (the first fact creates it), ``serve`` and ``mcp`` (they
accept writes), and ``demo`` and ``bench`` (each in a directory of its own). Every
other command reads or changes an existing store; given a data directory or SQLite
file that holds none, it exits 2 naming the path and suggesting ``memstore init``,
and creates nothing. ``verify`` needs no store and
never opens one. (A database server's URL is not checked: the database must exist.)
New commands open their store with ``context.open_store(...)``, which refuses a
missing store unless told ``create=True``.

A front: it may import every layer below it (the Store, its settings, the fronts it
starts: ``rest``, ``mcp``), and nothing imports it but ``python -m memstore``.

Messages (errors, notes, one-line results) are never wrapped at the terminal's
width, so scripts and tests see them whole; tables still fit the terminal.

The package, bottom up: ``console`` (output, exit codes, ``fail``), ``render``
(shared tables and JSON), ``parsing`` (shared options and values), ``context``
(settings and the store from the options), ``program`` (the Typer app and the
``command`` decorator); then one module per group of commands, imported below in
the order ``--help`` lists them: ``configure``, ``writes``, ``conversations``,
``reads``, ``listing``, ``auditing``, ``upkeep``, ``servers``, ``extras``.

Start-up: at the top, these modules import only light parts (typer, rich,
``memstore.defaults``, ``memstore.durations``, ``memstore.errors``); the store, the
settings, the gate and the models are imported inside the commands (types under
``TYPE_CHECKING``), so ``memstore --help`` loads none of them and a read loads no
verifier (``tests/memstore/cli/test_startup_imports.py``; ``bench/startup.py`` times it).
"""

from __future__ import annotations

# Each module registers its commands when imported: this order is --help's order.
# isort: off
from memstore.cli import configure as configure
from memstore.cli import writes as writes
from memstore.cli import conversations as conversations
from memstore.cli import reads as reads
from memstore.cli import listing as listing
from memstore.cli import auditing as auditing
from memstore.cli import upkeep as upkeep
from memstore.cli import servers as servers
from memstore.cli import extras as extras

# isort: on
from memstore.cli.console import Exit, err, out
from memstore.cli.program import app, command, main
from memstore.durations import format_duration as format_duration

__all__ = ["Exit", "app", "command", "err", "main", "out"]
