"""Structured text read as fields: a JSON object (or a list of them) and ``key: value``
lines, as tools, calendars and logs write them.

Each field comes back with the record it belongs to (named by its id, name or first
text field), its key in words ("failed_job" -> "failed job", "dueDate" -> "due date")
and its value as text, with the span in the text that states it, so a statement read
from a field can cite exactly that span.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Keys that name the record they sit in, best first.
_NAMING = ("name", "title", "id")
#: Keys (their last word) of things named by a number ("card": "4410", "invoice": "2231").
_NUMBERED = frozenset(
    "card account order ticket invoice booking case claim policy receipt shipment parcel "
    "package number no ref reference".split()
)
#: Keys whose value is a record's state, which never names it.
_STATES = frozenset({"status", "state", "stage", "phase"})
#: ``key: value`` on a line of its own (the value's trailing spaces are cut in Python:
#: a lazy match up to them backtracks badly on a line padded with spaces).
_LINE = re.compile(
    r"^[ \t]*(?P<key>[A-Za-z][\w .()/-]{0,40}?)[ \t]*[:=][ \t]*(?P<value>\S[^\n]*)", re.M
)
#: A value that identifies a thing: a code with a digit ("ONB-42", "88213"), not a date.
_IDENTIFIER = re.compile(r"(?!\d{4}-\d{2}-\d{2})(?=[^\s]*\d)[\w#/.-]{2,40}")
#: At most this many fields are read from one text.
MAX_FIELDS = 50


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a record: ``record`` names it ("Order A-17"), ``key`` in words."""

    record: str
    key: str
    value: str
    start: int
    end: int


def stated(record: str, key: str, value: str) -> str:
    """A field said as a statement, the one way the extractor writes it and the gate's
    ``fields`` check reads it: "<record> <key>: <value>." ("Order 88213 status: shipped.")."""
    return f"{record} {key}: {value.rstrip('.')}."


#: One field of a record as a quote cites it: ``"time": "19:00"``, ``resting_hr: 58``.
_ONE_FIELD = re.compile(r'"?[\w .-]+"?\s*:\s*"?[^",{}\[\]]+"?,?')
#: A field that says there is none of it: ``"failed": 0``, ``"closed": false``.
_NOTHING = re.compile(r'"?[\w .-]+"?\s*:\s*"?(?:0|false|null|none|no)"?,?', re.I)


def one_field(text: str) -> bool:
    """Whether ``text`` is one field of a record (``"time": "19:00"``)."""
    return _ONE_FIELD.fullmatch(text.strip()) is not None


def no_field_value(text: str) -> bool:
    """Whether ``text`` is one field that says there is none of it (``"failed": 0``)."""
    return _NOTHING.fullmatch(text.strip()) is not None


