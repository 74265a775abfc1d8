"""The ``memstore`` command run in-process on a test's own store, as a user types it."""

from __future__ import annotations

from typing import Any

from gate_samples import REFUSE_UNGROUNDED_ENV
from typer.testing import CliRunner

from memstore.cli import app

#: No store or config from outside; the specification's table alone (exit 3 to test).
CLEAN_ENV: dict[str, Any] = {
    "MEMSTORE_URL": None,
    "MEMSTORE_NAMESPACE": None,
    "MEMSTORE_CONFIG": None,
    **REFUSE_UNGROUNDED_ENV,
}


def runner_at(where: str, *before: str) -> Any:
    """``invoke(*args, input=None, env=None)``: ``memstore --store WHERE BEFORE ARGS``,
    returning click's Result; ``invoke.store`` is ``where``."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, env: dict[str, Any] | None = None) -> Any:
        argv = ["--store", where, *before, *args]
        return runner.invoke(app, argv, input=input, env={**CLEAN_ENV, **(env or {})})

    invoke.store = where  # type: ignore[attr-defined]
    return invoke
