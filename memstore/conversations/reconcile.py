"""Which active facts a new memory replaces: single-valued relations, and contradictions.

A candidate replaces an active fact about the same subject when

- both carry a relation declared single-valued (``lives_in``: one can live in one
  place at a time), both are said of the subject itself (its first member, which
  each statement starts with, not in the possessive: "Maya's sister Ines lives in
  Porto" is not where Maya lives, and moving her sister does not move Maya) and their
  statements differ, or
- both are a field of the same record read from a tool's result ("Ticket M-902 unit:
  3B." and, later, "Ticket M-902 unit: 3C."): a field holds one value at a time, or
- the candidate is the fact said again with another value (a number, a date, a time)
  in a message that takes something back ("Two months. Sorry, I checked my contract,
  it's three months."; "Around 400 hosts. Sorry, it's closer to 600 hosts since the
  migration.": hedge words aside, the new one may say a little more after it), or
- the gate, reading the old fact against the candidate's source message, finds it
  contradicted (p1 below the contradiction threshold and below p0, or a check that
  refutes it: "I'm no longer vegetarian" against "Maya is vegetarian").

The same reading finds held facts (``unverified``) that a later message verifies: they
are corroborated (``memstore.reverify.reviews``), made ``verified`` with the audit chain saying so.

Identical statements are not conflicts: the store deduplicates them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

from gate import Verdict, VerdictStatus
from language.values import MONTHS, WEEKDAYS
from memstore import defaults
from memstore.conversations.corrections import short
from memstore.conversations.extractors import Candidate
from memstore.conversations.storelike import StoreLike
from memstore.errors import NotFound
from memstore.names import normalize_key
from memstore.schemas import FactPublic
from memstore.storage.tables import FactStatus

#: Relations where a newer fact replaces an older one about the same subject
#: (``memstore.defaults``); pass ``single_valued=`` to extend it.
SINGLE_VALUED: frozenset[str] = frozenset(defaults.SINGLE_VALUED)
#: Relations said of a subject in the possessive, and the words that say them ("Maya's
#: manager is Priya"; not "Maya's sister's manager is ...").
POSSESSIVE: dict[str, tuple[str, ...]] = {
    "manager": ("manager", "boss", "supervisor", "line manager"),
}
#: At most this many active facts about the subject are read against the new evidence.
MAX_COMPARED = 20


def same_statement(a: str, b: str) -> bool:
    return normalize_key(a.rstrip(".")) == normalize_key(b.rstrip("."))


def said_of(statement: str, name: str, relation: str | None = None) -> bool:
    """Whether ``statement`` is said of ``name`` itself: it starts with the name, and
    not as a possessive ("Maya's sister ..."), unless ``relation`` is one said so."""
    key, subject = normalize_key(statement), normalize_key(name)
    words = POSSESSIVE.get(relation or "", ())
    if any(key.startswith(f"{subject}'s {word} is ") for word in words):
        return True
    return key.startswith(subject + " ")


def active_about(store: StoreLike, subject: str) -> list[FactPublic]:
    """The subject's ``MAX_COMPARED`` newest active facts, newest first (none if the store
    does not know it)."""
    try:
        return store.facts_about(subject, limit=MAX_COMPARED)
    except NotFound:
        return []


def replaced_by(
    store: StoreLike,
    candidate: Candidate,
    source: str,
    *,
    single_valued: Collection[str] = SINGLE_VALUED,
    corroborated: dict[str, Verdict] | None = None,
    olds: Sequence[FactPublic] | None = None,
) -> tuple[list[FactPublic], dict[str, str]]:
    """The active facts ``candidate`` replaces, newest first, and why each one. Held
    facts (``unverified``) that ``source`` verifies, written from other evidence, go in
    ``corroborated`` (by id, with the verdict) when it is given. ``olds``: the subject's
    ``active_about``, where the caller read it already."""
    subject = candidate.members[0][0]
    found: list[FactPublic] = []
    why: dict[str, str] = {}
    olds = active_about(store, subject) if olds is None else olds
    own = {store.entity(subject).id} if olds else set()
    for old in olds:
        reason, verdict = _judged(store, candidate, source, old, own, single_valued)
        if (
            verdict is not None
            and corroborated is not None
            and old.status == FactStatus.UNVERIFIED
            and verdict.outcome == "verified"
            and not _written_from(store, old, source)
        ):
            corroborated[old.id] = verdict
        if reason is not None:
            found.append(old)
            why[old.id] = reason
    return found, why


def changes_any(
    store: StoreLike,
    candidate: Candidate,
    source: str,
    olds: Sequence[Any],
    own: set[str],
    single_valued: Collection[str] = SINGLE_VALUED,
) -> bool:
    """Whether ``replaced_by`` would find one of ``olds`` (facts about the subject not
    written yet, read as stored facts are: ``statement``, ``relation``, ``members``
    with their ``entity_id`` in the ids ``own`` holds for the subject, and ``cited``,
    the texts they cite), or read one verified that ``source`` did not write (it may
    be held, and then corroborated)."""
    for old in olds:
        reason, verdict = _judged(store, candidate, source, old, own, single_valued)
        if reason is not None:
            return True
        verified = verdict is not None and verdict.outcome == "verified"
        if verified and not any(cites(text, source) for text in old.cited):
            return True
    return False


def _judged(
    store: StoreLike,
    candidate: Candidate,
    source: str,
    old: Any,
    own: set[str],
    single_valued: Collection[str],
) -> tuple[str | None, Verdict | None]:
    """Why ``candidate`` (said in ``source``) replaces ``old`` (None: it does not), and
    the gate's verdict on ``old`` read against ``source`` where it was asked."""
    if same_statement(old.statement, candidate.statement):
        return None, None
    subject = candidate.members[0][0]
    record = candidate.members[0]
    field = _field(candidate.statement, record[0]) if record[1] == "record" else None
    if (
        field is not None
        and old.members[0].kind == "record"
        and _field(old.statement, old.members[0].name) == field
    ):
        return "a tool's later result gives this field another value", None
    if _SELF_CORRECTION.search(source) and _value_restated(old.statement, candidate.statement):
        # "Two months. Sorry, I checked, it's three months."
        return f'said again with another value: "{short(source)}"', None
    single = candidate.relation in single_valued and said_of(
        candidate.statement, subject, candidate.relation
    )
    if (
        single
        and old.relation == candidate.relation
        and bool(old.members)
        and old.members[0].entity_id in own
        and said_of(old.statement, old.members[0].name, old.relation)
    ):
        return f"{candidate.relation} holds one value at a time", None
    if not _shares_words(old.statement, source, subject):
        return None, None  # the message says nothing of what it states: nothing to read
    if _UNRESOLVED.search(old.statement):
        return None, None  # whom "it" or "they" meant is not known: nothing to contradict
    verdict = store.verify_claim(old.statement, source)
    if verdict.status is not VerdictStatus.CONTRADICTED:
        return None, verdict
    return (
        f"the new message contradicts it: {verdict.reason}"
        if verdict.check  # a check named the mistake
        else f"the new message contradicts it (p1 {verdict.p1:.2f} < p0 {verdict.p0:.2f})"
    ), verdict


