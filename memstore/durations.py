"""Durations as people write them in settings and options: ``90``, ``90s``, ``5m``,
``2h``, ``1d``. Standard library only (the CLI parses ``--every 5m`` before it loads
anything heavy); ``memstore.config`` uses them for its duration fields."""

from __future__ import annotations

import math
import re
from datetime import timedelta

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """``90``, ``90s``, ``5m``, ``2h`` or ``1d`` as a positive timedelta; else ValueError."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a duration like 30s, 5m, 2h or 1d")
    return positive_duration(float(match.group(1)) * _UNITS[match.group(2) or "s"])


def positive_duration(seconds: float) -> timedelta:
    """A positive timedelta of ``seconds``; else ValueError (never OverflowError)."""
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError("must be a positive duration like 30s, 5m, 2h or 1d")
    try:
        value = timedelta(seconds=seconds)
    except OverflowError:
        raise ValueError("is too long a duration") from None
    if value <= timedelta(0):
        raise ValueError("must be at least one microsecond")
    return value


def format_duration(value: timedelta) -> str:
    """The largest whole unit: ``90s``, ``5m``, ``24h``, ``2d`` (or seconds)."""
    seconds = value.total_seconds()
    for unit in ("d", "h", "m"):
        if seconds >= _UNITS[unit] and seconds % _UNITS[unit] == 0:
            return f"{int(seconds // _UNITS[unit])}{unit}"
    return f"{seconds:g}s"
