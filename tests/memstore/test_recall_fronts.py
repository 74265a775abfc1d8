"""Recall and search's relevance and recording-time filters on the REST API (real HTTP,
uvicorn) and the CLI (``memstore recall``, ``memstore search``): a real SQLite store
and index, written with the gate off."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_bodies import ALICE
from rest_server import ALICE_KEY, serving, settings_for
from samples import allergy, works_at
from typer.testing import CliRunner

import memstore
from memstore.cli import Exit, app
from memstore.read.recall import DEFAULT_MIN_SCORE, count_tokens
from memstore.rest import create_app

PEANUTS = "The user is allergic to peanuts."
RELATED = "What is the user allergic to?"
UNRELATED = "How do I reverse a list in Python?"
CLEAN_ENV = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None, "MEMSTORE_CONFIG": None}


@dataclass
class Written:
    """The store's directory, and when its two facts (peanuts, then Acme) were recorded."""

    data: Path
    peanuts_id: str
    acme_id: str
    between: str  # after the first fact was recorded, not after the second (ISO 8601)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    data = tmp_path_factory.mktemp("recall-fronts") / "memdata"
    with memstore.open(data, "user:alice", hook=memstore.Ungated()) as store:
        peanuts = store.add_fact(allergy("peanuts"))
        acme = store.add_fact(works_at("Alice", "Acme"))
    assert peanuts.recorded_at < acme.recorded_at
    between = (peanuts.recorded_at + timedelta(microseconds=1)).isoformat()
    return Written(data, peanuts.id, acme.id, between)


# -- REST -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def alice(written: Written) -> Iterator[httpx.Client]:
    app = create_app(settings_for(str(written.data), hallucination={"enabled": False}))
    with (
        serving(app) as base,
        httpx.Client(base_url=base, timeout=60, headers={"X-API-Key": ALICE_KEY}) as client,
    ):
        yield client


def get(client: httpx.Client, path: str, **params: Any) -> Any:
    response = client.get(f"{ALICE}{path}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_rest_recall_answers_the_block_for_a_prompt(alice: httpx.Client) -> None:
    found = get(alice, "/recall", q=RELATED, budget_tokens=40)
    assert found["text"].startswith(f"- {PEANUTS} (unverified; recorded ")
    assert found["tokens"] == count_tokens(found["text"]) <= 40 == found["budget_tokens"]
    assert [h["fact"]["statement"] for h in found["hits"]] == [PEANUTS]
    assert found["hits"][0]["relevance"] >= DEFAULT_MIN_SCORE
    nothing = get(alice, "/recall", q=UNRELATED)
    assert (nothing["text"], nothing["hits"], nothing["left_out"]) == ("", [], 0)
    anything = get(alice, "/recall", q=UNRELATED, min_score=0)
    assert len(anything["hits"]) == 2  # min_score=0: no threshold


def test_rest_search_takes_recording_time_and_min_score(
    alice: httpx.Client, written: Written
) -> None:
    def ids(path: str, **params: Any) -> list[str]:
        hits = get(alice, path, q="Alice", **params)
        return sorted(h["fact"]["id"] if "fact" in h else h["evidence_id"] for h in hits)

    assert ids("/search") == sorted([written.peanuts_id, written.acme_id])
    assert ids("/search", recorded_after=written.between) == [written.acme_id]
    assert ids("/search", recorded_before=written.between) == [written.peanuts_id]
    assert get(alice, "/search", q=UNRELATED) != []
    assert get(alice, "/search", q=UNRELATED, min_score=DEFAULT_MIN_SCORE) == []
    assert len(ids("/search/evidence")) == 2
    assert len(ids("/search/evidence", recorded_after=written.between)) == 1
    assert get(alice, "/search/evidence", q=UNRELATED, min_score=DEFAULT_MIN_SCORE) == []


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/search", {"min_score": 1.5}, "min_score"),
        ("/search/evidence", {"min_score": -0.5}, "min_score"),
        ("/search", {"recorded_after": "yesterday"}, "recorded_after"),
        ("/search", {"recorded_after": "2026-01-02", "recorded_before": "2026-01-01"},
         "recorded_before"),
        ("/recall", {"budget_tokens": 0}, "budget_tokens"),
        ("/recall", {"budget_tokens": 100_001}, "budget_tokens"),
        ("/recall", {"min_score": "high"}, "min_score"),
        ("/recall", {"status": "forgotten"}, "status"),
    ],
)  # fmt: skip
def test_a_bad_parameter_is_400_naming_it(
    alice: httpx.Client, path: str, params: dict[str, Any], field: str
) -> None:
    response = alice.get(f"{ALICE}{path}", params={"q": "Alice", **params})
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_input" and response.json()["field"] == field


# -- CLI --------------------------------------------------------------------------------


def cli(written: Written, *args: str) -> Any:
    runner = CliRunner()
    return runner.invoke(
        app, ["--store", str(written.data), "-n", "user:alice", *args], env=CLEAN_ENV
    )


def test_cli_recall_prints_the_block(written: Written) -> None:
    done = cli(written, "recall", RELATED, "--budget", "40")
    assert done.exit_code == Exit.OK, done.output
    [line] = done.stdout.splitlines()
    assert line.startswith(f"- {PEANUTS} (unverified; recorded ") and count_tokens(line) <= 40
    whole = json.loads(cli(written, "recall", "Alice", "--min-score", "0", "--json").stdout)
    assert len(whole["hits"]) == 2 and whole["text"].count("\n") == 1
    tight = cli(written, "recall", "Alice", "--min-score", "0", "--budget", str(count_tokens(line)))
    assert len(tight.stdout.splitlines()) == 1
    nothing = cli(written, "recall", UNRELATED)
    assert nothing.exit_code == Exit.OK and nothing.stdout == ""
    assert "Nothing in namespace 'user:alice' is relevant enough to recall." in nothing.stderr


def test_cli_search_takes_min_score_and_recording_time(written: Written) -> None:
    def ids(*args: str) -> list[str]:
        done = cli(written, "search", *args, "--json")
        assert done.exit_code == Exit.OK, done.output
        return [h["fact"]["id"] for h in json.loads(done.stdout)]

    assert ids(UNRELATED) != []
    assert ids(UNRELATED, "--min-score", str(DEFAULT_MIN_SCORE)) == []
    assert ids("Alice", "--recorded-after", written.between) == [written.acme_id]
    assert ids("Alice", "--recorded-before", written.between) == [written.peanuts_id]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["recall", "Alice", "--budget", "0"], "--budget"),
        (["recall", "Alice", "--budget", "100001"], "--budget"),
        (["recall", "Alice", "--min-score", "2"], "--min-score"),
        (["search", "Alice", "--recorded-after", "soon"], "recorded_after"),
    ],
)
def test_cli_bad_options_exit_2_naming_them(written: Written, args: list[str], says: str) -> None:
    done = cli(written, *args)
    assert done.exit_code == Exit.BAD_INPUT, done.output
    assert says in done.stderr, done.stderr
