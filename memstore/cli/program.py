"""The root command: the Typer application, its global options, the ``config`` group,
the ``command`` decorator that turns memstore errors into messages and exit codes, and
``main``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, ParamSpec, TypeVar

import typer

from memstore.cli.console import Exit, err, fail
from memstore.cli.context import Globals
from memstore.cli.render import print_rejection
from memstore.defaults import CONFIG_ENV, NAMESPACE_ENV, URL_ENV
from memstore.errors import ErrFactNotGrounded, InvalidInput, MemstoreError, NotFound

P = ParamSpec("P")
R = TypeVar("R")

app = typer.Typer(
    help="memstore: long-term memory for agents, every fact grounded in evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
config_app = typer.Typer(help="The settings in effect (config file, environment, defaults).")
app.add_typer(config_app, name="config")


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
        typed = name or fn.__name__.replace("_", "-")  # as Typer names it

        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            from gate import ConfigError  # here, not at import: ``--help`` loads no gate

            try:
                return fn(*args, **kwargs)
            except ErrFactNotGrounded as exc:
                print_rejection(exc.rejection)
                raise typer.Exit(Exit.REJECTED) from None
            except ConfigError as exc:
                fail(
                    f"bad settings: {exc}", Exit.BAD_INPUT, "fix it, or see `memstore config show`"
                )
            except InvalidInput as exc:
                fail(str(exc), Exit.BAD_INPUT, f"see `memstore {typed} --help`")
            except NotFound as exc:
                fail(str(exc), Exit.BAD_INPUT, "check the id or name, and the namespace (-n)")
            except MemstoreError as exc:
                fail(str(exc), Exit.INTERNAL, "check --store / $MEMSTORE_URL and the database")

        parent.command(name)(run)
        return run

    return register


def main() -> None:
    """Console entry point: anything unexpected is a message and exit code 1."""
    try:
        app()
    except MemstoreError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise SystemExit(Exit.INTERNAL) from None
