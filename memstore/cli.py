"""The ``memstore`` command line.

Exit codes: 0 done; 1 the store could not be opened or a database error stopped
the work; 2 bad usage (unknown option, bad duration, ...).
"""

from __future__ import annotations

import logging
import re
import signal
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, NoReturn

import sqlalchemy as sa
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from sqlmodel import Session

from memstore import db
from memstore.errors import MemstoreError
from memstore.reverify import (
    DEFAULT_BATCH,
    DEFAULT_LEASE,
    DEFAULT_LIMIT,
    ReverifyReport,
    namespaces_with_checks,
)
from memstore.store import DEFAULT_NAMESPACE, Store

app = typer.Typer(
    help="memstore: long-term memory for agents, every fact grounded in evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """``90``, ``90s``, ``5m``, ``2h`` or ``1d`` as a positive timedelta."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise typer.BadParameter(f"{text!r} is not a duration like 30s, 5m, 2h or 1d")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2) or "s"])


StorePath = Annotated[
    str,
    typer.Argument(
        metavar="STORE", help="Data directory (SQLite) or a database URL.", show_default=False
    ),
]
Namespaces = Annotated[
    list[str] | None,
    typer.Option("--namespace", "-n", help="Namespace to work on (repeat for several)."),
]


@app.command()
def reverify(
    store: StorePath,
    namespace: Namespaces = None,
    all_namespaces: Annotated[
        bool, typer.Option("--all-namespaces", help="Every namespace with facts to re-check.")
    ] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="Keep running every --every (Ctrl-C stops).")
    ] = False,
    once: Annotated[bool, typer.Option("--once", help="One run, then exit (default).")] = False,
    every: Annotated[
        str, typer.Option(help="With --watch: time between runs (30s, 5m, 1h).")
    ] = "5m",
    everything: Annotated[
        bool, typer.Option("--all", help="Re-check every open fact now, not only due ones.")
    ] = False,
    limit: Annotated[int, typer.Option(min=1, help="Most facts per run.")] = DEFAULT_LIMIT,
    batch: Annotated[
        int, typer.Option(min=1, max=db.IN_LIST_CHUNK, help="Facts per gate call.")
    ] = DEFAULT_BATCH,
    lease: Annotated[str, typer.Option(help="How long a claimed fact stays leased.")] = (
        f"{int(DEFAULT_LEASE.total_seconds())}s"
    ),
    gate: Annotated[
        str | None, typer.Option(help="Verifier backend (default: the embedded one).")
    ] = None,
    fetch_timeout: Annotated[
        float, typer.Option(min=0.1, max=600, help="Seconds to wait for an http(s) source.")
    ] = 10.0,
) -> None:
    """Re-verify facts whose check is due: refresh their sources and re-run the gate."""
    if watch and once:
        raise typer.BadParameter("give --once or --watch, not both")
    if all_namespaces and namespace:
        raise typer.BadParameter("give --namespace or --all-namespaces, not both")
    interval = parse_duration(every)
    options: dict[str, Any] = {
        "limit": limit,
        "batch": batch,
        "lease": parse_duration(lease),
        "fetch_timeout": fetch_timeout,
    }
    if gate is not None:
        options["gate"] = gate
    names = _namespaces(store, namespace, all_namespaces)
    if watch:
        _watch(store, names, interval, every.strip(), options, everything)
        return
    reports = []
    for name in names:
        with _open(store, name) as opened:
            if everything:
                opened.mark_due()
            reports.append(_run_with_progress(opened, options))
    _print_reports(reports, store)


@app.command()
def history(
    store: StorePath,
    fact_id: Annotated[
        str, typer.Argument(metavar="FACT_ID", help="The fact's id.", show_default=False)
    ],
    namespace: Annotated[str, typer.Option("--namespace", "-n")] = DEFAULT_NAMESPACE,
) -> None:
    """Show a fact and every verification of it: what the gate said, when and why."""
    with _open(store, namespace) as opened:
        try:
            fact = opened.get_fact(fact_id)
            rows = opened.verifications(fact_id)
        except MemstoreError as exc:
            _fail(str(exc))
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


@app.command()
def policy(
    store: StorePath,
    namespace: Annotated[str, typer.Option("--namespace", "-n")] = DEFAULT_NAMESPACE,
    every: Annotated[
        str | None, typer.Option(help="Re-check decided facts this long after (e.g. 12h).")
    ] = None,
    retry: Annotated[
        str | None, typer.Option(help="First retry after an error (doubles per failure).")
    ] = None,
) -> None:
    """Show, or set with --every / --retry, a namespace's re-verification policy."""
    changes = {
        name: parse_duration(value)
        for name, value in (("recheck_after", every), ("retry_after", retry))
        if value is not None
    }
    with _open(store, namespace) as opened:
        current = opened.set_reverify_policy(**changes) if changes else opened.reverify_policy()
        due = opened.count_due()
    table = Table("namespace", "re-check after", "retry after an error", "due now")
    table.add_row(
        namespace,
        format_duration(current.recheck_after),
        f"{format_duration(current.retry_after)}, doubling, at most "
        f"{format_duration(current.recheck_after)}",
        str(due),
    )
    out.print(table)
    if changes:
        out.print("Saved. Facts already scheduled keep their time; `reverify --all` re-checks now.")


