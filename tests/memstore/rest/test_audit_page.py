"""The audit page over HTTP (FastAPI's TestClient on the real app, real SQLite): who may
see it, the sign-in session and its cookie, CSRF, filters, paging, one rejection, the
moved facts, exports and the labels people give."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from audit_data import NS, PARIS, Audited, fill, open_store, page_settings, refuse
from fastapi.testclient import TestClient
from rest_server import ALICE_KEY, TEAM_KEY, USERS_KEY

from memstore.config import key_fingerprint
from memstore.rest import create_app
from memstore.rest.page.session import COOKIE, Sessions

PAGE = f"/audit/{NS}"
ALICE = {"X-API-Key": ALICE_KEY}


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Audited]:
    root = tmp_path_factory.mktemp("audit-page")
    return root / "memdata", fill(root / "memdata", root / "files")


@pytest.fixture(scope="module")
def client(audited: tuple[Path, Audited]) -> Iterator[TestClient]:
    with TestClient(create_app(page_settings(audited[0])), follow_redirects=False) as served:
        yield served


def listed(html: str) -> list[str]:
    """The rejection ids the list shows, in order."""
    return re.findall(r'class="open" href="[^"]*/rejections/([0-9a-f]+)"', html)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]*)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def sign_in(client: TestClient, key: str = ALICE_KEY, next: str = PAGE) -> str:
    """Sign in through the form; the page's CSRF token."""
    client.cookies.clear()
    response = client.post(f"{PAGE}/sign-in", data={"key": key, "next": next})
    assert response.status_code == 303, response.text
    return csrf_of(client.get(PAGE).text)


# -- who may look ------------------------------------------------------------------------


