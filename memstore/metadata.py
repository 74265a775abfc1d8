"""Fact metadata: a flat mapping of the caller's keys to JSON scalars.

Metadata is the caller's own data about a fact (a user id, a session, a category,
the application that wrote it). It is stored and returned with the fact, kept by a
correction that brings none of its own, erased with the fact, and filterable. It is
not evidence: the gate never reads it, and it grounds nothing.

Keys: 1 to ``MAX_METADATA_KEY_CHARS`` ASCII letters, digits, ``_``, ``-`` and ``.``,
not starting with ``-`` or ``.``. Values: a string, a whole number (64-bit), a finite
number, true/false or null. At most ``MAX_METADATA_KEYS`` keys and
``MAX_METADATA_CHARS`` characters as compact JSON (``memstore.limits``).

A filter matches a fact whose metadata holds every given key with an equal value, as
JSON compares them: numbers by value (1 matches 1.0), ``true`` never matches 1, a
string only the same string, ``null`` a key that holds null (not a missing key).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

#: A fact's metadata: at most this many keys, each this long, and this many characters
#: as compact JSON (keys and values together); the same bounds hold for a filter.
MAX_METADATA_KEYS = 32
MAX_METADATA_KEY_CHARS = 64
MAX_METADATA_CHARS = 4_096

Value = str | int | float | bool | None
Metadata = dict[str, Value]

KEY = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_.-]{{0,{MAX_METADATA_KEY_CHARS - 1}}}")
_INT_RANGE = 2**63 - 1
_VALUES = "a string, a number, true, false or null"


def check(value: object) -> Metadata:
    """``value`` as metadata (None: none); ValueError saying what is wrong, naming the key."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"must be an object of keys to values ({_VALUES})")
    if len(value) > MAX_METADATA_KEYS:
        raise ValueError(f"at most {MAX_METADATA_KEYS} keys, got {len(value)}")
    checked: Metadata = {}
    for key, item in value.items():
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise ValueError(
                f"key {key!r} is not 1 to {MAX_METADATA_KEY_CHARS} ASCII letters, digits, "
                "'_', '-' or '.' (not starting with '-' or '.')"
            )
        checked[key] = _value(key, item)
    size = len(json.dumps(checked, ensure_ascii=False, separators=(",", ":")))
    if size > MAX_METADATA_CHARS:
        raise ValueError(f"at most {MAX_METADATA_CHARS} characters as JSON, got {size}")
    return stored(checked)


def stored(value: Mapping[str, Any] | None) -> Metadata:
    """Metadata as reads return it: keys sorted (PostgreSQL's JSONB keeps no order)."""
    return dict(sorted((value or {}).items()))


def _value(key: str, value: object) -> Value:
    if value is None or isinstance(value, bool | str):
        if isinstance(value, str) and "\x00" in value:
            raise ValueError(f"value of {key!r} must not contain NUL characters")
        if isinstance(value, str) and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"value of {key!r} must be valid Unicode text") from None
        return value
    if isinstance(value, int):
        if not -_INT_RANGE <= value <= _INT_RANGE:
            raise ValueError(f"value of {key!r} is out of range (a 64-bit whole number)")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"value of {key!r} must be a finite number")
        return value
    raise ValueError(f"value of {key!r} must be {_VALUES}, got {type(value).__name__}")


def token(key: str, value: Value) -> str:
    """``key=value`` with one spelling per JSON value (1 and 1.0 are ``key=1``): what the
    search index holds per metadata key, and what a filter looks for."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{key}={json.dumps(value, ensure_ascii=False)}"


def tokens(metadata: Mapping[str, Any] | None) -> list[str]:
    """The tokens (``token``) of every key, sorted."""
    return sorted(token(k, v) for k, v in (metadata or {}).items())
