"""Candidate facts from messages: the extractor protocol and the embedded extractor.

The embedded extractor needs no network and no language model. It reads the
user's turns sentence by sentence and keeps plain statements: a first-person
statement is resolved to its speaker ("I'm allergic to peanuts" from Alice becomes
"Alice is allergic to peanuts."), a statement about a named person is kept as said.
Questions, requests, pleasantries, hedged or conditional sentences, and anything
said about "you" or "we" are skipped. It finds less than an LLM; it never adds a
word that is not a rewrite of the speaker's own, and a sentence it cannot rewrite
cleanly is skipped, not guessed at. Every candidate names the message and the exact
sentence it came from, which the gate then checks it against.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from memstore.conversations.messages import Message


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact an extractor proposes, with where it came from."""

    statement: str
    #: (name, kind, role) of each member; the first is the fact's subject.
    members: tuple[tuple[str, str, str], ...]
    #: Index of the message the statement came from.
    message: int
    #: The exact text of that message the statement rewrites (cited as evidence).
    quote: str
    relation: str | None = None
    #: Other messages the statement also rests on (an LLM may combine turns).
    also: tuple[int, ...] = field(default=())
    #: When it starts to hold, where the extractor knows (else the message's timestamp).
    valid_from: datetime | None = None


@runtime_checkable
class Extractor(Protocol):
    """Turns a conversation into candidate facts."""

    name: str

    def extract(self, messages: Sequence[Message]) -> list[Candidate]: ...


def fact_of(candidate: Candidate, messages: Sequence[Message], context_turns: int) -> dict:
    """The fact a candidate asks the store to write, with its turn cited."""
    source = messages[candidate.message]
    earlier = range(max(0, candidate.message - context_turns), candidate.message)
    others = [i for i in (*candidate.also, *earlier) if i != candidate.message]
    evidence = [{"text": source.rendered(), "source": "conversation"}]
    evidence += [{"text": messages[i].rendered(), "source": "conversation"} for i in others]
    citations = [{"evidence": 0, "quote": candidate.quote}]
    citations += [{"evidence": n + 1} for n, i in enumerate(others) if i in candidate.also]
    fact: dict[str, Any] = {
        "statement": candidate.statement,
        "members": [{"name": n, "kind": k, "role": r} for n, k, r in candidate.members],
        "relation": candidate.relation,
        "evidence": evidence,
        "citations": citations,
    }
    valid_from = candidate.valid_from or source.timestamp
    if valid_from is not None:
        fact["valid_from"] = valid_from
    return fact


_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d[\d,.:/-]*")
_PLEASANTRY = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|nice|bye|good (?:morning|night"
    r"|evening|afternoon)|yes|no|yep|nope|lol|haha|sounds good|got it|perfect|awesome)\b",
    re.I,
)
#: Sentences opening with these ask or tell the listener to do something.
_REQUEST = re.compile(
    r"^(?:please|can|could|would|will|do|does|did|is|are|should|shall|remind|tell|let|help|"
    r"find|show|give|make|send|book|add|remember|note|check|what|who|where|when|why|how|which)\b",
    re.I,
)
#: Hedged, conditional or second-hand sentences are not memories to write as fact.
_HEDGE = re.compile(
    r"\b(?:if|maybe|perhaps|might|probably|possibly|unless|whether|i think|i guess|i suppose|"
    r"i wonder|i'm not sure|not sure|i believe|i hope|i wish|i doubt|supposedly|apparently)\b",
    re.I,
)
#: Other parties a sentence may be about; the extractor cannot tell whom they mean.
_AMBIGUOUS = re.compile(
    r"\b(?:you|your|yours|yourself|we|our|ours|us|ourselves|they|them|their|he|she|him|her|"
    r"his|hers|it|its|this|that|these|those)\b",
    re.I,
)
#: Openers that carry no fact ("Sorry, I should have said:", "Just so you know,", "Actually
#: I ..."): taken off before a sentence is read, so they neither name its subject nor hide
#: it (the cited quote keeps them).
_OPENER = re.compile(
    r"^(?:(?:sorry|actually|oh|oops|ah|well|also|so|anyway|btw|by the way|correction|update|"
    r"one more thing|i mean|i meant|i should have said|to be clear|just so you know|"
    r"for the record|fyi)\s*[,:;]\s*|(?:actually|also|so|oh|and|but|anyway)\s+(?=i\b|i'|my\b))+",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.I)
