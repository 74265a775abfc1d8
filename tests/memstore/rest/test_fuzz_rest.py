"""Fuzzed requests on every REST route, over real HTTP (uvicorn, httpx, the embedded gate,
SQLite): whatever comes in (wild text, lone surrogates, control characters, huge strings,
SQL, prompt injections, nested junk, invalid UTF-8, 100,000-deep JSON) the answer is a 2xx
or a JSON 4xx naming the field and saying why, never a 5xx or a hang; a refused write
leaves every table as it was; an injected claim does not talk the gate into grounding it."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from db_rows import row_counts
from fastapi import FastAPI
from fastapi.routing import APIRoute
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from rest_bodies import allergy_body
from rest_server import ALICE_KEY, KEYS, USERS_KEY, serving, settings_for
from strategies import FACT, INJECTIONS, NESTED, NOT_TEXT, REPEATED, SQL, TEXT, WILD, WORDS

from memstore.config import ServerSettings
from memstore.rest import UNMATCHED, create_app
from memstore.store import MAX_BATCH

NS = "user:fuzz"
V1 = "/v1/namespaces/{namespace}"
#: The tables a rejected (422) fact may write: the audit log (its chain head too) and the
#: evidence it was checked against, or the attempt counted on the same refusal before;
#: never a fact, member, entity or citation.
AUDIT_TABLES = {
    "audit_heads",
    "rejections",
    "rejection_attempts",
    "rejection_evidence",
    "rejection_members",
    "evidence",
}
#: The error code of each 4xx a fuzzed request may get.
ERRORS = {
    400: "invalid_input",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    422: "not_grounded",
}
#: httpx refuses longer URLs; the rare fuzzed URL with several huge parameters is skipped.
MAX_URL = 65_000
#: Answers slower than this count as a hang.
PATIENCE_S = 30.0


def _encode(text: str) -> str:
    """``text`` percent-encoded as UTF-8, lone surrogates as the (invalid) bytes they'd be."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def jsonable(value: Any) -> Any:
    """``value`` with bytes as latin-1 text, tuples as lists and datetimes in ISO 8601."""
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


# -- strategies -----------------------------------------------------------------------

