"""The CLI's contract with the Store: each option under the name of the Store parameter
it sets (an older spelling kept as an alias), with the Store's bounds, and the values
reaching the Store. Bounds are checked both ways: click refuses what the Store would
(exit 2 naming the option), and the Store refuses one past each end of the CLI's range."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from cli_runner import runner_at

import memstore
from memstore.cli import Exit, app
from memstore.cli.parsing import MAX_OFFSET, MAX_SEARCH_K, store_filters
from memstore.errors import InvalidInput
from memstore.fronts import LIST_FILTERS, RECALL_FILTERS
from memstore.store import Store

NS = "user:alice"
SAID = "Alice: I'm allergic to peanuts."


@pytest.fixture
def cli(tmp_path: Path) -> Any:
    """Run ``memstore --store <tmp store> -n user:alice ARGS``; returns the click Result."""
    return runner_at(str(tmp_path / "mem"), "-n", NS)


def command(name: str) -> Any:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    return group.commands[name]


def parsed(name: str, *args: str) -> typer.Context:
    """The context of ``memstore NAME ARGS`` once click has parsed the options."""
    return command(name).make_context(name, list(args))


def added(cli: Any, *args: str) -> dict[str, Any]:
    done = cli("add", *args, "--json")
    assert done.exit_code == Exit.OK, done.output
    fact: dict[str, Any] = json.loads(done.stdout)["fact"]
    return fact


def test_add_stores_valid_from_valid_to_and_cited_evidence_ids(cli: Any) -> None:
    first = added(cli, "Alice is allergic to peanuts.", "-m", "Alice", "-m", "peanuts", "-e", SAID)
    [evidence_id] = [c["evidence_id"] for c in first["citations"]]
    fact = added(
        cli,
        *("Alice is allergic to peanuts.", "-m", "Alice:person:patient"),
        *("--evidence-id", evidence_id),
        *("--valid-from", "2024-03-01T00:00:00+00:00", "--valid-to", "2025-03-01"),
    )
    assert fact["verdict"] == "grounded"  # the gate read the stored evidence
    assert [c["evidence_id"] for c in fact["citations"]] == [evidence_id]
    assert fact["valid_from"].startswith("2024-03-01T00:00:00")
    assert fact["valid_to"].startswith("2025-03-01T00:00:00")  # naive: UTC, as other options
    with memstore.open(cli.store, NS, index=False) as store:
        stored = store.get_fact(fact["id"])
    assert (stored.valid_from.year, stored.valid_to.year) == (2024, 2025)  # type: ignore[union-attr]
    assert stored.evidence_ids == [evidence_id]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--evidence-id", "no-such-evidence"], "evidence_ids.0"),
        (["-e", SAID, "--valid-from", "someday"], "valid_from"),
        (["-e", SAID, "--valid-from", "2025-01-01", "--valid-to", "2024-01-01"], "valid_to"),
    ],
)
def test_add_names_a_bad_valid_time_or_evidence_id(cli: Any, args: list[str], field: str) -> None:
    assert cli("init").exit_code == Exit.OK
    done = cli("add", "Alice is allergic to peanuts.", "-m", "Alice", *args)
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert field in done.stderr


def test_add_refuses_a_file_with_valid_times_or_evidence_ids(cli: Any) -> None:
    for option in (["--valid-from", "2024-01-01"], ["--evidence-id", "x"]):
        done = cli("add", "--file", "facts.yaml", *option)
        assert done.exit_code == Exit.BAD_INPUT and "not both" in done.stderr


def test_neighbors_walks_only_the_relation_and_the_facts_that_held_as_of(cli: Any) -> None:
    allergy = added(
        cli,
        *("Alice is allergic to peanuts.", "-m", "Alice", "-m", "peanuts", "-e", SAID),
        *("-r", "allergic_to", "--valid-from", "2020-01-01", "--ungated"),
    )
    job = added(
        cli,
        *("Alice works at Acme.", "-m", "Alice", "-m", "Acme", "-e", "Alice: I work at Acme."),
        *("-r", "works_at", "--valid-from", "2025-01-01", "--ungated"),
    )

    def facts(*args: str) -> list[str]:
        done = cli("neighbors", "Alice", *args, "--json")
        assert done.exit_code == Exit.OK, done.output
        return [f["id"] for f in json.loads(done.stdout)["facts"]]

    assert sorted(facts()) == sorted([allergy["id"], job["id"]])
    assert facts("--relation", "works_at") == [job["id"]]
    assert facts("-r", "allergic_to") == [allergy["id"]]
    assert facts("--as-of", "2021-06-01") == [allergy["id"]]
    assert facts("--as-of", "2021-06-01", "--relation", "works_at") == []
    bad = cli("neighbors", "Alice", "--as-of", "someday")
    assert bad.exit_code == Exit.BAD_INPUT and "as_of" in bad.stderr


@pytest.mark.parametrize("spelling", ["--status", "--statuses"])
def test_status_and_statuses_both_reach_the_stores_statuses(cli: Any, spelling: str) -> None:
    kept = added(cli, "Alice works at Acme.", "-m", "Alice", "-e", "Acme.", "--ungated")
    gone = added(cli, "Alice works at Initech.", "-m", "Alice", "-e", "Initech.", "--ungated")
    assert cli("retract", gone["id"], "--reason", "she left").exit_code == Exit.OK

    def listed(*args: str) -> list[str]:
        done = cli("list", *args, "--json")
        assert done.exit_code == Exit.OK, done.output
        return [f["id"] for f in json.loads(done.stdout)["items"]]

    assert listed() == [kept["id"]]
    assert listed(spelling, "retracted") == [gone["id"]]
    assert sorted(listed(spelling, "retracted", spelling, "unverified")) == sorted(
        [kept["id"], gone["id"]]
    )
    for name, filters in (("list", LIST_FILTERS), ("recall", RECALL_FILTERS)):
        args = ["Alice"] if name == "recall" else []
        ctx = parsed(name, *args, spelling, "pending", spelling, "verified")
        assert store_filters(ctx, filters)["statuses"] == ["pending", "verified"]


@pytest.mark.parametrize("spelling", ["--meta", "--metadata"])
def test_meta_and_metadata_both_reach_the_stores_metadata(cli: Any, spelling: str) -> None:
    tagged = added(cli, "Alice works at Acme.", "-m", "Alice", "-e", "Acme.", "--ungated",
                   spelling, "team=red", spelling, "priority:=2")  # fmt: skip
    added(cli, "Alice lives in Lisbon.", "-m", "Alice", "-e", "Lisbon.", "--ungated")
    assert tagged["metadata"] == {"team": "red", "priority": 2}
    done = cli("list", spelling, "team=red", "--json")
    assert [f["id"] for f in json.loads(done.stdout)["items"]] == [tagged["id"]]
    ctx = parsed("list", spelling, "team=red")
    assert store_filters(ctx, LIST_FILTERS)["metadata"] == {"team": "red"}


@pytest.mark.parametrize("spelling", ["--budget", "--budget-tokens"])
def test_budget_and_budget_tokens_both_set_the_budget(spelling: str) -> None:
    assert parsed("recall", "Alice", spelling, "200").params["budget_tokens"] == 200


def test_recall_hands_budget_tokens_to_the_store(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    added(cli, "Alice works at Acme.", "-m", "Alice", "-e", "Acme.", "--ungated")
    seen: list[dict[str, Any]] = []
    real = Store.recall

    def recall(self: Store, query: str, **given: Any) -> Any:
        seen.append(given)
        return real(self, query, **given)

    monkeypatch.setattr(Store, "recall", recall)
    monkeypatch.setattr("memstore.index.embeddings.preload", lambda: None)
    for spelling in ("--budget", "--budget-tokens"):
        done = cli("recall", "Acme", spelling, "64", "--statuses", "unverified", "--json")
        assert done.exit_code == Exit.OK, done.output
    assert [(g["budget_tokens"], g["statuses"]) for g in seen] == [(64, ["unverified"])] * 2


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["search", "x", "--k", "0"], "'--k'"),
        (["search", "x", "-k", str(MAX_SEARCH_K + 1)], "'--k'"),
        (["search", "x", "--offset", str(MAX_SEARCH_K)], "'--offset'"),
        (["recall", "x", "--k", str(MAX_SEARCH_K + 1)], "'--k'"),
        (["recall", "x", "--budget-tokens", "0"], "'--budget-tokens'"),
        (["recall", "x", "--budget", "100001"], "'--budget'"),
        (["list", "--limit", "0"], "'--limit'"),
        (["list", "--limit", "1001"], "'--limit'"),
        (["history", "abcdefgh", "--limit", "1001"], "'--limit'"),
        (["neighbors", "Alice", "--limit", "1001"], "'--limit'"),
        (["neighbors", "Alice", "--hops", "11"], "'--hops'"),
        (["neighbors", "Alice", "--max-facts", "100001"], "'--max-facts'"),
        (["audit", "--limit", "1001"], "'--limit'"),
        (["audit", "--offset", "-1"], "'--offset'"),
        (["reverify", "--limit", "100001"], "'--limit'"),
        (["reverify", "--batch", "501"], "'--batch'"),
        (["remember-conversation", "--context-turns", "-1"], "'--context-turns'"),
    ],
)
def test_an_out_of_bound_option_exits_2_naming_it(cli: Any, args: list[str], option: str) -> None:
    done = cli(*args)
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert "Invalid value for" in done.stderr and option in done.stderr, done.stderr


#: CLI command and parameter -> the Store method and parameter it sets, and the rest of
#: a call that reaches the bound check.
BOUNDED: list[tuple[str, str, str, dict[str, Any]]] = [
    ("search", "k", "search", {"query": "x"}),
    ("search", "offset", "search", {"query": "x", "k": 1}),
    ("search", "k", "search_evidence", {"query": "x"}),
    ("recall", "k", "recall", {"query": "x"}),
    ("recall", "budget_tokens", "recall", {"query": "x"}),
    ("list", "limit", "list_facts", {}),
    ("history", "limit", "history", {}),
    ("neighbors", "hops", "neighborhood", {"entities": "Maya"}),
    ("neighbors", "limit", "neighborhood", {"entities": "Maya"}),
    ("neighbors", "max_facts", "neighborhood", {"entities": "Maya"}),
    ("audit", "limit", "rejections", {}),
    ("audit", "offset", "rejections", {}),
    ("reverify", "limit", "reverify", {}),
    ("reverify", "batch", "reverify", {}),
    ("remember-conversation", "context_turns", "remember_conversation", {}),
]


def cli_range(name: str, param: str) -> tuple[int | None, int | None]:
    """The range of an option, as ``--help`` shows it (``typer.Option(min=, max=)``)."""
    [option] = [p for p in command(name).params if p.name == param]
    return option.min, option.max


def test_search_k_is_the_stores() -> None:
    from memstore.schemas import MAX_SEARCH_K as STORES

    assert MAX_SEARCH_K == STORES


@pytest.mark.parametrize(("name", "param", "method", "rest"), BOUNDED)
def test_each_bounded_option_has_the_stores_range(
    tmp_path: Path, name: str, param: str, method: str, rest: dict[str, Any]
) -> None:
    """The Store refuses one past each end of the CLI's range, naming the parameter,
    and takes each end itself (it may fail later for another reason: no index here)."""
    low, high = cli_range(name, param)
    with memstore.open(tmp_path / "mem", hook=memstore.Ungated(), index=False) as store:
        fact = store.add_fact(statement="Maya likes tea.", members=["Maya"], evidence=["tea"])
        given = {"fact_id": fact.id} if method == "history" else {}
        if method == "remember_conversation":
            given = {"messages": [{"role": "user", "content": "Hi."}]}
        call: Callable[..., Any] = getattr(store, method)
        assert low is not None
        ends = [(low - 1, True), (low, False)]
        if high is not None:
            ends += [(high + 1, True), (high, False)]
        for value, refused in ends:
            try:
                call(**rest, **given, **{param: value})
            except InvalidInput as exc:
                assert refused and exc.field == param, (value, exc)
            except memstore.MemstoreError:
                assert not refused, value  # past the check: no search index here
            else:
                assert not refused, value


def test_audit_offset_is_the_stores_largest(tmp_path: Path) -> None:
    with memstore.open(tmp_path / "mem", hook=memstore.Ungated(), index=False) as store:
        assert list(store.rejections(offset=MAX_OFFSET)) == []
        with pytest.raises(InvalidInput, match="offset"):
            store.rejections(offset=MAX_OFFSET + 1)
