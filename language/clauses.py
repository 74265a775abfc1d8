"""Clauses: a sentence split where two statements were joined.

A sentence is split at ``; ``, ``, and ``, ``, but ``, `` and ``, a dash (" - ",
"\u2014") and at a bare comma (a comma splice: "I'm Dana, I work as a nurse") when the
part before has its own verb and does not open with a subordinating word ("When I moved,
I sold my car" stays whole), and the part after starts with a subject (a pronoun, a
determiner, a name or a number) and has a verb soon after, or is a request ("..., please
remember that"). Verbs are found from word lists, ``-ed`` endings and ``-s`` endings
right after a subject, so some are missed. Shared-subject coordination ("He was born in
1950 and died in 2000") stays whole; the subject is never copied. Text inside quotes or
brackets is never split. ``without_pleasantry`` takes off the greetings and
pleasantries that open a sentence ("Hi, ...", "Thanks! ...", "Grace here: ...").
"""

from __future__ import annotations

import re

from language.sentences import strip_span
from language.values import Value, digits, same, values

#: A pleasantry, a greeting or a verdict on what was just said ("Thanks", "Sounds good").
PLEASANTRY = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|nice|bye|good (?:morning|night"
    r"|evening|afternoon)|yes|yeah|yup|no|yep|nope|lol|haha|wow|aww|omg|oh wow|sounds good|"
    r"got it|perfect|awesome|absolutely|totally|exactly|definitely|indeed|true|understood|"
    r"noted|fine|alright|all right|will do|of course|"
    # a verdict on what was just said, its "that" left out ("Sounds ambitious but okay.")
    r"sounds|looks|seems)\b",
    re.I,
)
#: A pleasantry and its punctuation opening a statement ("Yes, I'm vegetarian.",
#: "Thanks! I moved to Oslo."): taken off, the rest read on its own.
_PLEASANTRY_OPENER = re.compile(
    # a dash only after a space: "Great-aunt Ana" opens with no pleasantry
    PLEASANTRY.pattern + r"(?:\s*(?:there|so much|a lot))?(?:\s*[,!.:;\u2014]+|\s+-+)\s*"
    # a greeting with whom it greets: "Hey coach,", "Hi Mr Brennan,", "Thanks all!"
    r"|^(?:hi|hello|hey|thanks|thank you|morning|evening)(?:\s+[\w.'-]+){1,3}?\s*[,!:]+\s*"
    # who is speaking: "Grace here:", "Mike Rossi here,"
    r"|^(?-i:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s+here\s*[,:;!\u2014-]+\s*",
    re.I,
)


#: A reply that takes a time someone proposed: "Thursday works.", "Fine, 7 pm it is.",
#: "The 15th works for me." (what it agrees to is the proposal's fact, not its own).
_AGREED = re.compile(
    r"^(?:(?:ok|okay|fine|great|ha|sure|perfect|yes|yeah|then)[,!.]*\s+)*"
    r"(?P<when>[\w: .-]{1,30}?)(?:\s+|'s\s+)(?:works|would work|works great|is fine|"
    r"is good|is great|is perfect|is ok|is okay|fine|good|perfect|would be (?:great|"
    r"perfect|fine)|suits (?:me|us)|it is)(?:\s+(?:for|with|by)\s+(?:me|us|everyone|all of "
    r"us|both of us))?(?:\s+(?:too|then))?\s*[.!]*$",
    re.I,
)
#: Words a time may come with ("the 15th", "next Monday", "Saturday morning").
_TIME_WORDS = frozenset(
    "the on at in next this coming around about morning afternoon evening night".split()
)


