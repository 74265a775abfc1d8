"""Setting up: ``init`` (create or upgrade the store) and ``config show``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml

from memstore.cli.console import Exit, fail, out
from memstore.cli.context import settings
from memstore.cli.parsing import JsonOption, NamespaceOption, StoreOption
from memstore.cli.program import command, config_app

if TYPE_CHECKING:
    from memstore.config import Settings


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
    chosen = settings(ctx, store, namespace)
    if write_config is not None:
        if write_config.exists():
            fail(f"{write_config} exists", Exit.BAD_INPUT, "pick another path or remove it")
        write_config.write_text(settings_yaml(chosen), encoding="utf-8")
    with chosen.open() as opened:
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
    from gate import ConfigError

    try:
        chosen = settings(ctx, None, None)
    except ConfigError as exc:
        fail(f"bad settings: {exc}", Exit.BAD_INPUT, "fix the file or the environment")
    if as_json:
        typer.echo(json.dumps(masked_settings(chosen), indent=2))
    else:
        typer.echo(settings_yaml(chosen, masked=True), nl=False)


def masked_settings(chosen: Settings) -> dict[str, Any]:
    """The settings as plain data, each API key shown by its first 4 characters only."""
    data = chosen.model_dump(mode="json")
    data["server"]["api_keys"] = {
        f"{key[:4]}...({len(key)} chars)": patterns
        for key, patterns in chosen.server.api_keys.items()
    }
    return data


def settings_yaml(chosen: Settings, masked: bool = False) -> str:
    """The settings as YAML (a template for --config), API keys masked if ``masked``."""
    data = masked_settings(chosen) if masked else chosen.model_dump(mode="json")
    return yaml.safe_dump(data, sort_keys=False)
