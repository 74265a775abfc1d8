"""Who is looking at the audit page: an API key in a header (``X-API-Key`` or
``Authorization: Bearer``), as for the REST API, or a sign-in session.

Signing in posts the key once; the server keeps it in memory under a random token and
the browser gets only that token, in an HttpOnly, SameSite=Strict cookie (Secure over
https) that lasts ``server.session_ttl``. Each session has a CSRF token of its own, which
every form that changes state must send back. Sessions live in the server's memory: a
restart signs everyone out.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from fastapi import Request, Response

from memstore.config import key_fingerprint
from memstore.rest.page.errors import PageError
from memstore.rest.state import server_state

#: The session cookie: only its token, never the key.
COOKIE = "memstore_audit"
#: The cookie is sent to the audit page's paths only.
COOKIE_PATH = "/audit"


@dataclass(frozen=True)
class SignIn:
    """One signed-in browser: the key (kept here, on the server), its CSRF token and
    when it expires (on the ``time.monotonic`` clock)."""

    key: str
    csrf: str
    expires: float


class Sessions:
    """The sign-ins of this server, by token; each lasts ``ttl``."""

    def __init__(self, ttl: timedelta, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._held: dict[str, SignIn] = {}
        self._lock = threading.Lock()

    def start(self, key: str) -> str:
        """A new session for ``key``; returns its token (the cookie's value)."""
        token = secrets.token_urlsafe(32)
        expires = self._clock() + self.ttl.total_seconds()
        with self._lock:
            self._drop_expired()
            self._held[token] = SignIn(key, secrets.token_urlsafe(32), expires)
        return token

    def get(self, token: str) -> SignIn | None:
        """The live session of ``token``, or None (unknown or expired)."""
        with self._lock:
            self._drop_expired()
            return self._held.get(token)

    def end(self, token: str) -> None:
        """Forget the session (signing out)."""
        with self._lock:
            self._held.pop(token, None)

    def _drop_expired(self) -> None:
        now = self._clock()
        for token in [t for t, s in self._held.items() if s.expires <= now]:
            del self._held[token]


@dataclass(frozen=True)
class Viewer:
    """Who asks: the key (server-side only), who that is in the labels they give (the
    key's fingerprint), and for a session its token and CSRF token."""

    key: str
    who: str
    token: str | None = None
    csrf: str | None = None


def sessions(request: Request) -> Sessions:
    """The sign-in sessions of the app serving ``request``."""
    held: Sessions = request.app.state.audit_sessions
    return held


def header_key(request: Request) -> str | None:
    """The API key of ``X-API-Key`` or ``Authorization: Bearer``, if any."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return request.headers.get("x-api-key") or None


def viewer(request: Request, namespace: str) -> Viewer:
    """Who asks for ``namespace``'s page; PageError 401 without a known key, 403 when the
    key may not use ``namespace``."""
    key, signed_in, token = header_key(request), None, None
    if key is None:
        token = request.cookies.get(COOKIE)
        signed_in = sessions(request).get(token) if token else None
        if signed_in is None:
            raise PageError(401, "sign in with an API key to see this namespace's audit")
        key = signed_in.key
    check_key(request, key, namespace)
    csrf = signed_in.csrf if signed_in else None
    return Viewer(key, key_fingerprint(key), token if signed_in else None, csrf)


def check_key(request: Request, key: str, namespace: str) -> None:
    """PageError 401 for an unknown key, 403 for one that may not use ``namespace``."""
    server = server_state(request).settings.server
    if not server.namespaces_for(key):
        raise PageError(401, "unknown API key")
    if not server.allows(key, namespace):
        raise PageError(403, f"this API key may not use namespace {namespace!r}")


def check_same_site(request: Request) -> None:
    """PageError 403 for a sign-in posted from another site (login CSRF: signing a
    browser in with someone else's key), told by the browser's ``Sec-Fetch-Site`` or,
    without it, ``Origin`` (a client that sends neither is no browser another site
    can drive)."""
    fetched_from = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    if fetched_from is not None:
        foreign = fetched_from not in ("same-origin", "none")
    else:
        here = f"{request.url.scheme}://{request.url.netloc}"
        foreign = origin is not None and origin != "null" and origin != here
    if foreign:
        raise PageError(403, "sign in from this page's own form")


def check_csrf(who: Viewer, token: str | None) -> None:
    """A form that changes state: a session must send its CSRF token (a key in a header
    needs none: a browser never adds one to a forged request)."""
    if who.csrf is None:
        return
    if not token or not hmac.compare_digest(token.encode(), who.csrf.encode()):
        raise PageError(403, "the form's CSRF token is missing or wrong: reload the page")


def cookie_path(request: Request) -> str:
    """The pages' path, under the app's root path when it is served below one."""
    return str(request.scope.get("root_path", "")).rstrip("/") + COOKIE_PATH


def set_cookie(request: Request, response: Response, token: str) -> None:
    """Hand the browser its session token: HttpOnly, SameSite=Strict, Secure over https."""
    response.set_cookie(
        COOKIE,
        token,
        max_age=int(sessions(request).ttl.total_seconds()),
        path=cookie_path(request),
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )


def clear_cookie(request: Request, response: Response) -> None:
    """Tell the browser to drop its session cookie."""
    response.delete_cookie(
        COOKIE,
        path=cookie_path(request),
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )
