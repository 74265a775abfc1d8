"""Evidence providers: fetch the current text of an evidence source for re-verification.

A source is ``inline`` (immutable text handed in with a fact), a ``file://`` path,
an ``http(s)://`` URL (conditional GET with the validators of the last fetch), or
``callable:<name>`` for a function registered in this process (tool outputs).
Providers never raise for a source's own trouble: they answer with a ``Fetched``
whose ``outcome`` says what happened, and the re-verification job decides.

Every fetch obeys a :class:`~memstore.reverify.source_policy.SourcePolicy`: a refused source
answers ``ERROR`` with the reason and is never read. Redirects are followed by hand,
each target checked like the first URL; a host allowed only by a wildcard is
resolved first and reached at the checked address (no second lookup to rebind);
bodies are streamed and cut off at ``max_bytes``; ``timeout`` bounds the whole fetch.
"""

from __future__ import annotations

import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import httpx

from memstore.reverify.source_policy import (
    DEFAULT_MAX_BYTES,
    IPAddress,
    SourcePolicy,
    file_path,
    ip_address,
    no_public_address,
    source_kind,
)
from memstore.storage.tables import FIXED_SOURCES

log = logging.getLogger(__name__)

DEFAULT_HTTP_TIMEOUT_S = 10.0  # per network operation (connect, each read)
MAX_FETCH_BYTES = DEFAULT_MAX_BYTES
CALLABLE_PREFIX = "callable:"
REDIRECTS = (301, 302, 303, 307, 308)


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
    """Fetches any source ``policy`` allows; holds one HTTP client (close it, or use ``with``).

    ``timeout`` bounds each network operation; ``policy.timeout`` the whole fetch.
    Without ``policy``: :meth:`SourcePolicy.unrestricted` (any file, host and address).
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_HTTP_TIMEOUT_S,
        client: httpx.Client | None = None,
        policy: SourcePolicy | None = None,
    ) -> None:
        self.policy = policy if policy is not None else SourcePolicy.unrestricted()
        self._timeout = timeout
        self._client = client or httpx.Client(timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Providers:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def fetch(self, source: str, previous: Validators = Validators()) -> Fetched:
        """The current state of ``source``."""
        if source in FIXED_SOURCES:
            return Fetched(Outcome.UNCHANGED, reason=f"{source} evidence does not change")
        refusal = self.policy.refusal(source)
        if refusal is not None:
            return _refused(refusal, previous)
        kind = source_kind(source)
        if kind == "callable":
            return _fetch_callable(source.removeprefix(CALLABLE_PREFIX), self.policy.max_bytes)
        if kind == "file":
            return _fetch_file(source, self.policy)
        if kind in ("http", "https"):
            return self._fetch_http(source, previous)
        return Fetched(Outcome.ERROR, reason=f"no provider for source {source!r}")

    def _fetch_http(self, url: str, previous: Validators) -> Fetched:
        headers = {}
        if previous.etag:
            headers["If-None-Match"] = previous.etag
        if previous.last_modified:
            headers["If-Modified-Since"] = previous.last_modified
        deadline = time.monotonic() + self.policy.timeout
        for _hop in range(self.policy.max_redirects + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                return _too_slow(self.policy.timeout, previous)
            target = self._target(url)
            if isinstance(target, str):
                return _refused(target, previous)
            request_url, pinned_headers, extensions = target
            try:
                with self._client.stream(
                    "GET",
                    request_url,
                    headers={**headers, **pinned_headers},
                    extensions=extensions,
                    follow_redirects=False,
                    timeout=min(self._timeout, left),
                ) as response:
                    location = response.headers.get("Location")
                    if response.status_code in REDIRECTS and location:
                        url = str(httpx.URL(url).join(location))
                        if source_kind(url) not in ("http", "https"):
                            return _refused(
                                f"{url!r} is not an http(s) URL to redirect to", previous
                            )
                        continue
                    return self._answer(url, response, previous, deadline)
            except httpx.HTTPError as exc:
                return Fetched(
                    Outcome.ERROR, validators=previous, reason=f"{type(exc).__name__}: {exc}"
                )
        return Fetched(
            Outcome.ERROR,
            validators=previous,
            reason=f"more than {self.policy.max_redirects} redirects (sources.max_redirects)",
        )

    def _target(self, url: str) -> tuple[httpx.URL, dict[str, str], dict[str, str]] | str:
        """Where to send the GET for ``url`` (headers and extensions that pin the checked
        address), or why not."""
        refusal = self.policy.refusal(url)
        if refusal is not None:
            return refusal
        parsed = httpx.URL(url)
        host = parsed.host
        if self.policy.host_match(host) == "exact" or self.policy.private_addresses:
            return parsed, {}, {}
        try:
            addresses = _resolve(host, parsed.port or (443 if parsed.scheme == "https" else 80))
        except OSError as exc:
            log.info("source host %r does not resolve: %s", host, exc)
            addresses = []
        if not addresses:  # said as for a private address: a reason never tells which
            return no_public_address(host)
        refusal = self.policy.address_refusal(host, addresses)
        if refusal is not None:
            return refusal
        # Connect to the address just checked, so a second lookup cannot rebind the name.
        pinned = parsed.copy_with(host=str(addresses[0]))
        extensions = {"sni_hostname": host} if parsed.scheme == "https" else {}
        return pinned, {"Host": parsed.netloc.decode("ascii")}, extensions

    def _answer(
        self, url: str, response: httpx.Response, previous: Validators, deadline: float
    ) -> Fetched:
        """The fetch's outcome from a final (non-redirect) response, body read in bounds."""
        if response.status_code == 304:
            return Fetched(Outcome.UNCHANGED, validators=previous, reason="not modified (304)")
        if response.status_code in (404, 410):
            return Fetched(Outcome.MISSING, reason=f"{url} answered {response.status_code}")
        if response.status_code != 200:
            return Fetched(
                Outcome.ERROR, validators=previous, reason=f"{url} answered {response.status_code}"
            )
        limit = self.policy.max_bytes
        too_large = Fetched(
            Outcome.ERROR,
            validators=previous,
            reason=f"response larger than {limit} bytes (sources.max_bytes)",
        )
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            return too_large
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > limit:
                return too_large  # leaving the stream closes the connection: no more is read
            if time.monotonic() > deadline:
                return _too_slow(self.policy.timeout, previous)
            chunks.append(chunk)
        validators = Validators(
            etag=response.headers.get("ETag"), last_modified=response.headers.get("Last-Modified")
        )
        text = b"".join(chunks).decode(response.encoding or "utf-8", errors="replace")
        return Fetched(Outcome.CURRENT, text=text, validators=validators)


