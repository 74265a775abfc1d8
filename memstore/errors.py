"""Exceptions raised by memstore.

Everything memstore raises derives from one root::

    MemstoreError
    ├── InvalidInput           bad arguments; names the field and the reason (also a ValueError)
    ├── NotFound               no such fact or entity in this namespace (also a LookupError)
    ├── ErrFactNotGrounded     the write hook (the grounding gate) rejected the fact
    └── StorageError           the database failed; wraps the SQLAlchemy error

Library errors are mapped at the boundary (``raise StorageError(...) from exc``) so
callers never have to catch SQLAlchemy or pydantic exceptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class MemstoreError(Exception):
    """Root of every exception memstore raises."""


class InvalidInput(MemstoreError, ValueError):
    """An argument is invalid. ``field`` is its dotted path, ``reason`` says why."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)

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


class NotFound(MemstoreError, LookupError):
    """No row with this id (or name) exists in the store's namespace."""

    def __init__(self, kind: str, key: str, namespace: str) -> None:
        self.kind = kind
        self.key = key
        self.namespace = namespace
        super().__init__(f"no {kind} {key!r} in namespace {namespace!r}")


class ErrFactNotGrounded(MemstoreError):
    """The write hook rejected a fact; it was recorded in the rejections table, not stored.

    ``verdict`` is the hook's decision (the grounding gate's verdict), ``rejection_id``
    the id of the audit row.
    """

    def __init__(self, verdict: Any, rejection_id: str, statement: str) -> None:
        self.verdict = verdict
        self.rejection_id = rejection_id
        self.statement = statement
        # An Admission names the gate's verdict in ``verdict``; a gate Verdict in ``status``.
        status = getattr(verdict, "verdict", None) or getattr(verdict, "status", verdict)
        super().__init__(
            f"fact not grounded ({status}): {statement!r}; see rejection {rejection_id}"
        )


class StorageError(MemstoreError):
    """The database failed. The original SQLAlchemy error is the ``__cause__``."""
