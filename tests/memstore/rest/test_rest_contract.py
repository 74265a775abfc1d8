"""One contract across the fronts, on the REST API (real HTTP, uvicorn): the query
parameters carry the Store's names (``query``, ``statuses``, ``metadata``, the
neighborhood's ``as_of``) and its bounds, and the API's first names stay as aliases
(``q``, ``status``, ``meta``). A real SQLite store and index, written with the gate off."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from rest_bodies import ALICE
from rest_server import ALICE_KEY, serving, settings_for
from samples import allergy, works_at

import memstore
from memstore.defaults import (
    MAX_HOPS,
    MAX_LIST_LIMIT,
    MAX_NEIGHBORHOOD_FACTS,
    MAX_RECALL_TOKENS,
    REJECTIONS_MAX_PAGE,
)
from memstore.rest import create_app
from memstore.schemas import MAX_QUERY_CHARS, MAX_SEARCH_K

PEANUTS = "The user is allergic to peanuts."
SESAME = "The user is allergic to sesame."
ACME = "Alice works at Acme."
LISBON = "Faro lives in Lisbon."
PORTO = "Faro lives in Porto."


@dataclass
class Written:
    """The ids of the facts the server reads."""

    peanuts: str  # metadata team=red, n=1
    acme: str  # metadata team=blue, n=1
    sesame: str  # retracted
    lisbon: str  # Faro, valid 2019 to 2021
    porto: str  # Faro, valid from 2021


def lives_in(city: str, valid_from: str, valid_to: str | None = None) -> dict[str, Any]:
    return {
        "statement": f"Faro lives in {city}.",
        "members": [("Faro", "person", "resident"), (city, "place", "home")],
        "relation": "lives_in",
        "evidence": [f"Faro: I live in {city}."],
        "valid_from": valid_from,
        "valid_to": valid_to,
    }


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Written]]:
    data = tmp_path_factory.mktemp("rest-contract") / "memdata"
    with memstore.open(data, "user:alice", hook=memstore.Ungated()) as store:
        peanuts = store.add_fact(allergy("peanuts", metadata={"team": "red", "n": 1}))
        acme = store.add_fact(works_at("Alice", "Acme", metadata={"team": "blue", "n": 1}))
        sesame = store.add_fact(allergy("sesame"))
        store.retract(sesame.id, "said by mistake")
        lisbon = store.add_fact(lives_in("Lisbon", "2019-01-01", "2021-01-01"))
        porto = store.add_fact(lives_in("Porto", "2021-01-01"))
    written = Written(peanuts.id, acme.id, sesame.id, lisbon.id, porto.id)
    app = create_app(settings_for(str(data), hallucination={"enabled": False}))
    with (
        serving(app) as base,
        httpx.Client(base_url=base, timeout=60, headers={"X-API-Key": ALICE_KEY}) as client,
    ):
        yield client, written


def get(client: httpx.Client, path: str, params: Any) -> Any:
    response = client.get(f"{ALICE}{path}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def refused(client: httpx.Client, path: str, params: Any) -> str:
    """The field a 400 names."""
    response = client.get(f"{ALICE}{path}", params=params)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["error"] == "invalid_input" and error["field"] in error["detail"], error
    field: str = error["field"]
    return field


def statements(answer: Any) -> list[str]:
    rows = answer["items"] if isinstance(answer, dict) and "items" in answer else answer
    rows = answer["hits"] if isinstance(answer, dict) and "hits" in answer else rows
    rows = answer["facts"] if isinstance(answer, dict) and "facts" in answer else rows
    return sorted(r["fact"]["statement"] if "fact" in r else r["statement"] for r in rows)


# -- query, and its alias q ----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/search", "/recall", "/search/evidence"])
def test_query_and_its_alias_q_ask_the_same(
    served: tuple[httpx.Client, Written], path: str
) -> None:
    client, _ = served
    extra = {"min_score": 0} if path == "/recall" else {}
    by_name = get(client, path, {"query": "allergic to peanuts", **extra})
    by_alias = get(client, path, {"q": "allergic to peanuts", **extra})
    both = get(client, path, {"query": "allergic to peanuts", "q": "allergic to peanuts", **extra})
    assert by_name == by_alias == both and by_name
    if path != "/search/evidence":
        assert PEANUTS in statements(by_name)


@pytest.mark.parametrize("path", ["/search", "/recall", "/search/evidence"])
def test_query_and_q_that_differ_or_neither_is_400_naming_query(
    served: tuple[httpx.Client, Written], path: str
) -> None:
    client, _ = served
    assert refused(client, path, {"query": "peanuts", "q": "Acme"}) == "query"
    assert refused(client, path, {"k": 3}) == "query"
    assert refused(client, path, {"query": "   "}) == "query"
    assert refused(client, path, {"q": "   "}) == "q"  # the parameter the request used
    assert refused(client, path, {"q": "x" * (MAX_QUERY_CHARS + 1)}) == "q"


# -- statuses, and its alias status -------------------------------------------------------


def test_statuses_and_its_alias_status_filter_alike(served: tuple[httpx.Client, Written]) -> None:
    client, _ = served
    default = statements(get(client, "/facts", {}))
    assert SESAME not in default and PEANUTS in default
    for name in ("statuses", "status"):
        assert statements(get(client, "/facts", {name: "retracted"})) == [SESAME], name
        hits = get(client, "/search", {"query": "allergic to sesame", name: "retracted"})
        assert statements(hits) == [SESAME], name
        recalled = get(
            client, "/recall", {"query": "allergic to sesame", name: "retracted", "min_score": 0}
        )
        assert statements(recalled) == [SESAME], name
    # Repeated, and the two merged: the union of what each names.
    both = [("statuses", "retracted"), ("status", "unverified")]
    repeated = [("statuses", "retracted"), ("statuses", "unverified")]
    merged = statements(get(client, "/facts", both))
    assert merged == statements(get(client, "/facts", repeated)) == sorted([*default, SESAME])


@pytest.mark.parametrize("path", ["/facts", "/search", "/recall"])
def test_a_bad_status_is_400_naming_the_parameter_that_gave_it(
    served: tuple[httpx.Client, Written], path: str
) -> None:
    client, _ = served
    query = {} if path == "/facts" else {"q": "peanuts"}
    assert refused(client, path, {**query, "status": "forgotten"}) == "status"
    assert refused(client, path, {**query, "statuses": "forgotten"}) == "statuses"
    mixed = [*query.items(), ("statuses", "retracted"), ("status", "forgotten")]
    assert refused(client, path, mixed) == "status"


# -- metadata, and its alias meta ---------------------------------------------------------


def test_metadata_and_its_alias_meta_filter_alike(served: tuple[httpx.Client, Written]) -> None:
    client, _ = served
    for name in ("metadata", "meta"):
        assert statements(get(client, "/facts", {name: "team=red"})) == [PEANUTS], name
        assert statements(get(client, "/facts", {name: "n:=1"})) == sorted([ACME, PEANUTS])
        hits = get(client, "/search", {"query": "works at", name: "team=blue", "k": 50})
        assert statements(hits) == [ACME], name
    merged = [("metadata", "n:=1"), ("meta", "team=blue")]
    assert statements(get(client, "/facts", merged)) == [ACME]
    assert statements(get(client, "/facts", [("metadata", "n:=1"), ("metadata", "team=blue")])) == [
        ACME
    ]


@pytest.mark.parametrize("path", ["/facts", "/search"])
def test_bad_metadata_is_400_naming_the_parameter_that_gave_it(
    served: tuple[httpx.Client, Written], path: str
) -> None:
    client, _ = served
    query = {} if path == "/facts" else {"q": "peanuts"}
    assert refused(client, path, {**query, "meta": "team"}) == "meta"
    assert refused(client, path, {**query, "metadata": "team"}) == "metadata"
    assert refused(client, path, {**query, "metadata": "bad key=1"}) == "metadata"
    # A key given under both names is as ambiguous as one given twice under one.
    both = [*query.items(), ("metadata", "team=red"), ("meta", "team=red")]
    assert refused(client, path, both) == "metadata"


# -- the neighborhood's world time --------------------------------------------------------


def test_the_neighborhood_reads_as_of_a_world_time(served: tuple[httpx.Client, Written]) -> None:
    client, written = served
    path = "/entities/Faro/neighborhood"
    assert statements(get(client, path, {})) == [LISBON, PORTO]
    assert statements(get(client, path, {"as_of": "2020-06-01T00:00:00Z"})) == [LISBON]
    assert statements(get(client, path, {"as_of": "2022-06-01T00:00:00Z"})) == [PORTO]
    assert statements(get(client, path, {"as_of": "2018-06-01T00:00:00Z"})) == []
    assert statements(get(client, path, {"relation": "works_at"})) == []
    later = get(client, path, {"as_of": "2022-06-01", "relation": "lives_in"})
    assert [f["id"] for f in later["facts"]] == [written.porto]
    assert refused(client, path, {"as_of": "yesterday"}) == "as_of"
    assert refused(client, path, {"as_of": "9999-12-31T23:59:59-14:00"}) == "as_of"


# -- bounds -------------------------------------------------------------------------------

#: (route, parameter) -> the Store's bound (lowest, highest; None: none), as published.
BOUNDS: dict[tuple[str, str], tuple[int, int | None]] = {
    ("/search", "k"): (1, MAX_SEARCH_K),
    ("/search", "offset"): (0, MAX_SEARCH_K - 1),
    ("/search/evidence", "k"): (1, MAX_SEARCH_K),
    ("/recall", "k"): (1, MAX_SEARCH_K),
    ("/recall", "budget_tokens"): (1, MAX_RECALL_TOKENS),
    ("/facts", "limit"): (1, MAX_LIST_LIMIT),
    ("/facts/{fact_id}/history", "limit"): (1, MAX_LIST_LIMIT),
    ("/entities/{name}/neighborhood", "limit"): (1, MAX_LIST_LIMIT),
    ("/entities/{name}/neighborhood", "hops"): (0, MAX_HOPS),
    ("/entities/{name}/neighborhood", "max_facts"): (1, MAX_NEIGHBORHOOD_FACTS),
    ("/rejections", "limit"): (1, REJECTIONS_MAX_PAGE),
    ("/rejections", "offset"): (0, 2**63 - 1),
}


def test_the_schema_publishes_the_store_bounds_and_the_aliases(
    served: tuple[httpx.Client, Written],
) -> None:
    client, _ = served
    paths = client.get("/openapi.json").json()["paths"]
    prefix = "/v1/namespaces/{namespace}"
    for (path, name), (low, high) in BOUNDS.items():
        params = {p["name"]: p for p in paths[prefix + path]["get"]["parameters"]}
        schema = params[name]["schema"]
        assert (schema.get("minimum"), schema.get("maximum")) == (low, high), (path, name)
    search = {p["name"]: p for p in paths[f"{prefix}/search"]["get"]["parameters"]}
    for alias, name in (("q", "query"), ("status", "statuses"), ("meta", "metadata")):
        assert f"Alias of {name}" in search[alias]["description"], alias
        assert not search[alias].get("deprecated"), alias  # an alias, kept for good
        assert name in search and search[name]["description"], name
    hood = paths[f"{prefix}/entities/{{name}}/neighborhood"]["get"]["parameters"]
    assert {"as_of", "relation", "hops", "limit", "max_facts"} <= {p["name"] for p in hood}
    models = client.get("/openapi.json").json()["components"]["schemas"]
    turns = models["ConversationRequest"]["properties"]["context_turns"]
    assert turns["anyOf"][0].get("minimum") == 0 and "maximum" not in turns["anyOf"][0]


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/search", {"q": "peanuts", "k": MAX_SEARCH_K + 1}, "k"),
        ("/search", {"query": "peanuts", "k": 0}, "k"),
        ("/search", {"query": "peanuts", "offset": MAX_SEARCH_K}, "offset"),
        ("/search", {"query": "peanuts", "k": 10, "offset": MAX_SEARCH_K - 5}, "offset"),
        ("/search/evidence", {"query": "peanuts", "k": MAX_SEARCH_K + 1}, "k"),
        ("/recall", {"query": "peanuts", "k": MAX_SEARCH_K + 1}, "k"),
        ("/recall", {"query": "peanuts", "budget_tokens": MAX_RECALL_TOKENS + 1}, "budget_tokens"),
        ("/facts", {"limit": MAX_LIST_LIMIT + 1}, "limit"),
        ("/facts", {"limit": 0}, "limit"),
        ("/entities/Faro/neighborhood", {"limit": MAX_LIST_LIMIT + 1}, "limit"),
        ("/entities/Faro/neighborhood", {"hops": MAX_HOPS + 1}, "hops"),
        ("/entities/Faro/neighborhood", {"hops": -1}, "hops"),
        ("/entities/Faro/neighborhood", {"max_facts": MAX_NEIGHBORHOOD_FACTS + 1}, "max_facts"),
        ("/rejections", {"limit": REJECTIONS_MAX_PAGE + 1}, "limit"),
        ("/rejections", {"offset": 2**63}, "offset"),
        ("/rejections", {"offset": -1}, "offset"),
    ],
)
def test_an_out_of_bound_number_is_400_naming_it(
    served: tuple[httpx.Client, Written], path: str, params: dict[str, Any], field: str
) -> None:
    client, _ = served
    assert refused(client, path, params) == field


def test_the_highest_bound_is_allowed(served: tuple[httpx.Client, Written]) -> None:
    client, _ = served
    assert get(client, "/search", {"query": "peanuts", "k": MAX_SEARCH_K}) != []
    assert get(client, "/facts", {"limit": MAX_LIST_LIMIT})["items"]
    hood = get(client, "/entities/Faro/neighborhood", {"hops": MAX_HOPS})
    assert statements(hood) == [LISBON, PORTO]