def key_words(key: str) -> str:
    """A key as words: snake_case, kebab-case, dotted and camelCase split, lower case."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key)
    return " ".join(re.split(r"[\s_.\-/]+", spaced)).strip().lower()


def fields(text: str) -> list[Field]:
    """The fields ``text`` states, in order: from JSON where it parses as an object or a
    list of objects, else from its ``key: value`` lines; none for prose."""
    stripped = text.strip()
    if stripped[:1] in "{[":
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
            data = None
        if isinstance(data, dict):
            return _json_record(text, data, 0)[0][:MAX_FIELDS]
        if isinstance(data, list) and all(isinstance(item, dict) for item in data):
            found: list[Field] = []
            cursor = 0  # records are written in order: each one's fields after the last's
            for item in data:
                fields_of, cursor = _json_record(text, item, cursor)
                found += fields_of
            return found[:MAX_FIELDS]
    lines = list(_LINE.finditer(text))
    if len(lines) < 2:  # one "key: value" line is as likely prose ("Note: ...")
        return []
    values = {key_words(m.group("key")): m.group("value").rstrip() for m in lines}
    record = _record_name(values)
    if not record:
        return []
    return [
        Field(
            record,
            key_words(m.group("key")),
            m.group("value").rstrip(),
            m.start("key"),
            m.start("value") + len(m.group("value").rstrip()),
        )
        for m in lines
    ][:MAX_FIELDS]


def identities(found: Sequence[Field]) -> dict[str, str]:
    """What the identifiers among ``found`` name, by the name a later result would give
    a record that has only the identifier ("Epic ONB-42" -> "Onboarding redesign" from
    ``{"epic": "ONB-42", "title": "Onboarding redesign"}``)."""
    named: dict[str, str] = {}
    for f in found:
        if _IDENTIFIER.fullmatch(f.value) and f.value.lower() not in f.record.lower():
            named.setdefault(f"{f.key.capitalize()} {f.value}", f.record)
    return named


def _json_record(text: str, data: dict[str, Any], cursor: int) -> tuple[list[Field], int]:
    """The scalar fields of one JSON object (nested objects flattened one level), each
    found in ``text`` after ``cursor``; and where the last one ends."""
    flat: dict[str, tuple[str, Any]] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            for inner, deep in value.items():
                if _scalar(deep):
                    flat[key_words(f"{key} {inner}")] = (str(inner), deep)
        elif isinstance(value, list) and value and all(_scalar(v) for v in value):
            flat[key_words(key)] = (str(key), ", ".join(_text(v) for v in value))
        elif _scalar(value):
            flat[key_words(key)] = (str(key), value)
    codes = {  # {"card": "4410"}: a thing named by its number
        k
        for k, (_, v) in flat.items()
        if isinstance(v, str) and v.strip().isdigit() and k.rsplit(" ", 1)[-1] in _NUMBERED
    }
    record = _record_name({k: _text(v) for k, (_, v) in flat.items()}, codes)
    if not record:  # nothing names it ({"temp_c": 3}): no record to state facts of
        return [], cursor
    found: list[Field] = []
    for words, (raw_key, value) in flat.items():
        start, end = _locate(text, raw_key, value, cursor)
        cursor = max(cursor, end)
        found.append(Field(record, words, _text(value), start, end))
    return found, cursor


def _record_name(values: dict[str, str], codes: frozenset[str] | set[str] = frozenset()) -> str:
    """What a record is called: "<thing> <id>" from a ``thing_id`` key, else its name,
    title or id, else its first text field as "<key> <value>" ("Account Brightwave";
    the key, which says what the record is, said once: "Hotel Granvia Kyoto"), a
    number written as text under a key of a thing named by its number (``codes``:
    {"card": "4410"}) counting as text and a state ("status": "blocked") not; else
    empty: nothing names it."""
    for key, value in values.items():
        if key.endswith(" id") and value:
            return f"{key.removesuffix(' id').capitalize()} {value}"
    for naming in _NAMING:
        if values.get(naming):
            return values[naming]
    for key, value in values.items():
        if key in _STATES or not value:
            continue
        if value.lower().startswith(key + " "):
            return value  # "Hotel Granvia Kyoto", not "Hotel Hotel Granvia Kyoto"
        if key in codes or not value.replace(".", "").isdigit():
            return f"{key.capitalize()} {value}"
    return ""


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _text(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return "none" if value is None else str(value)


def _locate(text: str, key: str, value: Any, after: int) -> tuple[int, int]:
    """The span of ``"key": value`` in the JSON text after ``after`` (the value alone
    where the pair is not found as written); (0, 0) where neither is: nothing to cite."""
    pair = re.compile(rf'"{re.escape(key)}"\s*:\s*(?P<v>"(?:[^"\\]|\\.)*"|[^\s,}}\]]+)')
    for written in pair.finditer(text, after):
        try:
            if json.loads(written.group("v")) == value:  # the pair of this record, not another's
                return written.span()
        except ValueError:
            continue
    encoded = json.dumps(value, ensure_ascii=False)
    for needle in (encoded, _text(value)):
        at = text.find(needle, after)
        if at >= 0:
            return at, at + len(needle)
    return 0, 0
