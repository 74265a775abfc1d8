"""``list``: the facts of a namespace a page at a time, filtered (``Store.list_facts``)."""

from __future__ import annotations

import typer
from rich.table import Table

from memstore.cli.console import out
from memstore.cli.context import open_store
from memstore.cli.parsing import (
    AsOfOption,
    CursorOption,
    EntityOption,
    JsonOption,
    LimitOption,
    MetadataOption,
    NamespaceOption,
    RecordedAfterOption,
    RecordedBeforeOption,
    RelationOption,
    StatusesOption,
    StoreOption,
    store_filters,
)
from memstore.cli.program import command
from memstore.cli.render import fitted, metadata_text, print_more, to_json
from memstore.defaults import DEFAULT_LIST_LIMIT


@command("list")
def list_facts(
    ctx: typer.Context,
    entity: EntityOption = None,
    relation: RelationOption = None,
    statuses: StatusesOption = None,
    metadata: MetadataOption = None,
    recorded_after: RecordedAfterOption = None,
    recorded_before: RecordedBeforeOption = None,
    as_of: AsOfOption = None,
    limit: LimitOption = DEFAULT_LIST_LIMIT,
    cursor: CursorOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the facts of a namespace, oldest first, a page at a time; with the filters
    given, those that match them all. Pass the printed --cursor for the next page."""
    from memstore.fronts import LIST_FILTERS

    with open_store(ctx, store, namespace, index=False) as opened:
        page = opened.list_facts(**store_filters(ctx, LIST_FILTERS), limit=limit, cursor=cursor)
    if as_json:
        typer.echo(to_json(page))
        return
    table = Table("recorded (UTC)", "status")
    table.add_column("fact")
    table.add_column("statement")
    table.add_column("metadata")
    for fact in page.items:
        table.add_row(
            fact.recorded_at.strftime("%Y-%m-%d %H:%M:%S"),
            fact.status,
            fact.id,
            fact.statement,
            metadata_text(fact.metadata),
        )
    out.print(fitted(table))
    if page.next_cursor is not None:
        print_more(page.next_cursor)
    elif not page.items:
        out.print(f"No facts in namespace {opened.namespace!r} match.")