def agrees_to_a_time(clause: str, proposal: str) -> bool:
    """Whether ``clause`` only takes the time ``proposal`` (the turn it answers)
    proposed ("Can you bring her in on Thursday at 10?" - "Thursday is fine."; "can we
    make it 7 pm?" - "Fine, 7 pm it is."): its subject is that time and nothing else.
    Not where the proposal asks when or offers a choice ("When are you free?",
    "Tuesday or Thursday?"): the answer then says what no one else did. "Hybrid is fine
    too." says what the speaker accepts."""
    match = _AGREED.match(clause.strip())
    if match is None:
        return False
    when = digits(match.group("when"))
    rest = when
    for value in values(when):
        rest = rest.replace(value.text, " ", 1)
    days = _ORDINAL_DAY.findall(rest)
    rest = _ORDINAL_DAY.sub(" ", rest)
    if not all(word.lower() in _TIME_WORDS for word in re.findall(r"[\w:]+", rest)):
        return False
    said = [v for v in values(when) if v.kind in ("time", "weekday", "date")]
    if (not said and not days) or _CHOICE.search(proposal):
        return False
    offered = values(digits(proposal))
    return all(any(same(v, o) for o in offered) for v in said) and all(
        _day_of(d, offered) for d in days
    )


#: A day of the month said alone ("the 15th", "twelfth" once read as "12th").
_ORDINAL_DAY = re.compile(r"\b(?:[1-9]|[12]\d|3[01])(?:st|nd|rd|th)\b", re.I)
#: A proposal that asks when, or offers more than one time.
_CHOICE = re.compile(r"\b(?:when|what time|which day|or)\b", re.I)


def _day_of(ordinal: str, offered: tuple[Value, ...]) -> bool:
    """Whether a date ``offered`` falls on the day ``ordinal`` says ("15th")."""
    day = int(ordinal.rstrip("stndrhSTNDRH"))
    return any(v.kind == "date" and v.canonical.endswith(f"-{day:02d}") for v in offered)


def without_pleasantry(text: str) -> str:
    """``text`` without the pleasantries and greetings that open it ("Hi! Thanks, I moved
    to Oslo." -> "I moved to Oslo."); all of it where it is nothing else."""
    while (opener := _PLEASANTRY_OPENER.match(text)) and opener.end() < len(text):
        text = text[opener.end() :]
    return text


_CONNECTOR = re.compile(r";\s+|,\s+(?:and|but)\s+|\s+and\s+|,\s+|\s+[-\u2013\u2014]\s+|\u2014")
_PROTECTED = re.compile(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|\([^)]*\)|\[[^\]]*\]")
_MARKER = re.compile(r"\[[^\]\n]{1,60}\]")
_CONTRACTION = re.compile(r"(?:i|we|you|he|she|it|they|that|there|who)'(?:s|re|ve|ll|d|m)")
_WORD = re.compile(r"[A-Za-z0-9][\w'\u2019-]*")

PRONOUNS = frozenset("i we you he she it they this that these those there who".split())
DETERMINERS = frozenset(
    "the a an his her its their our my your this that these those each every some many "
    "most all no both several".split()
)
#: Words that open a clause that cannot stand alone ("When I moved, ...").
SUBORDINATORS = frozenset(
    "when whenever if unless because since as while whereas although though after before "
    "until till once whether which who where that so".split()
)
_SINGULAR_SUBJECTS = frozenset("he she it this that who which".split())
#: Subjects whose verb takes no -s: a lowercase word right after one is read as a verb.
_PLURAL_SUBJECTS = frozenset("i we you they".split())
_NOT_VERBS = frozenset(
    "also still just only never always often really usually now then too all both".split()
)
_LEAD_ADVERBS = frozenset(
    "then later also now today thus therefore still afterwards meanwhile finally".split()
)
AUXILIARIES = frozenset(
    "is are was were be been being am has have had will would can could shall should "
    "may might must do does did isn't aren't wasn't weren't hasn't haven't hadn't won't "
    "can't couldn't doesn't didn't don't".split()
)
IRREGULAR_PAST = frozenset(
    "made built won lost became began wrote found gave took went came grew led ran sold "
    "bought held left met paid said saw told knew thought brought kept fell rose stood "
    "sat spoke drove flew fought taught caught sent spent meant felt heard got "
    "chose drew ate hid rode rang sang swam threw wore broke froze shook quit".split()
)


