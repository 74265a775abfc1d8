"""Bounded reads on the fronts (issue 26, goal 1): the REST API (real HTTP) and the CLI
page an entity's neighborhood and a fact's history with ``limit`` and ``cursor`` as the
Store does (tests/memstore/read/test_bounded_reads.py); the MCP server has neither read
(``memstore.surface``). The gate is off: these tests are about paging, not verdicts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_server import ALICE_KEY, serving, settings_for
from typer.testing import CliRunner

import memstore
from memstore.cli import Exit, app
from memstore.rest import create_app

ALICE = "/v1/namespaces/user:alice"
GATE_OFF = {"hallucination": {"enabled": False}}


def knows(a: str, b: str) -> dict[str, Any]:
    return {"statement": f"{a} knows {b}.", "members": [a, b], "evidence": [f"{a} and {b}."]}


def fill(store: memstore.Store) -> tuple[list[str], list[str]]:
    """S knows A0..A3 (hop 1) and A0..A2 know B0..B2 (hop 2), hop 2 written first; and
    a fact corrected three times. The neighborhood's ids in its order, and the chain's."""
    far = [store.add_fact(knows(f"A{i}", f"B{i}")) for i in range(3)]
    near = [store.add_fact(knows("S", f"A{i}")) for i in range(4)]
    chain = [store.add_fact(knows("Kim", "Lee"))]
    for n in range(3):
        chain.append(store.supersede(chain[-1].id, knows("Kim", f"Lee {n}")))
    hood = [f.id for f in reversed(near)] + [f.id for f in reversed(far)]
    return hood, [f.id for f in chain]


# -- REST -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Any]]:
    data = tmp_path_factory.mktemp("bounded-rest") / "memdata"
    with memstore.open(data, "user:alice", hook=memstore.Ungated(), index=False) as store:
        made = fill(store)
    with serving(create_app(settings_for(str(data), **GATE_OFF))) as base:
        headers = {"Authorization": f"Bearer {ALICE_KEY}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            yield client, made


def rest_walk(client: httpx.Client, path: str, key: str, **params: Any) -> list[dict[str, Any]]:
    """Every page of GET ``path``; the items under ``key`` of each, in order."""
    seen: list[dict[str, Any]] = []
    query: dict[str, Any] = dict(params)
    while True:
        page = client.get(path, params=query)
        assert page.status_code == 200, page.text
        assert len(page.json()[key]) <= params["limit"]
        seen += page.json()[key]
        if page.json()["next_cursor"] is None:
            return seen
        query["cursor"] = page.json()["next_cursor"]


def test_rest_pages_a_neighborhood_by_hop_then_newest(rest: tuple[httpx.Client, Any]) -> None:
    client, (hood, _chain) = rest
    path = f"{ALICE}/entities/S/neighborhood"
    facts = rest_walk(client, path, "facts", hops=2, limit=3)
    assert [f["id"] for f in facts] == hood
    cut = client.get(path, params={"hops": 2, "max_facts": 5}).json()
    assert [f["id"] for f in cut["facts"]] == hood[:5] and cut["complete"] is False
    whole = client.get(path, params={"hops": 2}).json()
    assert whole["complete"] is True and whole["next_cursor"] is None


def test_rest_pages_a_history_oldest_first(rest: tuple[httpx.Client, Any]) -> None:
    client, (_hood, chain) = rest
    seen: list[str] = []
    query: dict[str, Any] = {"limit": 3}
    while True:
        page = client.get(f"{ALICE}/facts/{chain[1]}/history", params=query).json()
        ids = [v["id"] for v in page["versions"]]
        assert {v["fact_id"] for v in page["verifications"]} == set(ids)
        seen += ids
        if page["next_cursor"] is None:
            break
        query["cursor"] = page["next_cursor"]
    assert seen == chain


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/entities/S/neighborhood", {"limit": 0}, "limit"),
        ("/entities/S/neighborhood", {"limit": 1001}, "limit"),
        ("/entities/S/neighborhood", {"cursor": "garbage"}, "cursor"),
        ("/entities/S/neighborhood", {"max_facts": 0}, "max_facts"),
        ("/facts/{fact}/history", {"limit": "many"}, "limit"),
        ("/facts/{fact}/history", {"cursor": "garbage"}, "cursor"),
    ],
)
def test_rest_bad_limit_or_cursor_is_400_naming_it(
    rest: tuple[httpx.Client, Any], path: str, params: dict[str, Any], field: str
) -> None:
    client, (_hood, chain) = rest
    response = client.get(ALICE + path.format(fact=chain[0]), params=params)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_rest_a_cursor_of_another_read_is_refused(rest: tuple[httpx.Client, Any]) -> None:
    client, (_hood, chain) = rest
    hood = client.get(f"{ALICE}/entities/S/neighborhood", params={"limit": 1}).json()
    response = client.get(
        f"{ALICE}/facts/{chain[0]}/history", params={"cursor": hood["next_cursor"]}
    )
    assert response.status_code == 400 and response.json()["field"] == "cursor"
    other = client.get(f"{ALICE}/entities/A0/neighborhood", params={"cursor": hood["next_cursor"]})
    assert other.status_code == 400 and "another listing" in other.json()["reason"]


# -- CLI --------------------------------------------------------------------------------


@pytest.fixture
def cli(tmp_path: Path) -> Any:
    """The filled store, and ``memstore --store <it> -n user:alice ARGS``."""
    with memstore.open(tmp_path / "mem", "user:alice", hook=memstore.Ungated(), index=False) as s:
        made = fill(s)
    runner = CliRunner()
    env = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": "user:alice", "MEMSTORE_CONFIG": None}
    env["COLUMNS"] = "200"

    def invoke(*args: str) -> Any:
        return runner.invoke(app, ["--store", str(tmp_path / "mem"), *args], env=env)

    return invoke, made


def test_cli_neighbors_pages_and_says_how_to_go_on(cli: Any) -> None:
    invoke, (hood, _chain) = cli
    seen: list[str] = []
    args = ["neighbors", "S", "--hops", "2", "--limit", "3", "--json"]
    while True:
        done = invoke(*args)
        assert done.exit_code == 0, done.output
        page = json.loads(done.stdout)
        seen += [f["id"] for f in page["facts"]]
        if page["next_cursor"] is None:
            break
        args = [*args[:6], "--cursor", page["next_cursor"], "--json"]
    assert seen == hood
    table = invoke("neighbors", "S", "--hops", "2", "--limit", "2", "--max-facts", "3")
    assert table.exit_code == 0, table.output
    assert "more: repeat with --cursor " in table.stderr
    assert "the walk stopped" not in table.stderr  # the first page need not know yet
    assert "S knows A3." in table.stdout and "S knows A1." not in table.stdout
    cursor = table.stderr.split("--cursor ")[1].split()[0]
    last = invoke("neighbors", "S", "--hops", "2", "--limit", "2", "--max-facts", "3",
                  "--cursor", cursor)  # fmt: skip
    assert last.exit_code == 0, last.output
    assert "more:" not in last.stderr
    assert "the walk stopped at 3 facts; --max-facts reaches farther" in last.stderr


def test_cli_history_pages_its_versions(cli: Any) -> None:
    invoke, (_hood, chain) = cli
    first = invoke("history", chain[2], "--limit", "3", "--json")
    assert first.exit_code == 0, first.output
    page = json.loads(first.stdout)
    assert [v["id"] for v in page["versions"]] == chain[:3]
    assert {v["fact_id"] for v in page["verifications"]} == {chain[2]}
    rest = json.loads(invoke("history", chain[2], "--cursor", page["next_cursor"], "--json").stdout)
    assert [v["id"] for v in rest["versions"]] == chain[3:] and rest["next_cursor"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["neighbors", "S", "--cursor", "garbage"], "cursor: is not a cursor this store gave out"),
        (["history", "{fact}", "--cursor", "garbage"], "cursor: is not a cursor this store"),
        (["neighbors", "S", "--limit", "0"], "--limit"),
        (["neighbors", "S", "--max-facts", "0"], "--max-facts"),
    ],
)
def test_cli_bad_limit_or_cursor_exit_2_naming_it(cli: Any, args: list[str], message: str) -> None:
    invoke, (_hood, chain) = cli
    done = invoke(*[a.format(fact=chain[0]) for a in args])
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert message in done.stderr
