"""The REST API over real HTTP: uvicorn on 127.0.0.1, httpx, the embedded gate, SQLite."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from db_rows import row_counts
from rest_bodies import ALICE, BOB, EVIDENCE, PATIENT, allergy_body
from rest_server import ALICE_KEY, BOTH_KEY, TEAM_KEY, USERS_KEY, Api, serving, settings_for

import memstore
from gate import ConfigError
from memstore.config import load_settings
from memstore.errors import MemstoreError
from memstore.rest import NamespaceStores, create_app


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    data = tmp_path_factory.mktemp("rest") / "memdata"
    app = create_app(settings_for(str(data)))
    with serving(app) as base:
        server = Api(base, app, f"sqlite:///{data / 'memstore.db'}")
        # The first request opens (and creates) the database: before any test counts rows.
        assert server.client(ALICE_KEY).get(f"{ALICE}/rejections").status_code == 200
        yield server
        server.close()


@pytest.fixture
def alice(api: Api) -> httpx.Client:
    return api.client(ALICE_KEY)


def add(client: httpx.Client, body: dict, namespace: str = ALICE) -> dict:
    response = client.post(f"{namespace}/facts", json=body)
    assert response.status_code in (200, 201), response.text
    fact: dict = response.json()
    return fact


# -- configuration and operations -------------------------------------------------


def test_create_app_without_api_keys_raises_config_error(tmp_path: Path) -> None:
    settings = load_settings(store={"url": str(tmp_path / "memdata")})
    with pytest.raises(ConfigError) as err:
        create_app(settings)
    assert err.value.field == "server.api_keys"
    assert "MEMSTORE_SERVER__API_KEYS" in str(err.value)


def test_health_needs_no_key(api: Api) -> None:
    response = api.client(None).get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": memstore.__version__, "database": "ok"}


def test_openapi_lists_the_routes_and_keeps_422_for_the_gate(api: Api) -> None:
    schema = api.client(None).get("/openapi.json").json()
    paths = schema["paths"]
    ns = "/v1/namespaces/{namespace}"
    expected = {
        f"{ns}/facts": {"get", "post"},
        f"{ns}/facts/batch": {"post"},
        f"{ns}/facts/{{fact_id}}": {"get"},
        f"{ns}/facts/{{fact_id}}/retract": {"post"},
        f"{ns}/facts/{{fact_id}}/review": {"post"},
        f"{ns}/facts/{{fact_id}}/erase": {"post"},
        f"{ns}/facts/{{fact_id}}/supersede": {"post"},
        f"{ns}/facts/{{fact_id}}/history": {"get"},
        f"{ns}/conversations": {"post"},
        f"{ns}/search": {"get"},
        f"{ns}/search/evidence": {"get"},
        f"{ns}/recall": {"get"},
        f"{ns}/entities/{{name}}/neighborhood": {"get"},
        f"{ns}/rejections": {"get"},
        f"{ns}/rejections/counts": {"get"},
        f"{ns}/drift": {"get"},
        f"{ns}/rejections/{{rejection_id}}": {"get"},
        f"{ns}/rejections/{{rejection_id}}/erase": {"post"},
        f"{ns}/verify_claim": {"post"},
        "/health": {"get"},
        "/metrics": {"get"},
    }
    assert {path: set(ops) for path, ops in paths.items()} == expected
    add_fact = paths[f"{ns}/facts"]["post"]
    assert add_fact["responses"]["422"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/NotGroundedPublic"
    }
    assert add_fact["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/FactCreate"
    }
    assert {"201", "400", "401", "403"} <= set(add_fact["responses"])
    search = paths[f"{ns}/search"]["get"]
    assert "422" not in search["responses"] and "400" in search["responses"]
    assert search["responses"]["200"]["content"]["application/json"]["schema"]["items"] == {
        "$ref": "#/components/schemas/SearchHit"
    }
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    assert {"HTTPBearer", "APIKeyHeader"} <= set(schema["components"]["securitySchemes"])
    assert api.client(None).get("/docs").status_code == 200


# -- auth -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer not-a-known-key-0000000"},
        {"X-API-Key": "nope"},
        {"Authorization": f"Basic {ALICE_KEY}"},
    ],
    ids=["no key", "unknown bearer", "unknown header", "basic auth"],
)
def test_a_missing_or_unknown_key_is_401(api: Api, headers: dict[str, str]) -> None:
    client = api.client(None)
    for response in (
        client.get(f"{ALICE}/rejections", headers=headers),
        client.post(f"{ALICE}/facts", json=allergy_body("peanuts"), headers=headers),
    ):
        assert response.status_code == 401, response.text
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert response.json()["error"] == "unauthorized"


def test_a_key_works_as_bearer_token_or_x_api_key(api: Api) -> None:
    assert api.client(ALICE_KEY).get(f"{ALICE}/rejections").status_code == 200
    assert api.client(ALICE_KEY, header="X-API-Key").get(f"{ALICE}/rejections").status_code == 200


def test_a_key_never_reads_or_writes_another_namespace(api: Api, alice: httpx.Client) -> None:
    bob = {**PATIENT, "name": "Bob"}
    fact = add(
        api.client(BOTH_KEY), allergy_body("sesame", bob, "Bob: I'm allergic to sesame."), BOB
    )
    before = row_counts(api.db_url)
    responses = [
        alice.get(f"{BOB}/facts/{fact['id']}"),
        alice.get(f"{BOB}/search", params={"q": "sesame"}),
        alice.get(f"{BOB}/rejections"),
        alice.post(f"{BOB}/facts", json=allergy_body("peanuts")),
        alice.post(f"{BOB}/facts/batch", json={"facts": [allergy_body("peanuts")]}),
        alice.post(f"{BOB}/facts/{fact['id']}/retract", json={"reason": "not yours"}),
    ]
    for response in responses:
        assert response.status_code == 403, response.text
        assert response.json()["error"] == "forbidden"
    assert row_counts(api.db_url) == before
    assert api.client(BOTH_KEY).get(f"{BOB}/facts/{fact['id']}").json()["status"] == "verified"


def test_pattern_keys_cover_matching_namespaces_only(api: Api) -> None:
    users = api.client(USERS_KEY)
    fact = add(users, allergy_body("peanuts"), "/v1/namespaces/user:carol")
    assert fact["namespace"] == "user:carol"
    assert users.get(f"/v1/namespaces/user:carol/facts/{fact['id']}").status_code == 200
    assert users.get("/v1/namespaces/team:red/rejections").status_code == 403
    assert users.get("/v1/namespaces/userx/rejections").status_code == 403


def test_a_namespace_with_slashes_is_one_path_parameter(api: Api) -> None:
    team = api.client(TEAM_KEY)
    fact = add(team, allergy_body("peanuts"), "/v1/namespaces/team/red/alpha")
    assert fact["namespace"] == "team/red/alpha"
    got = team.get(f"/v1/namespaces/team/red/alpha/facts/{fact['id']}")
    assert got.status_code == 200 and got.json()["id"] == fact["id"]
    assert team.get("/v1/namespaces/team/blue/facts/x").status_code == 403


def test_namespaces_are_isolated_even_for_a_key_allowed_both(api: Api) -> None:
    both = api.client(BOTH_KEY)
    fact = add(both, allergy_body("hazelnuts", evidence="Alice: I'm allergic to hazelnuts."))
    assert both.get(f"{ALICE}/facts/{fact['id']}").status_code == 200
    missing = both.get(f"{BOB}/facts/{fact['id']}")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    hits = both.get(f"{BOB}/search", params={"q": "allergic to hazelnuts"}).json()
    assert fact["id"] not in [hit["fact"]["id"] for hit in hits]
    assert both.get(f"{BOB}/entities/Alice/neighborhood").status_code == 404
    assert both.get(f"{BOB}/facts/{fact['id']}/history").status_code == 404


# -- writes ---------------------------------------------------------------------------


def test_a_grounded_fact_is_201_and_its_duplicate_200(api: Api, alice: httpx.Client) -> None:
    created = alice.post(f"{ALICE}/facts", json=allergy_body("peanuts"))
    assert created.status_code == 201, created.text
    fact = created.json()
    assert fact["namespace"] == "user:alice"
    assert fact["status"] == "verified" and fact["verdict"] == "grounded"
    assert fact["statement"] == "Alice is allergic to peanuts."
    assert {(m["name"], m["role"]) for m in fact["members"]} == {
        ("Alice", "patient"),
        ("peanuts", "allergen"),
    }
    again = alice.post(f"{ALICE}/facts", json=allergy_body("peanuts"))
    assert again.status_code == 200
    assert again.json()["deduplicated"] is True and again.json()["id"] == fact["id"]


def test_a_rejected_fact_is_422_audited_and_not_stored(api: Api, alice: httpx.Client) -> None:
    before = row_counts(api.db_url)
    response = alice.post(f"{ALICE}/facts", json=allergy_body("shellfish"))
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "not_grounded"
    assert body["verdict"] == "insufficient_evidence"
    assert body["reason"] and "bits" in body["reason"]
    rejection = body["rejection"]
    assert body["detail"].endswith(f"GET {ALICE}/rejections/{rejection['id']}")
    assert rejection["statement"] == "Alice is allergic to shellfish."
    assert rejection["verdict"] == "insufficient_evidence"
    assert rejection["namespace"] == "user:alice"
    assert [e["text"] for e in rejection["evidence"]] == [EVIDENCE]
    after = row_counts(api.db_url)
    assert after["facts"] == before["facts"]
    assert after["rejections"] == before["rejections"] + 1

    listed = alice.get(f"{ALICE}/rejections", params={"verdict": "insufficient_evidence"})
    assert listed.status_code == 200
    assert rejection["id"] in [r["id"] for r in listed.json()]
    by_text = alice.get(f"{ALICE}/rejections", params={"text": "shellfish", "entity": "Alice"})
    assert [r["id"] for r in by_text.json()] == [rejection["id"]]
    other = alice.get(f"{ALICE}/rejections", params={"verdict": ["contradicted", "unsupported"]})
    assert rejection["id"] not in [r["id"] for r in other.json()]
    one = alice.get(f"{ALICE}/rejections/{rejection['id']}")
    assert one.status_code == 200 and one.json()["statement"] == rejection["statement"]
    counts = alice.get(f"{ALICE}/rejections/counts", params={"by": "verdict"}).json()
    assert counts["insufficient_evidence"] >= 1
    hits = alice.get(f"{ALICE}/search", params={"q": "shellfish allergy", "mode": "text"}).json()
    deep = alice.get(f"{ALICE}/search", params={"q": "allergy", "k": 10, "offset": 991})
    assert deep.status_code == 400 and "offset" in deep.text
    assert "Alice is allergic to shellfish." not in [h["fact"]["statement"] for h in hits]


def test_rejections_page_by_the_link_header(api: Api, alice: httpx.Client) -> None:
    """Each page's ``Link: rel="next"`` is the same query with its cursor; following them
    reads every matching rejection once, in order, and the last page has none."""
    for food in ("shellfish", "sesame", "soy", "wheat", "mustard"):
        assert alice.post(f"{ALICE}/facts", json=allergy_body(food)).status_code == 422
    query = {"entity": "Alice", "order_by": "p1", "descending": "false"}
    whole = alice.get(f"{ALICE}/rejections", params=query).json()
    assert len(whole) >= 5
    seen: list[str] = []
    response = alice.get(f"{ALICE}/rejections", params={**query, "limit": 2, "offset": 0})
    while True:
        assert response.status_code == 200, response.text
        seen += [r["id"] for r in response.json()]
        if "next" not in response.links:
            break
        following = httpx.URL(response.links["next"]["url"])
        assert following.is_relative_url  # never built from the caller's Host header
        assert "offset" not in following.params and following.params["order_by"] == "p1"
        response = alice.get(following)
    assert seen == [r["id"] for r in whole]
    spoofed = alice.get(
        f"{ALICE}/rejections", params={**query, "limit": 2}, headers={"Host": "evil.example"}
    )
    assert "evil.example" not in spoofed.headers["link"]
    bad = alice.get(f"{ALICE}/rejections", params={"cursor": "not-a-cursor"})
    assert bad.status_code == 400 and "cursor" in bad.text


def test_a_batch_reports_each_fact_stored_or_rejected(api: Api, alice: httpx.Client) -> None:
    before = row_counts(api.db_url)
    dave = {"name": "Dave", "kind": "person", "role": "patient"}
    facts = [
        allergy_body("peanuts", dave, "Dave: I'm allergic to peanuts."),
        allergy_body("shellfish", dave, "Dave: I'm allergic to peanuts."),
    ]
    response = alice.post(f"{ALICE}/facts/batch", json={"facts": facts})
    assert response.status_code == 200, response.text
    stored, rejected = response.json()["results"]
    assert (
        stored["stored"] is True and stored["fact"]["statement"] == "Dave is allergic to peanuts."
    )
    assert rejected["stored"] is False
    assert rejected["rejection"]["statement"] == "Dave is allergic to shellfish."
    assert rejected["rejection"]["verdict"] == "insufficient_evidence"
    after = row_counts(api.db_url)
    assert after["facts"] == before["facts"] + 1
    assert after["rejections"] == before["rejections"] + 1


def test_get_retract_supersede_and_history(api: Api, alice: httpx.Client) -> None:
    erin = {"name": "Erin", "kind": "person", "role": "patient"}
    old = add(alice, allergy_body("peanuts", erin, "Erin: I'm allergic to peanuts."))
    got = alice.get(f"{ALICE}/facts/{old['id']}")
    assert got.status_code == 200 and got.json()["statement"] == old["statement"]

    correction = {
        "statement": "Erin is severely allergic to peanuts.",
        "members": [erin, ["peanuts", "food", "allergen"]],
        "relation": "allergic_to",
        "evidence": ["Erin: I'm severely allergic to peanuts, I carry an EpiPen."],
    }
    rejected = alice.post(
        f"{ALICE}/facts/{old['id']}/supersede", json=allergy_body("shellfish", erin)
    )
    assert rejected.status_code == 422 and rejected.json()["error"] == "not_grounded"
    assert alice.get(f"{ALICE}/facts/{old['id']}").json()["status"] == "verified"

    new = alice.post(f"{ALICE}/facts/{old['id']}/supersede", json=correction)
    assert new.status_code == 201, new.text
    new_id = new.json()["id"]
    assert new.json()["supersedes_id"] == old["id"]
    assert alice.get(f"{ALICE}/facts/{old['id']}").json()["status"] == "superseded"

    history = alice.get(f"{ALICE}/facts/{new_id}/history")
    assert history.status_code == 200
    versions = history.json()["versions"]
    assert [v["id"] for v in versions] == [old["id"], new_id]
    assert [v["status"] for v in versions] == ["superseded", "verified"]
    checks = history.json()["verifications"]
    assert {c["fact_id"] for c in checks} == {old["id"], new_id}
    assert all(c["kind"] == "write" and c["verdict"] == "grounded" for c in checks)

    retracted = alice.post(f"{ALICE}/facts/{new_id}/retract", json={"reason": "typo"})
    assert retracted.status_code == 200, retracted.text
    assert retracted.json()["status"] == "retracted"
    assert retracted.json()["retraction_reason"] == "typo"
    again = alice.post(f"{ALICE}/facts/{new_id}/retract", json={"reason": "twice"})
    assert again.status_code == 400 and again.json()["field"] == "fact_id"
    hits = alice.get(f"{ALICE}/search", params={"q": "Erin severely allergic"}).json()
    assert new_id not in [h["fact"]["id"] for h in hits]


# -- reads -----------------------------------------------------------------------------


def test_search_finds_the_fact_and_its_evidence(api: Api, alice: httpx.Client) -> None:
    frank = {"name": "Frank", "kind": "person", "role": "resident"}
    fact = add(
        alice,
        {
            "statement": "Frank lives in Paris.",
            "members": [frank, ["Paris", "place", "home"]],
            "relation": "lives_in",
            "evidence": ["Frank: I moved to Paris last year and I live there now."],
        },
    )
    response = alice.get(f"{ALICE}/search", params={"q": "Where does Frank live?", "k": 3})
    assert response.status_code == 200, response.text
    hits = response.json()
    assert hits and hits[0]["fact"]["id"] == fact["id"]
    assert len(hits) <= 3 and hits[0]["score"] > 0
    filtered = alice.get(
        f"{ALICE}/search",
        params={"q": "Paris", "entity": ["Frank", "Paris"], "relation": "lives_in"},
    ).json()
    assert [h["fact"]["id"] for h in filtered] == [fact["id"]]
    retracted_only = alice.get(f"{ALICE}/search", params={"q": "Paris", "status": "retracted"})
    assert fact["id"] not in [h["fact"]["id"] for h in retracted_only.json()]

    evidence = alice.get(f"{ALICE}/search/evidence", params={"q": "moved to Paris", "k": 2})
    assert evidence.status_code == 200, evidence.text
    assert "moved to Paris" in evidence.json()[0]["text"]
    assert evidence.json()[0]["evidence_id"] in [c["evidence_id"] for c in fact["citations"]]


def test_neighborhood_of_an_entity(api: Api, alice: httpx.Client) -> None:
    gina = {"name": "Gina", "kind": "person", "role": "patient"}
    fact = add(alice, allergy_body("peanuts", gina, "Gina: I'm allergic to peanuts."))
    response = alice.get(f"{ALICE}/entities/Gina/neighborhood", params={"hops": 1})
    assert response.status_code == 200, response.text
    hood = response.json()
    assert fact["id"] in [f["id"] for f in hood["facts"]]
    assert {"Gina", "peanuts"} <= {e["name"] for e in hood["entities"]}
    assert sorted(hood["distance"].values())[0] == 0
    bad = alice.get(f"{ALICE}/entities/Gina/neighborhood", params={"hops": 11})
    assert bad.status_code == 400 and bad.json()["field"] == "hops"


def test_verify_claim_answers_the_verdict_and_stores_nothing(api: Api, alice: httpx.Client) -> None:
    before = row_counts(api.db_url)
    url = f"{ALICE}/verify_claim"
    grounded = alice.post(
        url, json={"claim": "Alice is allergic to peanuts.", "evidence": EVIDENCE}
    )
    assert grounded.status_code == 200, grounded.text
    assert grounded.json()["status"] == "grounded" and grounded.json()["accepted"] is True
    assert grounded.json()["p1"] > grounded.json()["p0"]
    short = alice.post(
        url, json={"claim": "Alice is allergic to shellfish.", "evidence": [EVIDENCE]}
    )
    assert short.status_code == 200
    assert short.json()["status"] == "insufficient_evidence" and short.json()["accepted"] is False
    assert short.json()["budget_gap"] > 0
    assert row_counts(api.db_url) == before


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/facts", {**allergy_body("peanuts"), "statement": "  "}, "statement"),
        (
            "/facts",
            {"statement": "Alice is allergic to peanuts.", "evidence": [EVIDENCE]},
            "members",
        ),
        ("/facts", {**allergy_body("peanuts"), "members": []}, "members"),
        ("/facts", {**allergy_body("peanuts"), "members": [["Alice", "person"]]}, "members.0"),
        ("/facts", {**allergy_body("peanuts"), "confidence": 2}, "confidence"),
        ("/facts", {**allergy_body("peanuts"), "colour": "red"}, "colour"),
        ("/facts", {**allergy_body("peanuts"), "evidence": []}, "evidence"),
        (
            "/facts/batch",
            {"facts": [allergy_body("peanuts"), {"members": ["x"]}]},
            "facts.1.statement",
        ),
        ("/facts/batch", {}, "facts"),
        ("/verify_claim", {"claim": "x", "evidence": []}, "evidence"),
        ("/facts/abc/retract", {}, "reason"),
    ],
)
def test_a_bad_body_is_400_naming_the_field(
    api: Api, alice: httpx.Client, path: str, body: dict, field: str
) -> None:
    before = row_counts(api.db_url)
    response = alice.post(f"{ALICE}{path}", json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["error"] == "invalid_input"
    assert error["field"] == field
    assert error["reason"] and field in error["detail"]
    assert row_counts(api.db_url) == before


def test_a_body_that_is_not_json_is_400(alice: httpx.Client) -> None:
    response = alice.post(
        f"{ALICE}/facts", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_input" and response.json()["field"] == "body"


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/search", {"q": "peanuts", "k": "many"}, "k"),
        ("/search", {"q": "peanuts", "k": 0}, "k"),
        ("/search", {"q": "peanuts", "mode": "fuzzy"}, "mode"),
        ("/search", {"k": 3}, "query"),
        ("/search", {"q": "peanuts", "status": "forgotten"}, "status"),
        ("/search", {"query": "peanuts", "statuses": "forgotten"}, "statuses"),
        ("/search", {"q": "   "}, "q"),
        ("/search", {"query": "   "}, "query"),
        ("/search", {"query": "peanuts", "q": "shellfish"}, "query"),
        ("/search", {"q": "peanuts", "k": 1001}, "k"),
        ("/search", {"q": "peanuts", "offset": 1000}, "offset"),
        ("/search/evidence", {"q": "peanuts", "k": 1001}, "k"),
        ("/search/evidence", {}, "query"),
        ("/recall", {"q": "peanuts", "k": 1001}, "k"),
        ("/recall", {"query": "peanuts", "q": "nuts"}, "query"),
        ("/facts", {"limit": 1001}, "limit"),
        ("/facts", {"metadata": "team"}, "metadata"),
        ("/facts", {"metadata": "team=red", "meta": "team=blue"}, "metadata"),
        ("/entities/Alice/neighborhood", {"hops": 11}, "hops"),
        ("/entities/Alice/neighborhood", {"as_of": "yesterday"}, "as_of"),
        ("/rejections", {"limit": 1001}, "limit"),
        ("/rejections", {"offset": 2**63}, "offset"),
        ("/rejections", {"verdict": "bogus"}, "verdict"),
        ("/rejections", {"limit": 0}, "limit"),
        ("/rejections", {"order_by": "colour"}, "order_by"),
        ("/rejections", {"since": "yesterday"}, "since"),
        ("/rejections", {"min_gap": 3, "max_gap": 1}, "max_gap"),
        ("/rejections/counts", {"by": "week"}, "by"),
    ],
)
def test_a_bad_query_parameter_is_400_naming_it(
    alice: httpx.Client, path: str, params: dict, field: str
) -> None:
    response = alice.get(f"{ALICE}{path}", params=params)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_input"
    assert response.json()["field"] == field


def test_a_bad_namespace_is_400(api: Api) -> None:
    response = api.client(USERS_KEY).get("/v1/namespaces/-user:x/rejections")
    assert response.status_code == 400
    assert response.json()["field"] == "namespace"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"{ALICE}/facts/no-such-fact"),
        ("GET", f"{ALICE}/facts/no-such-fact/history"),
        ("POST", f"{ALICE}/facts/no-such-fact/retract"),
        ("GET", f"{ALICE}/rejections/no-such-rejection"),
        ("GET", f"{ALICE}/entities/Nobody/neighborhood"),
        ("GET", "/v1/no/such/route"),
    ],
)
def test_unknown_rows_and_routes_are_404(alice: httpx.Client, method: str, path: str) -> None:
    response = alice.request(method, path, json={"reason": "gone"} if method == "POST" else None)
    assert response.status_code == 404, response.text
    assert response.json()["error"] == "not_found"


def test_metrics_have_gate_and_http_series_without_namespaces(
    api: Api, alice: httpx.Client
) -> None:
    add(alice, allergy_body("peanuts"))
    alice.post(f"{ALICE}/facts", json=allergy_body("shellfish"))
    alice.get(f"{ALICE}/facts/no-such-fact")
    response = api.client(None).get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert "gate_claims_verified_total" in text
    assert 'gate_verdicts_total{status="insufficient_evidence"}' in text
    assert "gate_backend_latency_seconds_bucket" in text
    route = "/v1/namespaces/{namespace}/facts"
    for series in (
        f'memstore_http_requests_total{{method="POST",route="{route}",status="422"}}',
        f'memstore_http_requests_total{{method="GET",route="{route}/{{fact_id}}",status="404"}}',
        f'memstore_http_request_duration_seconds_count{{method="POST",route="{route}"}}',
    ):
        assert series in text
    assert "user:alice" not in text


# -- other servers ----------------------------------------------------------------------


def test_behind_a_proxy_prefix_the_next_page_link_carries_the_prefix_once(
    tmp_path: Path,
) -> None:
    app = create_app(settings_for(str(tmp_path / "memdata")))
    auth = {"X-API-Key": ALICE_KEY}
    with (
        serving(app, root_path="/mem") as base,
        httpx.Client(base_url=base, headers=auth, timeout=60) as client,
    ):
        for food in ("shellfish", "sesame"):
            assert client.post(f"{ALICE}/facts", json=allergy_body(food)).status_code == 422
        page = client.get(f"{ALICE}/rejections", params={"limit": 1})
        assert page.status_code == 200, page.text
        link = page.links["next"]["url"]
        assert link.startswith(f"/mem{ALICE}/rejections?") and "/mem/mem" not in link


def test_a_broken_search_index_is_a_503_that_says_so_while_writes_are_kept(
    tmp_path: Path,
) -> None:
    data = tmp_path / "memdata"
    app = create_app(settings_for(str(data)))
    auth = {"X-API-Key": ALICE_KEY}
    with serving(app) as base, httpx.Client(base_url=base, headers=auth, timeout=60) as client:
        stored = client.post(f"{ALICE}/facts", json=allergy_body("peanuts"))
        assert stored.status_code == 201, stored.text
        assert client.get(f"{ALICE}/search", params={"q": "peanuts"}).status_code == 200
        for table in (data / "index").glob("*.lance"):
            shutil.rmtree(table / "data")  # what a lost disk or a bad restore leaves
        broken = client.get(f"{ALICE}/search", params={"q": "peanuts"})
        assert broken.status_code == 503, broken.text
        assert broken.json()["error"] == "unavailable"
        assert "search index is unavailable" in broken.json()["detail"]
        assert str(tmp_path) not in broken.text  # its path is logged, not sent
        fact_id = stored.json()["id"]
        assert client.get(f"{ALICE}/facts/{fact_id}").status_code == 200
        said = "Alice: I'm allergic to sesame."
        kept = client.post(f"{ALICE}/facts", json=allergy_body("sesame", evidence=said))
        assert kept.status_code == 201, kept.text  # in SQL, queued for the index


def test_an_unreachable_database_is_503_without_leaking_its_url(tmp_path: Path) -> None:
    url = "postgresql+psycopg://memstore:s3cret-pw@127.0.0.1:1/memstore"
    app = create_app(settings_for(url))

    def explode() -> None:
        raise RuntimeError("boom: internal detail")

    app.add_api_route("/explode", explode)
    with serving(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        health = client.get("/health")
        assert health.status_code == 503
        assert health.json()["database"] == "unavailable"
        auth = {"X-API-Key": ALICE_KEY}
        for response in (
            client.get(f"{ALICE}/rejections", headers=auth),
            client.post(f"{ALICE}/facts", json=allergy_body("peanuts"), headers=auth),
        ):
            assert response.status_code == 503, response.text
            assert response.json()["error"] == "unavailable"
            assert "s3cret" not in response.text
        boom = client.get("/explode")
        assert boom.status_code == 500
        assert boom.json()["error"] == "internal_error"
        assert "boom" not in boom.text and "Traceback" not in boom.text


def test_stores_run_the_scheduler_and_close_at_shutdown(tmp_path: Path) -> None:
    app = create_app(settings_for(str(tmp_path / "memdata"), scheduler={"enabled": True}))
    stores: NamespaceStores = app.state.stores
    with serving(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        auth = {"X-API-Key": BOTH_KEY}
        assert client.get(f"{ALICE}/rejections", headers=auth).status_code == 200
        assert client.get(f"{BOB}/rejections", headers=auth).status_code == 200
        assert stores.namespaces() == ["user:alice", "user:bob"]
        with (
            stores.lease("user:alice") as store,
            pytest.raises(MemstoreError, match="already running"),
        ):
            store.start_reverifier()
    with pytest.raises(MemstoreError, match="closed"):
        store.get_fact("anything")
    with pytest.raises(MemstoreError, match="shutting down"), stores.lease("user:alice"):
        pass
