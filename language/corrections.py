"""Corrections in a sentence, and the statement they turn an older one into.

People correct what they said by stating the right value beside the wrong one: "it's
21 Elm Street, not 12", "the test is on Tuesday, not Monday", "make it granite instead
of quartz", "not the 14th but the 15th". ``corrections`` finds the pair (what is now
said, what it replaces) in a text; ``substitute`` puts the new value in an older
statement in the place of the old one, reading the two in parallel: the old value is
found in the statement (numbers, ordinals and number words compared as numbers, so
"the 18th" is "November 18" and "three" is "three weeks"), and the words of the new
clause that stand where it stood are the ones whose neighbours match its neighbours
("my right knee, not the left" against "his left knee": "right"). Where no part of
the statement is the old value, or nothing in the new clause stands for it, there is
no substitution: a correction is never guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from language.sentences import sentence_spans
from language.values import MONTHS, WEEKDAYS, digits

#: "<new>, not <old>" (the comma, semicolon or dash sets the two apart: "Maya is not
#: vegan" denies, it corrects nothing), "<new> instead of <old>", "<new> rather than
#: <old>"; the old part runs to the end of its clause.
_NEW_NOT_OLD = re.compile(
    r"^(?P<new>.*?\w.*?)(?:\s*[,;]|\s+\u2014|\s+-)\s+(?:and\s+)?(?P<how>not)\s+"
    r"(?P<old>(?:[^,;.!?()\u2014]|[.,](?=\w))+?)\s*(?:anymore|any\s+more|any\s+longer)?\s*(?:[,;.!?)\u2014](?!\w)|$)"
    r"|^(?P<new2>.*?\w.*?),?\s+(?:instead\s+of|rather\s+than)\s+"
    r"(?P<old2>(?:[^,;.!?()\u2014]|[.,](?=\w))+?)\s*(?:[,;.!?)\u2014](?!\w)|$)",
    re.I,
)
#: "not <old> but <new>".
_NOT_OLD_BUT_NEW = re.compile(
    r"\bnot\s+(?!only\b|just\b|merely\b)(?P<old>[^,;.!?]+?),?\s+but\s+(?P<new>[^,;.!?]+?)\s*(?:[,;.!?]|$)",
    re.I,
)
#: "<word>, not": words that make the "not" deny rather than set a value against another
#: ("fish, just not meat", "a cat, but not a dog", "tea, if not coffee").
_NOT_A_CORRECTION = re.compile(
    r"[,;\u2014-]\s*(?:and\s+)?(?:just|but|though|except|if|or|whether|certainly|"
    r"definitely|probably|maybe|perhaps|possibly|also|even|especially)\s+not\s+",
    re.I,
)
#: Words that open a phrase without being what it names.
_DETERMINERS = frozenset("the a an my our his her their its your this that these those".split())
#: Words that cannot stand for a corrected value by themselves.
_FUNCTION = (
    frozenset(
        "i me you he she it we they is am are was were be been being it's its i'm we're "
        "they're that's there's here's and or but so of to in on at by for with from as "
        "now actually really just sorry oops oh well also then again make made do did "
        "got get have has had".split()
    )
    | _DETERMINERS
)
_TOKEN = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|[A-Za-z0-9][\w'\u2019.:/-]*\w|[A-Za-z0-9]"
)
#: Numbers text2num leaves as words (it reads them as words more often than numbers;
#: set against another value, they are numbers).
_SMALL = {"one": "1", "two": "2", "first": "1", "second": "2"}
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_THOUSANDS = re.compile(r"^(\d{1,3}(?:,\d{3})+)$")
#: The most words a corrected value may span (a date, an address, a name).
MAX_VALUE_WORDS = 6


@dataclass(frozen=True, slots=True)
class Correction:
    """A correction found in a text: ``new`` is said in place of ``old``."""

    #: The clause that says what is right, as written ("it's 21 Elm Street").
    new: str
    #: What it replaces, as written ("12").
    old: str
    #: The sentence that says it: its span in the text.
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    norm: str
    start: int
    end: int


def corrections(text: str) -> list[Correction]:
    """The corrections ``text`` states, one at most per sentence."""
    found: list[Correction] = []
    for start, end in sentence_spans(text):
        sentence = text[start:end].replace("\u2019", "'")
        pair = _pair(sentence)
        if pair is not None:
            found.append(Correction(pair[0], pair[1], start, end))
    return found


def _pair(sentence: str) -> tuple[str, str] | None:
    """(new, old) of a sentence that sets one value against another, else None."""
    m = _NOT_OLD_BUT_NEW.search(sentence)
    if m is not None:
        return m.group("new").strip(), m.group("old").strip()
    if _NOT_A_CORRECTION.search(sentence):
        return None
    m = _NEW_NOT_OLD.match(sentence)
    if m is None:
        return None
    new = (m.group("new") or m.group("new2")).strip()
    old = (m.group("old") or m.group("old2")).strip()
    if not _tokens(old) or len(_tokens(old)) > MAX_VALUE_WORDS:
        return None
    return new, old


def substitute(statement: str, correction: Correction) -> str | None:
    """``statement`` with ``correction.old`` replaced by the words of ``correction.new``
    that stand in its place, or None where the statement does not hold the old value or
    no words of the new clause stand for it (or they say the same)."""
    olds = _core(_tokens(correction.old))
    news = _tokens(correction.new)
    said = _tokens(statement)
    if not olds or not news or not said:
        return None
    window = _find(said, olds)
    if window is None:
        return None
    i, j = window
    best: tuple[tuple[int, int, int], int, int] | None = None
    for length in range(1, min(len(news), j - i + 2) + 1):
        for k in range(max(0, len(news) - 8), len(news) - length + 1):
            core = news[k : k + length]
            if not _stands_for(core, said[i:j]):
                continue
            context = _agree(news, k, k + length, said, i, j)
            score = (context, -abs(length - (j - i)), k)
            if best is None or score > best[0]:
                best = (score, k, k + length)
    if best is None:
        return None
    _, k, m = best
    text = correction.new[news[k].start : news[m - 1].end]
    if m - k == 1 == j - i and _kind(news[k]) == "weekday" == _kind(said[i]):
        # "on Mondays now, not Fridays" in "on Friday mornings": the statement's number
        text = news[k].norm.capitalize() + ("s" if said[i].text.endswith("s") else "")
    if [t.norm for t in news[k:m]] == [t.norm for t in said[i:j]]:
        return None
    return statement[: said[i].start] + text + statement[said[j - 1].end :]


def _tokens(text: str) -> list[_Token]:
    return [
        _Token(m.group(0), _norm(m.group(0)), m.start(), m.end())
        for m in _TOKEN.finditer(text.replace("\u2019", "'"))
    ]


@lru_cache(maxsize=4096)
def _norm(word: str) -> str:
    """A word as compared: lower case, number words and ordinals as numbers, "18,000"
    as 18000, "95k" as 95000, a weekday's plural as the weekday."""
    low = word.lower().removesuffix("'s")
    if low in _SMALL:
        return _SMALL[low]
    if low.isalpha() and low not in MONTHS and low not in WEEKDAYS:
        low = digits(low).lower()
    if (m := _ORDINAL.match(low)) is not None:
        return m.group(1)
    if _THOUSANDS.match(low):
        return low.replace(",", "")
    if re.fullmatch(r"\d+(?:\.\d+)?k", low):
        return str(int(float(low[:-1]) * 1000))
    if low.endswith("s") and low[:-1] in WEEKDAYS:
        return low[:-1]
    return low


