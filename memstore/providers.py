"""Evidence providers: fetch the current text of an evidence source for re-verification.

A source is ``inline`` (immutable text handed in with a fact), a ``file://`` path,
an ``http(s)://`` URL (conditional GET with the validators of the last fetch), or
``callable:<name>`` for a function registered in this process (tool outputs).
Providers never raise for a source's own trouble: they answer with a ``Fetched``
whose ``outcome`` says what happened, and the re-verification job decides.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote, urlparse

import httpx

from memstore.evidence import INLINE_SOURCE

DEFAULT_HTTP_TIMEOUT_S = 10.0
MAX_FETCH_BYTES = 5_000_000
CALLABLE_PREFIX = "callable:"


class Outcome(StrEnum):
    """What a fetch found."""

    CURRENT = "current"  # here is the source's text (it may or may not have changed)
    UNCHANGED = "unchanged"  # the server said 304 / the source cannot change
    MISSING = "missing"  # gone for good (deleted file, 404, 410): facts become stale
    ERROR = "error"  # could not tell (network error, 5xx): keep the status, retry later


@dataclass(frozen=True, slots=True)
class Validators:
    """HTTP cache validators remembered from the previous fetch."""

    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True, slots=True)
class Fetched:
    """A provider's answer: the text (for CURRENT), new validators, and a reason."""

    outcome: Outcome
    text: str | None = None
    validators: Validators = Validators()
    reason: str | None = None


SourceFunction = Callable[[], str]
_registry: dict[str, SourceFunction] = {}
_registry_lock = threading.Lock()


def register_source(name: str, function: SourceFunction) -> str:
    """Make ``callable:<name>`` fetch ``function()``; returns the source string to cite."""
    if not name or not name.strip() or any(c.isspace() for c in name):
        raise ValueError("a source name must be non-empty and without whitespace")
    if not callable(function):
        raise TypeError("function must be callable and take no arguments")
    with _registry_lock:
        _registry[name] = function
    return CALLABLE_PREFIX + name


def unregister_source(name: str) -> None:
    with _registry_lock:
        _registry.pop(name, None)


class Providers:
    """Fetches any supported source; holds one HTTP client (close it, or use ``with``)."""

    def __init__(
        self, *, timeout: float = DEFAULT_HTTP_TIMEOUT_S, client: httpx.Client | None = None
    ) -> None:
        self._client = client or httpx.Client(timeout=timeout, follow_redirects=True)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Providers:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def fetch(self, source: str, previous: Validators = Validators()) -> Fetched:
        """The current state of ``source``."""
        if source == INLINE_SOURCE:
            return Fetched(Outcome.UNCHANGED, reason="inline evidence does not change")
        if source.startswith(CALLABLE_PREFIX):
            return _fetch_callable(source.removeprefix(CALLABLE_PREFIX))
        scheme = urlparse(source).scheme.lower()
        if scheme == "file":
            return _fetch_file(source)
        if scheme in ("http", "https"):
            return self._fetch_http(source, previous)
        return Fetched(Outcome.ERROR, reason=f"no provider for source {source!r}")

    def _fetch_http(self, url: str, previous: Validators) -> Fetched:
        headers = {}
        if previous.etag:
            headers["If-None-Match"] = previous.etag
        if previous.last_modified:
            headers["If-Modified-Since"] = previous.last_modified
        try:
            response = self._client.get(url, headers=headers)
        except httpx.HTTPError as exc:
            return Fetched(
                Outcome.ERROR, validators=previous, reason=f"{type(exc).__name__}: {exc}"
            )
        if response.status_code == 304:
            return Fetched(Outcome.UNCHANGED, validators=previous, reason="not modified (304)")
        if response.status_code in (404, 410):
            return Fetched(Outcome.MISSING, reason=f"{url} answered {response.status_code}")
        if response.status_code != 200:
            return Fetched(
                Outcome.ERROR, validators=previous, reason=f"{url} answered {response.status_code}"
            )
        if len(response.content) > MAX_FETCH_BYTES:
            return Fetched(Outcome.ERROR, validators=previous, reason="response too large")
        validators = Validators(
            etag=response.headers.get("ETag"), last_modified=response.headers.get("Last-Modified")
        )
        return Fetched(Outcome.CURRENT, text=response.text, validators=validators)


def _fetch_file(source: str) -> Fetched:
    parsed = urlparse(source)
    path = Path(unquote(parsed.path))
    try:
        if path.stat().st_size > MAX_FETCH_BYTES:
            return Fetched(Outcome.ERROR, reason=f"{path} is larger than {MAX_FETCH_BYTES} bytes")
        return Fetched(Outcome.CURRENT, text=path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Fetched(Outcome.MISSING, reason=f"file {path} no longer exists")
    except (OSError, UnicodeDecodeError) as exc:
        return Fetched(Outcome.ERROR, reason=f"cannot read {path}: {exc}")


def _fetch_callable(name: str) -> Fetched:
    with _registry_lock:
        function = _registry.get(name)
    if function is None:
        return Fetched(Outcome.ERROR, reason=f"no source function registered as {name!r}")
    try:
        text = function()
    except Exception as exc:  # a tool's failure is a fetch error, never a crash
        return Fetched(Outcome.ERROR, reason=f"{type(exc).__name__}: {exc}"[:500])
    if not isinstance(text, str):
        return Fetched(Outcome.ERROR, reason=f"{name!r} returned {type(text).__name__}, not str")
    return Fetched(Outcome.CURRENT, text=text)
