"""Trying memstore out: ``demo`` (the guided session) and ``bench`` (this machine's speed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from memstore.cli.console import Exit, err, fail, out
from memstore.cli.context import settings
from memstore.cli.parsing import JsonOption
from memstore.cli.program import command


@command()
def demo(
    data_dir: Annotated[
        Path | None, typer.Argument(help="Where to keep the demo's store (default: a temp dir).")
    ] = None,
) -> None:
    """Run the guided demo: gated writes, a rejection, history, re-verification, search."""
    from memstore.demo import main as run_demo

    if data_dir is not None and data_dir.exists() and any(data_dir.iterdir()):
        fail(f"{data_dir} is not empty", Exit.BAD_INPUT, "remove it or give another directory")
    raise typer.Exit(run_demo([str(data_dir)] if data_dir is not None else []))


@command()
def bench(
    ctx: typer.Context,
    facts: Annotated[int, typer.Option(min=10, max=100_000, help="Facts to write.")] = 200,
    as_json: JsonOption = False,
) -> None:
    """Measure this machine: gated writes, verify_claim and search on a temporary store."""
    from memstore.quickbench import run as run_bench

    chosen = settings(ctx, None)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err) as bar:
        task = bar.add_task("benchmark", total=None)

        def progress(what: str, done: int, total: int) -> None:
            bar.update(task, description=what, completed=done, total=total)

        result = run_bench(chosen, facts, progress)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    table = Table("measure", "value", title=f"memstore bench ({facts} facts)", title_justify="left")
    for name, value in result.items():
        table.add_row(name, value if isinstance(value, str) else f"{value:,.1f}")
    out.print(table)
