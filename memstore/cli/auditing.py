"""The audit log of rejected facts (``audit`` lists, counts and exports it) and the
gate's drift alarms (``drift``)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.table import Table

from memstore.cli.console import Exit, out
from memstore.cli.context import open_store, settings
from memstore.cli.parsing import (
    MAX_OFFSET,
    CursorOption,
    NamespaceOption,
    StoreOption,
    store_filters,
)
from memstore.cli.program import command
from memstore.cli.render import fitted, num, print_more, to_json
from memstore.defaults import REJECTIONS_MAX_PAGE
from memstore.errors import InvalidInput

#: Rows ``audit`` shows a page, fewer than ``Store.rejections``' 100: a page fits a terminal.
AUDIT_PAGE = 20


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
    limit: Annotated[
        int, typer.Option(min=1, max=REJECTIONS_MAX_PAGE, help="Rejections per page (up to 1,000).")
    ] = AUDIT_PAGE,
    offset: Annotated[
        int, typer.Option(min=0, max=MAX_OFFSET, help="Skip this many (or page by --cursor).")
    ] = 0,
    cursor: CursorOption = None,
    output: Annotated[
        str, typer.Option("--format", help="table, json, jsonl or csv (jsonl/csv: every match).")
    ] = "table",
    counts: Annotated[
        str | None, typer.Option("--counts", help="Count by 'verdict' or 'day' instead.")
    ] = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
) -> None:
    """Facts the gate rejected, newest first: what was claimed, the verdict and its numbers.
    Pass the printed --cursor for the next page."""
    from memstore.fronts import REJECTION_FILTERS, rejection_where

    if output not in ("table", "json", "jsonl", "csv"):
        raise InvalidInput("format", f"{output!r} is not table, json, jsonl or csv")
    where = rejection_where(**store_filters(ctx, REJECTION_FILTERS))
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
        rows = opened.rejections(
            order_by=order_by, limit=limit, offset=offset, cursor=cursor, **where
        )
    if output == "json":
        typer.echo(to_json(rows))
        print_more(rows.next_cursor)
        return
    table = Table(title=f"Rejected in {opened.namespace}", title_justify="left")
    table.add_column("id")
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("gap (bits)", justify="right")
    table.add_column("statement")
    for r in rows:
        table.add_row(
            r.id,
            r.created_at.strftime("%m-%d %H:%M"),
            r.verdict if r.attempts == 1 else f"{r.verdict}\n(refused {r.attempts}x)",
            num(r.budget_gap),
            r.statement,
        )
    out.print(fitted(table))
    if not rows:
        out.print(f"No rejections in namespace {opened.namespace!r} match.")
    print_more(rows.next_cursor)
    if rows:
        out.print("p0, p1, bits and the evidence of each: --format json, or --format csv")


@command()
def drift(
    ctx: typer.Context,
    output: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    store: StoreOption = None,
    namespace: NamespaceOption = None,
) -> None:
    """Whether the gate's verdicts drifted (a CUSUM per backend over the acceptance rate
    and mean p1 of the latest gated writes) and how much of the error budget people's
    labels spent; exit 5 when an alarm is raised or a budget is spent."""
    if output not in ("table", "json"):
        raise InvalidInput("format", f"{output!r} is not table or json")
    chosen = settings(ctx, store, namespace)
    with open_store(ctx, store, namespace, index=False) as opened:
        report = opened.drift(chosen.drift)
    if output == "json":
        typer.echo(report.model_dump_json(indent=2))
    else:
        table = Table(title=f"Gate drift in {report.namespace}", title_justify="left")
        for column in ("backend", "metric", "writes", "baseline", "recent", "alarm"):
            table.add_column(column, justify="right" if column == "writes" else "left")
        for s in report.streams:
            r = s.result
            alarm = f"{r.direction} at write {r.alarm_at}" if r.alarm else "-"
            shown = (num(r.baseline_mean), num(r.recent_mean)) if r.ready else ("too few", "")
            table.add_row(s.backend, s.metric, str(s.writes), *shown, alarm)
        out.print(table)
        budgets = Table("error budget", "decided", "marked wrong", "rate", "allowed", "burn")
        for b in report.budgets:
            rate = "-" if b.rate is None else f"{b.rate:.1%}"
            burn = "-" if b.burn is None else f"{b.burn:.2f}"
            budgets.add_row(b.kind, str(b.decided), str(b.labelled), rate, f"{b.allowed:.1%}", burn)
        out.print(budgets)
    if report.alarms or report.spent:
        raise typer.Exit(Exit.DRIFT)
