"""Commands that read memory: ``get``, ``neighbors``, ``history``, ``search``, ``recall``
and ``stats``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from memstore.cli.console import err, out
from memstore.cli.context import open_store
from memstore.cli.parsing import (
    MAX_SEARCH_K,
    AsOfOption,
    CursorOption,
    EntityOption,
    FactIdArgument,
    IndexOption,
    JsonOption,
    KOption,
    LimitOption,
    NamespaceOption,
    RecordedAfterOption,
    RecordedBeforeOption,
    RelationOption,
    StatusesOption,
    StoreOption,
    store_filters,
    when,
)
from memstore.cli.program import command
from memstore.cli.render import fitted, metadata_text, num, print_facts, print_more, to_json
from memstore.defaults import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_K,
    DEFAULT_MIN_SCORE,
    DEFAULT_NEIGHBORHOOD_FACTS,
    DEFAULT_READ_LIMIT,
    MAX_HOPS,
    MAX_NEIGHBORHOOD_FACTS,
    MAX_RECALL_TOKENS,
)
from memstore.errors import InvalidInput

MinScoreOption = Annotated[
    float | None,
    typer.Option(min=0.0, max=1.0, help="Leave out hits whose relevance (0..1) is below it."),
]


@command()
def get(
    ctx: typer.Context,
    fact_id: FactIdArgument,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one fact: statement, members, status, confidence and the gate's numbers."""
    with open_store(ctx, store, namespace, index=False) as opened:
        fact = opened.get_fact(fact_id)
    if as_json:
        typer.echo(to_json(fact))
        return
    out.print(f"[bold]{fact.statement}[/bold]")
    table = Table("field", "value", show_header=False)
    for name, value in (
        ("id", fact.id),
        ("status", fact.status + (f" - {fact.status_reason}" if fact.status_reason else "")),
        ("confidence", f"{fact.confidence:.2f} (stated {fact.stated_confidence:.2f})"),
        ("relation", fact.relation or ""),
        ("members", ", ".join(f"{m.name} ({m.kind}, {m.role})" for m in fact.members)),
        ("verdict", fact.verdict),
        ("p1 / p0", f"{num(fact.p1)} / {num(fact.p0)}"),
        ("bits required / observed", f"{num(fact.required_bits)} / {num(fact.observed_bits)}"),
        ("recorded", fact.recorded_at.isoformat(timespec="seconds")),
        (
            "next check",
            fact.next_check_at.isoformat(timespec="seconds") if fact.next_check_at else "",
        ),
        ("evidence", ", ".join(c.evidence_id for c in fact.citations)),
        ("metadata", metadata_text(fact.metadata)),
    ):
        table.add_row(name, value)
    out.print(table)


