"""How errors become JSON answers: ``{"error": code, "detail": ...}`` with the status
of each kind (see the package's docstring), one handler per kind."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memstore.conversations.llm import ExtractorError
from memstore.errors import (
    ErrFactNotGrounded,
    InvalidInput,
    MemstoreError,
    NotFound,
    SearchIndexError,
    StorageError,
    TooLarge,
)
from memstore.rest.models import NotGroundedPublic

log = logging.getLogger("memstore.rest")

_LOCATIONS = ("body", "query", "path", "header", "cookie")


class Denied(Exception):
    """The request may not go on: no key or an unknown one (401), or a key without the
    right (403)."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail


def error_response(status: int, error: str, detail: str, **extra: Any) -> JSONResponse:
    """The JSON answer for an error: its code, the detail and any ``extra`` fields."""
    return JSONResponse({"error": error, "detail": detail, **extra}, status_code=status)


@contextmanager
def param_names(names: dict[str, str]) -> Iterator[None]:
    """Name the request parameter, not the Store argument, in InvalidInput errors."""
    try:
        yield
    except InvalidInput as exc:
        head, dot, rest = exc.field.partition(".")
        if head not in names:
            raise
        raise InvalidInput(names[head] + dot + rest, exc.reason) from None


def _field(loc: tuple[int | str, ...]) -> str:
    parts = list(loc)
    where = str(parts.pop(0)) if parts and parts[0] in _LOCATIONS else "body"
    return ".".join(str(p) for p in parts) or where


def _reason(message: str) -> str:
    return message.removeprefix("Value error, ")


async def _on_invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        if err.get("type") == "json_invalid":
            problems.append(("body", f"is not valid JSON ({err.get('ctx', {}).get('error')})"))
        else:
            problems.append((_field(loc), _reason(str(err.get("msg", "is invalid")))))
    field, reason = problems[0] if problems else ("body", "is invalid")
    detail = "; ".join(f"{f}: {r}" for f, r in problems)
    return error_response(400, "invalid_input", detail, field=field, reason=reason)


async def _on_invalid_input(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, InvalidInput)
    if isinstance(exc, TooLarge):
        return error_response(413, "too_large", str(exc), field=exc.field, reason=exc.reason)
    return error_response(400, "invalid_input", str(exc), field=exc.field, reason=exc.reason)


async def _on_not_found(request: Request, exc: Exception) -> JSONResponse:
    return error_response(404, "not_found", str(exc))


async def _on_not_grounded(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ErrFactNotGrounded)
    rejection = exc.rejection
    why = f": {rejection.reason}" if rejection.reason else ""
    detail = (
        f"the grounding gate rejected the fact ({rejection.verdict}{why}); nothing was "
        "stored. Cite evidence that states it. The audit log keeps it: GET "
        f"/v1/namespaces/{rejection.namespace}/rejections/{rejection.id}"
    )
    body = NotGroundedPublic(
        verdict=rejection.verdict, reason=rejection.reason, detail=detail, rejection=rejection
    )
    return JSONResponse(jsonable_encoder(body), status_code=422)


async def _on_extractor_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s: the fact extractor failed: %s", request.method, request.url.path, exc)
    detail = f"the fact extractor failed, so nothing was extracted or stored: {exc}"
    return error_response(502, "extractor_failed", detail)


async def _on_storage_error(request: Request, exc: Exception) -> JSONResponse:
    # The message may hold a database URL with its password: log it, don't send it.
    log.error("storage error on %s %s: %s", request.method, request.url.path, exc)
    return error_response(503, "unavailable", "the database is unavailable; try again later")


async def _on_index_error(request: Request, exc: Exception) -> JSONResponse:
    # The message names the index's directory or URI: log it, don't send it.
    log.error("search index error on %s %s: %s", request.method, request.url.path, exc)
    return error_response(503, "unavailable", "the search index is unavailable; try again later")


async def _on_memstore_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed: %s", request.method, request.url.path, exc)
    return error_response(503, "unavailable", str(exc))


async def _on_denied(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Denied)
    response = error_response(exc.status, exc.error, exc.detail)
    if exc.status == 401:
        response.headers["WWW-Authenticate"] = "Bearer"
    return response


def _unparsable(cause: BaseException | None) -> str:
    """Why FastAPI could not read a request body (it raises 400 from the cause)."""
    if isinstance(cause, UnicodeError):
        return "is not valid UTF-8 JSON"
    if isinstance(cause, RecursionError):
        return "is not valid JSON (nested too deeply)"
    return "is not valid JSON"


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400:  # a body FastAPI could not parse: bad UTF-8, too deep, ...
        reason = _unparsable(exc.__cause__)
        return error_response(400, "invalid_input", f"body: {reason}", field="body", reason=reason)
    if exc.status_code == 413:  # BodyLimit, on a chunked body
        reason = str(exc.detail).removeprefix("body: ")
        return error_response(413, "too_large", str(exc.detail), field="body", reason=reason)
    codes = {404: "not_found", 405: "method_not_allowed"}
    response = error_response(
        exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail)
    )
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    # The server logs the traceback (Starlette re-raises after this response is sent).
    log.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    return error_response(
        500, "internal_error", "internal server error; the server log has the details"
    )


def add_exception_handlers(app: FastAPI) -> None:
    """Answer every kind of error as JSON (the most specific handler wins)."""
    handlers: list[tuple[type[Exception], Any]] = [
        (RequestValidationError, _on_invalid_request),
        (InvalidInput, _on_invalid_input),
        (NotFound, _on_not_found),
        (ErrFactNotGrounded, _on_not_grounded),
        (ExtractorError, _on_extractor_error),
        (SearchIndexError, _on_index_error),
        (StorageError, _on_storage_error),
        (MemstoreError, _on_memstore_error),
        (Denied, _on_denied),
        (StarletteHTTPException, _on_http_error),
        (Exception, _on_unexpected),
    ]
    for exc_class, handler in handlers:
        app.add_exception_handler(exc_class, handler)
