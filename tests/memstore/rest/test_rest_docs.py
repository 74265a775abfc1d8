"""The REST API's docs pages work offline: /docs (Swagger UI) and /redoc load their
scripts, stylesheets and icon from the server itself, never from a CDN."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from rest_server import KEYS, serving

from memstore.config import load_settings
from memstore.read.recall import DEFAULT_BUDGET_TOKENS, DEFAULT_MIN_SCORE
from memstore.rest import create_app
from memstore.schemas import DEFAULT_LIST_LIMIT


class Assets(HTMLParser):
    """The URLs a page loads: script src, link href, img src; and ReDoc's spec-url."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"script": "src", "link": "href", "img": "src", "redoc": "spec-url"}
        for name, value in attrs:
            if name == wanted.get(tag) and value:
                self.urls.append(value)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    data: Path = tmp_path_factory.mktemp("docs") / "memdata"
    settings = load_settings(
        store={"url": str(data)}, server={"api_keys": KEYS}, hallucination={"enabled": False}
    )
    with serving(create_app(settings)) as base, httpx.Client(base_url=base, timeout=60) as http:
        yield http


@pytest.mark.parametrize(
    ("page", "needs"),
    [("/docs", {"swagger-ui-bundle.js", "swagger-ui.css"}), ("/redoc", {"redoc.standalone.js"})],
)
def test_a_docs_page_loads_only_local_assets(
    client: httpx.Client, page: str, needs: set[str]
) -> None:
    response = client.get(page)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    html = response.text
    assert not re.findall(r"(?:https?:)?//[\w.-]+", html), "the page names another host"
    parser = Assets()
    parser.feed(html)
    assert {url.rsplit("/", 1)[-1] for url in parser.urls} >= needs, parser.urls
    for url in parser.urls:
        absolute = urljoin(str(client.base_url) + page, url)
        assert urlsplit(absolute).netloc == urlsplit(str(client.base_url)).netloc, url
        asset = client.get(absolute)
        assert asset.status_code == 200, (url, asset.status_code)
        assert asset.content, url
    assert "/openapi.json" in html  # and the schema it shows is served too
    assert client.get("/openapi.json").json()["info"]["title"] == "memstore"


def test_the_docs_pages_stay_out_of_the_schema(client: httpx.Client) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if "docs" in path or "redoc" in path]


def test_the_docs_describe_recall_and_the_search_filters(client: httpx.Client) -> None:
    """What /docs shows of recall and of search's relevance and recording-time filters."""
    paths = client.get("/openapi.json").json()["paths"]
    recall = paths["/v1/namespaces/{namespace}/recall"]["get"]
    assert recall["summary"] == "Recall memories for a prompt" and recall["description"]
    params = {p["name"]: p for p in recall["parameters"] if p["in"] == "query"}
    assert set(params) == {
        "query", "q", "budget_tokens", "k", "entity", "statuses", "status", "as_of", "min_score",
    }  # fmt: skip
    assert params["min_score"]["schema"]["default"] == DEFAULT_MIN_SCORE
    assert "Alias of query" in params["q"]["description"]
    assert params["budget_tokens"]["schema"]["default"] == DEFAULT_BUDGET_TOKENS
    for path in ("search", "search/evidence"):
        search = paths[f"/v1/namespaces/{{namespace}}/{path}"]["get"]["parameters"]
        described = {p["name"] for p in search if p.get("description")}
        assert {"recorded_after", "recorded_before", "min_score"} <= described, path
    assert all(p.get("description") for p in params.values())


def test_the_docs_describe_listing_and_metadata(client: httpx.Client) -> None:
    """What /docs shows of listing facts a page at a time and of metadata."""
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    listing = paths["/v1/namespaces/{namespace}/facts"]["get"]
    assert listing["summary"] == "List facts" and listing["description"]
    params = {p["name"]: p for p in listing["parameters"] if p["in"] == "query"}
    assert set(params) == {
        "entity", "relation", "statuses", "status", "metadata", "meta", "recorded_after",
        "recorded_before", "as_of", "limit", "cursor",
    }  # fmt: skip
    assert all(p.get("description") for p in params.values())
    assert params["limit"]["schema"]["default"] == DEFAULT_LIST_LIMIT
    assert listing["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/FactPage"
    }
    search = paths["/v1/namespaces/{namespace}/search"]["get"]["parameters"]
    described = {p["name"]: p.get("description", "") for p in search}
    assert "KEY:=JSON" in described["metadata"] and "Alias of metadata" in described["meta"]
    for model in ("FactCreate", "FactPublic", "RejectionPublic"):
        described = schema["components"]["schemas"][model]["properties"]["metadata"]
        assert "Not evidence" in described["description"], model