def clause_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of each clause of the sentence ``text[start:end]``, in order.

    The words are read once (linear in the sentence's length, whatever its commas)."""
    end = len(text) if end is None else end
    protected = [m.span() for m in _PROTECTED.finditer(text, start, end)]
    found = [
        (m.group(0), m.start()) for m in _WORD.finditer(_MARKER.sub(_blank, text[:end]), start)
    ]
    tokens = [w for w, _ in found]
    verbs = [is_verb(tokens, i) for i in range(len(tokens))]
    spans: list[tuple[int, int]] = []
    clause_start, first = start, 0  # the clause's first word
    at, verb_since = 0, False  # words before the connector, and a verb among the clause's
    for match in _CONNECTOR.finditer(text, start, end):
        while at < len(found) and found[at][1] < match.start():
            verb_since = verb_since or verbs[at]
            at += 1
        if any(a <= match.start() < b for a, b in protected):
            continue
        after = at  # the first word after the connector ("and" is part of ", and ")
        while after < len(found) and found[after][1] < match.end():
            after += 1
        right = tokens[after : after + 8]
        if match.group(0).strip() == ",":  # a bare comma: a splice, not a list or an aside
            if first >= at or tokens[first].lower() in SUBORDINATORS:
                continue
            if tokens[at - 1][:1].isdigit():  # "On May 3, 2021, ..."
                continue
        if verb_since and (starts_clause(right) or _asks(right)):
            spans.append(strip_span(text, clause_start, match.start()))
            clause_start, first, verb_since = match.end(), after, False
    spans.append(strip_span(text, clause_start, end))
    return [(s, e) for s, e in spans if e > s]


def _blank(marker: re.Match[str]) -> str:
    """A citation marker blanked out, offsets kept."""
    return " " * len(marker.group(0))


def _asks(found: list[str]) -> bool:
    """A request of its own ("..., please remember that"), whatever its subject."""
    return bool(found) and found[0].lower() in ("please", "pls", "kindly")


def words(text: str) -> list[str]:
    """The words of ``text``, citation markers left out."""
    return _WORD.findall(_MARKER.sub(" ", text))


def is_subject(word: str) -> bool:
    """Whether ``word`` may open a clause as its subject."""
    lower = word.lower()
    return (
        lower in PRONOUNS
        or lower in DETERMINERS
        or word[0].isupper()
        or word[0].isdigit()
        or _CONTRACTION.fullmatch(lower.replace("\u2019", "'")) is not None
    )


def starts_clause(found: list[str]) -> bool:
    """A subject first (after an optional adverb such as "then") and a verb soon after."""
    if found and found[0].lower() in _LEAD_ADVERBS:
        found = found[1:]
    if len(found) < 2 or not is_subject(found[0]):
        return False
    return any(is_verb(found, i) for i in range(min(len(found), 6)))


def has_verb(found: list[str]) -> bool:
    """Whether some word of ``found`` reads as a verb."""
    return any(is_verb(found, i) for i in range(len(found)))


def is_verb(found: list[str], i: int) -> bool:
    """Whether ``found[i]`` reads as a verb where it stands."""
    word = found[i].lower().replace("\u2019", "'")
    if word in IRREGULAR_PAST or (word in AUXILIARIES and found[i][0].islower()):
        return True  # a capital "May" or "Will" is a name, not an auxiliary
    if _CONTRACTION.fullmatch(word):
        return True  # "it's", "they're": subject and verb in one word
    if len(word) > 3 and word.endswith("ed"):
        return True
    if i >= 1 and found[i - 1].lower() in _PLURAL_SUBJECTS and found[i].isalpha():
        return found[i].islower() and word not in _NOT_VERBS  # "I work", "they live"
    if found[i][0].islower() and len(word) > 2 and word.endswith("s") and not word.endswith("ss"):
        if i >= 1 and (found[i - 1].lower() in _SINGULAR_SUBJECTS or found[i - 1][0].isupper()):
            return True
        if any(found[j].lower() in DETERMINERS for j in range(max(0, i - 3), i - 1)):
            return True  # "the price rises", "the reindex migration lands"
    return False
