"""Rendering shared by the commands: JSON output, numbers, fact and rejection tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.table import Table

from memstore.cli.console import err, out

if TYPE_CHECKING:
    from memstore.schemas import FactPublic, RejectionPublic


def to_json(value: Any) -> str:
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


def num(value: float | None) -> str:
    """A number with two decimals; empty for None."""
    return "" if value is None else f"{value:.2f}"


#: Headers of the columns that hold ids (wrapped at any character when space is short).
ID_HEADERS = frozenset({"id", "fact"})


def fitted(table: Table) -> Table:
    """``table`` made to fit the terminal by wrapping, never by dropping: the statement
    column takes the room left and wraps, ids wrap at any character rather than hold 32
    columns, and no cell is cut to "…". (A minimum width would push the table past the
    terminal's edge instead.)"""
    for column in table.columns:
        header = str(column.header)
        if header == "statement":
            column.ratio = 1
        elif header in ID_HEADERS:
            column.no_wrap, column.min_width = False, 8
        column.overflow = "fold"
    return table


def print_facts(facts: Sequence[FactPublic], title: str) -> None:
    """A table of facts: id, statement, status, confidence."""
    table = Table("id", "statement", "status", "confidence", title=title, title_justify="left")
    for f in facts:
        table.add_row(f.id, f.statement, f.status, f"{f.confidence:.2f}")
    out.print(fitted(table))


def print_more(cursor: str | None) -> None:
    """How to ask for the next page (to stderr), when there is one."""
    if cursor is not None:
        err.print(f"more: repeat with --cursor {cursor}")


def metadata_text(metadata: dict[str, Any]) -> str:
    """Metadata as ``--meta`` takes it: ``key=text`` for a string, else ``key:=json``."""
    return ", ".join(
        f"{k}={v}" if isinstance(v, str) else f"{k}:={json.dumps(v)}" for k, v in metadata.items()
    )


def print_rejection(rejection: RejectionPublic) -> None:
    """The gate's rejection of a fact, its numbers and where the audit log keeps it
    (to stderr)."""
    err.print(f"[red]rejected[/red] ({rejection.verdict}): {rejection.statement}")
    table = Table("p1", "p0", "bits required", "bits observed", "gap (bits)", "why", box=None)
    table.add_row(
        num(rejection.p1),
        num(rejection.p0),
        num(rejection.required_bits),
        num(rejection.observed_bits),
        num(rejection.budget_gap),
        rejection.reason or "",
    )
    err.print(table)
    err.print(
        f"Nothing was stored. The rejection {rejection.id} is in the audit log: "
        f"memstore audit -n {rejection.namespace}"
    )