def _refused(reason: str, previous: Validators = Validators()) -> Fetched:
    return Fetched(
        Outcome.ERROR, validators=previous, reason=f"refused by the source policy: {reason}"
    )


def _too_slow(timeout: float, previous: Validators) -> Fetched:
    return Fetched(
        Outcome.ERROR,
        validators=previous,
        reason=f"the fetch took longer than {timeout:g} s (sources.timeout)",
    )


def _resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (an IP literal: itself)."""
    literal = ip_address(host)
    if literal is not None:
        return [literal]
    found = []
    for *_rest, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = ip_address(str(sockaddr[0]).partition("%")[0])
        if address is not None and address not in found:
            found.append(address)
    return found


def _fetch_file(source: str, policy: SourcePolicy) -> Fetched:
    """Read the file (links resolved, then checked by ``policy``), at most
    ``policy.max_bytes`` bytes, and only if it is a regular file."""
    limit = policy.max_bytes
    try:
        path = file_path(source).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        return Fetched(Outcome.ERROR, reason=f"cannot resolve {source}: {exc}")
    refusal = policy.path_refusal(path)  # the very path opened below
    if refusal is not None:
        return _refused(refusal)
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except FileNotFoundError:
        return Fetched(Outcome.MISSING, reason=f"file {path} no longer exists")
    except OSError as exc:
        return Fetched(Outcome.ERROR, reason=f"cannot read {path}: {exc}")
    try:
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return Fetched(Outcome.ERROR, reason=f"{path} is not a regular file")
            data = handle.read(limit + 1)
        if len(data) > limit:
            return Fetched(
                Outcome.ERROR, reason=f"{path} is larger than {limit} bytes (sources.max_bytes)"
            )
        return Fetched(Outcome.CURRENT, text=data.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return Fetched(Outcome.ERROR, reason=f"cannot read {path}: {exc}")


def _fetch_callable(name: str, limit: int) -> Fetched:
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
    if len(text.encode("utf-8", errors="replace")) > limit:
        return Fetched(
            Outcome.ERROR, reason=f"{name!r} returned more than {limit} bytes (sources.max_bytes)"
        )
    return Fetched(Outcome.CURRENT, text=text)
