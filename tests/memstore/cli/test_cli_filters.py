"""The CLI's filter options reach the Store under its names (``parsing.store_filters``):
each command's options parsed by its real click command, then handed on."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import typer

from memstore.cli import app
from memstore.cli.parsing import store_filters
from memstore.errors import InvalidInput
from memstore.fronts import (
    EVIDENCE_FILTERS,
    LIST_FILTERS,
    RECALL_FILTERS,
    REJECTION_FILTERS,
    SEARCH_FILTERS,
)
from memstore.read.recall import DEFAULT_MIN_SCORE

JAN = "2026-01-01T00:00:00+00:00"
FEB = "2026-02-01T00:00:00+00:00"


def parsed(command: str, *args: str) -> typer.Context:
    """The context of ``memstore COMMAND ARGS`` once click has parsed the options."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    return group.commands[command].make_context(command, list(args))


def test_list_hands_on_every_fact_filter_under_the_stores_names() -> None:
    ctx = parsed(
        "list",
        *("--entity", "Alice", "--entity", "Acme", "-r", "works_at", "--status", "verified"),
        *("--meta", "team=red", "--meta", "priority:=2"),
        *("--recorded-after", JAN, "--recorded-before", FEB, "--as-of", JAN),
        *("--limit", "5"),
    )
    assert store_filters(ctx, LIST_FILTERS) == {
        "entity": ["Alice", "Acme"],
        "relation": "works_at",
        "statuses": ["verified"],
        "metadata": {"team": "red", "priority": 2},
        "recorded_after": datetime(2026, 1, 1, tzinfo=UTC),
        "recorded_before": datetime(2026, 2, 1, tzinfo=UTC),
        "as_of": datetime(2026, 1, 1, tzinfo=UTC),
    }


def test_options_not_given_are_none() -> None:
    assert store_filters(parsed("list"), LIST_FILTERS) == dict.fromkeys(LIST_FILTERS)
    assert store_filters(parsed("audit"), REJECTION_FILTERS) == dict.fromkeys(REJECTION_FILTERS)


def test_audit_hands_on_every_rejection_filter() -> None:
    ctx = parsed(
        "audit",
        *("--verdict", "contradicted", "--since", JAN, "--until", FEB, "--text", "peanuts"),
        *("--entity", "Alice", "--relation", "allergic_to", "--source", "inline"),
        *("--min-gap", "0.5", "--max-gap", "2"),
    )
    assert store_filters(ctx, REJECTION_FILTERS) == {
        "verdict": ["contradicted"],
        "since": datetime(2026, 1, 1, tzinfo=UTC),
        "until": datetime(2026, 2, 1, tzinfo=UTC),
        "text": "peanuts",
        "entity": "Alice",
        "relation": "allergic_to",
        "source": "inline",
        "min_gap": 0.5,
        "max_gap": 2.0,
    }


@pytest.mark.parametrize("names", [SEARCH_FILTERS, EVIDENCE_FILTERS], ids=["facts", "evidence"])
def test_search_hands_on_only_the_filters_it_offers(names: tuple[str, ...]) -> None:
    ctx = parsed("search", "Alice", "--mode", "text", "--min-score", "0.25")
    want: dict[str, Any] = {"mode": "text", "min_score": 0.25}
    assert store_filters(ctx, names) == {**want, "recorded_after": None, "recorded_before": None}


def test_recall_hands_on_its_filters_and_its_default_min_score() -> None:
    ctx = parsed("recall", "Alice", "--entity", "Alice", "--status", "pending", "--as-of", FEB)
    assert store_filters(ctx, RECALL_FILTERS) == {
        "entity": ["Alice"],
        "statuses": ["pending"],
        "as_of": datetime(2026, 2, 1, tzinfo=UTC),
        "min_score": DEFAULT_MIN_SCORE,
    }


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--as-of", "someday"], "as_of"),
        (["--meta", "team"], "meta"),
        (["--recorded-before", "soon"], "recorded_before"),
    ],
)
def test_a_bad_filter_option_is_invalid_input_naming_it(args: list[str], field: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        store_filters(parsed("list", *args), LIST_FILTERS)
    assert raised.value.field == field