# Text for URLs: huge strings stop at 16,000 characters once percent-encoded (4,000 is the
# longest query the API takes), so that a URL with three of them still fits httpx.
URL_TEXT = st.one_of(
    WILD,
    st.sampled_from(SQL + INJECTIONS),
    REPEATED.map(lambda s: s[: 16_000 // len(_encode(s[:1]))]),
)
# Words the API knows, to get past one parameter and reach the next.
API_WORDS = (
    " true false 1 0 -1 1001 hybrid text vector verdict day created_at budget_gap verified "
    "unverified retracted superseded grounded insufficient_evidence unsupported contradicted "
    "Alice peanuts allergic_to inline 2024-02-30 2024-01-01T00:00:00Z 9999-12-31T23:59:59+14:00 "
    "9999-12-31T23:59:59-14:00 0001-01-01T00:00:00+14:00"
).split(" ")
PARAM = st.one_of(
    URL_TEXT,
    st.sampled_from(API_WORDS),
    st.integers(-(2**70), 2**70).map(str),
    st.floats().map(str),
    st.datetimes().map(datetime.isoformat),
)
#: What else a fuzzed request gets wrong besides its parameters and body: mostly nothing,
#: so that most requests get past the key and the namespace.
ALSO_WRONG = st.sampled_from(["nothing"] * 6 + ["namespace", "key"])
BAD_NAMESPACE = st.one_of(
    URL_TEXT,
    st.sampled_from(["user:other", "team:red", "-user:x", "user:" + "x" * 200, "", "user:fuzz/."]),
)
ERASER = ServerSettings(api_keys=KEYS, erase_keys=[USERS_KEY])
GOOD_KEY = st.sampled_from([{"Authorization": f"Bearer {USERS_KEY}"}, {"X-API-Key": USERS_KEY}])
BAD_KEY = st.one_of(
    st.sampled_from(
        [
            {"Authorization": f"Bearer {ALICE_KEY}"},  # may not use user:fuzz
            {"Authorization": f"Basic {USERS_KEY}"},
            {},
        ]
    ),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=40).map(
        lambda key: {"X-API-Key": key}
    ),
)
# Bodies that are no JSON object: random bytes, text with lone surrogates (invalid
# UTF-8), JSON nested up to 100,000 deep, JSON that is not an object.
DEEP = st.integers(500, 100_000).flatmap(
    lambda n: st.sampled_from([b"[" * n + b"]" * n, b'{"a":' * n + b"1" + b"}" * n])
)
RAW = st.tuples(
    st.one_of(
        st.binary(min_size=1, max_size=64),
        TEXT.map(lambda s: s.encode("utf-8", "surrogatepass")),
        DEEP,
        NESTED.map(lambda value: json.dumps(jsonable(value)).encode()),
    ),
    st.sampled_from(
        [
            "application/json",
            "application/merge-patch+json",
            "text/plain",
            "application/x-www-form-urlencoded",
            None,
        ]
    ),
)


def _with_fuzz(
    valid: dict[str, st.SearchStrategy[Any]], fields: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[dict[str, Any]]:
    """``valid`` with up to two of ``fields`` replaced by fuzz (or added, if unknown)."""
    keys = st.lists(st.sampled_from(sorted(fields)), max_size=2, unique=True)
    fuzz = keys.flatmap(lambda ks: st.fixed_dictionaries({k: fields[k] for k in ks}))
    return st.builds(lambda base, extra: {**base, **extra}, st.fixed_dictionaries(valid), fuzz)


JUNK = st.one_of(TEXT, NOT_TEXT, NESTED)
BATCH = st.one_of(
    st.fixed_dictionaries({"facts": st.lists(FACT, max_size=3)}),
    st.fixed_dictionaries({"facts": st.one_of(NESTED, st.lists(JUNK, max_size=3))}),
    st.builds(lambda fact: {"facts": [fact] * (MAX_BATCH + 1)}, FACT),
)
RETRACT = _with_fuzz({"reason": WORDS}, {"reason": st.one_of(TEXT, NOT_TEXT), "colour": NESTED})
REVIEW = _with_fuzz(
    {"decision": st.sampled_from(["confirm", "refuse"]), "reason": WORDS},
    {"decision": st.one_of(TEXT, NOT_TEXT), "reason": st.one_of(TEXT, NOT_TEXT)},
)
CLAIM = _with_fuzz(
    {"claim": WORDS, "evidence": st.one_of(WORDS, st.lists(WORDS, min_size=1, max_size=2))},
    {
        "claim": st.one_of(TEXT, NOT_TEXT),
        "evidence": st.one_of(TEXT, st.lists(TEXT, max_size=3), NESTED),
        "confidence": st.one_of(st.floats(), TEXT, NOT_TEXT),
        "colour": NESTED,
    },
)

MESSAGE = _with_fuzz(
    {"role": st.sampled_from(["user", "assistant"]), "content": WORDS},
    {"role": st.one_of(TEXT, NOT_TEXT), "content": st.one_of(TEXT, NOT_TEXT), "name": NESTED},
)
CONVERSATION = _with_fuzz(
    {"messages": st.lists(MESSAGE, min_size=1, max_size=3)},
    {
        "messages": st.one_of(NESTED, st.lists(JUNK, max_size=3)),
        "on_conflict": st.one_of(TEXT, NOT_TEXT),
        "context_turns": st.one_of(st.integers(-3, 60), TEXT, NOT_TEXT),
        "metadata": NESTED,
        "colour": NESTED,
    },
)


# -- the fuzz table: one row per route --------------------------------------------------


@dataclass(frozen=True)
class Fuzz:
    """How one route is fuzzed: query parameters that pass (fuzz overrides them) and a
    strategy for the JSON body; ``gated`` routes may answer 422."""

    query: tuple[tuple[str, str], ...] = ()
    body: st.SearchStrategy[Any] | None = None
    gated: bool = False
    #: Path ids are never the fixture's own rows (an erase would remove them for good).
    fake_ids: bool = False


ROUTES: dict[tuple[str, str], Fuzz] = {
    ("POST", f"{V1}/facts"): Fuzz(body=FACT, gated=True),
    ("POST", f"{V1}/facts/batch"): Fuzz(body=BATCH),
    ("GET", f"{V1}/facts"): Fuzz(),
    ("GET", f"{V1}/facts/{{fact_id}}"): Fuzz(),
    ("POST", f"{V1}/facts/{{fact_id}}/retract"): Fuzz(body=RETRACT),
    ("POST", f"{V1}/facts/{{fact_id}}/review"): Fuzz(body=REVIEW),
    ("POST", f"{V1}/facts/{{fact_id}}/erase"): Fuzz(body=RETRACT, fake_ids=True),
    ("POST", f"{V1}/facts/{{fact_id}}/supersede"): Fuzz(body=FACT, gated=True),
    ("GET", f"{V1}/facts/{{fact_id}}/history"): Fuzz(),
    ("GET", f"{V1}/search"): Fuzz(query=(("q", "peanuts"),)),
    ("GET", f"{V1}/search/evidence"): Fuzz(query=(("q", "peanuts"),)),
    ("GET", f"{V1}/recall"): Fuzz(query=(("q", "peanuts"),)),
    ("GET", f"{V1}/entities/{{name}}/neighborhood"): Fuzz(),
    ("GET", f"{V1}/rejections"): Fuzz(),
    ("GET", f"{V1}/rejections/counts"): Fuzz(),
    ("GET", f"{V1}/drift"): Fuzz(),
    ("GET", f"{V1}/rejections/{{rejection_id}}"): Fuzz(),
    ("POST", f"{V1}/rejections/{{rejection_id}}/erase"): Fuzz(body=RETRACT, fake_ids=True),
    ("POST", f"{V1}/verify_claim"): Fuzz(body=CLAIM),
    ("POST", f"{V1}/conversations"): Fuzz(body=CONVERSATION),
    ("GET", "/health"): Fuzz(),
    ("GET", "/metrics"): Fuzz(),
}

# The same examples every run, so CI is repeatable; explore with more examples and
# derandomize=False by hand (fixed bugs found that way have regression tests).
FUZZ = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# -- the server -----------------------------------------------------------------------


@dataclass
class Server:
    """The running app, its database, a client, and rows the fuzz can aim at."""

    base: str
    app: FastAPI
    db_url: str
    client: httpx.Client
    fact_ids: list[str]
    rejection_ids: list[str]


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("fuzz-rest") / "memdata"
    # USERS_KEY may erase too, so the erase routes' input is fuzzed past the right check.
    app = create_app(settings_for(str(data)).model_copy(update={"server": ERASER}))
    with serving(app) as base, httpx.Client(base_url=base, timeout=PATIENCE_S) as client:
        auth = {"Authorization": f"Bearer {USERS_KEY}"}
        facts = f"/v1/namespaces/{NS}/facts"
        stored = client.post(facts, json=allergy_body("peanuts"), headers=auth)
        rejected = client.post(facts, json=allergy_body("shellfish"), headers=auth)
        assert (stored.status_code, rejected.status_code) == (201, 422), rejected.text
        yield Server(
            base,
            app,
            f"sqlite:///{data / 'memstore.db'}",
            client,
            [stored.json()["id"]],
            [rejected.json()["rejection"]["id"]],
        )


def _routes(app: FastAPI) -> list[Any]:
    """Every route of ``app``, those of included routers too."""
    try:  # FastAPI >= 0.165 keeps included routers nested in app.routes
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI flattens them into app.routes
        return list(app.routes)
    return list(iter_route_contexts(app.routes))


def api_routes(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path template) of every API route of ``app`` (the audit page's routes
    are HTML, out of the schema, and have tests of their own)."""
    return {
        (method, route.path_format)
        for route in _routes(app)
        if isinstance(api := getattr(route, "original_route", route), APIRoute)
        and api.include_in_schema
        for method in route.methods
    }


def _operation(app: FastAPI, method: str, path: str) -> dict[str, Any]:
    operation: dict[str, Any] = app.openapi()["paths"][path][method.lower()]
    return operation


def _params(app: FastAPI, method: str, path: str, where: str) -> list[str]:
    return [
        p["name"] for p in _operation(app, method, path).get("parameters", []) if p["in"] == where
    ]


def _body_fields(app: FastAPI, method: str, path: str) -> set[str]:
    schema = _operation(app, method, path).get("requestBody", {})
    ref = schema.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")
    if ref is None:
        return set()
    model = app.openapi()["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return set(model.get("properties", {}))


def _every_param(app: FastAPI) -> set[str]:
    return {
        name
        for method, path in api_routes(app)
        for where in ("path", "query")
        for name in _params(app, method, path, where)
    }


# -- checks ---------------------------------------------------------------------------


def check_answer(response: httpx.Response, fuzz: Fuzz, fields: set[str]) -> None:
    """A 2xx, or a JSON 4xx with its error code; a 400 names one of ``fields`` and why."""
    status = response.status_code
    assert status < 500, f"{status}: {response.text[:500]}"
    event(f"{status}")
    if status < 400:
        return
    assert response.headers["content-type"].startswith("application/json"), response.text[:300]
    body = response.json()
    assert status in ERRORS and body.get("error") == ERRORS[status], body
    assert isinstance(body.get("detail"), str) and body["detail"], body
    if status == 400:
        field, reason = body.get("field"), body.get("reason")
        assert isinstance(field, str) and field and isinstance(reason, str) and reason, body
        assert field.split(".")[0] in fields, f"{field!r} is not one of {sorted(fields)}"
        assert field in body["detail"], body
        event(f"400 {field.split('.')[0]}")
    if status == 422:
        assert fuzz.gated, "422 means only 'rejected by the gate'"
        assert body["rejection"]["id"] and body["verdict"] != "grounded", body


def check_rows(
    method: str, response: httpx.Response, before: dict[str, int], after: dict[str, int]
) -> None:
    """Refused or read: every table as it was. Rejected: one audit row, no memory.
    Written: facts and rejections grow by what the answer says was stored or refused."""
    changed = {t: after[t] - before[t] for t in after if after[t] != before[t]}
    # A refusal is a new rejection, or an attempt counted on the same refusal before.
    refusals = changed.get("rejections", 0) + changed.get("rejection_attempts", 0)
    status = response.status_code
    if status == 422:
        assert set(changed) <= AUDIT_TABLES and refusals == 1, changed
    elif status >= 400 or method == "GET" or response.url.path.endswith("/verify_claim"):
        assert not changed, f"{status} changed rows: {changed}"
    else:
        stored, refused = _written(response)
        assert (changed.get("facts", 0), refusals) == (stored, refused), (
            changed,
            response.text[:300],
        )


def _written(response: httpx.Response) -> tuple[int, int]:
    """(facts stored, facts refused) by a 2xx write, from its answer."""
    body = response.json()
    if response.url.path.endswith("/facts/batch"):
        results = body["results"]
        stored = sum(1 for r in results if r["stored"] and not r["fact"]["deduplicated"])
        return stored, sum(1 for r in results if not r["stored"])
    assert not response.url.path.endswith("/erase"), "a fuzzed id erased something"
    if response.url.path.endswith("/retract"):
        assert body["status"] == "retracted", body
        return 0, 0
    if response.url.path.endswith("/review"):
        assert body["status"] in ("verified", "retracted"), body
        return 0, 0
    if response.url.path.endswith("/conversations"):
        outcomes = [c["outcome"] for c in body["candidates"]]
        stored = sum(1 for o in outcomes if o in ("stored", "superseded", "conflict"))
        return stored, outcomes.count("refused")
    return (0 if body["deduplicated"] else 1), 0


# -- the fuzz -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"), sorted(ROUTES), ids=[" ".join(r) for r in sorted(ROUTES)]
)
@FUZZ
@given(data=st.data())
def test_a_fuzzed_request_gets_an_answer_or_a_clear_error(
    fuzz_server: Server, method: str, path: str, data: st.DataObject
) -> None:
    """Fuzzed path parameters, query parameters, keys and bodies on one route."""
    fuzz = ROUTES[method, path]
    app = fuzz_server.app
    wrong = data.draw(ALSO_WRONG)
    known = {
        "fact_id": fuzz_server.fact_ids,
        "rejection_id": fuzz_server.rejection_ids,
        "name": ["Alice"],
    }
    path_values: dict[str, str] = {}
    for name in _params(app, method, path, "path"):
        if name == "namespace":
            path_values[name] = data.draw(BAD_NAMESPACE) if wrong == "namespace" else NS
        elif fuzz.fake_ids:
            path_values[name] = data.draw(URL_TEXT)
        else:
            path_values[name] = data.draw(st.one_of(st.sampled_from(known[name]), URL_TEXT))
    names = [*_params(app, method, path, "query"), "colour"]
    fuzzed = data.draw(
        st.lists(st.sampled_from(names), max_size=3, unique=True).flatmap(
            lambda keys: st.fixed_dictionaries(
                {k: st.lists(PARAM, min_size=1, max_size=2) for k in keys}
            )
        )
    )
    query = [(k, v) for k, v in fuzz.query if k not in fuzzed]
    query += [(k, v) for k, values in fuzzed.items() for v in values]
    url = path.format(**{k: _encode(v) for k, v in path_values.items()})
    if query:
        url += "?" + "&".join(f"{_encode(k)}={_encode(v)}" for k, v in query)
    assume(len(fuzz_server.base) + len(url) <= MAX_URL)

    headers = dict(data.draw(BAD_KEY if wrong == "key" else GOOD_KEY))
    content: bytes | None = None
    fields = {*path_values, *names, "body", *_body_fields(app, method, path)}
    if fuzz.body is not None:
        body = data.draw(st.one_of(fuzz.body, fuzz.body, fuzz.body, RAW))
        if isinstance(body, tuple):
            content, content_type = body
            if content_type is not None:
                headers["Content-Type"] = content_type
        else:
            content = json.dumps(jsonable(body)).encode()
            headers["Content-Type"] = "application/json"
            fields |= set(body) if isinstance(body, dict) else set()
    if any("/" in v or v in ("", ".", "..") for v in path_values.values()):
        fields |= _every_param(app)  # the path may now match another route

    before = row_counts(fuzz_server.db_url)
    started = time.monotonic()
    response = fuzz_server.client.request(method, url, content=content, headers=headers)
    assert time.monotonic() - started < PATIENCE_S
    check_answer(response, fuzz, fields)
    check_rows(method, response, before, row_counts(fuzz_server.db_url))
    if path == "/metrics" and response.status_code == 200:
        templates = {route.path_format for route in _routes(app)} | {UNMATCHED}
        labels = set(re.findall(r'route="([^"]*)"', response.text))
        assert labels <= templates, labels - templates  # fuzz never becomes a label
    if path == "/health":
        assert response.status_code == 200 and response.json()["status"] == "ok"


BODY_ROUTES = sorted(key for key, fuzz in ROUTES.items() if fuzz.body is not None)
UNPARSABLE = {  # body -> what the reason says
    "invalid UTF-8": (b'{"statement": "\xff\xfe caf\xe9", "claim": "\xc3\x28"}', "UTF-8"),
    "not JSON": (b"{statement: Alice is allergic to peanuts", "not valid JSON"),
    "10,000 deep list": (b"[" * 10_000 + b"]" * 10_000, "deep"),
    "10,000 deep object": (b'{"facts":' * 10_000 + b"[]" + b"}" * 10_000, "deep"),
}
SURROGATE = "Alice is allergic to \ud800 peanuts."
SURROGATE_FACT = {**allergy_body("peanuts"), "statement": SURROGATE}
SURROGATE_BODIES = {  # route -> a body with a lone surrogate, the field that holds it
    f"{V1}/facts": (SURROGATE_FACT, "statement"),
    f"{V1}/facts/batch": (
        {"facts": [allergy_body("peanuts"), SURROGATE_FACT]},
        "facts.1.statement",
    ),
    f"{V1}/facts/{{fact_id}}/retract": ({"reason": SURROGATE}, "reason"),
    f"{V1}/facts/{{fact_id}}/review": ({"decision": "confirm", "reason": SURROGATE}, "reason"),
    f"{V1}/facts/{{fact_id}}/erase": ({"reason": SURROGATE}, "reason"),
    f"{V1}/rejections/{{rejection_id}}/erase": ({"reason": SURROGATE}, "reason"),
    f"{V1}/facts/{{fact_id}}/supersede": (SURROGATE_FACT, "statement"),
    f"{V1}/verify_claim": ({"claim": "Alice", "evidence": ["ok", SURROGATE]}, "evidence.1"),
}


def post_raw(fuzz_server: Server, path: str, raw: bytes) -> httpx.Response:
    """POST ``raw`` as JSON to ``path``; checks it was answered in time and wrote nothing."""
    url = path.format(
        namespace=NS, fact_id=fuzz_server.fact_ids[0], rejection_id=fuzz_server.rejection_ids[0]
    )
    headers = {"Authorization": f"Bearer {USERS_KEY}", "Content-Type": "application/json"}
    before = row_counts(fuzz_server.db_url)
    started = time.monotonic()
    response = fuzz_server.client.post(url, content=raw, headers=headers)
    assert time.monotonic() - started < PATIENCE_S
    assert row_counts(fuzz_server.db_url) == before
    return response


@pytest.mark.parametrize(("raw", "why"), UNPARSABLE.values(), ids=list(UNPARSABLE))
@pytest.mark.parametrize("path", [path for _, path in BODY_ROUTES])
def test_an_unparsable_body_is_400_naming_the_body(
    fuzz_server: Server, path: str, raw: bytes, why: str
) -> None:
    """Invalid UTF-8, non-JSON and absurdly deep JSON are 400 ``body``, fast, no writes."""
    response = post_raw(fuzz_server, path, raw)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["error"] == "invalid_input" and error["field"] == "body", error
    assert why in error["reason"] and why in error["detail"], error


@pytest.mark.parametrize("path", sorted(SURROGATE_BODIES))
def test_a_lone_surrogate_is_400_naming_its_field(fuzz_server: Server, path: str) -> None:
    """JSON whose text holds a lone surrogate (bytes no UTF-8 encoder writes) parses;
    the string is refused, naming the field that holds it."""
    body, field = SURROGATE_BODIES[path]
    response = post_raw(
        fuzz_server, path, json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_input", response.text
    named = response.json()["field"]
    assert named == field or named.startswith(f"{field}."), response.text  # evidence.1.text
    assert response.json()["reason"], response.text


#: Times that leave datetime's range once converted to UTC (an OverflowError, 500, before).
OUT_OF_RANGE = ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"]
TIME_PARAMS = [  # (method, path, query parameter or body field)
    (method, f"{V1}/{path}", name)
    for method, path, names in (
        ("POST", "facts", "valid_from valid_to"),
        ("POST", "facts/{fact_id}/supersede", "valid_from"),
        ("GET", "search", "as_of recorded_after"),
        ("GET", "search/evidence", "recorded_before"),
        ("GET", "recall", "as_of"),
        ("GET", "facts", "as_of recorded_before"),
        ("GET", "rejections", "since until"),
        ("GET", "rejections/counts", "since"),
    )
    for name in names.split()
]


@pytest.mark.parametrize("when", OUT_OF_RANGE)
@pytest.mark.parametrize(("method", "path", "name"), TIME_PARAMS)
def test_a_time_out_of_range_is_400_naming_it(
    fuzz_server: Server, method: str, path: str, name: str, when: str
) -> None:
    url = path.format(
        namespace=NS, fact_id=fuzz_server.fact_ids[0], rejection_id=fuzz_server.rejection_ids[0]
    )
    auth = {"Authorization": f"Bearer {USERS_KEY}"}
    before = row_counts(fuzz_server.db_url)
    if method == "POST":
        body = {**allergy_body("peanuts"), name: when}
        response = fuzz_server.client.post(url, json=body, headers=auth)
    else:
        response = fuzz_server.client.get(url, params={"q": "peanuts", name: when}, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["error"] == "invalid_input" and error["field"] == name, error
    assert "out of range" in error["reason"], error
    assert row_counts(fuzz_server.db_url) == before


# -- prompt injection ---------------------------------------------------------------------

UNRELATED = "User: I went hiking in the Alps last summer."


@pytest.mark.parametrize("in_evidence", [False, True], ids=["plain evidence", "injected evidence"])
@pytest.mark.parametrize("injection", INJECTIONS)
def test_an_injected_claim_against_unrelated_evidence_is_rejected(
    fuzz_server: Server, injection: str, in_evidence: bool
) -> None:
    """The real embedded gate refuses it on every route that takes a claim; nothing is
    stored, and the old fact a refused correction aimed at stays as it was."""
    client, auth = fuzz_server.client, {"Authorization": f"Bearer {USERS_KEY}"}
    evidence = f"{UNRELATED} {injection}" if in_evidence else UNRELATED
    claim = f"Hana is allergic to cats. {injection}"
    fact = {
        "statement": claim,
        "members": [["Hana", "person", "patient"], ["cats", "animal", "allergen"]],
        "relation": "allergic_to",
        "evidence": [evidence],
    }
    old = client.post(
        f"/v1/namespaces/{NS}/facts",
        json=allergy_body(
            "sesame",
            {"name": "Hana", "kind": "person", "role": "patient"},
            "Hana: I'm allergic to sesame.",
        ),
        headers=auth,
    )
    assert old.status_code in (200, 201), old.text
    before = row_counts(fuzz_server.db_url)

    for route in ("/facts", f"/facts/{old.json()['id']}/supersede"):
        response = client.post(f"/v1/namespaces/{NS}{route}", json=fact, headers=auth)
        assert response.status_code == 422, response.text
        rejection = response.json()["rejection"]
        assert rejection["statement"] == claim and rejection["verdict"] != "grounded"
        got = client.get(f"/v1/namespaces/{NS}/rejections/{rejection['id']}", headers=auth)
        assert got.status_code == 200 and got.json()["statement"] == claim
    batch = client.post(f"/v1/namespaces/{NS}/facts/batch", json={"facts": [fact]}, headers=auth)
    assert batch.status_code == 200, batch.text
    assert batch.json()["results"][0]["stored"] is False
    verdict = client.post(
        f"/v1/namespaces/{NS}/verify_claim",
        json={"claim": claim, "evidence": evidence},
        headers=auth,
    )
    assert verdict.status_code == 200, verdict.text
    assert verdict.json()["accepted"] is False and verdict.json()["status"] != "grounded"

    after = row_counts(fuzz_server.db_url)
    assert after["facts"] == before["facts"]
    # One rejection; the same write refused again twice is counted on it.
    assert after["rejections"] == before["rejections"] + 1
    assert after["rejection_attempts"] == before["rejection_attempts"] + 2
    kept = client.get(f"/v1/namespaces/{NS}/facts/{old.json()['id']}", headers=auth)
    assert kept.json()["status"] == "verified"


# -- coverage ---------------------------------------------------------------------------


def test_every_route_is_in_the_fuzz_table(fuzz_server: Server) -> None:
    """A route added to the app without a row in ROUTES fails here."""
    routes = api_routes(fuzz_server.app)
    assert ("POST", f"{V1}/facts") in routes  # the listing sees the included routers
    assert routes == set(ROUTES), {
        "not fuzzed": sorted(routes - set(ROUTES)),
        "no such route": sorted(set(ROUTES) - routes),
    }