def _core(tokens: list[_Token]) -> list[_Token]:
    """``tokens`` without the determiners that open them ("the 14th" -> "14th")."""
    while tokens and tokens[0].norm in _DETERMINERS:
        tokens = tokens[1:]
    return tokens


def _find(said: list[_Token], olds: list[_Token]) -> tuple[int, int] | None:
    """Where ``olds`` stands in ``said`` (the last place), compared as normalised; a
    number alone also matches its thousands ("not 18" for "18,000")."""
    n = len(olds)
    want = [t.norm for t in olds]
    for i in range(len(said) - n, -1, -1):
        if [t.norm for t in said[i : i + n]] == want:
            return i, i + n
    if n == 1 and want[0].isdigit():
        for i in range(len(said) - 1, -1, -1):
            if said[i].norm in {want[0] + "000", want[0] + "000000"}:
                return i, i + 1
    return None


def _kind(token: _Token) -> str:
    norm = token.norm
    if re.fullmatch(r"\d+(?:\.\d+)?", norm):
        return "number"
    if norm in WEEKDAYS:
        return "weekday"
    if norm in MONTHS and (len(norm) > 3 or token.text[:1].isupper()):
        return "month"
    if re.search(r"\d", norm):
        return "code"  # 3B, v2.14.0, 03:05
    return "word"


def _stands_for(core: list[_Token], old: list[_Token]) -> bool:
    """Whether ``core`` may stand where ``old`` stood: its values are values of the same
    kinds, and words are words that name something (not "it", "is", "now")."""
    if any(t.norm in _FUNCTION for t in core) or core[-1].norm in _FUNCTION:
        return False
    kinds = [_kind(t) for t in old]
    mine = [_kind(t) for t in core]
    if any(k != "word" for k in kinds):
        valued = [k for k in kinds if k != "word"]
        return [k for k in mine if k != "word"] == valued
    return all(k == "word" for k in mine)


def _agree(news: list[_Token], k: int, m: int, said: list[_Token], i: int, j: int) -> int:
    """How many neighbours the two places share: words before and after each, compared
    outwards until they differ."""
    score = 0
    a, b = k - 1, i - 1
    while a >= 0 and b >= 0 and news[a].norm == said[b].norm:
        score, a, b = score + 1, a - 1, b - 1
    a, b = m, j
    while a < len(news) and b < len(said) and news[a].norm == said[b].norm:
        score, a, b = score + 1, a + 1, b + 1
    return score