@command()
def neighbors(
    ctx: typer.Context,
    entity: Annotated[list[str], typer.Argument(help="Entity names or aliases.")],
    hops: Annotated[
        int, typer.Option(min=0, max=MAX_HOPS, help="Entity-fact-entity steps (up to 10).")
    ] = 1,
    relation: RelationOption = None,
    as_of: AsOfOption = None,
    limit: LimitOption = DEFAULT_READ_LIMIT,
    cursor: CursorOption = None,
    max_facts: Annotated[
        int,
        typer.Option(
            min=1,
            max=MAX_NEIGHBORHOOD_FACTS,
            help="The most facts the walk keeps, nearest and newest first.",
        ),
    ] = DEFAULT_NEIGHBORHOOD_FACTS,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Facts within HOPS steps of the given entities (the walk takes only --relation
    facts, and only those that held at --as-of, when given), nearest first and newest first
    within a hop, a page at a time, with the entities they link. Pass the printed
    --cursor for the next page."""
    moment = when("as_of", as_of)
    with open_store(ctx, store, namespace, index=False) as opened:
        hood = opened.neighborhood(
            entity,
            hops,
            relation=relation,
            as_of=moment,
            limit=limit,
            cursor=cursor,
            max_facts=max_facts,
        )
    if as_json:
        typer.echo(to_json(hood))
        return
    entities = Table("entity", "kind", "hops", title="Entities", title_justify="left")
    for e in hood.entities:
        entities.add_row(e.name, e.kind, str(hood.distance.get(e.id, 0)))
    out.print(entities)
    print_facts(hood.facts, "Facts")
    print_more(hood.next_cursor)
    if hood.complete is False:
        err.print(f"the walk stopped at {max_facts} facts; --max-facts reaches farther")


@command()
def history(
    ctx: typer.Context,
    fact_id: Annotated[
        str, typer.Argument(metavar="FACT_ID", help="The fact's id.", show_default=False)
    ],
    limit: LimitOption = DEFAULT_READ_LIMIT,
    cursor: CursorOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a fact and every verification of it: what the gate said, when and why; with
    --json also its versions, oldest first, a page (--limit) at a time."""
    from memstore.fronts import fact_history

    with open_store(ctx, store, namespace, index=False) as opened:
        fact = opened.get_fact(fact_id)
        chain = fact_history(opened, fact_id, limit, cursor)
        rows = opened.verifications(fact_id)
        if as_json:
            shown = {"fact": fact, "versions": chain.versions, "verifications": rows}
            typer.echo(to_json({**shown, "next_cursor": chain.next_cursor}))
            return
        out.print(f"[bold]{fact.statement}[/bold]")
        out.print(
            f"status [bold]{fact.status}[/bold], confidence {fact.confidence:.2f}"
            + (f" - {fact.status_reason}" if fact.status_reason else "")
        )
        table = Table("when (UTC)", "kind", "verdict", "status", "confidence")
        table.add_column("evidence", no_wrap=True, overflow="fold")
        table.add_column("why")
        evidence: dict[str, str] = {}  # each version looked up once
        for row in rows:
            versions = []
            for evidence_id in row.evidence_ids:
                if evidence_id not in evidence:
                    ev = opened.get_evidence(evidence_id)
                    evidence[evidence_id] = f"v{ev.version} {ev.source}"
                versions.append(evidence[evidence_id])
            table.add_row(
                row.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                row.kind,
                row.verdict
                if row.verdict_before is None
                else f"{row.verdict_before} -> {row.verdict}",
                row.status_after
                if row.status_before in (None, row.status_after)
                else f"{row.status_before} -> {row.status_after}",
                f"{row.confidence:.2f}",
                "\n".join(versions),
                row.reason or "",
            )
        out.print(table)


@command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, in words.")],
    k: KOption = 10,
    offset: Annotated[
        int,
        typer.Option(
            min=0,
            max=MAX_SEARCH_K - 1,
            help="Skip this many of the best facts (the next page: k; offset + k up to 1,000).",
        ),
    ] = 0,
    mode: Annotated[str, typer.Option(help="hybrid, vector (meaning) or text (keywords).")] = (
        "hybrid"
    ),
    evidence: Annotated[
        bool, typer.Option("--evidence", help="Search evidence chunks instead of facts.")
    ] = False,
    min_score: MinScoreOption = None,
    recorded_after: RecordedAfterOption = None,
    recorded_before: RecordedBeforeOption = None,
    index: IndexOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Facts (or evidence) of a namespace that best match QUERY, by meaning and keywords."""
    from memstore.fronts import EVIDENCE_FILTERS, SEARCH_FILTERS
    from memstore.index.embeddings import preload

    filters = store_filters(ctx, EVIDENCE_FILTERS if evidence else SEARCH_FILTERS)
    if evidence and offset:
        raise InvalidInput("offset", "pages fact searches only; leave it out with --evidence")
    if evidence or mode != "text":  # the query is embedded: load the model meanwhile
        preload()
    with open_store(ctx, store, namespace, index=index) as opened:
        if evidence:
            chunks = opened.search_evidence(query, k, **filters)
        else:
            facts = opened.search(query, k, offset=offset, **filters)
    if as_json:
        typer.echo(to_json(chunks if evidence else facts))
        return
    if evidence:
        table = Table("#", "score", "rel.", "source", "version", "text")
        for n, chunk in enumerate(chunks, 1):
            table.add_row(
                str(n),
                f"{chunk.score:.4f}",
                f"{chunk.relevance:.2f}",
                chunk.source,
                str(chunk.version),
                chunk.text,
            )
    else:
        table = Table("#", "score", "rel.")
        table.add_column("fact")
        table.add_column("status")
        table.add_column("conf.")
        table.add_column("statement")
        for n, hit in enumerate(facts, offset + 1):
            fact = hit.fact
            table.add_row(
                str(n),
                f"{hit.score:.4f}",
                f"{hit.relevance:.2f}",
                fact.id,
                fact.status,
                f"{fact.confidence:.2f}",
                fact.statement,
            )
    out.print(fitted(table))
    if table.row_count == 0:
        out.print(f"Nothing in namespace {opened.namespace!r} matches; try other words or -n.")


@command()
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What the next turn is about, in words.")],
    budget_tokens: Annotated[
        int,
        typer.Option(
            "--budget-tokens",
            "--budget",
            min=1,
            max=MAX_RECALL_TOKENS,
            help="Tokens the block may hold (the MiniLM tokenizer's; up to 100,000).",
        ),
    ] = DEFAULT_BUDGET_TOKENS,
    k: Annotated[
        int,
        typer.Option("--k", "-k", min=1, max=MAX_SEARCH_K, help="Memories considered, best first."),
    ] = DEFAULT_K,
    entity: EntityOption = None,
    statuses: StatusesOption = None,
    as_of: AsOfOption = None,
    min_score: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="The relevance (0..1) a memory needs.")
    ] = DEFAULT_MIN_SCORE,
    index: IndexOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print the memories relevant to QUERY as a block for a prompt: one line each (the
    statement, when it held, confidence, source), best first, within --budget-tokens."""
    from memstore.fronts import RECALL_FILTERS
    from memstore.index.embeddings import preload

    preload()  # the query is embedded: load the model while the store opens
    with open_store(ctx, store, namespace, index=index) as opened:
        filters = store_filters(ctx, RECALL_FILTERS)
        found = opened.recall(query, budget_tokens=budget_tokens, k=k, **filters)
    if as_json:
        typer.echo(to_json(found))
    elif found.text:
        typer.echo(found.text)
    else:
        err.print(f"Nothing in namespace {opened.namespace!r} is relevant enough to recall.")


@command()
def stats(
    ctx: typer.Context,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """What a namespace holds: facts by status, rejections by verdict, what is due."""
    with open_store(ctx, store, namespace, index=False) as opened:
        numbers = opened.stats()
    if as_json:
        typer.echo(to_json(numbers))
        return
    table = Table("what", "count", title=f"namespace {numbers.namespace}", title_justify="left")
    for status, n in sorted(numbers.facts.items()):
        table.add_row(f"facts {status}", str(n))
    table.add_row("entities", str(numbers.entities))
    table.add_row("evidence versions", str(numbers.evidence))
    for verdict, n in sorted(numbers.rejections.items()):
        table.add_row(f"rejected {verdict}", str(n))
    table.add_row("due for re-verification", str(numbers.due_for_reverification))
    table.add_row("waiting for the search index", str(numbers.index_backlog))
    out.print(table)