_MODALS = frozenset(
    "can could will would should must might may shall can't cannot won't wouldn't shouldn't "
    "couldn't mustn't didn't wasn't weren't hadn't".split()
)
_ADVERBS = frozenset(
    "never always usually often really also still just only sometimes rarely already even "
    "mostly finally recently now no longer".split()
)
#: Common irregular past tenses (kept as they are after a third-person subject).
_PAST = frozenset(
    "went had was got made took saw left met bought came began ran ate drank wrote gave found "
    "told thought lost became felt kept sold spent built taught caught brought fell flew grew "
    "knew quit won wore broke chose drove forgot heard hid held hurt led lent paid put rode "
    "rang sent set shut sang sat slept spoke stood stole swam threw understood woke".split()
)
_IRREGULAR_PRESENT = {"have": "has", "do": "does", "go": "goes", "am": "is", "be": "is"}
_NOT_NAMES = frozenset(
    "I The A An My This That These Those It He She They We You There Here Today Tomorrow "
    "Yesterday On In At For And But Or So Also Then Now Our Your His Her Their Its Just "
    "Last Next Every Each Some No Not Yes Oh Well Anyway Actually Btw".split()
)
_WEEKDAYS = frozenset("Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split())
_MONTHS = frozenset(
    "January February March April May June July August September October November December".split()
)
#: Relations the reconciler treats as single-valued, found by their verbs.
_RELATIONS = (
    ("lives_in", re.compile(r"\b(?:lives|is living|now lives|moved|has moved) (?:in|to)\b")),
    ("works_at", re.compile(r"\b(?:works|is working|now works) (?:at|for)\b")),
)


def sentences_of(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, surrounding spaces left out."""
    spans = []
    for m in _SENTENCE.finditer(text):
        start, end = m.start(), m.end()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end and any(c.isalnum() for c in text[start:end]):
            spans.append((start, end))
    return spans


def third_person(verb: str) -> str:
    """``verb`` as it follows "he" or "she" ("live" -> "lives", "go" -> "goes")."""
    low = verb.lower()
    if low in _IRREGULAR_PRESENT:
        return _IRREGULAR_PRESENT[low]
    if low in _MODALS or low in _PAST or low.endswith("ed") or low.endswith("n't"):
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def resolve_first_person(sentence: str, speaker: str) -> str | None:
    """The sentence with "I", "me" and "my" replaced by ``speaker``; None where a first-
    person word is left that this cannot rewrite."""
    text = sentence.replace("\u2019", "'")
    possessive = f"{speaker}'s"

    def subject(m: re.Match[str]) -> str:
        adverbs, verb, negation = m.group(1), m.group(2), m.group(3) or ""
        if verb.lower() == "don't":
            verb = "doesn't"
        elif verb.lower() == "do" and negation:
            verb = "does"
        else:
            verb = third_person(verb)
        return f"{speaker}{adverbs} {verb}{negation}"

    contractions = [
        (r"\bI'm\b", f"{speaker} is"),
        (r"\bI am\b", f"{speaker} is"),
        (r"\bI've\b", f"{speaker} has"),
        (r"\bI'd\b", f"{speaker} would"),
        (r"\bI'll\b", f"{speaker} will"),
        (r"\bI was\b", f"{speaker} was"),
    ]
    for pattern, repl in contractions:
        text = re.sub(pattern, repl, text)
    adverbs = "|".join(sorted(_ADVERBS))
    text = re.sub(rf"\bI((?:\s+(?:{adverbs}))*)\s+([A-Za-z']+)(\s+not\b)?", subject, text)
    text = re.sub(r"\b(?:my|mine)\b", possessive, text, flags=re.I)
    text = re.sub(r"\b(?:me|myself)\b", speaker, text)
    if _FIRST_PERSON.search(text):
        return None
    text = text.strip()
    if text.startswith(speaker[0].lower() + speaker[1:]) and speaker[0].islower():
        text = speaker[0].upper() + text[1:]
    return text if text.endswith((".", "!")) else text + "."


def _entities(statement: str, speaker: str | None) -> list[tuple[str, str, str]]:
    """Members: the speaker first (where the statement is theirs), then names and times."""
    found: list[tuple[str, str, str]] = []
    seen: set[str] = set()

    def add(name: str, kind: str, role: str) -> None:
        if name.lower() not in seen:
            seen.add(name.lower())
            found.append((name, kind, role))

    if speaker is not None:
        add(speaker, "person", "subject")
    words = list(re.finditer(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", statement))
    for m in words:
        name = m.group(0).removesuffix("'s")
        parts = name.split()
        while parts and parts[0] in _NOT_NAMES:
            parts = parts[1:]
        if not parts:
            continue
        name = " ".join(parts)
        if speaker is not None and name.lower() in {speaker.lower(), "the user"}:
            continue
        if name.removesuffix("s") in _WEEKDAYS or name.split()[0] in _MONTHS:
            add(name, "time", "when")
        else:
            add(name, "entity", "subject" if not found else "object")
    for m in re.finditer(r"\b\d{4}-\d{2}-\d{2}\b", statement):
        add(m.group(0), "time", "when")
    return found


class EmbeddedExtractor:
    """Rule-based, offline: plain statements from the user's turns (see the module)."""

    name = "embedded"

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        out: list[Candidate] = []
        seen: set[str] = set()
        for index, message in enumerate(messages):
            if message.role != "user":
                continue
            for start, end in sentences_of(message.content):
                candidate = self._candidate(message, index, message.content[start:end])
                if candidate is not None and candidate.statement.lower() not in seen:
                    seen.add(candidate.statement.lower())
                    out.append(candidate)
        return out

    def _candidate(self, message: Message, index: int, sentence: str) -> Candidate | None:
        plain = _OPENER.sub("", sentence.strip().replace("\u2019", "'"))
        words = _WORD.findall(plain)
        if len(words) < 3 or plain.endswith("?") or _PLEASANTRY.match(plain):
            return None
        if _REQUEST.match(plain) or _HEDGE.search(plain) or _AMBIGUOUS.search(plain):
            return None
        first = bool(_FIRST_PERSON.search(plain))
        if first:
            statement = resolve_first_person(plain, message.speaker)
        elif plain[0].isupper() and words[0] not in _NOT_NAMES:
            statement = plain if plain.endswith((".", "!")) else plain + "."
        else:
            return None
        if statement is None:
            return None
        statement = statement.rstrip("!") + ("" if statement.endswith(".") else ".")
        members = _entities(statement, message.speaker if first else None)
        if not members:
            return None
        relation = next((name for name, verb in _RELATIONS if verb.search(statement)), None)
        return Candidate(statement, tuple(members), index, sentence.strip(), relation)