IndexOption = Annotated[
    str | None,
    typer.Option(
        "--index",
        help="Search index directory or LanceDB URI (default: STORE/index, or "
        "$MEMSTORE_INDEX_URI for a database URL).",
    ),
]


@app.command()
def reindex(store: StorePath, index: IndexOption = None) -> None:
    """Rebuild the search index (every namespace) from the database."""
    with _open(store, DEFAULT_NAMESPACE, index=index) as opened:
        columns = (
            TextColumn("reindexing"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("facts + evidence"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=err) as bar:
            task = bar.add_task("reindex", total=None)
            try:
                rebuilt = opened.reindex(
                    progress=lambda done, total: bar.update(task, completed=done, total=total)
                )
            except MemstoreError as exc:
                _fail(str(exc))
    table = Table("index", "facts", "evidence chunks")
    table.add_row(str(opened.index_uri), str(rebuilt.facts), str(rebuilt.chunks))
    out.print(table)


@app.command()
def search(
    store: StorePath,
    query: Annotated[str, typer.Argument(help="What to look for, in words.")],
    namespace: Annotated[str, typer.Option("--namespace", "-n")] = DEFAULT_NAMESPACE,
    k: Annotated[int, typer.Option("-k", min=1, max=1000, help="How many hits.")] = 10,
    evidence: Annotated[
        bool, typer.Option("--evidence", help="Search evidence chunks instead of facts.")
    ] = False,
    index: IndexOption = None,
) -> None:
    """Facts (or evidence) of a namespace that best match QUERY, by meaning and keywords."""
    with _open(store, namespace, index=index) as opened:
        try:
            if evidence:
                chunks = opened.search_evidence(query, k)
            else:
                facts = opened.search(query, k)
        except MemstoreError as exc:
            _fail(str(exc))
    if evidence:
        table = Table("#", "score", "source", "version", "text")
        for n, chunk in enumerate(chunks, 1):
            table.add_row(
                str(n), f"{chunk.score:.4f}", chunk.source, str(chunk.version), chunk.text
            )
    else:
        table = Table("#", "score", "fact", "status", "confidence", "statement")
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
        out.print(f"Nothing in namespace {namespace!r} matches; try other words or -n.")


def format_duration(value: timedelta) -> str:
    """The largest whole unit: ``90s``, ``5m``, ``24h``, ``2d`` (or seconds)."""
    seconds = value.total_seconds()
    for unit in ("d", "h", "m"):
        if seconds >= _UNITS[unit] and seconds % _UNITS[unit] == 0:
            return f"{int(seconds // _UNITS[unit])}{unit}"
    return f"{seconds:g}s"


def _namespaces(store: str, given: list[str] | None, every: bool) -> list[str]:
    if not every:
        return given or [DEFAULT_NAMESPACE]
    _open(store, DEFAULT_NAMESPACE).close()  # opening migrates an older database
    url = db.database_url(store)[0]
    engine = db.create_engine(url)
    try:
        with Session(engine) as session:
            return namespaces_with_checks(session)
    except sa.exc.SQLAlchemyError as exc:
        _fail(f"cannot read {url}: {exc}")
    finally:
        engine.dispose()


def _open(store: str, namespace: str, index: str | None = None) -> Store:
    """The store at STORE (a data directory or a database URL)."""
    try:
        return Store(store, namespace, index=index if index is not None else True)
    except MemstoreError as exc:
        _fail(str(exc))


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

        try:
            return store.reverify(progress=progress, **options)
        except MemstoreError as exc:
            _fail(str(exc))


def _print_reports(reports: list[ReverifyReport], store: str = "STORE") -> None:
    summary = Table(title="Re-verification")
    for column in ("namespace", "checked", "still verified", "unverified", "stale"):
        summary.add_column(column, justify="right" if column != "namespace" else "left")
    for column in ("contradicted", "errors", "skipped", "new versions", "duration"):
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
        out.print(f"See why, fact by fact: memstore history {store} {first.fact_id} -n {namespace}")
    elif not any(r.checks for r in reports):
        out.print("Nothing was due. Use --all to re-check every fact now.")


def _watch(
    store: str,
    names: list[str],
    every: timedelta,
    every_text: str,
    options: dict[str, Any],
    everything: bool,
) -> None:
    from memstore.scheduler import watch

    if everything:
        for name in names:
            with _open(store, name) as opened:
                opened.mark_due()
    signal.signal(signal.SIGTERM, _interrupt)
    # A run still going when the next is due is skipped on purpose (one at a time).
    logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)
    err.print(
        f"watching {', '.join(names)} every {every_text}; the schedule is kept in the "
        "database. Ctrl-C stops."
    )

    def report(done: ReverifyReport) -> None:
        if done.checks:
            out.print(f"[dim]{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC[/dim]")
            _print_reports([done], store)

    watch(store, names, every, options, reporter=report)


def _interrupt(_signum: int, _frame: object) -> NoReturn:
    raise KeyboardInterrupt


def _fail(message: str) -> NoReturn:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def main() -> None:
    """Console entry point: a store or database failure is a message and exit code 1."""
    try:
        app()
    except MemstoreError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
