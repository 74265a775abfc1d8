"""Numbers, dates, times and weekdays in text, normalised so two phrasings compare.

"ten years" and "a decade" are both the number 10; "2026-10-02", "2 October 2026" and
"Oct 2, 2026" are one date; "15:00" and "3 pm" one time; "Thu" and "Thursday" one
weekday. Number words go through text2num (``alpha2digit``, MIT); the rest is a
small, closed set of patterns (months, weekdays, clock times) that a date library
would answer more slowly and no better for this job: telling whether a claim's values
are the evidence's values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from text_to_num import alpha2digit

Kind = Literal["number", "date", "time", "weekday"]

MONTHS = {
    m: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for m in names
}
WEEKDAYS = {
    d: i
    for i, names in enumerate(
        (
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        )
    )
    for d in names
}
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = (
    "January February March April May June July August September October November December"
).split()

#: Words for numbers that text2num leaves as they are.
_WORD_NUMBERS = {
    "a decade": "10 years",
    "decades": "decades",
    "a dozen": "12",
    "half a dozen": "6",
    "twice": "2 times",
    "once": "1 time",
    "thrice": "3 times",
    "a fortnight": "2 weeks",
    "a couple of": "2",
    "a pair of": "2",
}
_WORDS = re.compile(
    r"\b(?:" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True)) + r")\b", re.I
)

_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DATE_PATTERNS = (
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<mm>[01]\d)-(?P<day>[0-3]\d)"),
    re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b", re.I),
    re.compile(rf"\b{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?\b(?!:)", re.I),
    re.compile(rf"\b{_MONTH}(?:\s+{_YEAR})\b", re.I),
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<mm>[01]\d)\b(?!-)"),
    re.compile(
        r"\b(?P<month>" + "|".join(m.title() for m in MONTHS if len(m) > 3 and m != "may") + r")\b"
    ),
)
_TIME = re.compile(
    r"\b(?P<h>[0-2]?\d)(?::(?P<m>[0-5]\d))?\s*(?P<half>[ap]\.?m\.?)(?![a-z])"
    r"|\b(?P<h24>[0-2]?\d):(?P<m24>[0-5]\d)(?::[0-5]\d)?\b"
    r"|\b(?P<noon>noon|midday|midnight)\b",
    re.I,
)
_WEEKDAY = re.compile(
    r"\b(?P<weekday>" + "|".join(sorted(WEEKDAYS, key=len, reverse=True)) + r")\b\.?", re.I
)
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+){2,}\b|\b\d+:[0-5]\d(?::[0-5]\d)?\b")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?(?P<n>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?(?P<k>k\b)?")


@dataclass(frozen=True, slots=True)
class Value:
    """One value found in text: its kind, a canonical form, and the words as written."""

    kind: Kind
    canonical: str
    text: str
    #: The period of a rate ("100 per minute" -> "minute"), where one follows.
    per: str | None = None


def values(text: str) -> tuple[Value, ...]:
    """Every number, date, time and weekday in ``text``, in order of appearance."""
    return _values(text)


@lru_cache(maxsize=4096)
def _values(text: str) -> tuple[Value, ...]:
    text = _ISO_T.sub(r"\1 ", digits(text))
    taken = [False] * len(text)
    found: list[tuple[int, Value]] = []

    def claim(match: re.Match[str]) -> bool:
        if any(taken[match.start() : match.end()]):
            return False
        for i in range(match.start(), match.end()):
            taken[i] = True
        return True

    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            canonical = _date(m)
            if canonical and claim(m):
                found.append((m.start(), Value("date", canonical, m.group(0).strip())))
    for m in _TIME.finditer(text):
        canonical = _time(m)
        if canonical and claim(m):
            found.append((m.start(), Value("time", canonical, m.group(0).strip())))
    for m in _WEEKDAY.finditer(text):
        word = m.group("weekday")
        if (word.lower() in {"sun", "sat", "wed", "mon"} and word.islower()) or not claim(m):
            continue
        found.append((m.start(), Value("weekday", WEEKDAY_NAMES[WEEKDAYS[word.lower()]], word)))
    for m in _VERSION.finditer(text):
        if claim(m):
            found.append((m.start(), Value("number", m.group(0).lstrip("v"), m.group(0))))
    for m in _NUMBER.finditer(text):
        if _part_of_word(text, m) or not claim(m):
            continue
        whole = m.group("n").replace(",", "")
        if len(whole) > MAX_DIGITS:
            found.append((m.start(), Value("number", whole, m.group(0))))
            continue
        number = float(whole + (m.group("frac") or ""))
        if m.group("k"):
            number *= 1000
        rate = _RATE.match(text, m.end())
        per = rate.group("per").lower() if rate else None
        found.append((m.start(), Value("number", _number(number), m.group(0).lstrip("+$"), per)))
    return tuple(v for _, v in sorted(found, key=lambda pair: pair[0]))


def digits(text: str) -> str:
    """``text`` with number words as digits ("ten years" -> "10 years", "a decade" ->
    "10 years"); "one" alone stays a word (it is more often a pronoun)."""
    text = _WORDS.sub(lambda m: _WORD_NUMBERS[m.group(0).lower()], text)
    try:
        text = str(alpha2digit(text, "en"))
    except Exception:  # a library failure leaves the words as written
        return text
    return _HALF.sub(lambda m: m.group(1) + ".5", text)


#: "100 requests per minute", "3 a day", "50/hour": the period after a number (words
#: of at most 20 letters between, so a long run of letters cannot make it backtrack).
_RATE = re.compile(
    r"(?:[ \t]{0,3}[a-zA-Z%]{1,20}){0,2}?[ \t]{0,3}(?:per|a|an|every|each|/)[ \t]{0,3}"
    r"(?P<per>second|sec|minute|min|hour|hr|day|week|month|year)s?\b",
    re.I,
)
#: An ISO date joined to its time ("2025-07-21T06:00"): read as the date and the time.
_ISO_T = re.compile(r"(\d{4}-[01]\d-[0-3]\d)T(?=[0-2]\d:)")
#: More digits than this is an identifier (a card, an account), not a quantity.
MAX_DIGITS = 15
_HALF = re.compile(r"\b(\d+) and a half\b")


def _part_of_word(text: str, m: re.Match[str]) -> bool:
    """A number inside an identifier (INV-2231, v2, sha 3f9a) is a name, not a value."""
    before = text[m.start() - 1] if m.start() > 0 else " "
    after = text[m.end()] if m.end() < len(text) else " "
    unit = after.isalpha() and after.lower() in "kmgbx"  # 92G, 3k, 2x: a value with its unit
    return before.isalpha() or before in "-_/#" or (after.isalpha() and not unit)


def _number(n: float) -> str:
    return str(int(n)) if n == int(n) else f"{n:g}"


def _date(m: re.Match[str]) -> str | None:
    groups = m.groupdict()
    month = (
        int(groups["mm"]) if groups.get("mm") else MONTHS.get((groups.get("month") or "").lower())
    )
    if not month or not 1 <= month <= 12:
        return None
    day = int(groups["day"]) if groups.get("day") else None
    if day is not None and not 1 <= day <= 31:
        return None
    year = groups.get("year")
    if (groups.get("month") or "").lower() in {"may", "mar"} and day is None and not year:
        return None
    return f"{year or '*'}-{month:02d}-{day:02d}" if day else f"{year or '*'}-{month:02d}-*"


def _time(m: re.Match[str]) -> str | None:
    if m.group("noon"):
        return "00:00" if m.group("noon").lower() == "midnight" else "12:00"
    if m.group("half"):
        hour, minute = int(m.group("h")), int(m.group("m") or 0)
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m.group("half").lower().startswith("p") else 0)
    else:
        hour, minute = int(m.group("h24")), int(m.group("m24"))
        if hour > 23:
            return None
    return f"{hour:02d}:{minute:02d}"


def same(a: Value, b: Value) -> bool:
    """Whether two values of one kind name the same thing (a date without a year
    matches that day in any year)."""
    if a.kind != b.kind:
        return False
    if a.kind == "number":
        return a.canonical == b.canonical and (
            a.per is None or b.per is None or _period(a.per) == _period(b.per)
        )
    if a.kind != "date":
        return a.canonical == b.canonical
    return all(
        x == y or "*" in (x, y)
        for x, y in zip(a.canonical.split("-"), b.canonical.split("-"), strict=True)
    )


def _period(word: str) -> str:
    return {"sec": "second", "min": "minute", "hr": "hour"}.get(word, word)


def spoken(value: Value) -> str:
    """A value in plain words for a reason ("2 October 2026", "15:00", "10")."""
    if value.kind == "date":
        year, month, day = value.canonical.split("-")
        words = [MONTH_NAMES[int(month) - 1]]
        if day != "*":
            words.insert(0, str(int(day)))
        if year != "*":
            words.append(year)
        return " ".join(words)
    if value.per:
        return f"{value.text} per {_period(value.per)}"
    return value.text


#: Months and weekdays as words (and weekdays in the plural, "Sundays").
CALENDAR_WORDS = frozenset(MONTHS) | frozenset(WEEKDAYS) | frozenset(w + "s" for w in WEEKDAYS)


def valued(lemma: str) -> bool:
    """A word that is (part of) a value: digits, a month or weekday, am/pm."""
    return (
        any(c.isdigit() for c in lemma)
        or lemma in CALENDAR_WORDS
        or lemma in {"am", "pm", "a.m.", "p.m."}
    )


#: A code: a run of letters and digits with a capital letter or "#" in it and a letter
#: before a digit ("IB6801", "INC-7731", "main#4812", "23H2"), or a version ("v2.14.0",
#: "1.8.3"). Digits then letters are an amount with its unit as often as a code ("39C",
#: "2L", "92G" beside "34A", "3B"), and are left to the values; so is a date with dots
#: ("03.10.2026").
_CODE = re.compile(
    r"(?<![\w#/.-])(?:v?\d+(?:\.\d+){2,}"
    r"|(?=[\w#/.-]*[A-Za-z#][\w#/.-]*\d)(?=[\w#/.-]*[A-Z#])[A-Za-z0-9][\w#/.-]*[A-Za-z0-9])"
    r"(?![\w#/-])"
)
_NOT_CODE = re.compile(r"\d{1,2}\.\d{1,2}\.(?:\d{4}|\d{2})")


def codes(text: str) -> list[str]:
    """The codes ``text`` names, in order (flight, ticket and order numbers, versions):
    a thing's name that no paraphrase restates; as many digits in it as letters at
    least ("COVID-19" and "GPT-4o" are words with a number, named as words)."""
    found = [m.group(0).rstrip(".") for m in _CODE.finditer(text)]
    return [
        code
        for code in found
        if not _NOT_CODE.fullmatch(code)
        and sum(c.isdigit() for c in code) >= sum(c.isalpha() for c in code)
    ]