def test_without_a_key_a_browser_gets_the_sign_in_form(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    client.cookies.clear()
    response = client.get(PAGE, headers={"Accept": "text/html"})
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert '<label for="key">API key</label>' in response.text
    assert 'action="/audit/user:alice/sign-in"' in response.text
    for rejection in audited[1].rejections.values():
        assert rejection.statement not in response.text


def test_a_key_for_another_namespace_gets_403(client: TestClient) -> None:
    client.cookies.clear()
    assert client.get(PAGE, headers={"X-API-Key": TEAM_KEY}).status_code == 403
    assert client.get(PAGE, headers={"Authorization": f"Bearer {TEAM_KEY}"}).status_code == 403
    assert client.get(PAGE, headers={"X-API-Key": "not-a-key-0123456789"}).status_code == 401
    assert client.get(PAGE, headers={"X-API-Key": USERS_KEY}).status_code == 200
    refused = client.post(f"{PAGE}/sign-in", data={"key": TEAM_KEY, "next": PAGE})
    assert refused.status_code == 403 and "may not use namespace" in refused.text
    assert "set-cookie" not in refused.headers


def test_signing_in_sets_a_strict_http_only_cookie_holding_a_token_not_the_key(
    client: TestClient,
) -> None:
    client.cookies.clear()
    wanted = f"{PAGE}?verdict=unsupported"
    response = client.post(f"{PAGE}/sign-in", data={"key": ALICE_KEY, "next": wanted})
    assert response.status_code == 303 and response.headers["location"] == wanted
    cookie = response.headers["set-cookie"]
    flags = {part.strip().lower() for part in cookie.split(";")}
    assert {"httponly", "samesite=strict", "path=/audit"} <= flags
    assert "secure" not in flags  # plain http here; see the https test below
    token = client.cookies[COOKIE]
    assert ALICE_KEY not in cookie and token != ALICE_KEY and len(token) >= 32
    page = client.get(wanted)
    assert page.status_code == 200
    assert f"Signed in as <code>{key_fingerprint(ALICE_KEY)}</code>" in page.text
    assert ALICE_KEY not in page.text


def test_the_cookie_path_follows_the_root_path(audited: tuple[Path, Audited]) -> None:
    app = create_app(page_settings(audited[0]))
    with TestClient(app, root_path="/mem", follow_redirects=False) as below:
        response = below.post(f"{PAGE}/sign-in", data={"key": ALICE_KEY, "next": PAGE})
    assert "path=/mem/audit" in {
        p.strip().lower() for p in response.headers["set-cookie"].split(";")
    }


@pytest.mark.parametrize(
    "headers",
    [{"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}],
    ids=["fetch-metadata", "origin"],
)
def test_a_sign_in_posted_from_another_site_is_refused(
    client: TestClient, headers: dict[str, str]
) -> None:
    client.cookies.clear()
    response = client.post(
        f"{PAGE}/sign-in", data={"key": ALICE_KEY, "next": PAGE}, headers=headers
    )
    assert response.status_code == 403 and "set-cookie" not in response.headers
    same = client.post(
        f"{PAGE}/sign-in",
        data={"key": ALICE_KEY, "next": PAGE},
        headers={"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"},
    )
    assert same.status_code == 303


def test_a_refused_sign_in_returns_to_the_list_not_to_the_form_route(client: TestClient) -> None:
    client.cookies.clear()
    refused = client.post(f"{PAGE}/sign-in", data={"key": "wrong-key", "next": PAGE + "/facts"})
    assert refused.status_code == 401
    assert f'name="next" value="{PAGE}"' in refused.text.replace("&#34;", '"')


def test_the_cookie_is_secure_over_https(audited: tuple[Path, Audited]) -> None:
    app = create_app(page_settings(audited[0]))
    with TestClient(app, base_url="https://testserver", follow_redirects=False) as secure:
        response = secure.post(f"{PAGE}/sign-in", data={"key": ALICE_KEY, "next": PAGE})
    assert "secure" in {p.strip().lower() for p in response.headers["set-cookie"].split(";")}


def test_a_sign_in_goes_back_only_to_this_namespaces_page(client: TestClient) -> None:
    client.cookies.clear()
    for elsewhere in ("https://evil.example/", "//evil.example/audit", "/audit/user:bob"):
        response = client.post(f"{PAGE}/sign-in", data={"key": ALICE_KEY, "next": elsewhere})
        assert response.headers["location"] == PAGE


def test_sessions_expire_after_their_time() -> None:
    now = [1000.0]
    held = Sessions(timedelta(minutes=5), clock=lambda: now[0])
    token = held.start(ALICE_KEY)
    assert (signed := held.get(token)) is not None and signed.key == ALICE_KEY
    now[0] += 299
    assert held.get(token) is not None
    now[0] += 2
    assert held.get(token) is None
    assert held.get("made-up-token") is None


def test_signing_out_needs_the_csrf_token_and_ends_the_session(client: TestClient) -> None:
    csrf = sign_in(client)
    refused = client.post(f"{PAGE}/sign-out", data={"csrf": "wrong"})
    assert refused.status_code == 403 and "CSRF" in refused.text
    assert client.get(PAGE).status_code == 200
    token = client.cookies[COOKIE]
    done = client.post(f"{PAGE}/sign-out", data={"csrf": csrf})
    assert done.status_code == 303 and f'{COOKIE}=""' in done.headers["set-cookie"]
    client.cookies.set(COOKIE, token, path="/audit")  # the old token is dead on the server
    assert client.get(PAGE).status_code == 401


def test_a_form_without_its_csrf_token_changes_nothing(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    rejection = audited[1].rejections["unknown_citation"]  # a rejection no test labels
    sign_in(client)
    for given in ({}, {"csrf": "forged"}):
        response = client.post(f"{PAGE}/rejections/{rejection.id}/label", data=given)
        assert response.status_code == 403, response.text
    with open_store(audited[0]) as store:
        assert store.labels(target_id=rejection.id) == []


# -- the list ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("", ["unknown_citation", "insufficient", "contradicted", "unsupported"]),
        ("verdict=unsupported&verdict=contradicted", ["contradicted", "unsupported"]),
        ("text=DATA+ENGINEER", ["insufficient"]),
        ("entity=acme", ["unknown_citation", "insufficient", "contradicted", "unsupported"]),
        ("entity=Bob", []),
        ("min_gap=3.5", ["contradicted"]),
        ("min_gap=2&max_gap=3", ["insufficient"]),
        ("until=2000-01-01", []),
    ],
)
def test_filters_pick_the_rejections(
    client: TestClient, audited: tuple[Path, Audited], query: str, names: list[str]
) -> None:
    response = client.get(f"{PAGE}?{query}", headers=ALICE)
    assert response.status_code == 200, response.text
    made = audited[1].rejections
    assert listed(response.text) == [made[n].id for n in names]


def test_the_time_range_splits_at_a_given_time(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    made, middle = audited[1].rejections, audited[1].middle
    newer = client.get(PAGE, params={"since": middle.isoformat()}, headers=ALICE).text
    assert listed(newer) == [made["unknown_citation"].id, made["insufficient"].id]
    today = datetime.now(UTC).date().isoformat()
    assert len(listed(client.get(PAGE, params={"until": today}, headers=ALICE).text)) == 4


def test_the_list_pages_newest_first(client: TestClient, audited: tuple[Path, Audited]) -> None:
    made = audited[1].rejections
    second = client.get(f"{PAGE}?limit=1&offset=1&verdict=", headers=ALICE).text
    assert listed(second) == [made["insufficient"].id]
    assert "Rows 2 to 2 of 4" in second
    assert 'href="/audit/user:alice?limit=1" rel="prev"' in second
    assert 'href="/audit/user:alice?limit=1&amp;offset=2" rel="next"' in second


def test_the_chart_counts_each_verdict_per_day(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    html = client.get(PAGE, headers=ALICE).text
    day = audited[1].rejections["unsupported"].created_at.date().isoformat()
    assert re.search(r'<svg [^>]*role="img" aria-label="Rejections per day by verdict', html)
    for verdict in ("unsupported", "contradicted", "insufficient_evidence", "unknown_citation"):
        assert f"<title>{day}: 1 {verdict}</title>" in html
    assert "<script" not in html


# -- one rejection -----------------------------------------------------------------------


def test_a_rejection_shows_its_claim_evidence_numbers_and_chain(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    rejection = audited[1].rejections["insufficient"]
    html = client.get(f"{PAGE}/rejections/{rejection.id}", headers=ALICE).text
    assert rejection.statement in html
    assert "<td>Acme</td><td>company</td><td>employer</td>" in html
    assert "Maybe: <mark>Alice is a data engineer</mark>, or so she said." in html
    assert 'Maybe: <span class="removed">[EVIDENCE REMOVED]</span>, or so she said.' in html
    assert "<title>p1 (with the evidence): 0.600</title>" in html
    assert "<title>p0 (cited spans removed): 0.050</title>" in html
    assert "<title>observed bits: 1.652</title>" in html
    assert "stated confidence = 0.99" in html and "min p1 = 0.50" in html
    assert "scripted" in html and " ms</dd>" in html
    assert 'id="chain-status">Intact here: 3 rows checked' in html
    assert "<dd>refused once</dd>" in html


def test_a_refusal_repeated_shows_how_often(tmp_path: Path) -> None:
    data = tmp_path / "again"
    made = fill(data, tmp_path / "files").rejections
    with open_store(data) as store:
        again = refuse(store, made["unsupported"].statement, [PARIS])
    assert again.id == made["unsupported"].id
    with TestClient(create_app(page_settings(data))) as other:
        html = other.get(f"{PAGE}/rejections/{again.id}", headers=ALICE).text
    assert re.search(r"<dd>refused 2 times, the last at [0-9-]+ [0-9:]+</dd>", html)


def test_a_tampered_audit_chain_shows_on_the_rejection(tmp_path: Path) -> None:
    made = fill(tmp_path / "memdata", tmp_path / "files").rejections
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'memdata' / 'memstore.db'}")
    with engine.begin() as conn:
        edited = sa.text("UPDATE rejections SET statement = 'Alice works at Hooli.' WHERE id = :id")
        conn.execute(edited, {"id": made["unsupported"].id})
    engine.dispose()
    with TestClient(create_app(page_settings(tmp_path / "memdata"))) as fresh:
        html = fresh.get(f"{PAGE}/rejections/{made['unsupported'].id}", headers=ALICE).text
    assert 'role="alert">Tampered: 1 problem found.' in html
    assert "this rejection" in html


def test_the_chain_page_walks_the_whole_chain(tmp_path: Path) -> None:
    made = fill(tmp_path / "memdata", tmp_path / "files").rejections
    settings = page_settings(tmp_path / "memdata")
    with TestClient(create_app(settings)) as fresh:
        html = fresh.get(f"{PAGE}/chain", headers=ALICE).text
    assert re.search(r'id="chain-status">Intact: \d+ rows checked', html)
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'memdata' / 'memstore.db'}")
    with engine.begin() as conn:
        edited = sa.text("UPDATE rejections SET p1 = 0.99 WHERE id = :id")
        conn.execute(edited, {"id": made["unsupported"].id})
    engine.dispose()
    with TestClient(create_app(settings)) as fresh:
        html = fresh.get(f"{PAGE}/chain", headers=ALICE).text
    assert 'role="alert">Tampered: 1 problem found' in html
    assert f'<a href="/audit/user:alice/rejections/{made["unsupported"].id}">' in html


def test_an_unknown_rejection_is_404(client: TestClient) -> None:
    response = client.get(f"{PAGE}/rejections/0123456789abcdef", headers=ALICE)
    assert response.status_code == 404 and "no rejection" in response.text


# -- facts re-verification moved -----------------------------------------------------------


def test_moved_facts_show_their_status_and_the_source_version_read(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    html = client.get(f"{PAGE}/facts", headers=ALICE).text
    for fact in (audited[1].stale, audited[1].contradicted):
        assert f'id="fact-{fact.id}"' in html and fact.statement in html
        assert fact.status_reason and fact.status_reason in html
    assert html.count("version 2 <strong>(changed since the previous check)</strong>") == 2
    assert "<dd>stale</dd>" in html and "<dd>contradicted</dd>" in html


# -- labels and exports --------------------------------------------------------------------


def test_labels_are_stored_with_who_and_when_never_the_key(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    data, made = audited
    refusal, fact = made.rejections["contradicted"], made.contradicted
    before = datetime.now(UTC)
    csrf = sign_in(client)
    said = {"csrf": csrf, "note": "  The denial is about another Alice.  "}
    response = client.post(f"{PAGE}/rejections/{refusal.id}/label", data=said)
    assert response.status_code == 303
    assert response.headers["location"] == f"{PAGE}/rejections/{refusal.id}#labels"
    again = client.post(f"{PAGE}/rejections/{refusal.id}/label", data={"csrf": csrf})
    assert again.status_code == 303  # the same person again: nothing new
    by_header = client.post(f"{PAGE}/facts/{fact.id}/label", headers={"X-API-Key": USERS_KEY})
    assert by_header.status_code == 303  # a key in a header needs no CSRF token
    with open_store(data) as store:
        [wrong_refusal] = store.labels(kind="false_rejection")
        [wrong_admission] = store.labels(kind="false_admission")
    assert wrong_refusal.target_id == refusal.id
    assert wrong_refusal.labelled_by == key_fingerprint(ALICE_KEY)
    assert wrong_refusal.note == "The denial is about another Alice."
    assert before <= wrong_refusal.created_at <= datetime.now(UTC)
    assert (wrong_admission.target_id, wrong_admission.note) == (fact.id, None)
    assert wrong_admission.labelled_by == key_fingerprint(USERS_KEY)
    raw = (data / "memstore.db").read_bytes()
    assert ALICE_KEY.encode() not in raw and USERS_KEY.encode() not in raw
    shown = client.get(f"{PAGE}/rejections/{refusal.id}").text
    assert "The denial is about another Alice." in shown
    assert "Should not have been stored" in client.get(f"{PAGE}/facts").text


def test_exports_hold_the_filtered_rejections_with_their_labels(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    made = audited[1].rejections
    csrf = sign_in(client)
    client.post(f"{PAGE}/rejections/{made['unsupported'].id}/label", data={"csrf": csrf})
    query = "verdict=unsupported&verdict=insufficient_evidence&limit=1"
    response = client.get(f"{PAGE}/export?format=csv&{query}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert 'filename="rejections-user_alice.csv"' in response.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [r["id"] for r in rows] == [made["unsupported"].id, made["insufficient"].id]
    labels = json.loads(rows[0]["labels"])
    assert [label["labelled_by"] for label in labels] == [key_fingerprint(ALICE_KEY)]
    assert labels[0]["kind"] == "false_rejection" and json.loads(rows[1]["labels"]) == []
    lines = client.get(f"{PAGE}/export?format=jsonl&{query}").text.splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == [r["id"] for r in rows]
    assert records[0]["labels"][0]["kind"] == "false_rejection"
    assert records[1]["evidence"][0]["text"].startswith("Maybe:")


# -- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "field"),
    [
        (f"{PAGE}?since=yesterday", "since"),
        (f"{PAGE}?until=2026-02-30", "until"),
        (f"{PAGE}?until=9999-12-31", "until"),  # no next day: was a 500
        (f"{PAGE}?min_gap=lots", "min_gap"),
        (f"{PAGE}?min_gap=3&max_gap=1", "max_gap"),
        (f"{PAGE}?verdict=maybe", "verdict"),
        (f"{PAGE}?limit=0", "limit"),
        (f"{PAGE}?offset=-1", "offset"),
        (f"{PAGE}?offset=%C2%B2", "offset"),  # "²" is a digit to str.isdigit, not to int
        (f"{PAGE}?limit={'9' * 5000}", "limit"),  # past int()'s digit limit
        (f"{PAGE}/export?format=xml", "format"),
        (f"{PAGE}/export?format=csv&min_gap=x", "min_gap"),
        ("/audit/user alice!", "namespace"),
    ],
)
def test_bad_input_is_422_naming_the_field(client: TestClient, path: str, field: str) -> None:
    response = client.get(path, headers=ALICE)
    assert response.status_code == 422, response.text
    assert f"<strong>{field}</strong>: " in response.text


def test_bad_form_input_is_422_naming_the_field(
    client: TestClient, audited: tuple[Path, Audited]
) -> None:
    client.cookies.clear()
    empty = client.post(f"{PAGE}/sign-in", data={"key": " ", "next": PAGE})
    assert empty.status_code == 422 and "<strong>key</strong>: " in empty.text
    rejection = audited[1].rejections["unknown_citation"]
    long = client.post(
        f"{PAGE}/rejections/{rejection.id}/label", data={"note": "x" * 2001}, headers=ALICE
    )
    assert long.status_code == 422 and "<strong>note</strong>: " in long.text
    unknown = client.post(f"{PAGE}/facts/{rejection.id}/label", headers=ALICE)
    assert unknown.status_code == 404 and "no fact" in unknown.text


def test_a_bad_filter_shows_the_form_again_as_given(client: TestClient) -> None:
    html = client.get(f"{PAGE}?min_gap=lots&text=tea&verdict=unsupported", headers=ALICE).text
    assert 'id="min_gap" name="min_gap" type="number" step="any" value="lots"' in html
    assert 'aria-invalid="true" aria-describedby="form-error"' in html
    assert 'value="tea"' in html and 'value="unsupported" checked' in html


# -- what every page carries --------------------------------------------------------------


def test_pages_load_nothing_from_elsewhere_and_stay_out_of_the_api_schema(
    client: TestClient,
) -> None:
    response = client.get(PAGE, headers=ALICE)
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "style-src 'self'" in policy
    assert response.headers["cache-control"] == "no-store"
    assert not re.search(r'(src|href)="(https?:)?//', response.text)
    css = client.get("/audit-static/page.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert not any(p.startswith("/audit") for p in client.get("/openapi.json").json()["paths"])
