"""Option parsing shared by the commands: the common options, the Store's filters from
a command's options, facts from options or a file, times and durations.

A command declares each option under the name of the Store parameter it sets (``statuses``,
``metadata``, ``budget_tokens``, ...), with the Store's bounds; an older spelling stays
as an alias (``--status``, ``--meta``, ``--budget``). A command that filters hands its
filters on with ``store_filters``."""

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
StatusesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--statuses",
        "--status",
        help="Fact statuses (repeat; default: verified and unverified).",
        show_default=False,
    ),
]
RelationOption = Annotated[
    str | None, typer.Option("--relation", "-r", help="Only facts of this relation.")
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
MetadataOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metadata",
        "--meta",
        help="Metadata: KEY=TEXT, or KEY:=JSON for a number, true, false or null (repeat).",
        show_default=False,
    ),
]

#: Bounds the Store checks that ``memstore.defaults`` does not hold:
#: ``memstore.schemas.MAX_SEARCH_K`` (``schemas`` loads pydantic and the gate, which
#: ``--help`` must not) and ``rejection_page``'s offset, a number written in
#: ``memstore.inputs``. ``tests/memstore/cli/test_cli_contract.py`` holds them to the Store's.
MAX_SEARCH_K = 1_000
MAX_OFFSET = 2**63 - 1

LimitOption = Annotated[
    int, typer.Option(min=1, max=MAX_LIST_LIMIT, help="Facts per page (up to 1,000).")
]
KOption = Annotated[
    int, typer.Option("--k", "-k", min=1, max=MAX_SEARCH_K, help="How many hits (up to 1,000).")
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
    command offers, from its parsed options (``ctx.params``, read in the order declared,
    each under the Store's name) as the Store takes them: times read by ``when``,
    metadata items by ``metadata_items``, a repeatable option not given as None."""
    from memstore.fronts import metadata_items

    wanted = set(names)
    where: dict[str, Any] = {}
    for name, value in ctx.params.items():
        if name not in wanted:
            continue
        if name in TIME_FILTERS:
            where[name] = when(name, value)
        elif name == "metadata":
            where[name] = metadata_items(value)
        else:
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
