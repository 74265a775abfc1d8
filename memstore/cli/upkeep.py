"""Keeping memory current: ``reverify`` (once or ``--watch``), ``policy``, ``reindex``
and ``index-worker``."""

from __future__ import annotations

import logging
import signal
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from memstore.cli.console import Exit, err, fail, out
from memstore.cli.context import open_store, require_store, settings
from memstore.cli.parsing import IndexOption, NamespaceOption, StoreOption, duration
from memstore.cli.program import command
from memstore.defaults import IN_LIST_CHUNK, MAX_REVERIFY_LIMIT
from memstore.durations import format_duration
from memstore.errors import InvalidInput, MemstoreError, StorageError

if TYPE_CHECKING:  # imported when a command runs: ``--help`` loads no store
    from memstore.config import Settings
    from memstore.reverify.run import ReverifyReport
    from memstore.store import Store


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
    limit: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_REVERIFY_LIMIT,
            help="Most facts per run (up to 100,000) [default: scheduler.limit].",
            show_default=False,
        ),
    ] = None,
    batch: Annotated[
        int | None, typer.Option(min=1, max=IN_LIST_CHUNK, help="Facts per gate call.")
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
    chosen = settings(ctx, store)
    scheduler = chosen.scheduler
    interval = duration("every", every) if every is not None else scheduler.every
    options = scheduler.options()
    for name, value in (("limit", limit), ("batch", batch), ("fetch_timeout", fetch_timeout)):
        if value is not None:
            options[name] = value
    if lease is not None:
        options["lease"] = duration("lease", lease)
    if gate is not None:
        options["gate"] = gate
    require_store(chosen)  # after the arguments: a usage error is named first
    names = namespaces(chosen, namespace, all_namespaces)
    if watch:
        watch_namespaces(chosen, names, interval, options, everything)
        return
    reports = []
    for name in names:
        with chosen.open(name) as opened:
            if everything:
                opened.mark_due()
            reports.append(run_with_progress(opened, options))
    print_reports(reports, chosen.store.url)


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
        name: duration(option, value)
        for name, option, value in (
            ("recheck_after", "every", every),
            ("retry_after", "retry", retry),
        )
        if value is not None
    }
    # Setting a policy may come before the namespace's first write; showing one may not.
    with open_store(ctx, store, namespace, index=False, any_namespace=bool(changes)) as opened:
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
    with open_store(ctx, store, None, index=index, any_namespace=True) as opened:  # all
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


@command("index-worker")
def index_worker(
    ctx: typer.Context,
    once: Annotated[
        bool, typer.Option("--once", help="Apply what is queued now, then exit.")
    ] = False,
    report: Annotated[
        str, typer.Option(help="Time between two status lines while running (e.g. 30s).")
    ] = "10s",
    index: IndexOption = None,
    store: StoreOption = None,
) -> None:
    """Apply queued search-index changes of every namespace, for API workers that write
    with index_writes: queued (or background); runs until Ctrl-C or SIGTERM. One process at a time
    applies (elected through the database); others wait and take over when it stops."""
    every = duration("report", report).total_seconds()
    options: dict[str, Any] = {"index": index} if index is not None else {}
    chosen = settings(ctx, store)
    require_store(chosen)
    object_store = chosen.store.object_store
    if object_store.read_cache is not None:  # it does not search: no copy to keep
        options["object_store"] = object_store.model_copy(update={"read_cache": None})
    from memstore.write.hook import Ungated

    writes = "inline" if once else "background"
    with chosen.open(hook=Ungated(), index_writes=writes, **options) as opened:
        if once:
            applied = opened.sync_index()
            out.print(f"applied {applied} queued change(s) to the index at {opened.index_uri}")
            return
        run_index_worker(opened, every)


def run_index_worker(opened: Store, every: float) -> None:
    """``index-worker``'s loop: say when this process starts or stops applying, and print
    where the queue stands every ``every`` seconds, until Ctrl-C or SIGTERM (then the
    store's close applies what is queued, when leading)."""
    import time

    signal.signal(signal.SIGTERM, _interrupt)
    problem = opened.index_status().problem
    if problem is not None:
        fail(f"cannot apply changes to the search index: {problem}", Exit.BAD_INPUT)
    err.print(
        f"index worker for {opened.index_uri}: applies queued changes of every namespace "
        "while it holds the applier lease; Ctrl-C stops."
    )
    leading: bool | None = None
    last_report = time.monotonic()
    try:
        while True:
            time.sleep(min(1.0, every))
            try:
                status = opened.index_status()
            except MemstoreError as exc:  # the database went away: the writer retries
                err.print(f"cannot read the queue now: {exc}")
                continue
            if status.leading is not None and status.leading != leading:
                leading = status.leading
                out.print(
                    "leading: applying the queue"
                    if leading
                    else "following: another process applies the queue; taking over if it stops"
                )
            if time.monotonic() - last_report >= every:
                last_report = time.monotonic()
                done = status.applied
                out.print(
                    f"applied {done.rows} change(s) ({done.facts} facts, {done.chunks} evidence "
                    f"chunks) in {done.seconds:.1f} s of work; queued {status.queued}, "
                    f"{status.behind_s:.1f} s behind"
                )
    except KeyboardInterrupt:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the close
        err.print("stopping: applying what is queued first (when leading)")


def namespaces(chosen: Settings, given: list[str] | None, every: bool) -> list[str]:
    """The namespaces to re-verify: those given (default: the settings' one), or with
    ``every`` each namespace of the database that has facts to re-check."""
    from memstore.storage.probes import namespaces_to_recheck
    from memstore.store import DEFAULT_NAMESPACE

    if not every:
        return given or [chosen.store.namespace]
    chosen.open(DEFAULT_NAMESPACE, index=False).close()  # opening migrates an older database
    try:
        return namespaces_to_recheck(chosen.store.url)
    except StorageError as exc:
        fail(str(exc), Exit.INTERNAL, "check --store and the database")


def run_with_progress(store: Store, options: dict[str, Any]) -> ReverifyReport:
    """One re-verification run of ``store``, with a progress bar on stderr."""
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


def print_reports(reports: list[ReverifyReport], where: str) -> None:
    """A summary row per namespace, then the facts whose status changed (or failed)."""
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


def watch_namespaces(
    chosen: Settings,
    names: list[str],
    every: timedelta,
    options: dict[str, Any],
    everything: bool,
) -> None:
    """``reverify --watch``: run every ``every`` until Ctrl-C (or SIGTERM), reporting
    each run that checked something."""
    from memstore.reverify.scheduler import watch

    if everything:
        for name in names:
            with chosen.open(name, index=False) as opened:
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
            print_reports([done], chosen.store.url)

    watch(chosen.store.url, names, every, options, reporter=report, opener=chosen.open)


def _interrupt(_signum: int, _frame: object) -> NoReturn:
    raise KeyboardInterrupt
