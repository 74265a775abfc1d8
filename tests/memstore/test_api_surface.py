"""One contract (``memstore.surface``): every public Store method has decided its
fronts, every name the table gives exists on its front, and every exposed front takes
the Store's parameters, with its defaults and bounds, or the table says why not."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from pathlib import Path
from typing import Any

import anyio
import pytest
import typer.main
from rest_server import KEYS

import memstore
from memstore.cli import app as cli_app
from memstore.config import load_settings
from memstore.fronts import REJECTION_FILTERS, rejection_where
from memstore.mcp import server as mcp_server
from memstore.rest import create_app
from memstore.store import Store
from memstore.surface import (
    ALIASES,
    BOUNDS,
    CONTEXT,
    PYTHON_ONLY,
    SURFACE,
    Exposed,
    Hidden,
    store_parameters,
)


def public_methods() -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(Store, inspect.isfunction)
        if not name.startswith("_")
    }


@dataclass(frozen=True)
class Param:
    """One parameter as a front publishes it: required, or its default; its range."""

    required: bool
    default: Any = None
    low: float | None = None
    high: float | None = None
    spellings: tuple[str, ...] = ()


def normal(value: Any) -> Any:
    """A default as the fronts can say it: enums by value, durations in seconds, an
    empty collection as nothing, a tuple as a list."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, dict):
        return value or None
    if isinstance(value, tuple | list | set | frozenset):
        return sorted(normal(v) for v in value) if value else None
    return value


def cli_commands() -> dict[str, dict[str, Param]]:
    group = typer.main.get_command(cli_app)
    assert isinstance(group, typer.core.TyperGroup)
    commands: dict[str, dict[str, Param]] = {}
    for name, command in group.commands.items():
        params: dict[str, Param] = {}
        for p in command.params:
            assert p.name
            longs = [o for o in getattr(p, "opts", ()) if o.startswith("--")]
            # an option by the name people type (--format, --as-of), an argument by its own
            shown = longs[0][2:].replace("-", "_") if longs else p.name
            kind = getattr(p, "type", None)  # click's IntRange; Typer keeps min/max itself
            params[shown] = Param(
                required=bool(p.required),
                default=None if p.required else normal(p.default),
                low=getattr(p, "min", getattr(kind, "min", None)),
                high=getattr(p, "max", getattr(kind, "max", None)),
                spellings=tuple(getattr(p, "opts", ())) + tuple(getattr(p, "secondary_opts", ())),
            )
        commands[name] = params
    return commands


def schema_param(schema: dict[str, Any], required: bool) -> Param:
    if "anyOf" in schema:  # Optional[...]: the bounds sit on the non-null branch
        for branch in schema["anyOf"]:
            if branch.get("type") != "null":
                schema = {**branch, "default": schema.get("default")}
                break
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    return Param(required, None if required else normal(schema.get("default")), low, high)


@pytest.fixture(scope="module")
def rest_routes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Param]]:
    """``"METHOD /path"`` (under the namespace prefix) -> its path, query and body
    parameters, as the OpenAPI schema publishes them."""
    data = tmp_path_factory.mktemp("surface") / "memdata"
    app = create_app(load_settings(store={"url": str(data)}, server={"api_keys": KEYS}))
    spec = app.openapi()
    prefix = "/v1/namespaces/{namespace}"
    routes: dict[str, dict[str, Param]] = {}
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            params = {
                p["name"]: schema_param(p.get("schema", {}), bool(p.get("required")))
                for p in operation.get("parameters", [])
                if p["in"] in ("query", "path")
            }
            body = operation.get("requestBody", {}).get("content", {})
            ref = body.get("application/json", {}).get("schema", {}).get("$ref")
            if ref:
                model = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
                needed = set(model.get("required", []))
                for name, schema in model.get("properties", {}).items():
                    params[name] = schema_param(schema, name in needed)
            routes[f"{method.upper()} {path.removeprefix(prefix)}"] = params
    return routes


@pytest.fixture(scope="module")
def mcp_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Param]]]:
    where = tmp_path_factory.mktemp("surface-mcp") / "mem"
    with memstore.open(where, hook=memstore.Ungated(), index=False) as store:
        server = mcp_server.build_server(store, allow_erase=True)
        tools = anyio.run(server.list_tools)
    yield {
        t.name: {
            name: schema_param(schema, name in t.input_schema.get("required", []))
            for name, schema in t.input_schema.get("properties", {}).items()
        }
        for t in tools
    }


