"""Corrections in a sentence, and the statement they turn an older one into.

People correct what they said by stating the right value beside the wrong one: "it's
21 Elm Street, not 12", "the test is on Tuesday, not Monday", "make it granite instead
of quartz", "not the 14th but the 15th". ``corrections`` finds the pair (what is now
said, what it replaces) in a text; ``rewrite`` puts the new value in an older
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

#: Between the two: "<new>, not <old>" (a comma, semicolon or dash sets them apart:
#: "Maya is not vegan" denies, it corrects nothing), "<new> instead of <old>", "<new>
#: rather than <old>".
_SEPARATOR = re.compile(
    r"(?:\s*[,;]|\s+\u2014|\s+-)\s+(?:and\s+)?(?P<not>not)\s+(?!only\b|just\b|merely\b)"
    r"|,?\s+(?P<instead>instead\s+of|rather\s+than)\s+",
    re.I,
)
#: "not <old> but <new>".
_NOT_OLD_BUT_NEW = re.compile(
    r"\bnot\s+(?!only\b|just\b|merely\b)(?P<old>[^,;.!?]+?),?\s+but\s+(?P<new>[^,;.!?]+?)"
    r"\s*(?:[,;.!?]|$)",
    re.I,
)
#: Where the old part ends: its clause's punctuation (a full stop inside "v2.14.0" or
#: "3.5" is no end).
_CLAUSE_END = re.compile(r"[,;!?()\u2014]|\.(?!\w)")
_TRAILING = re.compile(r"\s+(?:anymore|any\s+more|any\s+longer|now)\s*$", re.I)
#: A sentence longer than this is not read for a correction (they are short; the
#: patterns stay cheap).
MAX_SENTENCE_CHARS = 400
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
#: The most words of the new clause read for the words that stand for the old value.
MAX_CLAUSE_WORDS = 40
#: Words of a correction that say it is one, not what it is about.
_NOT_TOPICS = frozenset(
    """sorry correction correct mistake wrong wait actually oops misremembered misspoke
    meant mean change changed update updated earlier before said told says""".split()
)


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
    #: How it is said: "not" ("X, not Y"), "instead" ("X instead of Y"), "but" ("not Y
    #: but X").
    how: str = "not"


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    norm: str
    start: int
    end: int


def corrections(text: str) -> list[Correction]:
    """The corrections ``text`` states, one at most per sentence (kept: the checks read
    one evidence text for every claim of a batch)."""
    return list(_corrections(text))


@lru_cache(maxsize=1024)
def _corrections(text: str) -> tuple[Correction, ...]:
    found: list[Correction] = []
    for start, end in sentence_spans(text):
        sentence = text[start:end].replace("\u2019", "'")
        pair = _pair(sentence)
        if pair is not None:
            found.append(Correction(pair[0], pair[1], start, end, pair[2]))
    return tuple(found)


#: What says a sentence takes back a value its speaker gave just before ("Sorry, I
#: misspoke, it's 600"); not "actually", which as often adds as corrects.
_TAKING_BACK = re.compile(
    r"\b(?:i misspoke|misspoke|correction|my mistake|my bad|scratch that|i meant|"
    r"i got (?:it|that) wrong|i was wrong)\b"
    # a bare "sorry" only where the value follows as "it's ..." ("Sorry, I checked, it's
    # three months"; not "Sorry to hear that Priya's team is down to 8 engineers")
    r"|\bsorry\b(?=[^.!?]*\b(?:it's|it is|it was|that's|that is|make (?:it|that))\s)",
    re.I,
)


def restatements(text: str) -> list[Correction]:
    """Values a speaker takes back in the same turn by giving another of the same kind
    ("About 400 hosts. Sorry, I misspoke, it's closer to 600 hosts."; "Two months.
    Sorry, I checked, it's three months."): a sentence that says it takes something
    back holds a number whose unit (the word after it) is the unit of a number said
    earlier in the turn, and a different number. Each is a ``Correction`` (``how``
    "restated") from the earlier value to the taking-back sentence."""
    found: list[Correction] = []
    if not _TAKING_BACK.search(text):
        return found
    said: list[tuple[str, str, str, int]] = []  # the turn's numbers so far (``_numbers``)
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        if not text[text.rfind("\n", 0, start) + 1 : start].strip():
            said = []  # a sentence that opens a line opens a turn
        numbers = _numbers(sentence)
        taken = _TAKING_BACK.search(sentence)
        if taken is not None and said:
            for n, unit, _, at in numbers:
                if at < taken.start():
                    continue
                old = next(
                    (w for o, u, w, _ in reversed(said) if u == unit and _num(o) != _num(n)),
                    None,
                )
                if old is not None:
                    new = sentence[taken.end() :].strip(" ,;:")
                    found.append(Correction(new, old, start, end, "restated"))
                    break
        said += numbers
    return found


_NUMBER_UNIT = re.compile(
    r"(?<![\w.,])(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve)\s+(?P<unit>[a-z]{3,})\b",
    re.I,
)


def _numbers(sentence: str) -> list[tuple[str, str, str, int]]:
    """Each number of ``sentence``, the word after it (singular, lower case), the two as
    written, and where they start."""
    return [
        (m.group("n"), m.group("unit").lower().removesuffix("s"), m.group(0), m.start())
        for m in _NUMBER_UNIT.finditer(sentence)
    ]


def _num(word: str) -> str:
    return digits(word.lower()).replace(",", "")


def _pair(sentence: str) -> tuple[str, str, str] | None:
    """(new, old, how) of a sentence that sets one value against another, else None."""
    if len(sentence) > MAX_SENTENCE_CHARS:
        return None
    m = _NOT_OLD_BUT_NEW.search(sentence)
    if m is not None:
        return _checked(m.group("new"), m.group("old"), "but")
    if _NOT_A_CORRECTION.search(sentence):
        return None
    m = _SEPARATOR.search(sentence)
    if m is None or not any(c.isalnum() for c in sentence[: m.start()]):
        return None
    rest = sentence[m.end() :]
    end = _CLAUSE_END.search(rest)
    old = _TRAILING.sub("", rest[: end.start() if end else len(rest)])
    return _checked(sentence[: m.start()], old, "instead" if m.group("instead") else "not")


def _checked(new: str, old: str, how: str) -> tuple[str, str, str] | None:
    new, old = new.strip(), old.strip()
    if not _tokens(old) or len(_tokens(old)) > MAX_VALUE_WORDS:
        return None
    return new, old, how


@dataclass(frozen=True, slots=True)
class Rewrite:
    """An older statement with a correction put in: the new statement, and the words
    taken out and put in their place."""

    statement: str
    removed: str
    put: str


def rewrite(statement: str, correction: Correction) -> Rewrite | None:
    """``statement`` with ``correction.old`` replaced by the words of ``correction.new``
    that stand in its place, or None where the statement does not hold the old value,
    no words of the new clause stand for it, they say the same, or nothing ties the
    correction to the statement: the new clause shares no word with it, its words do
    not stand beside the same words, and the old value is not one that names a thing on
    its own ("quartz" in "granite instead of quartz", a code such as "3B"; a bare
    number or day never does: "The meeting is at 3, not 2" does not touch "Priya has 2
    kids")."""
    olds = _core(_tokens(correction.old))
    news = _tokens(correction.new)[-MAX_CLAUSE_WORDS:]
    said = _tokens(statement)
    if not olds or not news or not said:
        return None
    best: tuple[tuple[int, bool, int, int, int], int, int, int, int] | None = None
    for i, j in _places(said, olds, news):
        for length in range(1, min(len(news), j - i + 2) + 1):
            for k in range(len(news) - length + 1):
                if not _stands_for(news[k : k + length], said[i:j]):
                    continue
                context = _agree(news, k, k + length, said, i, j)
                # a value cut short leaves a word of its own behind ("tree" of "tree nuts")
                whole = (
                    k + length == len(news)
                    or news[k + length].norm in _FUNCTION
                    or (j < len(said) and news[k + length].norm == said[j].norm)
                )
                score = (context, whole, -abs(length - (j - i)), k, i)
                if best is None or score > best[0]:
                    best = (score, k, k + length, i, j)
    if best is None:
        return None
    (context, *_), k, m, i, j = best
    if [t.norm for t in news[k:m]] == [t.norm for t in said[i:j]]:
        return None
    own = [t for t in news[:k] + news[m:] if _topical(t)]
    topic = _shares_topic(news, k, m, said)
    if not _tied(correction.how, olds, news[k:m], context, topic, bool(own)):
        return None
    text = correction.new[news[k].start : news[m - 1].end]
    if m - k == 1 == j - i and _kind(news[k]) == "weekday" == _kind(said[i]):
        # "on Mondays now, not Fridays" in "on Friday mornings": the statement's number
        text = news[k].norm.capitalize() + ("s" if said[i].text.endswith("s") else "")
    removed = statement[said[i].start : said[j - 1].end]
    return Rewrite(statement[: said[i].start] + text + statement[said[j - 1].end :], removed, text)


def restates(statement: str, correction: Correction) -> bool:
    """Whether ``correction``'s new clause says ``statement`` again with another value
    ("I last used it the day before yesterday, not yesterday" and "Ahmed last used it at
    a petrol station yesterday"): the statement holds the old value and the new clause
    shares a word with it besides (a value of several words ``rewrite`` cannot place
    then replaces the statement whole)."""
    olds = _core(_tokens(correction.old))
    news = _tokens(correction.new)[-MAX_CLAUSE_WORDS:]
    said = _tokens(statement)
    if not olds or not _places(said, olds, news):
        return False
    value = {t.norm for t in olds}
    mine = {_stem(t.norm) for t in news if _topical(t) and t.norm not in value}
    return bool(mine & {_stem(t.norm) for t in said if _topical(t) and t.norm not in value})


def without_old(statement: str, correction: Correction) -> str:
    """``statement`` without the part that names the old value (", not yesterday",
    " instead of quartz"), where it holds one."""
    pattern = (
        r"(?:\s*[,;]|\s+\u2014|\s+-)?\s+(?:and\s+)?(?:not|instead\s+of|rather\s+than)\s+"
        + re.escape(correction.old)
        + r"(?=\W*$|[,;.!?])"
    )
    return re.sub(pattern, "", statement, count=1, flags=re.I)


def says_more(fuller: str, than: str) -> bool:
    """Whether ``fuller`` has every word of ``than`` that says something (numbers as
    numbers) and more: "Lena says our Datadog contract ends in May" says more than the
    rewrite "Lena says our contract ends in May"; "Priya says it's 21 Elm Street" does
    not than "Priya lives at 21 Elm Street"."""
    ours = {t.norm for t in _tokens(fuller)} - _FUNCTION
    theirs = {t.norm for t in _tokens(than)} - _FUNCTION
    return theirs < ours


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


def _places(said: list[_Token], olds: list[_Token], news: list[_Token]) -> list[tuple[int, int]]:
    """Every place ``olds`` stands in ``said``, compared as normalised; a number alone
    also matches its thousands ("not 18" for "18,000") where the new clause gives a
    number as large."""
    n = len(olds)
    want = [t.norm for t in olds]
    found = [
        (i, i + n) for i in range(len(said) - n + 1) if [t.norm for t in said[i : i + n]] == want
    ]
    if found or n != 1 or not want[0].isdigit():
        return found
    large = any(t.norm.isdigit() and int(t.norm) >= 1000 for t in news)
    thousands = {want[0] + "000", want[0] + "000000"}
    return [(i, i + 1) for i, t in enumerate(said) if large and t.norm in thousands]


def _tied(
    how: str, olds: list[_Token], core: list[_Token], context: int, topic: bool, own: bool
) -> bool:
    """Whether a correction is tied to the statement it would rewrite: the new clause
    shares a word with it; or the old value names a thing on its own (a code such as
    "3B", a date or address of several words, a word set against another with "instead
    of", a name with "not ... but"); or the words around the two values agree (two of
    them for a bare number or day, one where the correction names nothing of its own,
    as in "it's on Friday, not Thursday", and for anything else). Words alone ("a morning
    person") are tied only by the words around them. ``own``: the new clause has words
    of its own besides the value ("the dentist is on ...")."""
    valued = any(_kind(t) != "word" for t in olds)
    if topic or any(_kind(t) == "code" for t in olds) or (len(olds) > 1 and valued):
        return True
    bare = _kind(olds[0]) in ("number", "weekday", "month")
    if context >= (2 if bare and own else 1):
        return True
    if how == "instead":
        return not bare
    return how == "but" and not bare and core[0].text[:1].isupper()


def _shares_topic(news: list[_Token], k: int, m: int, said: list[_Token]) -> bool:
    """Whether the new clause, its new value aside, uses a word of the statement ("the
    budget is 20,000 dollars" and "the kitchen budget is 18,000 dollars")."""
    mine = {_stem(t.norm) for t in news[:k] + news[m:] if _topical(t)}
    return bool(mine & {_stem(t.norm) for t in said if _topical(t)})


def _topical(token: _Token) -> bool:
    return (
        len(token.norm) > 2
        and token.norm not in _FUNCTION
        and token.norm not in _NOT_TOPICS
        and not token.norm.isdigit()
    )


def _stem(word: str) -> str:
    """A word's first letters, a plural, past or -ing ending left out ("meets" and
    "meet", "deployed" and "deploy")."""
    if re.search(r"(?:s|x|z|ch|sh)es$", word):
        word = word[:-2]
    else:
        for ending in ("ing", "ed", "s"):
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                word = word[: -len(ending)]
                break
    return word[:5]


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
