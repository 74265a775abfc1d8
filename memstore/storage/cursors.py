"""Page cursors of the bounded reads (``Store.list_facts``, ``facts_about``, ``history``,
``neighborhood``, ``rejections``): opaque to callers, checked when they come back.

Reads page by keyset: a cursor names the last fact of a page by (recorded_at, id) and,
in a neighborhood, its hop distance (the key of the read's order); a rejections
cursor names its last row by the ordering column's value and ``chain_seq``. Each names the read it
belongs to (a digest of the namespace, the kind of read and what picks its facts:
for a listing the filters of ``LISTING``). It is URL-safe base64 of that with a
checksum in front. A cursor that was cut, edited or made up is refused, as is one
given with other filters or in another namespace: ``InvalidInput`` naming ``cursor``.
The time bounds are no part of the digest: a relative time (the CLI's ``7d``) moves
between two pages, and any bounds read on correctly from the cursor's place. The
checksum has no secret key: it tells a damaged cursor from a good one; a forged one
could only start a listing the caller may read anyway at another place.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memstore.errors import InvalidInput

VERSION = 1
#: The filters a cursor is tied to (``Store.list_facts``' arguments).
LISTING: set[str] = {"entity", "relation", "statuses", "metadata"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_CHECK_BYTES = 8
_GARBLED = "is not a cursor this store gave out (cut short or edited); start again without one"


@dataclass(frozen=True, slots=True)
class Position:
    """Where a page ended: its last fact's ``recorded_at`` and ``id`` and, in a
    neighborhood, its hop ``distance`` (0 in the other reads)."""

    recorded_at: datetime
    id: str
    distance: int = 0


@dataclass(frozen=True, slots=True)
class Page:
    """What a bounded read was asked for: at most ``limit`` facts, after ``cursor``."""

    limit: int
    cursor: str | None = None


def listing(namespace: str, filters: dict[str, Any]) -> str:
    """The digest that ties a cursor to one listing: its namespace and its filters."""
    text = json.dumps([namespace, filters], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode(position: Position, read: str) -> str:
    """The cursor of the page after ``position`` in the listing ``read``."""
    fields: list[Any] = [VERSION, _micros(position.recorded_at), position.id, read]
    if position.distance:
        fields.append(position.distance)
    return _pack(fields)


def after_page(facts: Sequence[Any], more: bool, read: str, distance: int = 0) -> str | None:
    """The cursor of the page after ``facts`` (each with ``recorded_at`` and ``id``;
    ``distance``: the last one's hop) when ``more`` follow; None: that page was the last."""
    if not more or not facts:
        return None
    return encode(Position(facts[-1].recorded_at, facts[-1].id, distance), read)


def start(cursor: str | None, read: str) -> Position | None:
    """Where a page of the read ``read`` starts: after the position ``cursor`` names,
    or at the beginning (None). InvalidInput as ``decode``."""
    return None if cursor is None else decode(cursor, read)


def decode(cursor: str, read: str) -> Position:
    """The position ``cursor`` names; InvalidInput on ``cursor`` unless this store gave it
    out for the listing ``read``."""
    fields = _unpack(cursor)
    with _bad_fields_refused():
        version, micros, fact_id, made_for, *rest = fields
        distance = rest.pop() if rest else 0
        if (
            version != VERSION
            or rest
            or not all(isinstance(n, int) for n in (micros, distance))
            or not isinstance(fact_id, str)
        ):
            raise ValueError("unknown layout")
        recorded_at = _from_micros(micros)
    _same_read(made_for, read)
    return Position(recorded_at, fact_id, distance)


@dataclass(frozen=True, slots=True)
class RejectionPosition:
    """Where a page of rejections ended: its last row's value of the column the page is
    ordered by (a time, a number, or None for a missing number), its ``chain_seq`` (None
    on a row inserted behind the store's back) and its id."""

    value: datetime | float | None
    chain_seq: int | None
    id: str


def after_rejections(rows: Sequence[Any], more: bool, order_by: str, read: str) -> str | None:
    """The cursor of the page of rejections after ``rows`` (ordered by ``order_by``)
    when ``more`` follow; None: that page was the last."""
    if not more or not rows:
        return None
    value = getattr(rows[-1], order_by)
    if isinstance(value, datetime):
        value = _micros(value)
    return _pack([VERSION, _REJECTIONS, value, rows[-1].chain_seq, rows[-1].id, read])


def rejections_start(cursor: str | None, order_by: str, read: str) -> RejectionPosition | None:
    """Where a page of rejections starts: after the row ``cursor`` names, or at the
    beginning (None). InvalidInput on ``cursor`` unless this store gave it out for the
    listing ``read`` (its filters and order)."""
    if cursor is None:
        return None
    fields = _unpack(cursor)
    with _bad_fields_refused():
        version, kind, value, chain_seq, row_id, made_for = fields
        if (
            version != VERSION
            or kind != _REJECTIONS
            or not (chain_seq is None or isinstance(chain_seq, int))
            or isinstance(chain_seq, bool)
            or not isinstance(row_id, str)
            or isinstance(value, bool)
            or not (value is None or isinstance(value, int | float))
        ):
            raise ValueError("unknown layout")
        if order_by == "created_at":
            if not isinstance(value, int):
                raise ValueError("a time is a count of microseconds")
            value = _from_micros(value)
    _same_read(made_for, read)
    return RejectionPosition(value, chain_seq, row_id)


_REJECTIONS = "rejections"


def _same_read(made_for: object, read: str) -> None:
    if made_for != read:
        raise InvalidInput(
            "cursor",
            "belongs to another listing (other filters, entities or fact, order or "
            "namespace); give those of the first page, or start again without a cursor",
        )


def _micros(when: datetime) -> int:
    return (when - _EPOCH) // _MICROSECOND


def _from_micros(micros: int) -> datetime:
    """The time ``_micros`` gave ``micros`` for; OverflowError out of datetime's range."""
    return _EPOCH + micros * _MICROSECOND


@contextmanager
def _bad_fields_refused() -> Iterator[None]:
    """InvalidInput on ``cursor`` for fields the block cannot read (another count or
    type, a time out of range: ValueError, TypeError or OverflowError)."""
    try:
        yield
    except (ValueError, TypeError, OverflowError):
        raise InvalidInput("cursor", _GARBLED) from None


def _pack(fields: list[Any]) -> str:
    body = json.dumps(fields, separators=(",", ":"), allow_nan=False).encode()
    return base64.urlsafe_b64encode(_check(body) + body).rstrip(b"=").decode("ascii")


def _unpack(cursor: str) -> list[Any]:
    """The fields of a cursor whose checksum holds; InvalidInput otherwise."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise InvalidInput("cursor", _GARBLED) from None
    check, body = raw[:_CHECK_BYTES], raw[_CHECK_BYTES:]
    if len(check) < _CHECK_BYTES or check != _check(body):
        raise InvalidInput("cursor", _GARBLED)
    try:
        fields = json.loads(body)
    except ValueError:
        raise InvalidInput("cursor", _GARBLED) from None
    if not isinstance(fields, list):
        raise InvalidInput("cursor", _GARBLED)
    return fields


def _check(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=_CHECK_BYTES, person=b"memstore-cursor").digest()
