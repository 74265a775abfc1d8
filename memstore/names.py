"""Entity-name normalization and namespace validation."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from memstore.storage.tables import CONVERSATION_SOURCE as CONVERSATION_SOURCE
from memstore.storage.tables import MAX_NAMESPACE_CHARS

_NAMESPACE = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.:@/+-]{{0,{MAX_NAMESPACE_CHARS - 1}}}")


def normalize_key(name: str) -> str:
    """The identity of an entity name: NFKC, case-folded, whitespace collapsed.

    >>> normalize_key("  Alice\\u00a0 SMITH ")
    'alice smith'
    """
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def statement_key(statement: str) -> str:
    """A statement's identity for exact dedup: NFKC, case-folded, whitespace collapsed,
    trailing punctuation dropped.

    >>> statement_key("  The user is allergic to  PEANUTS. ")
    'the user is allergic to peanuts'
    """
    return normalize_key(statement).rstrip(" .!?;:,")


def statement_hash(statement: str) -> str:
    """sha256 hex of ``statement_key(statement)`` (what the facts table indexes)."""
    return hashlib.sha256(statement_key(statement).encode("utf-8")).hexdigest()


def check_namespace(namespace: object) -> str:
    """Return ``namespace`` if valid, else raise ValueError saying why."""
    if not isinstance(namespace, str):
        raise ValueError(f"must be a string, got {type(namespace).__name__}")
    if not _NAMESPACE.fullmatch(namespace):
        raise ValueError(
            "must be 1-128 characters of letters, digits and _ . : @ / + -, "
            f"starting with a letter or digit (got {namespace[:40]!r})"
        )
    return namespace


def check_text(value: str) -> str:
    """Reject text that databases or the gate cannot hold faithfully."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


#: Who a user's turns are when no name is known (``conversations.messages``).
THE_USER = "the user"
