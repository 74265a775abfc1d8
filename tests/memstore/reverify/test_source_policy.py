"""Evidence sources may not reach inside the machine that re-verifies them (issue 24).

Real files in a temporary directory, real HTTP servers on 127.0.0.1 (the "inside" a
forbidden source would reach), a real uvicorn REST server and the MCP SDK's client.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from db_rows import row_counts
from http_site import Site
from local_server import QuietHandler, local_server, running
from rest_server import serving

import memstore
from gate import REFUSE_UNGROUNDED, ConfigError, Gate, ScriptedBackend
from memstore import Store
from memstore.config import load_settings
from memstore.rest import create_app
from memstore.reverify.providers import Outcome, Providers
from memstore.reverify.source_policy import SourcePolicy

NS = "user:alice"
KEY = "source-policy-key-0123456789"
SECRET = "TOP SECRET\ndb_password=hunter2\n"
BIG = 64 * 1024 * 1024  # far more than any socket buffer holds


# -- helpers -------------------------------------------------------------------------


Route = Callable[[BaseHTTPRequestHandler], None]


class Routes:
    """What a test server answers per path, and every path it was asked for."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.asked: list[str] = []

    def text(self, path: str, body: str) -> None:
        def send(handler: BaseHTTPRequestHandler) -> None:
            data = body.encode()
            handler.send_response(200)
            handler.send_header("Content-Type", "text/plain; charset=utf-8")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)

        self.routes[path] = send

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        def send(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(status)
            handler.send_header("Location", location)
            handler.send_header("Content-Length", "0")
            handler.end_headers()

        self.routes[path] = send


@contextmanager
def routes_server(routes: Routes) -> Iterator[int]:
    """Serve ``routes`` on a free port of 127.0.0.1; yields the port."""

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            routes.asked.append(self.path)
            route = routes.routes.get(self.path)
            if route is None:
                self.send_error(404)
                return
            route(self)

    with running(local_server(Handler)) as server:
        yield int(server.server_address[1])


def fact(person: str, evidence: list[Any]) -> dict[str, Any]:
    return {
        "statement": f"{person} lives in Paris.",
        "members": [[person, "person", "resident"], ["Paris", "city", "place"]],
        "relation": "lives_in",
        "evidence": evidence,
    }


def profile(person: str) -> str:
    return f"# {person}\n\n{person} lives in Paris and works as a data engineer at Acme.\n"


def oracle(claim: str, context: str) -> float:
    """Stands in for the model: the claim's words in the evidence support it."""
    return 0.97 if claim.lower().rstrip(".") in " ".join(context.lower().split()) else 0.3


# -- REST: remote callers cite inline text only --------------------------------------


@pytest.fixture(scope="module")
def rest_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A REST server (gate off: the refusal must come before any gate) and its DB URL."""
    data = tmp_path_factory.mktemp("rest") / "memdata"
    settings = load_settings(
        store={"url": str(data), "index": False},
        server={"api_keys": {KEY: [NS]}},
        hallucination={"enabled": False},
    )
    with serving(create_app(settings)) as base:
        with httpx.Client(headers={"X-API-Key": KEY}, timeout=60) as client:
            opened = client.get(f"{base}/v1/namespaces/{NS}/rejections")  # opens the store
            assert opened.status_code == 200, opened.text
        yield base, f"sqlite:///{data / 'memstore.db'}"


@pytest.mark.parametrize(
    "source",
    [
        "file:///etc/passwd",
        "http://127.0.0.1:8765/internal",
        "https://example.org/page",
        "callable:secrets",
        "notes.md",
    ],
)
def test_rest_refuses_non_inline_sources_naming_the_field_and_writes_nothing(
    rest_url: tuple[str, str], source: str
) -> None:
    base, db_url = rest_url
    before = row_counts(db_url)
    api = f"{base}/v1/namespaces/{NS}"
    cited = [profile("Alice"), {"text": profile("Alice"), "source": source}]
    with httpx.Client(headers={"X-API-Key": KEY}, timeout=60) as client:
        one = client.post(f"{api}/facts", json=fact("Alice", cited))
        batch = client.post(
            f"{api}/facts/batch",
            json={"facts": [fact("Bob", [profile("Bob")]), fact("Alice", cited)]},
        )
    assert one.status_code == 400, one.text
    assert one.json()["error"] == "invalid_input"
    assert one.json()["field"] == "evidence.1.source"
    assert "sources.remote" in one.json()["reason"]  # says how to allow it
    assert batch.status_code == 400, batch.text
    assert batch.json()["field"] == "facts.1.evidence.1.source"
    assert row_counts(db_url) == before  # not even the valid first fact of the batch


def test_rest_refuses_a_correction_citing_a_file_and_keeps_the_old_fact(
    rest_url: tuple[str, str], tmp_path: Path
) -> None:
    base, db_url = rest_url
    api = f"{base}/v1/namespaces/{NS}"
    with httpx.Client(headers={"X-API-Key": KEY}, timeout=60) as client:
        stored = client.post(f"{api}/facts", json=fact("Carol", [profile("Carol")]))
        assert stored.status_code == 201, stored.text  # inline evidence is welcome
        before = row_counts(db_url)
        secret = tmp_path / "secret.txt"
        secret.write_text(SECRET)
        corrected = client.post(
            f"{api}/facts/{stored.json()['id']}/supersede",
            json=fact("Carol", [{"text": profile("Carol"), "source": secret.as_uri()}]),
        )
        assert corrected.status_code == 400, corrected.text
        assert corrected.json()["field"] == "evidence.0.source"
        after = client.get(f"{api}/facts/{stored.json()['id']}").json()
        assert after["status"] == stored.json()["status"] == "unverified"  # ungated, as stored
    assert row_counts(db_url) == before


def test_remote_sources_the_config_allows_are_accepted_others_name_the_rule(
    tmp_path: Path,
) -> None:
    settings = load_settings(
        store={"url": str(tmp_path / "memdata"), "index": False},
        server={"api_keys": {KEY: [NS]}},
        hallucination={"enabled": False},
        sources={"remote": ["inline", "https"], "hosts": ["docs.example.com"]},
    )
    with serving(create_app(settings)) as base:
        api = f"{base}/v1/namespaces/{NS}"
        with httpx.Client(headers={"X-API-Key": KEY}, timeout=60) as client:
            ok = client.post(
                f"{api}/facts",
                json=fact(
                    "Dan", [{"text": profile("Dan"), "source": "https://docs.example.com/d"}]
                ),
            )
            other_host = client.post(
                f"{api}/facts",
                json=fact("Eve", [{"text": profile("Eve"), "source": "https://10.0.0.5/admin"}]),
            )
            plain_http = client.post(
                f"{api}/facts",
                json=fact("Eve", [{"text": profile("Eve"), "source": "http://docs.example.com/"}]),
            )
    assert ok.status_code == 201, ok.text
    assert len(ok.json()["citations"]) == 1
    assert other_host.status_code == 400
    assert "not in sources.hosts" in other_host.json()["reason"]
    assert plain_http.status_code == 400 and "http: sources" in plain_http.json()["reason"]


# -- MCP: evidence is text, never a source --------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_remember_takes_evidence_as_text_only(tmp_path: Path) -> None:
    """A regression guard: ``remember`` has no way to name a source, so a path or URL
    given as evidence is stored as inline text and never fetched."""
    from mcp import Client

    from memstore.mcp import server as mcp_server

    with memstore.open(tmp_path / "memdata", NS, hook=memstore.Ungated(), index=False) as store:
        async with Client(mcp_server.build_server(store)) as client:
            refused = await client.call_tool(
                "remember",
                {
                    "statement": "Alice lives in Paris.",
                    "members": [{"name": "Alice"}],
                    "evidence": [{"text": profile("Alice"), "source": "file:///etc/passwd"}],
                },
            )
            taken = await client.call_tool(
                "remember",
                {
                    "statement": "Alice lives in Paris.",
                    "members": [{"name": "Alice"}],
                    "evidence": ["file:///etc/passwd"],
                },
            )
        assert refused.is_error
        assert not taken.is_error
        fact_id = (taken.structured_content or {})["fact_id"]
        [cited] = store.get_fact(fact_id).citations
        assert store.get_evidence(cited.evidence_id).source == "inline"


# -- re-verification never fetches a forbidden source ----------------------------------


@pytest.mark.both_databases
def test_stored_forbidden_sources_are_not_fetched_and_their_secrets_never_reach_search(
    data_dir: Path, tmp_path: Path, site: tuple[Site, str]
) -> None:
    state, base = site
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    public, private = allowed / "alice.md", outside / "bob.md"
    public.write_text(profile("Alice"))
    private.write_text(profile("Bob"))
    state.put("/internal", profile("Carol"))
    settings = load_settings(store={"url": str(data_dir)}, sources={"paths": [str(allowed)]})
    store = settings.open(
        NS,
        gate=Gate(ScriptedBackend(oracle), REFUSE_UNGROUNDED, deadline=30),
        index=tmp_path / "ix",
    )
    with store:
        ids = {}
        for person, source in (
            ("Alice", public.as_uri()),
            ("Bob", private.as_uri()),
            ("Carol", f"{base}/internal"),
        ):  # written in-process (or before the policy existed): the rows hold the sources
            body = fact(person, [{"text": profile(person), "source": source}])
            ids[person] = store.add_fact(**body).id
            assert store.get_fact(ids[person]).status == "verified"
        public.write_text(profile("Alice") + "Room code: zebra-quokka.\n")
        private.write_text(SECRET + profile("Bob"))
        state.put("/internal", SECRET + profile("Carol"))

        store.mark_due()
        report = store.reverify()

        outcomes = {c.fact_id: c.outcome for c in report.checks}
        assert outcomes == {ids["Alice"]: "verified", ids["Bob"]: "error", ids["Carol"]: "error"}
        assert report.new_versions == 1  # the allowed file only
        assert state.requests == []  # the internal address was never asked
        bob, carol = store.get_fact(ids["Bob"]), store.get_fact(ids["Carol"])
        assert "refused by the source policy" in (bob.status_reason or "")
        assert "outside sources.paths" in (bob.status_reason or "")
        assert "non-public address 127.0.0.1" in (carol.status_reason or "")
        assert (bob.status, carol.status) == ("verified", "verified")  # kept, retried later
        hits = store.search_evidence("TOP SECRET db_password hunter2", k=20)
        assert hits and not any("hunter2" in h.text for h in hits)
        found = store.search_evidence("zebra-quokka room code", k=3)
        assert found[0].source == public.as_uri() and "zebra-quokka" in found[0].text


@pytest.mark.both_databases
def test_a_store_opened_with_default_settings_fetches_no_planted_file(
    data_dir: Path, tmp_path: Path
) -> None:
    """A row citing ``file://`` planted before remote sources were refused is not read
    by a store the settings open (``sources.paths`` is empty unless the operator lists
    directories); embedded use without settings still reads it."""
    planted = tmp_path / "etc" / "secrets.md"
    planted.parent.mkdir()
    planted.write_text(profile("Bob"))
    settings = load_settings(store={"url": str(data_dir)})
    assert settings.sources.paths == []
    assert SourcePolicy.unrestricted().paths == ["/"]
    store = settings.open(
        NS,
        gate=Gate(ScriptedBackend(oracle), REFUSE_UNGROUNDED, deadline=30),
        index=tmp_path / "ix",
    )
    with store:
        body = fact("Bob", [{"text": profile("Bob"), "source": planted.as_uri()}])
        fact_id = store.add_fact(**body).id
        assert store.get_fact(fact_id).status == "verified"
        planted.write_text(SECRET + profile("Bob"))
        store.mark_due()
        report = store.reverify()
        assert [(c.fact_id, c.outcome) for c in report.checks] == [(fact_id, "error")]
        assert report.new_versions == 0
        reason = store.get_fact(fact_id).status_reason or ""
        assert "sources.paths is empty" in reason
        assert "MEMSTORE_SOURCES__PATHS" in reason and "hunter2" not in reason
        hits = store.search_evidence("TOP SECRET db_password hunter2", k=20)
        assert not any("hunter2" in h.text for h in hits)


# -- fetch-time rules: redirects, sizes, files ----------------------------------------


def test_redirects_are_followed_only_to_allowed_targets() -> None:
    routes = Routes()
    with routes_server(routes) as port:
        routes.text("/secret", SECRET)
        routes.text("/page", profile("Alice"))
        routes.redirect("/hop", "/page", status=301)
        routes.redirect("/to-localhost", f"http://localhost:{port}/secret")
        routes.redirect("/to-metadata", "http://169.254.169.254/latest/meta-data/")
        routes.redirect("/to-file", "file:///etc/passwd")
        routes.redirect("/loop", "/loop", status=307)
        # 127.0.0.1 is listed by address (so it may be loopback); other hosts only by "*".
        policy = SourcePolicy(hosts=["127.0.0.1", "*"], max_redirects=3)
        with Providers(timeout=10, policy=policy) as providers:
            hop = providers.fetch(f"http://127.0.0.1:{port}/hop")
            to_localhost = providers.fetch(f"http://127.0.0.1:{port}/to-localhost")
            to_metadata = providers.fetch(f"http://127.0.0.1:{port}/to-metadata")
            to_file = providers.fetch(f"http://127.0.0.1:{port}/to-file")
            loop = providers.fetch(f"http://127.0.0.1:{port}/loop")
            direct = providers.fetch(f"http://localhost:{port}/secret")
    assert (hop.outcome, hop.text) == (Outcome.CURRENT, profile("Alice"))
    for refused in (to_localhost, to_metadata, to_file, direct):
        assert refused.outcome == Outcome.ERROR and refused.text is None
        assert "refused by the source policy" in (refused.reason or "")
    assert "'localhost' has no public address" in (to_localhost.reason or "")
    assert "127.0.0.1" not in (to_localhost.reason or "")  # a name's addresses are not told
    assert "169.254.169.254" in (to_metadata.reason or "")
    assert "not an http(s) URL" in (to_file.reason or "")
    assert loop.outcome == Outcome.ERROR and "more than 3 redirects" in (loop.reason or "")
    assert "/secret" not in routes.asked
    assert routes.asked.count("/loop") == 4  # the first request and 3 redirects


def test_an_exactly_listed_host_may_be_private_and_a_wildcard_one_may_not() -> None:
    routes = Routes()
    with routes_server(routes) as port:
        routes.text("/page", profile("Alice"))
        url = f"http://localhost:{port}/page"
        with Providers(policy=SourcePolicy(hosts=["localhost"])) as exact:
            listed = exact.fetch(url)
        with Providers(policy=SourcePolicy(hosts=["*.localhost", "*"])) as wildcard:
            unlisted = wildcard.fetch(url)
        with Providers(policy=SourcePolicy(hosts=["example.org"])) as other:
            elsewhere = other.fetch(url)
    assert (listed.outcome, listed.text) == (Outcome.CURRENT, profile("Alice"))
    assert unlisted.outcome == Outcome.ERROR and "no public address" in (unlisted.reason or "")
    assert elsewhere.outcome == Outcome.ERROR and "not in sources.hosts" in (elsewhere.reason or "")
    assert routes.asked == ["/page"]


@pytest.mark.parametrize("declared", [False, True])
def test_an_oversized_response_is_cut_off_at_the_limit(declared: bool) -> None:
    sent: list[int] = []
    done = threading.Event()

    def flood(handler: BaseHTTPRequestHandler) -> None:
        total = 0
        try:
            handler.send_response(200)
            if declared:
                handler.send_header("Content-Length", str(BIG))
            handler.end_headers()  # HTTP/1.0 without a length: the body ends at close
            chunk = b"x" * 65536
            while total < BIG:
                handler.wfile.write(chunk)
                total += len(chunk)
        except OSError:
            pass  # the client hung up
        finally:
            sent.append(total)
            done.set()

    routes = Routes()
    routes.routes["/big"] = flood
    with routes_server(routes) as port:
        with Providers(policy=SourcePolicy(hosts=["127.0.0.1"], max_bytes=10_000)) as providers:
            fetched = providers.fetch(f"http://127.0.0.1:{port}/big")
        assert done.wait(120), "the server never finished or failed writing"
    assert fetched.outcome == Outcome.ERROR
    assert "larger than 10000 bytes" in (fetched.reason or "")
    assert sent[0] < BIG  # the client stopped reading: the server could not send it all


def test_file_sources_must_resolve_inside_the_allowed_paths(tmp_path: Path) -> None:
    allowed, outside = tmp_path / "allowed", tmp_path / "allowed-not"
    allowed.mkdir()
    outside.mkdir()
    inside = allowed / "notes.md"
    inside.write_text(profile("Alice"))
    secret = outside / "secret.txt"
    secret.write_text(SECRET)
    escape = allowed / "link.txt"
    escape.symlink_to(secret)
    (allowed / "dir-link").symlink_to(outside, target_is_directory=True)
    fifo = allowed / "pipe"
    os.mkfifo(fifo)
    policy = SourcePolicy(paths=[str(allowed)], max_bytes=1_000)
    with Providers(policy=policy) as providers:
        ok = providers.fetch(inside.as_uri())
        refused = {
            "outside": providers.fetch(secret.as_uri()),
            "symlink": providers.fetch(escape.as_uri()),
            "symlinked dir": providers.fetch((allowed / "dir-link" / "secret.txt").as_uri()),
            "dot-dot": providers.fetch(f"file://{allowed}/../allowed-not/secret.txt"),
            "other host": providers.fetch(f"file://server{secret}"),
            "missing outside": providers.fetch((outside / "nope.txt").as_uri()),
        }
        missing = providers.fetch((allowed / "gone.md").as_uri())
        pipe = providers.fetch(fifo.as_uri())  # would block forever if opened for reading
        (allowed / "huge.txt").write_text("x" * 1_001)
        huge = providers.fetch((allowed / "huge.txt").as_uri())
    with Providers(policy=SourcePolicy(paths=[])) as no_files:
        none = no_files.fetch(inside.as_uri())
    assert (ok.outcome, ok.text) == (Outcome.CURRENT, profile("Alice"))
    for name, fetched in refused.items():
        assert fetched.outcome == Outcome.ERROR, name
        assert fetched.text is None and "hunter2" not in (fetched.reason or ""), name
        assert "refused by the source policy" in (fetched.reason or ""), name
    assert missing.outcome == Outcome.MISSING  # inside the paths, absence may be told
    assert pipe.outcome == Outcome.ERROR and "not a regular file" in (pipe.reason or "")
    assert huge.outcome == Outcome.ERROR and "larger than 1000 bytes" in (huge.reason or "")
    assert none.outcome == Outcome.ERROR and "sources.paths is empty" in (none.reason or "")


def test_schemes_can_be_switched_off(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(profile("Alice"))
    with Providers(policy=SourcePolicy(schemes=["https"])) as providers:
        fetched = providers.fetch(path.as_uri())
        inline = providers.fetch("inline")
    assert fetched.outcome == Outcome.ERROR and "file: scheme" in (fetched.reason or "")
    assert inline.outcome == Outcome.UNCHANGED


# -- configuration --------------------------------------------------------------------


def test_the_sources_section_has_safe_defaults_and_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = load_settings().sources
    assert defaults.remote == ["inline"]
    assert defaults.paths == []  # no file is fetched until the operator lists directories
    assert defaults.hosts == ["*"] and not defaults.private_addresses
    assert (defaults.max_bytes, defaults.timeout, defaults.max_redirects) == (5_000_000, 30.0, 5)
    monkeypatch.setenv("MEMSTORE_SOURCES__HOSTS", '["Docs.Example.com", "10.0.0.0/8"]')
    monkeypatch.setenv("MEMSTORE_SOURCES__MAX_BYTES", "1000")
    configured = load_settings().sources
    assert configured.hosts == ["docs.example.com", "10.0.0.0/8"]
    assert configured.max_bytes == 1000
    assert configured.host_match("10.1.2.3") == "exact"
    assert configured.host_match("docs.example.com.") == "exact"
    assert configured.host_match("example.com") is None


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ({"hosts": ["http://example.com/"]}, "sources.hosts"),
        ({"hosts": ["ex*mple.com"]}, "sources.hosts"),
        ({"paths": ["relative/dir"]}, "sources.paths"),
        ({"remote": ["ftp"]}, "sources.remote.0"),
        ({"schemes": ["https"], "remote": ["inline", "file"]}, "sources"),
        ({"max_bytes": 0}, "sources.max_bytes"),
        ({"colour": "red"}, "sources.colour"),
    ],
)
def test_bad_sources_settings_name_the_field(section: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(sources=section)
    assert caught.value.field == field


def test_a_store_takes_a_policy_as_fields_and_names_bad_ones(tmp_path: Path) -> None:
    with memstore.open(tmp_path / "a", NS, index=False, sources={"paths": ["/srv"]}) as store:
        assert isinstance(store, Store) and store.sources.paths == ["/srv"]
    with memstore.open(tmp_path / "b", NS, index=False) as store:
        assert store.sources == SourcePolicy.unrestricted()  # embedded use: as before
    with pytest.raises(memstore.InvalidInput) as caught:
        memstore.open(tmp_path / "c", NS, index=False, sources={"max_bytes": -1})
    assert caught.value.field == "sources.max_bytes"


def test_a_reason_does_not_tell_how_a_name_resolves() -> None:
    """A name that resolves to loopback and one that does not resolve are refused alike,
    with no address: a key holder cannot map the server's network through reasons."""
    policy = SourcePolicy(hosts=["*"])
    with Providers(timeout=10, policy=policy) as providers:
        loopback = providers.fetch("http://localhost:9/page")
        nowhere = providers.fetch("http://no-such-host.invalid:9/page")
    assert loopback.outcome == nowhere.outcome == Outcome.ERROR
    assert loopback.reason and nowhere.reason
    assert loopback.reason.replace("localhost", "H") == nowhere.reason.replace(
        "no-such-host.invalid", "H"
    )
    assert "127.0.0.1" not in loopback.reason and "Errno" not in nowhere.reason
