"""The audit log of rejected facts: ``audit`` lists, counts and exports it."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.table import Table

from memstore.cli.console import out
from memstore.cli.context import open_store
from memstore.cli.parsing import NamespaceOption, StoreOption, when
from memstore.cli.program import command
from memstore.cli.render import num, to_json
from memstore.errors import InvalidInput
from memstore.fronts import rejection_where


@command()
def audit(
    ctx: typer.Context,
    verdict: Annotated[
        list[str] | None, typer.Option("--verdict", help="Only these verdicts (repeat).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="From this time: ISO 8601, or a span back like 7d.")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Until this time (ISO 8601 or 2h).")] = None,
    text: Annotated[str | None, typer.Option(help="Words in the statement.")] = None,
    entity: Annotated[str | None, typer.Option(help="A member, by name or alias.")] = None,
    relation: Annotated[str | None, typer.Option()] = None,
    source: Annotated[str | None, typer.Option(help="The evidence's source.")] = None,
    min_gap: Annotated[float | None, typer.Option(help="Budget gap at least (bits).")] = None,
    max_gap: Annotated[float | None, typer.Option(help="Budget gap at most (bits).")] = None,
    order_by: Annotated[str, typer.Option(help="created_at, budget_gap, p1, p0, ...")] = (
        "created_at"
    ),
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
    offset: Annotated[int, typer.Option(min=0)] = 0,
    output: Annotated[
        str, typer.Option("--format", help="table, json, jsonl or csv (jsonl/csv: every match).")
    ] = "table",
    counts: Annotated[
        str | None, typer.Option("--counts", help="Count by 'verdict' or 'day' instead.")
    ] = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
) -> None:
    """Facts the gate rejected, newest first: what was claimed, the verdict and its numbers."""
    if output not in ("table", "json", "jsonl", "csv"):
        raise InvalidInput("format", f"{output!r} is not table, json, jsonl or csv")
    where = rejection_where(
        verdict=verdict,
        since=when("since", since),
        until=when("until", until),
        text=text,
        entity=entity,
        relation=relation,
        source=source,
        min_gap=min_gap,
        max_gap=max_gap,
    )
    with open_store(ctx, store, namespace, index=False) as opened:
        if counts is not None:
            numbers = opened.count_rejections(by=counts, **where)
            if output == "table":
                table = Table(counts, "rejections")
                for key, n in numbers.items():
                    table.add_row(key, str(n))
                out.print(table)
            else:
                typer.echo(json.dumps(numbers, indent=2))
            return
        if output in ("jsonl", "csv"):
            opened.export_rejections(sys.stdout, format=output, **where)
            return
        rows = opened.rejections(order_by=order_by, limit=limit, offset=offset, **where)
    if output == "json":
        typer.echo(to_json(rows))
        return
    table = Table(title=f"Rejected in {opened.namespace}", title_justify="left")
    table.add_column("id", no_wrap=True, min_width=32)
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("gap (bits)", justify="right")
    table.add_column("statement", ratio=1)
    for r in rows:
        table.add_row(
            r.id,
            r.created_at.strftime("%m-%d %H:%M"),
            r.verdict,
            num(r.budget_gap),
            r.statement,
        )
    out.print(table)
    if not rows:
        out.print(f"No rejections in namespace {opened.namespace!r} match.")
    elif len(rows) == limit:
        out.print(f"First {limit}; more with --offset {offset + limit} or --format csv.")
    if rows:
        out.print("p0, p1, bits and the evidence of each: --format json, or --format csv")
