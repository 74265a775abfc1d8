"""Setting up: ``init`` (create or upgrade the store) and ``config show``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml
from pydantic import SecretStr

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
        typer.Option(
            help="Also write the settings in effect, secrets included, to this new YAML file "
            "(readable by you alone), for --config."
        ),
    ] = None,
) -> None:
    """Create the store (or upgrade it to the current schema) and say what to do next."""
    chosen = settings(ctx, store, namespace)
    if write_config is not None and write_config.exists():
        fail(f"{write_config} exists", Exit.BAD_INPUT, "pick another path or remove it")
    with chosen.open() as opened:  # settings that open a store, before they are written
        stats = opened.stats()
    if write_config is not None:
        _write_new(write_config, settings_yaml(chosen))
    out.print(f"store ready at {opened.url} (namespace {opened.namespace!r})")
    out.print(f"  {sum(stats.facts.values())} facts, {sum(stats.rejections.values())} rejections")
    if write_config is not None:
        out.print(
            f"  settings written to {write_config} (secrets included, mode 600); use it with "
            f"--config {write_config}"
        )
    out.print(
        'Next: memstore add "STATEMENT" -m NAME:KIND:ROLE -e "EVIDENCE TEXT"   '
        "(memstore add --help)"
    )


def _write_new(path: Path, text: str) -> None:
    """Create ``path`` with ``text``, readable by its owner alone; never over a file."""
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        fail(f"{path} exists", Exit.BAD_INPUT, "pick another path or remove it")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror}", Exit.BAD_INPUT, "pick another path")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
    except BaseException as exc:  # no half-written file to refuse the next try with
        path.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            fail(f"cannot write {path}: {exc.strerror}", Exit.BAD_INPUT, "pick another path")
        raise


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
    """The settings as YAML: with ``masked`` API keys masked and secrets starred (to
    show), else all in the clear (what ``--config`` reads back as the same settings)."""
    if masked:
        data = masked_settings(chosen)
    else:
        data = _revealed(chosen.model_dump(mode="json"), chosen.model_dump())
    return yaml.safe_dump(data, sort_keys=False)


def _revealed(shown: Any, values: Any) -> Any:
    """``shown`` (a JSON dump, secrets starred) with each secret of ``values`` (the same
    settings dumped as Python objects) in the clear."""
    if isinstance(values, SecretStr):
        return values.get_secret_value()
    if isinstance(shown, dict) and isinstance(values, dict):
        return {k: _revealed(v, values.get(k)) for k, v in shown.items()}
    if isinstance(shown, list) and isinstance(values, list | tuple) and len(shown) == len(values):
        return [_revealed(s, v) for s, v in zip(shown, values, strict=True)]
    return shown
