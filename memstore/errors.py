"""Exceptions raised by memstore.

Everything memstore raises derives from one root::

    MemstoreError
    ├── InvalidInput           bad arguments; names the field and the reason (also a ValueError)
    │   └── TooLarge           over a size limit of one request (HTTP 413)
    ├── NotFound               no such fact or entity in this namespace (also a LookupError)
    ├── ErrFactNotGrounded     the write hook (the grounding gate) rejected the fact
    └── StorageError           the database failed; wraps the SQLAlchemy error
        └── SearchIndexError   the search index (LanceDB) failed; SQL still holds the truth

Library errors are mapped at the boundary (``raise StorageError(...) from exc``) so
callers never have to catch SQLAlchemy or pydantic exceptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

    from memstore.schemas import RejectionPublic


class MemstoreError(Exception):
    """Root of every exception memstore raises."""


class InvalidInput(MemstoreError, ValueError):
    """An argument is invalid. ``field`` is its dotted path, ``reason`` says why."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)

    def under(self, prefix: str) -> InvalidInput:
        """The same error with its field nested under ``prefix`` (e.g. ``facts.3``)."""
        return InvalidInput(f"{prefix}.{self.field}" if self.field else prefix, self.reason)

    @classmethod
    def from_validation(cls, exc: ValidationError, prefix: str = "") -> InvalidInput:
        """Map a pydantic ValidationError; the message lists every failing field."""
        problems = []
        for err in exc.errors(include_url=False, include_input=False):
            loc = ".".join(str(part) for part in (prefix, *err["loc"]) if part != "")
            problems.append((loc, _clean_reason(err["msg"])))
        first_field, first_reason = problems[0] if problems else (prefix, str(exc))
        error = cls(first_field, first_reason)
        if len(problems) > 1:
            error.args = ("; ".join(f"{f}: {r}" if f else r for f, r in problems),)
        return error


def _clean_reason(msg: str) -> str:
    # pydantic prefixes custom errors with "Value error, "; users don't need that.
    return msg.removeprefix("Value error, ")


class TooLarge(InvalidInput):
    """The request is over one of the store's size limits (``Limits``); nothing was done.

    ``field`` names what is too large (e.g. ``evidence``); REST answers 413.
    """

    def under(self, prefix: str) -> TooLarge:
        return TooLarge(f"{prefix}.{self.field}" if self.field else prefix, self.reason)


class NotFound(MemstoreError, LookupError):
    """No row with this id (or name) exists in the store's namespace."""

    def __init__(self, kind: str, key: str, namespace: str) -> None:
        self.kind = kind
        self.key = key
        self.namespace = namespace
        super().__init__(f"no {kind} {key!r} in namespace {namespace!r}")


class ErrFactNotGrounded(MemstoreError):
    """The grounding gate (the write hook) rejected a fact; nothing became memory.

    ``rejection`` is the audit row that records it (``Store.rejections()`` lists it):
    the verdict with p0, p1, required/observed bits and budget gap, the evidence it
    was checked against, and why. ``verdict`` is the verdict's name, e.g.
    ``unsupported``; ``rejection_id`` the row's id.
    """

    def __init__(self, rejection: RejectionPublic) -> None:
        self.rejection = rejection
        self.rejection_id = rejection.id
        self.verdict = rejection.verdict
        self.statement = rejection.statement
        why = rejection.reason or "the evidence does not ground it"
        numbers = ", ".join(
            f"{name} {value:.2f}"
            for name, value in (("p1", rejection.p1), ("p0", rejection.p0))
            if value is not None
        )
        super().__init__(
            f"refused {rejection.statement!r}: {why} ({rejection.verdict}"
            f"{'; ' + numbers if numbers else ''}). "
            f"Cite evidence that states it, or inspect store.get_rejection({rejection.id!r})"
        )


class StorageError(MemstoreError):
    """The database failed. The original SQLAlchemy error is the ``__cause__``."""


class SearchIndexError(StorageError):
    """The search index failed (LanceDB, its directory or its object store). SQL is
    the source of truth: a write it stops stays queued for the index, and reads that
    do not search still work. The LanceDB error is the ``__cause__``."""
