"""Evidence providers against real files and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_site import Site

from memstore.reverify.providers import (
    Outcome,
    Providers,
    Validators,
    register_source,
    unregister_source,
)
from memstore.write.evidence import reanchor


@pytest.fixture
def providers() -> Iterator[Providers]:
    with Providers(timeout=2.0) as p:
        yield p


def test_inline_evidence_never_changes(providers: Providers) -> None:
    assert providers.fetch("inline").outcome == Outcome.UNCHANGED


def test_a_file_is_re_read_and_a_deleted_one_is_missing(
    providers: Providers, tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("User: I'm allergic to peanuts.", encoding="utf-8")
    first = providers.fetch(path.as_uri())
    assert (first.outcome, first.text) == (Outcome.CURRENT, "User: I'm allergic to peanuts.")
    path.write_text("User: I'm allergic to shellfish.", encoding="utf-8")
    assert providers.fetch(path.as_uri()).text == "User: I'm allergic to shellfish."
    path.unlink()
    gone = providers.fetch(path.as_uri())
    assert gone.outcome == Outcome.MISSING and "no longer exists" in (gone.reason or "")


def test_http_uses_conditional_get(providers: Providers, site: tuple[Site, str]) -> None:
    state, base = site
    state.put("/profile", "Alice works at Acme.")
    first = providers.fetch(f"{base}/profile")
    assert (first.outcome, first.text) == (Outcome.CURRENT, "Alice works at Acme.")
    assert first.validators.etag and first.validators.last_modified
    again = providers.fetch(f"{base}/profile", first.validators)
    assert again.outcome == Outcome.UNCHANGED and again.validators == first.validators
    assert state.requests[-1]["If-None-Match"] == first.validators.etag
    assert state.requests[-1]["If-Modified-Since"] == first.validators.last_modified
    state.put("/profile", "Alice works at Initech.", when=1_800_000_000)
    changed = providers.fetch(f"{base}/profile", first.validators)
    assert (changed.outcome, changed.text) == (Outcome.CURRENT, "Alice works at Initech.")
    assert changed.validators.etag != first.validators.etag


@pytest.mark.parametrize("status", [404, 410])
def test_http_gone_is_missing(providers: Providers, site: tuple[Site, str], status: int) -> None:
    state, base = site
    state.put("/old", "gone", status=status)
    fetched = providers.fetch(f"{base}/old", Validators(etag='"x"'))
    assert fetched.outcome == Outcome.MISSING and str(status) in (fetched.reason or "")


def test_http_trouble_is_an_error_that_keeps_the_validators(
    providers: Providers, site: tuple[Site, str]
) -> None:
    state, base = site
    state.put("/flaky", "oops", status=503)
    previous = Validators(etag='"v1"', last_modified="Tue, 14 Nov 2023 22:13:20 GMT")
    fetched = providers.fetch(f"{base}/flaky", previous)
    assert (fetched.outcome, fetched.validators) == (Outcome.ERROR, previous)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    refused = providers.fetch(f"http://127.0.0.1:{port}/x", previous)
    assert refused.outcome == Outcome.ERROR and refused.validators == previous
    assert providers.fetch("ftp://example.org/x").outcome == Outcome.ERROR


def test_registered_callables_are_sources(providers: Providers) -> None:
    answers = iter(["balance: 10 EUR", "balance: 12 EUR"])
    source = register_source("bank-balance", lambda: next(answers))
    try:
        assert source == "callable:bank-balance"
        assert providers.fetch(source).text == "balance: 10 EUR"
        assert providers.fetch(source).text == "balance: 12 EUR"
        failing = providers.fetch(source)  # the iterator is exhausted: the tool fails
        assert failing.outcome == Outcome.ERROR and "StopIteration" in (failing.reason or "")
    finally:
        unregister_source("bank-balance")
    assert providers.fetch(source).outcome == Outcome.ERROR  # not registered (any more)
    with pytest.raises(ValueError):
        register_source("two words", lambda: "")


OLD = "User: just so you know, I am allergic to peanuts. Thanks."
CITED = (OLD.index("allergic to peanuts"), OLD.index("allergic to peanuts") + 19)


@pytest.mark.parametrize(
    ("new", "found"),
    [
        ("Intro. " + OLD, "allergic to peanuts"),
        ("User:\n just so you know, I am ALLERGIC  to\npeanuts!", "ALLERGIC  to\npeanuts"),
        ("I am allergic-to-peanuts", "allergic-to-peanuts"),
        ("I eat peanuts happily.", None),
    ],
)
def test_citations_are_re_anchored_across_reformatting(new: str, found: str | None) -> None:
    span = reanchor(OLD, *CITED, new)
    assert (new[span[0] : span[1]] if span else None) == found


def test_of_several_matches_the_one_in_the_same_context_wins() -> None:
    new = "Note: allergic to peanuts. " + OLD + " Repeat: allergic to peanuts."
    start, end = reanchor(OLD, *CITED, new) or (0, 0)
    assert (start, end) == (CITED[0] + 27, CITED[1] + 27)  # the one that moved with the text
