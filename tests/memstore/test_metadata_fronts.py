"""Metadata and listing on every front (issue 27, goal 6): the REST API (real HTTP), the
MCP server (the SDK's client, in process) and the CLI (the Typer app) write metadata,
filter by it and page through ``list_facts`` with the same filters. The gate is off
(``hallucination.enabled: false``): these tests are about the fronts, not verdicts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp_types import TextContent
from rest_server import ALICE_KEY, serving, settings_for
from samples import works_at
from typer.testing import CliRunner

import memstore
from memstore import InvalidInput
from memstore.cli import Exit, app
from memstore.fronts import metadata_items
from memstore.mcp import server
from memstore.rest import create_app

ALICE = "/v1/namespaces/user:alice"
GATE_OFF = {"hallucination": {"enabled": False}}


def body(person: str, company: str, **extra: Any) -> dict[str, Any]:
    """``works_at`` as JSON: members as objects."""
    fact = works_at(person, company, **extra)
    fact["members"] = [
        {"name": n, "kind": k, "role": r}
        for n, k, r in fact["members"]  # type: ignore[attr-defined]
    ]
    return fact


# -- KEY=VALUE items ---------------------------------------------------------------------


def test_metadata_items_spell_text_and_json_values() -> None:
    assert metadata_items(None) is None and metadata_items([]) is None
    assert metadata_items(["user=alice", "n:=2", "x:=2.5", "ok:=true", "gone:=null"]) == {
        "gone": None,
        "n": 2,
        "ok": True,
        "user": "alice",
        "x": 2.5,
    }
    assert metadata_items(['quoted:="2"', "eq=a=b", "empty="]) == {
        "empty": "",
        "eq": "a=b",
        "quoted": "2",
    }
    for bad, why in [
        ("user", "is not KEY=TEXT or KEY:=JSON"),
        ("=alice", "is not KEY=TEXT or KEY:=JSON"),
        (":=1", "is not KEY=TEXT or KEY:=JSON"),
        ("n:=two", "is not JSON"),
        ("n:=[1]", "value of 'n' must be"),
        ("bad key=1", "key 'bad key'"),
    ]:
        with pytest.raises(InvalidInput) as err:
            metadata_items([bad], "meta")
        assert err.value.field == "meta" and why in err.value.reason, bad
    with pytest.raises(InvalidInput, match="'k' is given twice"):
        metadata_items(["k=1", "k:=1"])


# -- REST -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rest_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    data = tmp_path_factory.mktemp("metadata-rest") / "memdata"
    with serving(create_app(settings_for(str(data), **GATE_OFF))) as base:
        headers = {"Authorization": f"Bearer {ALICE_KEY}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            yield client


def test_rest_writes_lists_and_searches_by_metadata(rest_client: httpx.Client) -> None:
    made = [
        rest_client.post(
            f"{ALICE}/facts", json=body(f"P{i}", "Acme", metadata={"team": team, "n": i})
        )
        for i, team in enumerate(["red", "blue", "red", "red", "blue"])
    ]
    assert all(r.status_code == 201 for r in made), [r.text for r in made]
    assert made[0].json()["metadata"] == {"n": 0, "team": "red"}
    got = rest_client.get(f"{ALICE}/facts/{made[1].json()['id']}").json()
    assert got["metadata"] == {"n": 1, "team": "blue"}
    batch = rest_client.post(
        f"{ALICE}/facts/batch", json={"facts": [body("Q", "Initech", metadata={"n": 9})]}
    ).json()
    assert batch["results"][0]["fact"]["metadata"] == {"n": 9}

    seen: list[str] = []
    params: dict[str, Any] = {"meta": "team=red", "limit": 2}
    while True:
        page = rest_client.get(f"{ALICE}/facts", params=params)
        assert page.status_code == 200, page.text
        seen += [f["id"] for f in page.json()["items"]]
        if page.json()["next_cursor"] is None:
            break
        params["cursor"] = page.json()["next_cursor"]
    assert seen == [made[i].json()["id"] for i in (0, 2, 3)]
    both = rest_client.get(f"{ALICE}/facts", params=[("meta", "team=red"), ("meta", "n:=3")])
    assert [f["id"] for f in both.json()["items"]] == [made[3].json()["id"]]
    hits = rest_client.get(f"{ALICE}/search", params={"q": "works at Acme", "meta": "n:=4"})
    assert [h["fact"]["id"] for h in hits.json()] == [made[4].json()["id"]]


def test_rest_supersede_keeps_metadata_and_conversations_pass_theirs(
    rest_client: httpx.Client,
) -> None:
    old = rest_client.post(f"{ALICE}/facts", json=body("Maya", "Acme", metadata={"s": 1})).json()
    new = rest_client.post(f"{ALICE}/facts/{old['id']}/supersede", json=body("Maya", "Globex"))
    assert new.status_code == 201, new.text
    assert new.json()["metadata"] == {"s": 1}
    said = {"role": "user", "name": "Ines", "content": "I'm allergic to peanuts."}
    report = rest_client.post(
        f"{ALICE}/conversations", json={"messages": [said], "metadata": {"session": "c-1"}}
    ).json()
    assert report["candidates"][0]["fact"]["metadata"] == {"session": "c-1"}


@pytest.mark.parametrize(
    ("method", "path", "payload", "field"),
    [
        ("get", "/facts", {"cursor": "garbage"}, "cursor"),
        ("get", "/facts", {"limit": 0}, "limit"),
        ("get", "/facts", {"meta": "team"}, "meta"),
        ("get", "/facts", {"meta": "n:=[1]"}, "meta"),
        ("get", "/facts", {"status": "forgotten"}, "status"),
        ("get", "/search", {"q": "Acme", "meta": "bad key=1"}, "meta"),
        ("post", "/facts", body("Bo", "Acme", metadata={"k": [1]}), "metadata"),
        ("post", "/facts", body("Bo", "Acme", metadata={"bad key": 1}), "metadata"),
        ("post", "/conversations",
         {"messages": [{"role": "user", "content": "Hi."}], "metadata": "x"}, "metadata"),
    ],
)  # fmt: skip
def test_rest_bad_metadata_or_cursor_is_400_naming_the_parameter(
    rest_client: httpx.Client, method: str, path: str, payload: dict[str, Any], field: str
) -> None:
    if method == "get":
        response = rest_client.get(f"{ALICE}{path}", params=payload)
    else:
        response = rest_client.post(f"{ALICE}{path}", json=payload)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_rest_a_cursor_of_other_filters_is_refused(rest_client: httpx.Client) -> None:
    for i in range(3):
        rest_client.post(f"{ALICE}/facts", json=body(f"R{i}", "Umbrella"))
    cursor = rest_client.get(f"{ALICE}/facts", params={"limit": 1}).json()["next_cursor"]
    response = rest_client.get(
        f"{ALICE}/facts", params={"limit": 1, "cursor": cursor, "relation": "works_at"}
    )
    assert response.status_code == 400 and response.json()["field"] == "cursor"
    assert "another listing" in response.json()["reason"]


# -- MCP --------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def mcp(tmp_path: Path) -> AsyncIterator[Client]:
    with memstore.open(tmp_path / "mem", "user:alice", hook=memstore.Ungated()) as store:
        async with Client(server.build_server(store)) as client:
            yield client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


@pytest.mark.anyio
async def test_mcp_remembers_lists_and_searches_with_metadata(mcp: Client) -> None:
    ids = []
    for i, team in enumerate(["red", "blue", "red"]):
        done = await call(mcp, "remember", {**body(f"P{i}", "Acme"), "metadata": {"team": team}})
        assert done["stored"], done
        ids.append(done["fact_id"])
    page = await call(mcp, "list_memories", {"metadata": {"team": "red"}, "limit": 1})
    assert [m["fact_id"] for m in page["memories"]] == [ids[0]]
    assert page["memories"][0]["metadata"] == {"team": "red"}
    more = {"metadata": {"team": "red"}, "cursor": page["next_cursor"]}
    rest = await call(mcp, "list_memories", more)
    assert [m["fact_id"] for m in rest["memories"]] == [ids[2]] and rest["next_cursor"] is None
    found = await call(mcp, "search", {"query": "works at Acme", "metadata": {"team": "blue"}})
    assert [h["fact_id"] for h in found["result"]] == [ids[1]]
    assert found["result"][0]["metadata"] == {"team": "blue"}
    fixed = await call(mcp, "supersede", {"fact_id": ids[1], **body("P1", "Globex")})
    assert fixed["stored"]
    latest = await call(mcp, "list_memories", {"entity": ["P1"]})
    assert [(m["statement"], m["metadata"]) for m in latest["memories"]] == [
        ("P1 works at Globex.", {"team": "blue"})
    ]
    history = await call(mcp, "list_memories", {"entity": ["P1"], "statuses": ["superseded"]})
    assert [m["fact_id"] for m in history["memories"]] == [ids[1]]


@pytest.mark.anyio
async def test_mcp_bad_metadata_or_cursor_is_a_tool_error_naming_it(mcp: Client) -> None:
    for tool, arguments, field in [
        ("list_memories", {"cursor": "garbage"}, "cursor"),
        ("list_memories", {"metadata": {"bad key": 1}}, "metadata"),
        ("remember", {**body("X", "Acme"), "metadata": {"bad key": 1}}, "metadata"),
    ]:
        result = await mcp.call_tool(tool, arguments)
        assert result.is_error, tool
        text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
        assert f"invalid input: {field}:" in text, text


# -- CLI --------------------------------------------------------------------------------


@pytest.fixture
def cli(tmp_path: Path) -> Any:
    """Run ``memstore --store <tmp store> -n user:alice ARGS`` with the gate off."""
    runner = CliRunner()
    env = {
        "MEMSTORE_URL": None,
        "MEMSTORE_NAMESPACE": "user:alice",
        "MEMSTORE_CONFIG": None,
        "MEMSTORE_HALLUCINATION__ENABLED": "false",
        "COLUMNS": "200",
    }

    def invoke(*args: str) -> Any:
        return runner.invoke(app, ["--store", str(tmp_path / "mem"), *args], env=env)

    return invoke


def add(cli: Any, person: str, *meta: str) -> str:
    done = cli(
        "add", f"{person} works at Acme.", "-m", person, "-m", "Acme",
        "-e", f"{person}: I work at Acme.", "--json", *[f"--meta={m}" for m in meta],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    return str(json.loads(done.stdout)["fact"]["id"])


def test_cli_adds_with_meta_and_lists_a_page_at_a_time(cli: Any) -> None:
    first = add(cli, "Ann", "team=red", "n:=1")
    second = add(cli, "Ben", "team=blue")
    third = add(cli, "Cat", "team=red", "pinned:=true")
    shown = cli("get", first)
    assert shown.exit_code == 0 and "n:=1, team=red" in shown.stdout
    page = cli("list", "--meta", "team=red", "--limit", "1", "--json")
    assert page.exit_code == 0, page.output
    data = json.loads(page.stdout)
    assert [f["id"] for f in data["items"]] == [first]
    assert data["items"][0]["metadata"] == {"n": 1, "team": "red"}
    table = cli("list", "--meta", "team=red", "--limit", "1")
    assert table.exit_code == 0 and "Ann works at Acme." in table.stdout
    assert f"more: repeat with --cursor {data['next_cursor']}" in table.stderr
    rest = cli("list", "--meta", "team=red", "--cursor", data["next_cursor"], "--json")
    assert [f["id"] for f in json.loads(rest.stdout)["items"]] == [third]
    assert json.loads(rest.stdout)["next_cursor"] is None
    recent = ["list", "--recorded-after", "1d", "--limit", "2", "--json"]  # 1d: now - 1 day
    first_two = json.loads(cli(*recent).stdout)
    more = cli(*recent, "--cursor", first_two["next_cursor"])
    assert more.exit_code == 0, more.output
    assert [f["id"] for f in json.loads(more.stdout)["items"]] == [third]
    everyone = cli("list")
    assert everyone.exit_code == 0 and "more:" not in everyone.stderr
    assert all(f"{p} works at Acme." in everyone.stdout for p in ("Ann", "Ben", "Cat"))
    assert "pinned:=true, team=red" in everyone.stdout and second in everyone.stdout
    nothing = cli("list", "--meta", "team=green")
    assert "No facts in namespace 'user:alice' match." in nothing.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "--cursor", "garbage"], "cursor: is not a cursor this store gave out"),
        (["list", "--meta", "team"], "meta: 'team' is not KEY=TEXT or KEY:=JSON"),
        (["list", "--as-of", "someday"], "as_of: 'someday' is not an ISO 8601 time"),
        (["list", "--status", "forgotten"], "statuses: 'forgotten' is not one of"),
    ],
)
def test_cli_bad_options_exit_2_naming_them(cli: Any, args: list[str], message: str) -> None:
    add(cli, "Ann")
    done = cli(*args)
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert message in done.stderr


def test_cli_add_refuses_bad_meta_before_writing(cli: Any) -> None:
    add(cli, "Ann")
    done = cli("add", "Bob works at Acme.", "-m", "Bob", "-e", "Bob: Acme.", "--meta", "n:=[1]")
    assert done.exit_code == Exit.BAD_INPUT and "meta: value of 'n' must be" in done.stderr
    assert len(json.loads(cli("list", "--json").stdout)["items"]) == 1
