"""The ``memstore`` command line.

Global options (before the command, or after it): ``--store`` / ``$MEMSTORE_URL``
(a data directory or database URL), ``--namespace`` / ``$MEMSTORE_NAMESPACE``,
``--config`` / ``$MEMSTORE_CONFIG`` (a YAML settings file).

Exit codes: 0 done; 1 internal error (the database or the index failed);
2 bad input (bad option or value, unknown id, bad config, no store where one is
needed); 3 the grounding gate rejected a fact; 4 ``verify`` could not check the claim
(the verifier timed out or failed: no verdict either way).

Which commands may create a store: only ``init``, ``add`` (the first fact creates
it), ``serve`` and ``mcp`` (they accept writes), and ``demo`` and ``bench`` (each in
a directory of its own). Every other command reads or changes an existing store;
given a data directory or SQLite file that holds none, it exits 2 naming the path
and suggesting ``memstore init``, and creates nothing. ``verify`` needs no store and
never opens one. (A database server's URL is not checked: the database must exist.)
New commands open their store with ``_open(...)``, which refuses a missing store
unless told ``create=True``.

Messages (errors, notes, one-line results) are never wrapped at the terminal's
width, so scripts and tests see them whole; tables still fit the terminal.
"""

from __future__ import annotations

import functools
import getpass
import json
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import sqlalchemy as sa
import typer
import yaml
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from sqlmodel import Session

from gate import ConfigError, Verdict, VerdictStatus, default_gate
from memstore import db
from memstore.config import (
    CONFIG_ENV,
    NAMESPACE_ENV,
    URL_ENV,
    Settings,
    load_settings,
    parse_duration,
)
from memstore.config import format_duration as format_duration
from memstore.errors import ErrFactNotGrounded, InvalidInput, MemstoreError, NotFound
from memstore.limits import Limits
from memstore.reverify import ReverifyReport, namespaces_with_checks
from memstore.schemas import ClaimCheck, FactPublic, RejectionPublic, to_utc
from memstore.store import DEFAULT_NAMESPACE, Store

P = ParamSpec("P")
R = TypeVar("R")


class Exit(IntEnum):
    """What the process's exit status means."""

    OK = 0
    INTERNAL = 1
    BAD_INPUT = 2
    REJECTED = 3
    UNCHECKED = 4


