"""Ids by unique prefix: the 8 characters the demo and the CLI's tables print are taken
wherever a whole id is, on every front; a prefix that starts several ids is an error
listing them; a prefix that starts none is NotFound, as a wrong id is."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client
from rest_server import ALICE_KEY, serving, settings_for
from samples import works_at
from typer.testing import CliRunner

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore import InvalidInput, NotFound, Store
from memstore.cli import Exit, app
from memstore.mcp import server as mcp_module
from memstore.rest import create_app

NS = "user:alice"
CLEAN_ENV = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None, "MEMSTORE_CONFIG": None}
WIDE = {**CLEAN_ENV, "COLUMNS": "200"}
#: Ids made while it is patched in start with this, then count up: "cafe0000" + 24 digits.
SHARED = "cafe0000"


@pytest.fixture
def shared_prefix(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """New ids share their first 8 characters (SHARED) and differ after them."""
    counter = itertools.count(1)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(f"{SHARED}{next(counter):024x}"))
    yield


@pytest.mark.both_databases
def test_a_unique_prefix_reads_and_changes_a_fact(store: Store) -> None:
    fact = store.add_fact(**works_at("Ann"))
    short = fact.id[:8]
    assert store.get_fact(short).id == fact.id
    assert [v.id for v in store.history(short)] == [fact.id]
    assert [v.fact_id for v in store.verifications(short)] == [fact.id]
    [evidence] = fact.evidence_ids
    assert store.get_evidence(evidence[:10]).id == evidence
    newer = store.supersede(short, **works_at("Ann", "Globex"))
    assert store.get_fact(fact.id).status == "superseded"
    assert store.retract(newer.id[:12], "test").status == "retracted"


def test_a_unique_prefix_finds_a_rejection(data_dir: Path) -> None:
    doubtful = Gate(ScriptedBackend(lambda claim, context: 0.02), REFUSE_UNGROUNDED)  # type: ignore[arg-type]
    with memstore.open(data_dir, NS, gate=doubtful) as store:
        with pytest.raises(memstore.ErrFactNotGrounded) as refused:
            store.add_fact(**works_at("Ann"))
        rejection = refused.value.rejection
        assert store.get_rejection(rejection.id[:8]).id == rejection.id
        label = store.add_label("false_rejection", rejection.id[:8], by="reviewer")
        assert label.target_id == rejection.id


@pytest.mark.both_databases
def test_a_shared_prefix_is_an_error_listing_the_ids(store: Store, shared_prefix: None) -> None:
    first = store.add_fact(**works_at("Ann"))
    second = store.add_fact(**works_at("Ben"))
    assert first.id[:8] == second.id[:8] == SHARED
    with pytest.raises(InvalidInput) as err:
        store.get_fact(SHARED)
    assert err.value.field == "fact_id"
    assert first.id in str(err.value) and second.id in str(err.value)
    with pytest.raises(InvalidInput):
        store.retract(SHARED, "ambiguous")
    assert store.get_fact(first.id).status != "retracted"  # nothing was changed


@pytest.mark.parametrize("given", ["0123abcd", "not-hex-at-all", "0123"])
def test_a_prefix_of_nothing_is_not_found(store: Store, given: str) -> None:
    store.add_fact(**works_at("Ann"))
    with pytest.raises(NotFound):
        store.get_fact(given)


def test_another_namespaces_ids_are_not_matched(store: Store, data_dir: Path) -> None:
    with memstore.open(data_dir, "user:bob", hook=memstore.Ungated(), index=False) as bob:
        theirs = bob.add_fact(**works_at("Bob"))
    with pytest.raises(NotFound):
        store.get_fact(theirs.id[:8])


def test_the_cli_takes_the_ids_its_tables_print(tmp_path: Path) -> None:
    where = tmp_path / "mem"
    with memstore.open(where, NS, hook=memstore.Ungated()) as store:
        fact = store.add_fact(**works_at("Ann"))
    runner = CliRunner()
    for command in ("get", "history"):
        done = runner.invoke(app, ["--store", str(where), "-n", NS, command, fact.id[:8]], env=WIDE)
        assert done.exit_code == Exit.OK, done.output
        assert "Ann works at Acme." in done.stdout
    gone = runner.invoke(
        app,
        ["--store", str(where), "-n", NS, "retract", fact.id[:8], "--reason", "moved on"],
        env=WIDE,
    )
    assert gone.exit_code == Exit.OK, gone.output


def test_the_cli_names_an_ambiguous_prefix(tmp_path: Path, shared_prefix: None) -> None:
    where = tmp_path / "mem"
    with memstore.open(where, NS, hook=memstore.Ungated(), index=False) as store:
        ids = [store.add_fact(**works_at(name)).id for name in ("Ann", "Ben")]
    done = CliRunner().invoke(app, ["--store", str(where), "-n", NS, "get", SHARED], env=WIDE)
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert all(i in done.stderr for i in ids), done.stderr


def test_rest_takes_a_prefix_in_the_path(tmp_path: Path) -> None:
    data = tmp_path / "memdata"
    with memstore.open(data, NS, hook=memstore.Ungated()) as store:
        fact = store.add_fact(**works_at("Ann"))
    with serving(create_app(settings_for(str(data)))) as base:
        headers = {"Authorization": f"Bearer {ALICE_KEY}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            got = client.get(f"/v1/namespaces/{NS}/facts/{fact.id[:8]}")
            assert got.status_code == 200, got.text
            assert got.json()["id"] == fact.id
            versions = client.get(f"/v1/namespaces/{NS}/facts/{fact.id[:8]}/history")
            assert versions.status_code == 200, versions.text
            assert [v["id"] for v in versions.json()["versions"]] == [fact.id]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_retracts_by_prefix(tmp_path: Path) -> None:
    with memstore.open(tmp_path / "mem", NS, hook=memstore.Ungated()) as store:
        fact = store.add_fact(**works_at("Ann"))
        server = mcp_module.build_server(store)
        async with Client(server) as client:
            result = await client.call_tool(
                "retract", {"fact_id": fact.id[:8], "reason": "moved on"}
            )
        assert not result.is_error, result.content
        assert result.structured_content is not None
        assert result.structured_content["fact_id"] == fact.id
        assert store.get_fact(fact.id).status == "retracted"