@pytest.fixture(scope="module")
def fronts(
    rest_routes: dict[str, dict[str, Param]], mcp_tools: dict[str, dict[str, Param]]
) -> dict[str, dict[str, dict[str, Param]]]:
    return {"cli": cli_commands(), "rest": rest_routes, "mcp": mcp_tools}


@dataclass(frozen=True)
class Wanted:
    """What the table says of one parameter of a front: the Store method and parameter
    it serves, the Store's default, and the entry."""

    method: str
    param: str
    default: Any
    front: Exposed


def expected_params(kind: str, name: str) -> dict[str, Wanted]:
    """Each parameter the table says front ``kind``'s ``name`` takes (the union over
    every method it serves) -> what the table says of it."""
    wanted: dict[str, Wanted] = {}
    for method, surface in SURFACE.items():
        front = getattr(surface, kind)
        if not isinstance(front, Exposed) or front.name != name:
            continue
        for param, default in store_parameters(method).items():
            if param in front.omits or (param in PYTHON_ONLY and param not in front.takes):
                continue
            wanted.setdefault(
                front.renamed.get(param, param), Wanted(method, param, default, front)
            )
    return wanted


def test_every_public_store_method_has_decided_its_fronts() -> None:
    assert public_methods() - set(SURFACE) == set(), "add the new methods to memstore.surface"
    assert set(SURFACE) - public_methods() == set(), "memstore.surface names no such method"
    for name, fronts in SURFACE.items():
        for front in (fronts.cli, fronts.rest, fronts.mcp):
            assert isinstance(front, Exposed | Hidden), name
            if isinstance(front, Hidden):
                assert front.reason.strip(), f"{name}: say why the front leaves it out"


def test_every_named_cli_command_rest_route_and_mcp_tool_exists(
    fronts: dict[str, dict[str, dict[str, Param]]],
) -> None:
    for name, surface in SURFACE.items():
        for kind in ("cli", "rest", "mcp"):
            front = getattr(surface, kind)
            if isinstance(front, Exposed):
                assert front.name in fronts[kind], f"{name}: no {kind} {front.name!r}"


def test_every_entry_names_only_the_store_methods_parameters() -> None:
    for method, surface in SURFACE.items():
        params = set(store_parameters(method))
        for kind in ("cli", "rest", "mcp"):
            front = getattr(surface, kind)
            if isinstance(front, Exposed):
                named = {*front.renamed, *front.omits, *front.defaults, *front.bounds}
                assert named <= params, f"{method} on {kind}: {sorted(named - params)}"
    assert {m for m in BOUNDS} <= set(SURFACE)


def exposed_names(kind: str) -> set[str]:
    return {
        getattr(s, kind).name for s in SURFACE.values() if isinstance(getattr(s, kind), Exposed)
    }