#: Words a speaker takes back what they just said with.
_SELF_CORRECTION = re.compile(
    r"\b(?:sorry|actually|i mean|i misspoke|correction|my mistake|scratch that|make that|"
    r"wait|rather)\b",
    re.I,
)
#: The most words a restated value may take, before and after.
MAX_VALUE_WORDS = 3


def _value_restated(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` said again with another value: the same words around
    one run of at most ``MAX_VALUE_WORDS`` words, a value (a number, a date, a time) in
    each ("Ravi's notice period is two months." and "... is three months.")."""
    a = re.findall(r"[\w'-]+", old.lower())
    b = re.findall(r"[\w'-]+", new.lower())
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    was, now = a[head : len(a) - tail], b[head : len(b) - tail]
    if head < 2 or not was or not now:
        return False
    if max(len(was), len(now)) <= MAX_VALUE_WORDS and all(
        _VALUE_WORD.fullmatch(w) for w in was + now
    ):
        return True
    # "Lena monitors around 400 hosts." and "... closer to 600 hosts since the last
    # migration.": a value said about (its hedge words aside), then the same words, the
    # new one saying a little more after them
    i, j = _past_value(a, head), _past_value(b, head)
    if i is None or j is None or a[head:i] == b[head:j]:
        return False
    rest_a, rest_b = a[i:], b[j:]
    return rest_b[: len(rest_a)] == rest_a and len(rest_b) - len(rest_a) <= MAX_ADDED_WORDS


#: Words that hedge a value ("around 400", "closer to 600", "just over two").
_ABOUT = frozenset(
    """about around roughly nearly almost approximately approx some just over under
    closer close nearer near to more less than at least most maybe""".split()
)
#: The most words the new statement may add after the value and the words it shares.
MAX_ADDED_WORDS = 6


def _past_value(words: list[str], start: int) -> int | None:
    """Where the value starting at ``start`` (hedge words, then at most
    ``MAX_VALUE_WORDS`` value words) ends; None where none starts there."""
    i = start
    while i < len(words) and words[i] in _ABOUT:
        i += 1
    end = i
    while end < len(words) and end - i < MAX_VALUE_WORDS and _VALUE_WORD.fullmatch(words[end]):
        end += 1
    return end if end > i else None


#: A word that is (part of) a value: digits ("3B", "18:00"), a number or ordinal in
#: words, a month, a weekday, am or pm.
_VALUE_WORD = re.compile(
    r"[\w:.-]*\d[\w:.-]*|(?:a|an|half|dozen|hundred|thousand|million|am|pm|"
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|first|second|third|fifth|eighth|ninth|twelfth|twentieth|thirtieth)"
    r"(?:th|s)?|" + "|".join(sorted(m.lower() for m in (*MONTHS, *WEEKDAYS))) + r")"
)


def _field(statement: str, record: str) -> str | None:
    """The "<record> <key>" of a statement read from a tool's field ("Order 88213 status:
    shipped."), in normalised words; the key is read after the record's name, which may
    hold a colon of its own ("Event Book club: Klara and the Sun date: 2026-12-14.")."""
    rest = statement[len(record) :] if statement.startswith(record) else statement
    key, colon, _value = rest.partition(": ")
    if not colon:
        return None
    return normalize_key(f"{record} {key}" if rest is not statement else key)


_WORDS = re.compile(r"\b[a-z0-9][a-z0-9-]{3,}\b(?!')")
#: A pronoun kept as said ("Priya says it never arrived."): the fact names no one thing.
_UNRESOLVED = re.compile(r"\b(?:it|its|they|them|their|he|him|his|she|her|we|us|our)\b(?!-)")
#: Words too common to say two texts speak of the same thing.
_COMMON = frozenset(
    """that this with from have has had been were will would about there their they
    them what when where which your just also says said user""".split()
)


def _shares_words(statement: str, message: str, subject: str) -> bool:
    """Whether ``message`` uses a word of ``statement`` (of four letters or more, not its
    subject's name, not a common word): without one it cannot contradict or confirm it."""
    own = {w for w in _WORDS.findall(subject.lower())}
    words = {w for w in _WORDS.findall(statement.lower()) if w not in _COMMON} - own
    said = set(_WORDS.findall(message.lower()))
    return bool(words & said) or any(w[:5] in {s[:5] for s in said} for w in words if len(w) > 5)


def _written_from(store: StoreLike, fact: FactPublic, source: str) -> bool:
    """Whether ``fact`` cites ``source`` itself (then it does not corroborate it)."""
    return any(
        cites(store.get_evidence(citation.evidence_id).text, source) for citation in fact.citations
    )


def cites(text: str, source: str) -> bool:
    """Whether the cited ``text`` is ``source`` (one holds the other, spacing aside)."""
    said, text = " ".join(source.split()), " ".join(text.split())
    return text in said or said in text
