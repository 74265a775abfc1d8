"""One API surface (``memstore.surface``): every public Store method has decided its
fronts, every name the table gives exists on its front, and every exposed front offers
the Store's filters, or says why not."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

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
from memstore.surface import FILTERS, SURFACE, Exposed, Hidden

#: Parameters of a front that are no filter of the Store method it calls.
NOT_FILTERS = {
    # CLI
    "store", "namespace", "as_json", "query", "k", "evidence", "index", "order_by",
    "limit", "offset", "output", "counts", "budget_tokens", "cursor",
    # REST
    "q", "descending", "by",
}  # fmt: skip


def public_methods() -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(Store, inspect.isfunction)
        if not name.startswith("_")
    }


def cli_params() -> dict[str, set[str]]:
    group = typer.main.get_command(cli_app)
    assert isinstance(group, typer.core.TyperGroup)
    return {name: {p.name for p in cmd.params if p.name} for name, cmd in group.commands.items()}


@pytest.fixture(scope="module")
def rest_params(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """``"METHOD /path"`` (under the namespace prefix) -> its query parameters, as the
    OpenAPI schema publishes them."""
    data = tmp_path_factory.mktemp("surface") / "memdata"
    app = create_app(load_settings(store={"url": str(data)}, server={"api_keys": KEYS}))
    prefix = "/v1/namespaces/{namespace}"
    routes: dict[str, set[str]] = {}
    for path, operations in app.openapi()["paths"].items():
        for method, operation in operations.items():
            query = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
            routes[f"{method.upper()} {path.removeprefix(prefix)}"] = query
    return routes


@pytest.fixture(scope="module")
def mcp_params(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, set[str]]]:
    where = tmp_path_factory.mktemp("surface-mcp") / "mem"
    with memstore.open(where, hook=memstore.Ungated(), index=False) as store:
        server = mcp_server.build_server(store, allow_erase=True)
        tools = anyio.run(server.list_tools)
    yield {t.name: set(t.input_schema.get("properties", {})) for t in tools}


def test_every_public_store_method_has_decided_its_fronts() -> None:
    assert public_methods() - set(SURFACE) == set(), "add the new methods to memstore.surface"
    assert set(SURFACE) - public_methods() == set(), "memstore.surface names no such method"
    for name, fronts in SURFACE.items():
        for front in (fronts.cli, fronts.rest, fronts.mcp):
            assert isinstance(front, Exposed | Hidden), name
            if isinstance(front, Hidden):
                assert front.reason.strip(), f"{name}: say why the front leaves it out"


def test_every_named_cli_command_rest_route_and_mcp_tool_exists(
    rest_params: dict[str, set[str]], mcp_params: dict[str, set[str]]
) -> None:
    commands = cli_params()
    for name, fronts in SURFACE.items():
        if isinstance(fronts.cli, Exposed):
            assert fronts.cli.name in commands, f"{name}: no CLI command {fronts.cli.name!r}"
        if isinstance(fronts.rest, Exposed):
            assert fronts.rest.name in rest_params, f"{name}: no route {fronts.rest.name!r}"
        if isinstance(fronts.mcp, Exposed):
            assert fronts.mcp.name in mcp_params, f"{name}: no MCP tool {fronts.mcp.name!r}"


def test_exposed_fronts_offer_the_store_methods_filters(
    rest_params: dict[str, set[str]], mcp_params: dict[str, set[str]]
) -> None:
    offered = {"cli": cli_params(), "rest": rest_params, "mcp": mcp_params}
    for method, filters in FILTERS.items():
        signature = inspect.signature(getattr(Store, method))
        takes_where = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
        assert takes_where or set(filters) <= set(signature.parameters), method
        fronts = SURFACE[method]
        for kind, front in (("cli", fronts.cli), ("rest", fronts.rest), ("mcp", fronts.mcp)):
            if not isinstance(front, Exposed):
                continue
            assert set(front.renamed) | set(front.omits) <= set(filters), (method, kind)
            expected = {front.renamed.get(f, f) for f in filters if f not in front.omits}
            params = offered[kind][front.name] - NOT_FILTERS
            assert params == expected, f"{method} on {kind} {front.name!r}: {params ^ expected}"


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