@pytest.mark.parametrize("kind", ["cli", "rest", "mcp"])
def test_each_front_takes_exactly_the_parameters_the_table_says(
    kind: str, fronts: dict[str, dict[str, dict[str, Param]]]
) -> None:
    """Full parameter sets: the Store's (as renamed), the entry's own additions, the
    front's context and its old spellings; nothing else, nothing missing."""
    problems = []
    for name in sorted(exposed_names(kind)):
        wanted = set(expected_params(kind, name))
        for surface in SURFACE.values():
            front = getattr(surface, kind)
            if isinstance(front, Exposed) and front.name == name:
                wanted |= set(front.adds)
        actual = set(fronts[kind][name])
        context = set(CONTEXT[kind]) | set(ALIASES[kind])
        missing, extra = wanted - actual, actual - wanted - context
        if missing or extra:
            problems.append(f"{kind} {name!r}: missing {sorted(missing)}, extra {sorted(extra)}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("kind", ["cli", "rest", "mcp"])
def test_each_front_has_the_stores_defaults_and_bounds(
    kind: str, fronts: dict[str, dict[str, dict[str, Param]]]
) -> None:
    """A front's default and range of a Store parameter are the Store's, or the table
    says why not."""
    problems = []
    for name in sorted(exposed_names(kind)):
        actual = fronts[kind][name]
        for param, want in expected_params(kind, name).items():
            if param in actual:  # a missing one: the parameter-set test names it
                problems += mismatches(f"{kind} {name} {param}", actual[param], want)
    assert not problems, "\n".join(problems)


def mismatches(where: str, shown: Param, want: Wanted) -> list[str]:
    """How ``shown`` differs from the Store's default and range, less what the entry
    allows (``defaults``, ``bounds``)."""
    found = []
    default = want.default
    if want.param not in want.front.defaults:
        if default is inspect.Parameter.empty:
            if not shown.required:
                found.append(f"{where}: optional, the Store requires it")
        elif shown.required or shown.default != normal(default):
            found.append(f"{where}: default {shown.default!r}, the Store's {normal(default)!r}")
    low, high = BOUNDS.get(want.method, {}).get(want.param, (None, None))
    if want.param in want.front.bounds:
        low, high, _why = want.front.bounds[want.param]
    if (shown.low, shown.high) != (low, high):
        found.append(f"{where}: range {shown.low}..{shown.high}, the table's {low}..{high}")
    return found


@pytest.mark.parametrize("kind", ["cli", "rest"])
def test_old_spellings_still_reach_their_parameter(
    kind: str, fronts: dict[str, dict[str, dict[str, Param]]]
) -> None:
    """``ALIASES``: the CLI takes the old option (``--status``) on the same parameter; the
    REST API publishes the old name beside the new one."""
    for old, new in ALIASES[kind].items():
        users = [
            (name, params)
            for name, params in fronts[kind].items()
            if name in exposed_names(kind)
            and new in params
            and (kind == "cli" or name.startswith("GET "))  # REST: the query strings
        ]
        assert users, f"{kind}: nothing takes {new!r}"
        for name, params in users:
            if kind == "cli":
                assert f"--{old.replace('_', '-')}" in params[new].spellings, (name, old, new)
            else:
                assert old in params, (name, old, new)


def test_the_store_holds_its_bounds(tmp_path: Path) -> None:
    """Each ``BOUNDS`` range is the Store's own: one past either end is InvalidInput
    naming the parameter."""
    arguments: dict[str, dict[str, Any]] = {
        "search": {"query": "x"},
        "search_evidence": {"query": "x"},
        "recall": {"query": "x"},
        "neighborhood": {"entities": "Maya"},
        "facts_about": {"entity": "Maya"},
        "remember_conversation": {"messages": [{"role": "user", "content": "Hi."}]},
        "add_fact": {"statement": "Maya likes tea.", "members": ["Maya"], "evidence": ["tea"]},
        "verify_claim": {"claim": "Maya likes tea.", "evidence": "Maya: I like tea."},
    }
    with memstore.open(tmp_path / "mem", hook=memstore.Ungated(), index=False) as store:
        fact = store.add_fact(statement="Maya likes tea.", members=["Maya"], evidence=["tea"])
        arguments["history"] = {"fact_id": fact.id}
        arguments["supersede"] = {"old_id": fact.id, **arguments["add_fact"]}
        for method, ranges in BOUNDS.items():
            for param, (low, high) in ranges.items():
                step = 1 if isinstance(low if low is not None else high, int) else 0.01
                for bad in (
                    low - step if low is not None else None,
                    high + step if high is not None else None,
                ):
                    if bad is None:
                        continue
                    given = {**arguments.get(method, {}), param: bad}
                    first = [given.pop("old_id")] if "old_id" in given else []
                    with pytest.raises(memstore.InvalidInput) as caught:
                        getattr(store, method)(*first, **given)
                    assert caught.value.field == param, (method, param, bad)


def test_the_rejection_filters_are_the_store_models_fields() -> None:
    """The fronts pass rejection filters through one function, which knows only those."""
    assert rejection_where(verdict=None, text="peanuts", entity=[]) == {"text": "peanuts"}
    with pytest.raises(TypeError, match="colour"):
        rejection_where(colour="red")
    assert set(REJECTION_FILTERS) == {
        "since", "until", "verdict", "min_gap", "max_gap", "text", "source", "entity", "relation"
    }  # fmt: skip


def test_rest_and_cli_show_the_same_history(tmp_path: Path) -> None:
    """``fronts.fact_history`` is what the history route answers and the CLI prints."""
    from memstore.fronts import fact_history

    with memstore.open(tmp_path / "mem", hook=memstore.Ungated(), index=False) as store:
        old = store.add_fact(
            statement="Maya lives in Boston.", members=["Maya"], evidence=["Maya: Boston."]
        )
        new = store.supersede(
            old.id, statement="Maya lives in Lisbon.", members=["Maya"], evidence=["Lisbon."]
        )
        shown = fact_history(store, new.id)
    assert [v.id for v in shown.versions] == [old.id, new.id]
    assert {v.fact_id for v in shown.verifications} == {old.id, new.id}