app = typer.Typer(
    help="memstore: long-term memory for agents, every fact grounded in evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
config_app = typer.Typer(help="The settings in effect (config file, environment, defaults).")
app.add_typer(config_app, name="config")


class _Console(Console):
    """A rich Console that never wraps a message (a plain string) at the terminal's
    width; other renderables (tables) still fit the terminal."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        if soft_wrap is None and objects and all(isinstance(o, str) for o in objects):
            soft_wrap = True
        super().print(*objects, soft_wrap=soft_wrap, **options)


out = _Console()
err = _Console(stderr=True)


@dataclass
class Globals:
    """Options given before the command."""

    store: str | None = None
    namespace: str | None = None
    config: str | None = None


StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        "-s",
        help=f"Data directory (SQLite) or database URL [env {URL_ENV}; default ./memdata].",
        show_default=False,
    ),
]
NamespaceOption = Annotated[
    str | None,
    typer.Option(
        "--namespace",
        "-n",
        help=f"Namespace to work in [env {NAMESPACE_ENV}; default 'default'].",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
IndexOption = Annotated[
    str | None,
    typer.Option(
        "--index",
        help="Search index directory or LanceDB URI (default: STORE/index, or "
        "$MEMSTORE_INDEX_URI for a database URL).",
    ),
]


@app.callback()
def main_options(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            "-s",
            envvar=URL_ENV,
            help="Data directory (SQLite) or database URL [default ./memdata].",
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", envvar=NAMESPACE_ENV, help="Namespace to work in."),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option("--config", "-c", envvar=CONFIG_ENV, help="YAML settings file."),
    ] = None,
) -> None:
    """memstore: long-term memory for agents, every fact grounded in evidence."""
    ctx.obj = Globals(store, namespace, config)


def command(
    name: str | None = None, parent: typer.Typer = app
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Register a command whose memstore errors become a message and a meaningful exit."""

    def register(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except ErrFactNotGrounded as exc:
                _print_rejection(exc.rejection)
                raise typer.Exit(Exit.REJECTED) from None
            except ConfigError as exc:
                _fail(
                    f"bad settings: {exc}", Exit.BAD_INPUT, "fix it, or see `memstore config show`"
                )
            except InvalidInput as exc:
                _fail(str(exc), Exit.BAD_INPUT, f"see `memstore {fn.__name__} --help`")
            except NotFound as exc:
                _fail(str(exc), Exit.BAD_INPUT, "check the id or name, and the namespace (-n)")
            except MemstoreError as exc:
                _fail(str(exc), Exit.INTERNAL, "check --store / $MEMSTORE_URL and the database")

        parent.command(name)(run)
        return run

    return register


# -- setup -------------------------------------------------------------------------


@command()
def init(
    ctx: typer.Context,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    write_config: Annotated[
        Path | None,
        typer.Option(help="Also write the settings in effect to this YAML file (a template)."),
    ] = None,
) -> None:
    """Create the store (or upgrade it to the current schema) and say what to do next."""
    settings = _settings(ctx, store, namespace)
    if write_config is not None:
        if write_config.exists():
            _fail(f"{write_config} exists", Exit.BAD_INPUT, "pick another path or remove it")
        write_config.write_text(_settings_yaml(settings), encoding="utf-8")
    with settings.open() as opened:
        stats = opened.stats()
    out.print(f"store ready at {opened.url} (namespace {opened.namespace!r})")
    out.print(f"  {sum(stats.facts.values())} facts, {sum(stats.rejections.values())} rejections")
    if write_config is not None:
        out.print(f"  settings written to {write_config}; use it with --config {write_config}")
    out.print(
        'Next: memstore add "STATEMENT" -m NAME:KIND:ROLE -e "EVIDENCE TEXT"   '
        "(memstore add --help)"
    )


@config_app.command("show")
def config_show(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Print the settings in effect, API keys masked."""
    try:
        settings = _settings(ctx, None, None)
    except ConfigError as exc:
        _fail(f"bad settings: {exc}", Exit.BAD_INPUT, "fix the file or the environment")
    if as_json:
        typer.echo(json.dumps(_masked(settings), indent=2))
    else:
        typer.echo(_settings_yaml(settings, masked=True), nl=False)


# -- writes ------------------------------------------------------------------------


@command()
def add(
    ctx: typer.Context,
    statement: Annotated[
        str | None, typer.Argument(help="The fact, in one sentence.", show_default=False)
    ] = None,
    member: Annotated[
        list[str] | None,
        typer.Option(
            "--member", "-m", help="An entity the fact is about: NAME[:KIND[:ROLE]] (repeat)."
        ),
    ] = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option("--evidence", "-e", help="Evidence text ('-' reads stdin) (repeat)."),
    ] = None,
    evidence_file: Annotated[
        list[Path] | None,
        typer.Option(
            "--evidence-file",
            help="Evidence from a file, kept as its source so re-verification re-reads it.",
        ),
    ] = None,
    quote: Annotated[
        list[str] | None,
        typer.Option("--quote", "-q", help="The words in the evidence that state it (repeat)."),
    ] = None,
    relation: Annotated[str | None, typer.Option("--relation", "-r")] = None,
    confidence: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="How sure the writer is.")
    ] = 0.95,
    file: Annotated[
        str | None,
        typer.Option(
            "--file", "-f", help="JSON or YAML: one fact or a list of facts ('-': stdin)."
        ),
    ] = None,
    ungated: Annotated[
        bool, typer.Option("--ungated", help="Store without the gate (recorded as ungated).")
    ] = False,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remember a fact if its evidence grounds it; exit 3 if the gate rejects it.

    Example: memstore add "Alice is allergic to peanuts." -m Alice:person:patient
    -m peanuts:food:allergen -e "Alice: I'm allergic to peanuts."
    """
    if file is not None:
        if statement or member or evidence or evidence_file or quote or relation:
            raise InvalidInput("file", "give a --file or a statement with options, not both")
        items = _read_facts(file)
    else:
        if statement is None:
            raise InvalidInput("statement", "missing; give it as an argument, or use --file")
        items = [_fact_from_options(statement, member, evidence, evidence_file, quote)]
        items[0].update(relation=relation, confidence=confidence)
    with _open(ctx, store, namespace, create=True) as opened:
        if file is None:
            try:
                stored = opened.add_fact(items[0], ungated=ungated)
            except ErrFactNotGrounded as exc:
                if as_json:
                    typer.echo(_json({"stored": False, "rejection": exc.rejection}))
                    raise typer.Exit(Exit.REJECTED) from None
                raise
            if as_json:
                typer.echo(_json({"stored": True, "fact": stored}))
            else:
                _print_stored(stored)
            return
        with err.status(f"checking {len(items)} facts against their evidence..."):
            results = opened.add_facts(items, ungated=ungated)
    if as_json:
        typer.echo(
            _json(
                [
                    {"stored": True, "fact": r}
                    if isinstance(r, FactPublic)
                    else {"stored": False, "rejection": r}
                    for r in results
                ]
            )
        )
    else:
        table = Table("#", "result", "id", "statement", "verdict", "confidence")
        for n, r in enumerate(results, 1):
            kept = isinstance(r, FactPublic)
            table.add_row(
                str(n),
                "stored" if kept else "[red]rejected[/red]",
                r.id,
                r.statement,
                r.verdict,
                f"{r.confidence:.2f}" if isinstance(r, FactPublic) else "",
            )
        out.print(table)
    rejected = sum(1 for r in results if isinstance(r, RejectionPublic))
    if rejected:
        err.print(f"{rejected} of {len(results)} rejected; see why: memstore audit")
        raise typer.Exit(Exit.REJECTED)


@command()
def verify(
    ctx: typer.Context,
    claim: Annotated[str, typer.Argument(help="The claim to check.", show_default=False)],
    evidence: Annotated[
        list[str], typer.Option("--evidence", "-e", help="Evidence text ('-': stdin) (repeat).")
    ],
    confidence: Annotated[float, typer.Option(min=0.0, max=1.0)] = 0.95,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check a claim against evidence with the gate, storing nothing; exit 3 if not grounded,
    4 if the verifier could not check it (timed out or failed)."""
    texts = [sys.stdin.read() if text == "-" else text for text in evidence]
    verdict = _check_claim(_settings(ctx, store, namespace), claim, texts, confidence)
    unchecked = verdict.status in _UNCHECKED
    if as_json:
        typer.echo(_json(verdict))
    elif unchecked:
        out.print(f"not checked ({verdict.status.value}): {verdict.reason or 'no verdict'}")
        err.print("The verifier gave no verdict, so nothing was decided; try again later.")
    else:
        _print_verdict(verdict)
    if unchecked:
        raise typer.Exit(Exit.UNCHECKED)
    if not verdict.accepted:
        raise typer.Exit(Exit.REJECTED)


#: Verdicts that are no check at all: the verifier did not answer.
_UNCHECKED = frozenset({VerdictStatus.TIMEOUT, VerdictStatus.VERIFIER_ERROR})


@command()
def retract(
    ctx: typer.Context,
    fact_id: Annotated[str, typer.Argument(metavar="FACT_ID", show_default=False)],
    reason: Annotated[str, typer.Option("--reason", help="Why it is no longer memory.")],
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Retract a fact (a soft delete with a reason; its history stays)."""
    with _open(ctx, store, namespace) as opened:
        fact = opened.retract(fact_id, reason)
    if as_json:
        typer.echo(_json(fact))
    else:
        out.print(f"retracted {fact.id}: {fact.statement}")


@command()
def erase(
    ctx: typer.Context,
    target_id: Annotated[str, typer.Argument(metavar="ID", show_default=False)],
    reason: Annotated[
        str, typer.Option("--reason", help="Why it is erased (kept in the tombstone).")
    ],
    rejection: Annotated[
        bool, typer.Option("--rejection", help="ID is a rejection in the audit log.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Erase without asking.")] = False,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Erase a fact for good (every version, its history, the evidence nothing else
    cites, its search-index rows), or with --rejection a rejection of the audit log.
    Leaves a tombstone (ids and hashes, no content); cannot be undone."""
    with _open(ctx, store, namespace) as opened:
        what = "rejection" if rejection else "fact"
        found = opened.get_rejection(target_id) if rejection else opened.get_fact(target_id)
        question = f"Erase {what} {found.id} ({found.statement!r}) for good? It cannot be undone"
        if not yes and not typer.confirm(question, default=False, err=True):
            _fail("nothing was erased", Exit.INTERNAL, "pass --yes to erase without asking")
        if rejection:
            tombstone = opened.erase_rejection(target_id, reason, by=_who())
        else:
            tombstone = opened.erase(target_id, reason, by=_who())
    if as_json:
        typer.echo(_json(tombstone))
        return
    versions = len(tombstone.fact_ids) or len(tombstone.rejection_ids)
    out.print(
        f"erased {what} {tombstone.target_id} ({versions} version(s), "
        f"{len(tombstone.evidence)} evidence row(s)); tombstone {tombstone.id}"
    )
    for kept in tombstone.kept_evidence_ids:
        out.print(f"kept evidence {kept}: another fact or rejection still cites it")


# -- reads -------------------------------------------------------------------------


@command()
def get(
    ctx: typer.Context,
    fact_id: Annotated[str, typer.Argument(metavar="FACT_ID", show_default=False)],
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one fact: statement, members, status, confidence and the gate's numbers."""
    with _open(ctx, store, namespace, index=False) as opened:
        fact = opened.get_fact(fact_id)
    if as_json:
        typer.echo(_json(fact))
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
        ("p1 / p0", f"{_num(fact.p1)} / {_num(fact.p0)}"),
        ("bits required / observed", f"{_num(fact.required_bits)} / {_num(fact.observed_bits)}"),
        ("recorded", fact.recorded_at.isoformat(timespec="seconds")),
        (
            "next check",
            fact.next_check_at.isoformat(timespec="seconds") if fact.next_check_at else "",
        ),
        ("evidence", ", ".join(c.evidence_id for c in fact.citations)),
    ):
        table.add_row(name, value)
    out.print(table)


@command()
def neighbors(
    ctx: typer.Context,
    entity: Annotated[list[str], typer.Argument(help="Entity names or aliases.")],
    hops: Annotated[int, typer.Option(min=0, max=10, help="Entity-fact-entity steps.")] = 1,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Facts and entities within HOPS steps of the given entities."""
    with _open(ctx, store, namespace, index=False) as opened:
        hood = opened.neighborhood(entity, hops)
    if as_json:
        typer.echo(_json(hood))
        return
    entities = Table("entity", "kind", "hops", title="Entities", title_justify="left")
    for e in hood.entities:
        entities.add_row(e.name, e.kind, str(hood.distance.get(e.id, 0)))
    out.print(entities)
    _print_facts(hood.facts, "Facts")


@command()
def history(
    ctx: typer.Context,
    fact_id: Annotated[
        str, typer.Argument(metavar="FACT_ID", help="The fact's id.", show_default=False)
    ],
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a fact and every verification of it: what the gate said, when and why."""
    with _open(ctx, store, namespace, index=False) as opened:
        fact = opened.get_fact(fact_id)
        rows = opened.verifications(fact_id)
        if as_json:
            chain = opened.history(fact_id)
            typer.echo(_json({"fact": fact, "versions": chain, "verifications": rows}))
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
    k: Annotated[int, typer.Option("-k", min=1, max=1000, help="How many hits.")] = 10,
    mode: Annotated[str, typer.Option(help="hybrid, vector (meaning) or text (keywords).")] = (
        "hybrid"
    ),
    evidence: Annotated[
        bool, typer.Option("--evidence", help="Search evidence chunks instead of facts.")
    ] = False,
    index: IndexOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Facts (or evidence) of a namespace that best match QUERY, by meaning and keywords."""
    with _open(ctx, store, namespace, index=index) as opened:
        if evidence:
            chunks = opened.search_evidence(query, k, mode=mode)
        else:
            facts = opened.search(query, k, mode=mode)
    if as_json:
        typer.echo(_json(chunks if evidence else facts))
        return
    if evidence:
        table = Table("#", "score", "source", "version", "text")
        for n, chunk in enumerate(chunks, 1):
            table.add_row(
                str(n), f"{chunk.score:.4f}", chunk.source, str(chunk.version), chunk.text
            )
    else:
        table = Table("#", "score")
        table.add_column("fact", no_wrap=True, min_width=32)
        table.add_column("status")
        table.add_column("conf.")
        table.add_column("statement", ratio=1)
        for n, hit in enumerate(facts, 1):
            fact = hit.fact
            table.add_row(
                str(n),
                f"{hit.score:.4f}",
                fact.id,
                fact.status,
                f"{fact.confidence:.2f}",
                fact.statement,
            )
    out.print(table)
    if table.row_count == 0:
        out.print(f"Nothing in namespace {opened.namespace!r} matches; try other words or -n.")


@command()
def stats(
    ctx: typer.Context,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """What a namespace holds: facts by status, rejections by verdict, what is due."""
    with _open(ctx, store, namespace, index=False) as opened:
        numbers = opened.stats()
    if as_json:
        typer.echo(_json(numbers))
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


# -- the audit log -----------------------------------------------------------------


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
    where: dict[str, Any] = {
        "verdict": verdict or None,
        "since": _when("since", since),
        "until": _when("until", until),
        "text": text,
        "entity": entity,
        "relation": relation,
        "source": source,
        "min_gap": min_gap,
    }
    where = {name: value for name, value in where.items() if value is not None}
    with _open(ctx, store, namespace, index=False) as opened:
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
        typer.echo(_json(rows))
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
            _num(r.budget_gap),
            r.statement,
        )
    out.print(table)
    if not rows:
        out.print(f"No rejections in namespace {opened.namespace!r} match.")
    elif len(rows) == limit:
        out.print(f"First {limit}; more with --offset {offset + limit} or --format csv.")
    if rows:
        out.print("p0, p1, bits and the evidence of each: --format json, or --format csv")


# -- re-verification and the index -------------------------------------------------


@command()
def reverify(
    ctx: typer.Context,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="Namespace to work on (repeat for several)."),
    ] = None,
    all_namespaces: Annotated[
        bool, typer.Option("--all-namespaces", help="Every namespace with facts to re-check.")
    ] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="Keep running every --every (Ctrl-C stops).")
    ] = False,
    once: Annotated[bool, typer.Option("--once", help="One run, then exit (default).")] = False,
    every: Annotated[
        str | None, typer.Option(help="With --watch: time between runs (30s, 5m, 1h).")
    ] = None,
    everything: Annotated[
        bool, typer.Option("--all", help="Re-check every open fact now, not only due ones.")
    ] = False,
    limit: Annotated[int | None, typer.Option(min=1, help="Most facts per run.")] = None,
    batch: Annotated[
        int | None, typer.Option(min=1, max=db.IN_LIST_CHUNK, help="Facts per gate call.")
    ] = None,
    lease: Annotated[str | None, typer.Option(help="How long a claimed fact stays leased.")] = (
        None
    ),
    gate: Annotated[
        str | None, typer.Option(help="Verifier backend (default: the configured one).")
    ] = None,
    fetch_timeout: Annotated[
        float | None, typer.Option(min=0.1, max=600, help="Seconds to wait for an http(s) source.")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Re-verify facts whose check is due: refresh their sources and re-run the gate."""
    if watch and once:
        raise InvalidInput("watch", "give --once or --watch, not both")
    if all_namespaces and namespace:
        raise InvalidInput("all_namespaces", "give --namespace or --all-namespaces, not both")
    settings = _settings(ctx, store)
    scheduler = settings.scheduler
    interval = _duration("every", every) if every is not None else scheduler.every
    options = scheduler.options()
    for name, value in (("limit", limit), ("batch", batch), ("fetch_timeout", fetch_timeout)):
        if value is not None:
            options[name] = value
    if lease is not None:
        options["lease"] = _duration("lease", lease)
    if gate is not None:
        options["gate"] = gate
    _require_store(settings)  # after the arguments: a usage error is named first
    names = _namespaces(settings, namespace, all_namespaces)
    if watch:
        _watch(settings, names, interval, options, everything)
        return
    reports = []
    for name in names:
        with settings.open(name) as opened:
            if everything:
                opened.mark_due()
            reports.append(_run_with_progress(opened, options))
    _print_reports(reports, settings.store.url)


@command()
def policy(
    ctx: typer.Context,
    every: Annotated[
        str | None, typer.Option(help="Re-check decided facts this long after (e.g. 12h).")
    ] = None,
    retry: Annotated[
        str | None, typer.Option(help="First retry after an error (doubles per failure).")
    ] = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
) -> None:
    """Show, or set with --every / --retry, a namespace's re-verification policy."""
    changes = {
        name: _duration(option, value)
        for name, option, value in (
            ("recheck_after", "every", every),
            ("retry_after", "retry", retry),
        )
        if value is not None
    }
    with _open(ctx, store, namespace, index=False) as opened:
        current = opened.set_reverify_policy(**changes) if changes else opened.reverify_policy()
        due = opened.count_due()
    table = Table("namespace", "re-check after", "retry after an error", "due now")
    table.add_row(
        opened.namespace,
        format_duration(current.recheck_after),
        f"{format_duration(current.retry_after)}, doubling, at most "
        f"{format_duration(current.recheck_after)}",
        str(due),
    )
    out.print(table)
    if changes:
        out.print("Saved. Facts already scheduled keep their time; `reverify --all` re-checks now.")


@command()
def reindex(ctx: typer.Context, index: IndexOption = None, store: StoreOption = None) -> None:
    """Rebuild the search index (every namespace) from the database."""
    with _open(ctx, store, None, index=index) as opened:
        columns = (
            TextColumn("reindexing"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("facts + evidence"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=err) as bar:
            task = bar.add_task("reindex", total=None)
            rebuilt = opened.reindex(
                progress=lambda done, total: bar.update(task, completed=done, total=total)
            )
    table = Table("index", "facts", "evidence chunks")
    table.add_row(str(opened.index_uri), str(rebuilt.facts), str(rebuilt.chunks))
    out.print(table)


# -- servers, demo, benchmark ------------------------------------------------------


@command()
def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="Address to listen on (server.host).")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="Port (server.port).")] = None,
    store: StoreOption = None,
) -> None:
    """Serve the REST API (FastAPI; OpenAPI docs at /docs) for the namespaces API keys allow."""
    settings = _settings(ctx, store)
    try:
        from memstore import rest
    except ImportError as exc:
        _fail(f"{exc}", Exit.INTERNAL, "install the server extra: pip install 'memstore[server]'")
    rest.run(settings, host=host, port=port)


@command()
def mcp(
    ctx: typer.Context,
    transport: Annotated[
        str, typer.Option(help="stdio (for an agent that starts memstore) or http.")
    ] = "stdio",
    host: Annotated[str | None, typer.Option(help="With http: address (server.host).")] = None,
    port: Annotated[
        int | None, typer.Option(min=1, max=65535, help="With http: port (server.port + 1).")
    ] = None,
    allow_unauthenticated: Annotated[
        bool,
        typer.Option(
            "--allow-unauthenticated",
            help="With http: serve without API keys when none are configured (loopback only).",
        ),
    ] = False,
    allow_erase: Annotated[
        bool,
        typer.Option(
            "--allow-erase",
            help="Offer the erase tool over stdio (or http without keys); over http with "
            "keys only the keys of server.erase_keys may erase.",
        ),
    ] = False,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
) -> None:
    """Serve one namespace as MCP tools: remember, recall, verify_claim, audit_rejections
    (and erase: with --allow-erase over stdio, for server.erase_keys over http).

    Over http clients send Authorization: Bearer KEY, a key of server.api_keys that may
    use the namespace (the REST API's keys)."""
    if transport not in ("stdio", "http"):
        raise InvalidInput("transport", f"{transport!r} is not stdio or http")
    settings = _settings(ctx, store, namespace)
    from memstore import mcp_server

    try:
        mcp_server.run(
            settings,
            transport="http" if transport == "http" else "stdio",
            host=host,
            port=port,
            allow_unauthenticated=allow_unauthenticated,
            allow_erase=allow_erase,
        )
    except ImportError as exc:
        _fail(str(exc), Exit.INTERNAL, "install the server extra: pip install 'memstore[server]'")


@command()
def demo(
    data_dir: Annotated[
        Path | None, typer.Argument(help="Where to keep the demo's store (default: a temp dir).")
    ] = None,
) -> None:
    """Run the guided demo: gated writes, a rejection, history, re-verification, search."""
    from memstore.demo import main as run_demo

    if data_dir is not None and data_dir.exists() and any(data_dir.iterdir()):
        _fail(f"{data_dir} is not empty", Exit.BAD_INPUT, "remove it or give another directory")
    raise typer.Exit(run_demo([str(data_dir)] if data_dir is not None else []))


@command()
def bench(
    ctx: typer.Context,
    facts: Annotated[int, typer.Option(min=10, max=100_000, help="Facts to write.")] = 200,
    as_json: JsonOption = False,
) -> None:
    """Measure this machine: gated writes, verify_claim and search on a temporary store."""
    from memstore.quickbench import run as run_bench

    settings = _settings(ctx, None)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err) as bar:
        task = bar.add_task("benchmark", total=None)

        def progress(what: str, done: int, total: int) -> None:
            bar.update(task, description=what, completed=done, total=total)

        result = run_bench(settings, facts, progress)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    table = Table("measure", "value", title=f"memstore bench ({facts} facts)", title_justify="left")
    for name, value in result.items():
        table.add_row(name, value if isinstance(value, str) else f"{value:,.1f}")
    out.print(table)


# -- helpers -----------------------------------------------------------------------


def _settings(ctx: typer.Context, store: str | None, namespace: str | None = None) -> Settings:
    """Settings from --config, the environment, --store and --namespace (a command's
    options over the global ones)."""
    given: Globals = ctx.find_root().obj or Globals()
    chosen = {"url": store or given.store, "namespace": namespace or given.namespace}
    overrides = {name: value for name, value in chosen.items() if value}
    return load_settings(given.config, **({"store": overrides} if overrides else {}))


def _open(
    ctx: typer.Context,
    store: str | None,
    namespace: str | None,
    index: str | bool | None = None,
    *,
    create: bool = False,
) -> Store:
    """The store the options and settings name; ``index=False`` skips the search index.

    Unless ``create``, a data directory or SQLite file without a store is refused
    (exit 2) before anything is created.
    """
    settings = _settings(ctx, store, namespace)
    if not create:
        _require_store(settings)
    options: dict[str, Any] = {} if index is None else {"index": index}
    return settings.open(**options)


def _require_store(settings: Settings) -> None:
    """Exit 2, naming the path, when the settings' SQLite store does not exist."""
    url = settings.store.url
    missing = _missing_store(url)
    if missing is not None:
        _fail(
            f"no memstore store at {missing}",
            Exit.BAD_INPUT,
            f"create it with `memstore --store {url} init`, or point --store / "
            f"${URL_ENV} at an existing store",
        )


def _missing_store(url: str) -> Path | None:
    """Where a SQLite store should be but is not: the data directory (holding no
    database file) or the database file. None when it exists, when it lives in memory,
    and for a database server's URL, which is not checked."""
    if "://" not in url:
        data_dir = Path(url).expanduser()
        return None if (data_dir / db.SQLITE_FILENAME).is_file() else data_dir
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return None  # opening it reports the bad URL
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):  # a SQLite URI filename: left to SQLite
        return None
    path = Path(database).expanduser()
    return None if path.is_file() else path


def _check_claim(settings: Settings, claim: str, texts: list[str], confidence: float) -> Verdict:
    """The gate's verdict on ``claim``, as a store of these settings would give it,
    without opening a store (``Store.verify_claim`` less the store)."""
    try:
        check = ClaimCheck.model_validate(
            {"claim": claim, "evidence": texts, "confidence": confidence}
        )
    except ValidationError as exc:
        raise InvalidInput.from_validation(exc) from None
    evidence = [item.text for item in check.evidence]
    limits = Limits(settings.store.max_claims, settings.store.max_evidence_chars)
    limits.check_texts(evidence, "evidence")
    gate = settings.gate() or default_gate()
    policy = settings.hallucination.policy() if settings.hallucination.enabled else None
    return gate.check(check.claim, evidence, confidence=check.confidence, policy=policy)


def _namespaces(settings: Settings, given: list[str] | None, every: bool) -> list[str]:
    if not every:
        return given or [settings.store.namespace]
    settings.open(DEFAULT_NAMESPACE, index=False).close()  # opening migrates an older database
    url = db.database_url(settings.store.url)[0]
    engine = db.create_engine(url)
    try:
        with Session(engine) as session:
            return namespaces_with_checks(session)
    except sa.exc.SQLAlchemyError as exc:
        _fail(f"cannot read {url}: {exc}", Exit.INTERNAL, "check --store and the database")
    finally:
        engine.dispose()


def _fact_from_options(
    statement: str,
    members: list[str] | None,
    evidence: list[str] | None,
    evidence_files: list[Path] | None,
    quotes: list[str] | None,
) -> dict[str, Any]:
    items: list[dict[str, str]] = []
    for text in evidence or []:
        items.append({"text": sys.stdin.read() if text == "-" else text})
    for path in evidence_files or []:
        try:
            items.append(
                {"text": path.read_text(encoding="utf-8"), "source": path.resolve().as_uri()}
            )
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput("evidence_file", f"cannot read {path}: {exc}") from None
    parsed = [_member(text) for text in members or []]
    fact: dict[str, Any] = {"statement": statement, "members": parsed, "evidence": items}
    if quotes:
        fact["citations"] = [
            {"evidence": i, "quote": q}
            for q in quotes
            for i, item in enumerate(items)
            if q in item["text"]
        ]
        missing = [q for q in quotes if not any(q in item["text"] for item in items)]
        if missing:
            raise InvalidInput("quote", f"{missing[0]!r} is not in any evidence text")
    return fact


def _member(text: str) -> dict[str, str]:
    """``NAME[:KIND[:ROLE]]``; a name may itself hold colons (split from the right)."""
    parts = text.rsplit(":", 2) if text.count(":") >= 2 else text.split(":")
    keys = ("name", "kind", "role")
    return {key: part for key, part in zip(keys, parts, strict=False) if part}


def _read_facts(file: str) -> list[dict[str, Any]]:
    try:
        raw = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("file", f"cannot read {file}: {exc}") from None
    try:
        data = yaml.safe_load(raw)  # JSON is YAML
    except yaml.YAMLError as exc:
        raise InvalidInput("file", f"not JSON or YAML: {exc}") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise InvalidInput("file", "must hold a fact (a mapping) or a list of facts")
    if not data:
        raise InvalidInput("file", "holds no facts")
    return data


def _when(field: str, text: str | None) -> datetime | None:
    """An ISO 8601 time, or a span back from now such as ``7d``."""
    if text is None:
        return None
    try:
        span = parse_duration(text)
    except ValueError:
        pass
    else:
        try:
            return datetime.now(UTC) - span
        except OverflowError:
            raise InvalidInput(field, f"{text!r} reaches back before the year 1") from None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(field, f"{text!r} is not an ISO 8601 time or a span like 7d") from None
    try:
        return to_utc(when)
    except ValueError as exc:
        raise InvalidInput(field, f"{text!r} {exc}") from None


def _duration(field: str, text: str) -> timedelta:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise InvalidInput(field, str(exc)) from None


def _json(value: Any) -> str:
    """Pydantic models (and lists and dicts of them) as indented JSON."""

    def plain(v: Any) -> Any:
        if hasattr(v, "model_dump"):
            return v.model_dump(mode="json")
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return json.dumps(plain(value), indent=2)


def _masked(settings: Settings) -> dict[str, Any]:
    data = settings.model_dump(mode="json")
    data["server"]["api_keys"] = {
        f"{key[:4]}...({len(key)} chars)": patterns
        for key, patterns in settings.server.api_keys.items()
    }
    return data


def _settings_yaml(settings: Settings, masked: bool = False) -> str:
    data = _masked(settings) if masked else settings.model_dump(mode="json")
    return yaml.safe_dump(data, sort_keys=False)


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _print_stored(fact: FactPublic) -> None:
    if fact.deduplicated:
        out.print(f"already remembered as {fact.id} (same statement and members); nothing added")
    else:
        out.print(
            f"stored {fact.id}: {fact.status}, confidence {fact.confidence:.2f} ({fact.verdict})"
        )
    for dup in fact.near_duplicates:
        out.print(f"  near duplicate of {dup.fact_id} ({dup.similarity:.2f}): {dup.statement}")


def _print_facts(facts: Sequence[FactPublic], title: str) -> None:
    table = Table("id", "statement", "status", "confidence", title=title, title_justify="left")
    for f in facts:
        table.add_row(f.id, f.statement, f.status, f"{f.confidence:.2f}")
    out.print(table)


def _print_rejection(rejection: RejectionPublic) -> None:
    err.print(f"[red]rejected[/red] ({rejection.verdict}): {rejection.statement}")
    table = Table("p1", "p0", "bits required", "bits observed", "gap (bits)", "why", box=None)
    table.add_row(
        _num(rejection.p1),
        _num(rejection.p0),
        _num(rejection.required_bits),
        _num(rejection.observed_bits),
        _num(rejection.budget_gap),
        rejection.reason or "",
    )
    err.print(table)
    err.print(
        f"Nothing was stored. The rejection {rejection.id} is in the audit log: "
        f"memstore audit -n {rejection.namespace}"
    )


def _print_verdict(verdict: Verdict) -> None:
    table = Table("verdict", "accepted", "p1", "p0", "gap (bits)", "why", box=None)
    table.add_row(
        verdict.status.value,
        str(verdict.accepted),
        _num(verdict.p1),
        _num(verdict.p0),
        _num(verdict.budget_gap),
        verdict.reason or "",
    )
    out.print(table)


def _run_with_progress(store: Store, options: dict[str, Any]) -> ReverifyReport:
    columns = (
        TextColumn(f"re-verifying {store.namespace}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=False) as bar:
        task = bar.add_task("reverify", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return store.reverify(progress=progress, **options)


def _print_reports(reports: list[ReverifyReport], where: str) -> None:
    summary = Table(title="Re-verification")
    for column in ("namespace", "checked", "still verified", "unverified", "stale"):
        summary.add_column(column, justify="right" if column != "namespace" else "left")
    more = ("contradicted", "errors", "still pending", "skipped", "new versions", "duration")
    for column in more:
        summary.add_column(column, justify="right")
    for r in reports:
        still = sum(1 for c in r.checks if c.outcome == "verified" and not c.changed)
        summary.add_row(
            r.namespace,
            str(r.checked),
            str(still),
            str(r.count("unverified")),
            str(r.count("stale")),
            str(r.count("contradicted")),
            str(r.count("error")),
            str(r.still_pending),
            str(r.count("skipped")),
            str(r.new_versions),
            f"{r.duration_s:.1f} s",
        )
    out.print(summary)
    changed = [
        (r.namespace, c) for r in reports for c in r.checks if c.changed or c.outcome == "error"
    ]
    if changed:
        table = Table(title="What changed")
        for column in ("namespace", "fact", "statement", "status", "confidence", "why"):
            table.add_column(column, overflow="fold")
        for namespace, c in changed:
            table.add_row(
                namespace,
                c.fact_id,
                c.statement if len(c.statement) <= 60 else c.statement[:57] + "...",
                f"{c.status_before} -> {c.status_after}",
                f"{c.confidence_before:.2f} -> {c.confidence:.2f}",
                f"{c.verdict}: {c.reason}" if c.reason else c.verdict,
            )
        out.print(table)
        namespace, first = changed[0]
        out.print(
            f"See why, fact by fact: memstore history {first.fact_id} --store {where} "
            f"-n {namespace}"
        )
    elif not any(r.checks for r in reports):
        out.print("Nothing was due. Use --all to re-check every fact now.")


def _watch(
    settings: Settings,
    names: list[str],
    every: timedelta,
    options: dict[str, Any],
    everything: bool,
) -> None:
    from memstore.scheduler import watch

    if everything:
        for name in names:
            with settings.open(name, index=False) as opened:
                opened.mark_due()
    signal.signal(signal.SIGTERM, _interrupt)
    # A run still going when the next is due is skipped on purpose (one at a time).
    logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)
    err.print(
        f"watching {', '.join(names)} every {format_duration(every)}; the schedule is kept in "
        "the database. Ctrl-C stops."
    )

    def report(done: ReverifyReport) -> None:
        if done.checks:
            out.print(f"[dim]{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC[/dim]")
            _print_reports([done], settings.store.url)

    watch(settings.store.url, names, every, options, reporter=report, opener=settings.open)


def _interrupt(_signum: int, _frame: object) -> NoReturn:
    raise KeyboardInterrupt


def _who() -> str:
    """Who runs an erase, for its tombstone: ``cli:<login name>``."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no name for this uid (a container, say)
        return "cli"


def _fail(message: str, code: Exit = Exit.INTERNAL, then: str | None = None) -> NoReturn:
    err.print(f"[red]error:[/red] {message}")
    if then:
        err.print(f"  next: {then}")
    raise typer.Exit(int(code))


def main() -> None:
    """Console entry point: anything unexpected is a message and exit code 1."""
    try:
        app()
    except MemstoreError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise SystemExit(Exit.INTERNAL) from None


if __name__ == "__main__":
    main()
