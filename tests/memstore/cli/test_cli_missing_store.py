"""Commands that read or change a store never create one: on a data directory or SQLite
file without a store they exit 2, name the path whole (whatever the terminal's width)
and say to run ``memstore init``, and leave nothing on disk. A namespace that holds
nothing while others do is refused the same way, naming the close ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import memstore
from memstore.cli import Exit, app

CLEAN_ENV = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None, "MEMSTORE_CONFIG": None}
NARROW = {**CLEAN_ENV, "COLUMNS": "40"}

READS_AND_CHANGES = [
    ["stats"],
    ["stats", "--json"],
    ["audit"],
    ["audit", "--counts", "verdict"],
    ["search", "what is Alice allergic to?"],
    ["get", "0123456789abcdef"],
    ["history", "0123456789abcdef"],
    ["neighbors", "Alice"],
    ["policy"],
    ["policy", "--every", "12h"],
    ["retract", "0123456789abcdef", "--reason", "wrong"],
    ["erase", "0123456789abcdef", "--reason", "wrong", "--yes"],
    ["reindex"],
    ["reverify"],
    ["reverify", "--all-namespaces"],
]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env=NARROW)


def long_path(root: Path) -> Path:
    path = root.joinpath(*["a-rather-long-directory-name"] * 8, "store")
    assert len(str(path)) > 200
    return path


def refused(done: Any, path: Path) -> None:
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert f"no memstore store at {path}" in done.stderr
    assert "memstore --store" in done.stderr and "init" in done.stderr


@pytest.mark.parametrize("args", READS_AND_CHANGES, ids=" ".join)
def test_a_command_on_a_missing_data_directory_exits_2_and_creates_nothing(
    tmp_path: Path, args: list[str]
) -> None:
    where = long_path(tmp_path / "root")
    refused(invoke("--store", str(where), *args), where)
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize("args", [["stats"], ["search", "anything"], ["reindex"]], ids=" ".join)
def test_a_command_on_a_missing_sqlite_file_exits_2_and_creates_nothing(
    tmp_path: Path, args: list[str]
) -> None:
    where = long_path(tmp_path / "root") / "memory.db"
    refused(invoke("--store", f"sqlite:///{where}", *args), where)
    assert not (tmp_path / "root").exists()


def test_an_empty_directory_is_no_store_and_stays_empty(tmp_path: Path) -> None:
    refused(invoke("--store", str(tmp_path), "stats"), tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--namespace", "--store"])
@pytest.mark.parametrize("args", [["stats"], ["init"]], ids=" ".join)
def test_an_empty_option_is_an_error_not_the_default(
    tmp_path: Path, option: str, args: list[str]
) -> None:
    """`-n ""` once wrote to the `default` namespace; an empty --store to ./memdata."""
    where = tmp_path / "store"
    assert invoke("--store", str(where), "init").exit_code == Exit.OK
    given = ["--store", str(where), option, ""] if option == "--namespace" else [option, ""]
    done = invoke(*given, *args)
    assert done.exit_code == Exit.BAD_INPUT, done.output
    field = "store.namespace" if option == "--namespace" else "store.url"
    assert field in done.stderr


def test_a_mistyped_namespace_is_named_with_the_close_ones(tmp_path: Path) -> None:
    where = tmp_path / "store"
    assert invoke("--store", str(where), "init").exit_code == Exit.OK
    assert invoke("--store", str(where), "stats").exit_code == Exit.OK  # empty: all are
    with memstore.open(where, "user:alice", hook=memstore.Ungated(), index=False) as store:
        store.add_fact(
            statement="Alice works at Acme.",
            members=["Alice", "Acme"],
            evidence=["Alice: I work at Acme."],
        )
    for args in (["stats"], ["list"], ["audit"], ["history", "0123456789abcdef"]):
        done = invoke("--store", str(where), "-n", "usr:alice", *args)
        assert done.exit_code == Exit.BAD_INPUT, (args, done.output)
        assert "namespace 'usr:alice' holds nothing" in done.stderr
        assert "did you mean 'user:alice'?" in done.stderr
    assert invoke("--store", str(where), "-n", "user:alice", "stats").exit_code == Exit.OK
    # What may come before a namespace's first write: its policy, and a whole reindex.
    policy = invoke("--store", str(where), "-n", "user:bob", "policy", "--every", "6h")
    assert policy.exit_code == Exit.OK, policy.output
    assert invoke("--store", str(where), "-n", "user:bob", "policy").exit_code == Exit.OK
    assert invoke("--store", str(where), "-n", "nobody", "reindex").exit_code == Exit.OK
