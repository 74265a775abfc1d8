"""Option parsing shared by the commands: the common options, the Store's filters from
a command's options, facts from options or a file, times and durations.

A command that filters declares each filter as an option under the Store's name (or its
``memstore.fronts.FILTER_PARAMS`` name) and hands them on with ``store_filters``."""

from __future__ import annotations

import json
import sys
from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from memstore.defaults import MAX_LIST_LIMIT, NAMESPACE_ENV, URL_ENV
from memstore.durations import parse_duration
from memstore.errors import InvalidInput

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
FactIdArgument = Annotated[str, typer.Argument(metavar="FACT_ID", show_default=False)]
EntityOption = Annotated[
    list[str] | None,
    typer.Option(help="Only facts with this entity as a member (repeat: with all of them)."),
]
StatusOption = Annotated[
    list[str] | None,
    typer.Option(help="Fact statuses (repeat; default: verified and unverified)."),
]
AsOfOption = Annotated[
    str | None, typer.Option(help="Only facts that held at this world time (ISO 8601 or 7d).")
]
RecordedAfterOption = Annotated[
    str | None, typer.Option(help="Recorded at or after this time (ISO 8601 or 7d).")
]
RecordedBeforeOption = Annotated[
    str | None, typer.Option(help="Recorded before this time (ISO 8601 or 7d).")
]
MetaOption = Annotated[
    list[str] | None,
    typer.Option(
        "--meta",
        help="Metadata: KEY=TEXT, or KEY:=JSON for a number, true, false or null (repeat).",
        show_default=False,
    ),
]
LimitOption = Annotated[
    int, typer.Option(min=1, max=MAX_LIST_LIMIT, help="Facts per page (up to 1,000).")
]
CursorOption = Annotated[
    str | None, typer.Option(help="Where the previous page ended (it prints the option).")
]
IndexOption = Annotated[
    str | None,
    typer.Option(
        "--index",
        help="Search index directory or LanceDB URI (default: STORE/index, or "
        "$MEMSTORE_INDEX_URI for a database URL).",
    ),
]


#: Filters that take a time: ISO 8601, or a span back from now such as 7d (``when``).
TIME_FILTERS = frozenset({"since", "until", "as_of", "recorded_after", "recorded_before"})


def store_filters(ctx: typer.Context, names: Collection[str]) -> dict[str, Any]:
    """The filters among ``names`` (``memstore.fronts.LIST_FILTERS``, ...) that the
    command offers, from its parsed options (``ctx.params``, read in the order declared)
    as the Store takes them: under the Store's names, times read by ``when``, metadata
    items by ``metadata_items``, a repeatable option not given as None."""
    from memstore.fronts import FILTER_PARAMS, metadata_items

    options = {FILTER_PARAMS.get(name, name): name for name in names}
    where: dict[str, Any] = {}
    for option, value in ctx.params.items():
        name = options.get(option)
        if name in TIME_FILTERS:
            where[name] = when(name, value)
        elif name == "metadata":
            where[name] = metadata_items(value)
        elif name is not None:
            where[name] = (list(value) or None) if isinstance(value, list | tuple) else value
    return where


def fact_from_options(
    statement: str,
    members: list[str] | None,
    evidence: list[str] | None,
    evidence_files: list[Path] | None,
    quotes: list[str] | None,
) -> dict[str, Any]:
    """A fact (as ``Store.add_fact`` takes it) from ``add``'s options."""
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
    parsed = [member(text) for text in members or []]
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


def member(text: str) -> dict[str, str]:
    """``NAME[:KIND[:ROLE]]``; a name may itself hold colons (split from the right)."""
    parts = text.rsplit(":", 2) if text.count(":") >= 2 else text.split(":")
    keys = ("name", "kind", "role")
    return {key: part for key, part in zip(keys, parts, strict=False) if part}


def read_facts(file: str) -> list[dict[str, Any]]:
    """The facts of a JSON or YAML file ('-': stdin): one mapping or a list of them."""
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


def read_messages(file: str) -> list[Any]:
    """The messages of a conversation from a file ('-': stdin): a JSON list of messages,
    or JSON lines (one message a line); each message is checked later, by the store."""
    try:
        raw = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("file", f"cannot read {file}: {exc}") from None
    if not raw.strip():
        raise InvalidInput("file", "holds no messages")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        data = None  # not one JSON document: JSON lines
    else:
        return data if isinstance(data, list) else [data]
    lines = []
    for number, line in enumerate(raw.splitlines(), 1):
        if line.strip():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError as exc:
                reason = f"line {number} is not JSON ({exc.msg}); give a JSON list or JSON lines"
                raise InvalidInput("file", reason) from None
    return lines


def when(field: str, text: str | None) -> datetime | None:
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
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(field, f"{text!r} is not an ISO 8601 time or a span like 7d") from None
    from memstore.schemas import to_utc

    try:
        return to_utc(moment)
    except ValueError as exc:
        raise InvalidInput(field, f"{text!r} {exc}") from None


def duration(field: str, text: str) -> timedelta:
    """A span such as ``30s``, ``5m`` or ``12h``; InvalidInput naming ``field`` if not."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise InvalidInput(field, str(exc)) from None
