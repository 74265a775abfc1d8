"""Candidate facts from messages: the extractor protocol and the embedded extractor.

The embedded extractor needs no network and no language model. It reads the
user's turns through the ``language`` layer, sentence by sentence (pysbd) and clause
by clause, and keeps plain statements: a first-person statement is resolved to its
speaker ("I'm allergic to peanuts" from Alice becomes "Alice is allergic to
peanuts."); a statement about someone else is kept as the speaker's ("Alice says Bob
is ..."), reported speech with who said it. Questions, requests, pleasantries, replies
that only take a proposed time ("Thursday works."), talk about the conversation,
self-introductions, hedged or conditional sentences, and anything said about "you"
are skipped; "we" is the speaker's organisation where people of different ones talk
(``language.organisations``), else kept as said. A tool's result is read as fields
(``language.fields``): one statement per field of a named record. It finds less than
an LLM; it adds no word to the speaker's own but "says", "said" and the names that
"I", "we", "he", "she", "it" and "there" stand for, and a sentence it cannot rewrite
cleanly is skipped, not guessed at. Every candidate names the message
and the exact text it came from, which the gate then checks it against.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from language import resolve_first_person, sentence_spans
from language.answers import answered
from language.clauses import (
    PLEASANTRY,
    agrees_to_a_time,
    clause_spans,
    has_verb,
    without_pleasantry,
)
from language.fields import fields, identities, stated
from language.hedges import BELIEVE, UNSURE
from language.organisations import sides
from language.parsing import parse, parse_many, verb_in
from language.pronouns import (
    THIRD_PERSON,
    antecedent,
    place,
    resolve,
    resolve_it,
    resolve_there,
    thing,
)
from language.speakers import FIRST_PERSON, FIRST_PLURAL, resolve_first_plural
from memstore.conversations.messages import Message
from memstore.names import CONVERSATION_SOURCE


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
    #: Texts read with it as uncited context (the evidence of a fact it corrects).
    context: tuple[str, ...] = field(default=())
    #: Facts it replaces once admitted, by id, each with the reason.
    replaces: tuple[tuple[str, str], ...] = field(default=())


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
    evidence = [{"text": source.rendered(), "source": CONVERSATION_SOURCE}]
    evidence += [{"text": messages[i].rendered(), "source": CONVERSATION_SOURCE} for i in others]
    evidence += [{"text": text, "source": CONVERSATION_SOURCE} for text in candidate.context]
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


_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d[\d,.:/-]*")
#: Asides that close a sentence and say nothing of the world ("..., just so you know.").
_CLOSER = re.compile(
    r"\s*[,;\u2014-]\s*(?:just so you know|fyi|btw|by the way|for the record|"
    r"for what it's worth|if that helps|if you need it|if that matters|"
    r"(?:so |and )?(?:that's|that is|which is|it's) (?:fine|ok|okay|great|good|perfect|all))"
    r"\s*(?=[.!]*$)",
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
    r"\b(?:if|unless|whether|"
    + "|".join(UNSURE)
    + "|"
    + "|".join(f"i {verb}" for verb in BELIEVE)
    + r"|i'm not sure|not sure|i hope|i wish|would kill|would die|would love)\b",
    re.I,
)
#: Talk about the conversation itself: the speaker's slips, checks and changes of mind
#: ("I forgot", "I got the date wrong", "I just checked"), and asking for service ("I'd
#: like to book", "I need help with"); what they concern is said elsewhere.
_META = re.compile(
    r"^(?:i|we)\s+(?:just\s+|already\s+|also\s+|totally\s+|completely\s+)?(?:"
    r"forgot|forget|misremembered|misspoke|misread|mixed (?:it|them|that|things) up|"
    r"got (?:it|that|this|the [\w-]+|my [\w-]+|them) (?:wrong|mixed up)|changed (?:my|our) mind|"
    r"(?:double-)?checked|meant|mean|(?:would|'d) like to|need help|needs help|"
    r"want to (?:report|book|ask|check|know|change|cancel))\b"
    r"|^(?:i'm|i am|we're|we are) (?:(?:in|out)\W*$|so sorry\b)"
    r"|^(?:i'd|we'd|i would|we would) like to\b"
    r"|^count (?:me|us) (?:in|out)\b",
    re.I,
)
#: Openers of a statement about a thing ("The budget is ..."): kept as the speaker's.
_ARTICLES = frozenset("The A An".split())
#: Pronouns the extractor keeps as said in the speaker's statement ("we": the speaker
#: and others; "they", "it", "she" where no one was just named).
_UNNAMED = re.compile(
    r"\b(?:we|we're|we've|we'd|we'll|our|ours|us|ourselves|they|they're|they've|they'd|"
    r"they'll|them|their|theirs|he|she|him|her|his|hers|it|its|it's)\b",
    re.I,
)
_IT = re.compile(r"[Ii]t(?:'s|\s)")
_THERE = re.compile(r"\bthere\b", re.I)
#: Other parties a sentence may be about; the extractor cannot tell whom they mean.
_AMBIGUOUS = re.compile(
    r"\b(?:you|your|yours|yourself|we|our|ours|us|ourselves|they|them|their|he|she|him|her|"
    r"his|hers|it|its)\b"
    # "this", "that": the thing meant is elsewhere; "this sprint", "that day" name it
    r"|\b(?:this|that|these|those)\b(?=\s*(?:[.,;:!?)]|$|'s\b|is\b|was\b|are\b|were\b|"
    r"will\b|would\b|has\b|had\b|can\b|could\b|should\b|might\b|must\b|and\b|or\b|but\b|"
    r"to\b|for\b|in\b|on\b|at\b|with\b|from\b|by\b|of\b|as\b|too\b|again\b))",
    re.I,
)
#: Openers that carry no fact ("Sorry, I should have said:", "Just so you know,", "Actually
#: I ..."): taken off before a sentence is read, so they neither name its subject nor hide
#: it (the cited quote keeps them).
_OPENER = re.compile(
    r"^(?:(?:sorry|actually|oh no|oh dear|oh wait|oh|oops|ah|well|wait|hmm|right|also|so|"
    r"anyway|btw|by the way|(?:(?:one|a|quick|small|a quick|a small|just a)\s+)?"
    r"(?:correction|update)|my mistake|my bad|scratch that|"
    r"one more thing|i mean|i meant|i should have said|to be clear|just so you know|"
    r"for the record|fyi)\s*[,:;]\s*|(?:actually|also|so|oh|and|but|anyway|btw)\s+"
    r"(?=i\b|i'|my\b|it\b|it'|that's\b|we\b|we'|our\b))+",
    re.I,
)
#: A question that asserts what it asks about ("Did you know I adopted a puppy?": "know"
#: presupposes it): read as the statement it carries, where a clause with its own
#: subject follows (a pronoun, a possessive or a name), not a thing asked for ("Do you
#: know a dentist who ...?") or a question of its own ("Do you know where ...?").
_KNOWN = re.compile(
    r"^(?:did|do) you know(?: that)?\s+"
    r"(?=(?:i|we|he|she|they|it|my|our|his|her|their|its)\b|(?-i:[A-Z])(?!\w*\s+(?:who|that)\b))",
    re.I,
)


def _asserted(sentence: str) -> str:
    """``sentence`` as a statement where it is a question that asserts its content
    ("Did you know I adopted a puppy?" -> "I adopted a puppy."); else as it is."""
    known = _KNOWN.match(sentence)
    if known is None or not sentence.rstrip().endswith("?"):
        return sentence
    rest = sentence[known.end() :].rstrip().rstrip("?").rstrip()
    if not rest or not verb_in(rest):
        return sentence
    return rest[:1].upper() + rest[1:] + "."


_NOT_NAMES = frozenset(
    "I The A An My This That These Those It He She They We You There Here Today Tomorrow "
    "Yesterday On In At For And But Or So Also Then Now Our Your His Her Their Its Just "
    "Last Next Every Each Some No Not Yes Oh Well Anyway Actually Btw We're We've We'd We'll "
    "Us Ours It's He's She's They're They've They'd Them Him Hers Theirs".split()
)
_WEEKDAYS = frozenset("Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split())
_MONTHS = frozenset(
    "January February March April May June July August September October November December".split()
)
#: Relations the reconciler may treat as single-valued (``reconcile.SINGLE_VALUED``), each
#: found by the phrasings below in a statement said of its subject. A phrasing that
#: ends one value ("no longer vegetarian", "quit Acme", "moved from Boston") names the
#: same relation as one that states it: the newer statement replaces the older.
RELATIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "lives_in",
        re.compile(
            r"\b(?:lives|is living|is based|has lived|(?:has )?(?:moved|relocated)(?: back)?)"
            r"(?: from [^,;]+?)? (?:in|to)\b|\bmoved (?:away )?from\b"
        ),
    ),
    (
        "works_at",
        re.compile(
            r"\b(?:works|is working|has worked|is employed|started|began|is now)"
            r"(?: as (?:an? )?[\w-]+(?: [\w-]+)?)? (?:at|for)\b"
            r"|\b(?:quit|left|joined|resigned from|was laid off from|was fired from)"
            r" (?:(?:my|her|his|the) job at )?[A-Z]"
        ),
    ),
    (
        "diet",
        re.compile(
            r"\b(?:is|was|became|has been|is no longer|is not|isn't)(?: (?:a|an|now|still|"
            r"strictly|fully|mostly))* (?:vegetarian|vegan|pescatarian|carnivore)s?\b"
            r"|\b(?:eats?|started eating|stopped eating|gave up|no longer eats|doesn't eat)"
            r" (?:meat|fish|dairy|eggs)\b"
        ),
    ),
    (
        "manager",
        re.compile(r"'s (?:manager|boss|supervisor|line manager) is\b|\breports to\b"),
    ),
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: Field keys (their last word) that hold handles, not facts: ids, links, hashes.
_OPAQUE_KEYS = frozenset(
    "id ids uuid guid url uri href link hash sha etag token checksum signature".split()
)
#: Keys that report the call's own action ("updated", "created", "ok") rather than a
#: property of the record; with a yes/no value they say nothing to remember.
_ACTION_DONE = re.compile(r"(?:\w+ )?(?:\w+ed|ok|success|succeeded|done)")
_YES_NO = frozenset("yes no true false 1 0".split())
#: Verbs of saying: "Bob said: ...", "Bob told me that ...".
_REPORTED = re.compile(
    r"^(?P<who>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*) (?:said|says|told me|tells me|mentioned|"
    r"claims|claimed|wrote|texted|messaged me|insists|insisted)(?P<direct>\s*:\s*|,\s*[\"\u201c]"
    r"|\s+[\"\u201c])?(?: that)?\s*(?P<what>.+?)[\"\u201d]?$"
)
#: Words that carry no fact of their own: a clause made only of these (and its speaker)
#: is talk about the conversation ("Wait, I need to correct something.").
_EMPTY_WORDS = frozenset(
    "a an the and or but so to of in on at for with about just really actually wait hold "
    "on ok okay need needs needed want wants wanted have has had got to be is am are was "
    "were do does did can could would should will shall may might must let me i my mine "
    "myself something anything everything nothing thing things stuff one more bit little "
    "correct correction fix change update add mention mentioned say said tell told ask "
    "clarify remember forgot forget note quick quickly again also earlier before here there "
    "now then this that it".split()
)


#: A name: capitalised words, which may hold abbreviations ("St. Mary's Hospital", "Dr.
#: Okafor") and end in a code: digits and one capital ("Flat 3B") or capitals and digits
#: ("Gate A2"), not a time or an amount ("Dr. Patel 2pm", "Tom 20GBP"); it starts a
#: word (not the "B" of "3B").
_NAME = re.compile(
    r"(?<![\w'-])[A-Z][\w'-]*(?:\.?\s+[A-Z][\w'-]*)*"
    r"(?:\s+(?:\d+[A-Z]|[A-Z]+-?\d+)\b(?!['\w-]))?"
)


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
    for m in _NAME.finditer(statement):
        name = m.group(0).removesuffix("'s")
        parts = name.split()
        while parts and (parts[0] in _NOT_NAMES or not parts[0][0].isupper()):
            parts = parts[1:]  # "The 15th", "It's 3C": a code names nothing alone
        if not parts:
            continue
        name = " ".join(parts)
        if speaker is not None and name.lower() in {speaker.lower(), "the user"}:
            continue
        if parts[0].removesuffix("s") in _WEEKDAYS or parts[0] in _MONTHS:
            add(name, "time", "when")
        else:
            add(name, "entity", "subject" if not found else "object")
    for m in re.finditer(r"\b\d{4}-\d{2}-\d{2}\b", statement):
        add(m.group(0), "time", "when")
    return found


#: Parts of speech a capitalised word has where it only opens a sentence ("Sorry
#: everyone, ...", "About 120 guests", "Two people"), not where it names something; an
#: adjective may name ("Italian food").
_NOT_NAME_POS = frozenset("ADP ADV AUX CCONJ DET INTJ NUM PART PRON SCONJ VERB".split())


def _without_openers(candidates: list[Candidate]) -> list[Candidate]:
    """``candidates`` without the one-word members that are no names: a word capitalised
    only because a sentence starts with it (the statement's first word, or the first
    after "says"), as the parse of the statement tags it; a code such as "AY1652"
    stays. A subject left out passes its role to the next named member."""
    doubtful = [c for c in candidates if any(_opens(c.statement, m) for m in c.members)]
    docs = dict(zip(doubtful, parse_many([c.statement for c in doubtful]), strict=True))
    out = []
    for candidate in candidates:
        doc = docs.get(candidate)
        if doc is None:
            out.append(candidate)
            continue
        tags = {t.text: t.pos_ for t in reversed(doc)}  # a word's first tag in the statement
        kept: list[tuple[str, str, str]] = []
        orphaned = False
        for name, kind, role in candidate.members:
            if _opens(candidate.statement, (name, kind, role)) and tags.get(name) in _NOT_NAME_POS:
                orphaned = orphaned or role == "subject"
                continue
            if orphaned and role == "object":
                role, orphaned = "subject", False
            kept.append((name, kind, role))
        out.append(replace(candidate, members=tuple(kept)))
    return out


def _opens(statement: str, member: tuple[str, str, str]) -> bool:
    """Whether ``member`` is one word that opens the statement or what it says someone
    says ("Amelia says About 120 guests."): where capitals tell nothing of names."""
    name, kind, _role = member
    if kind != "entity" or not name.isalpha():
        return False
    return statement.startswith(name + " ") or f" says {name} " in statement


class EmbeddedExtractor:
    """Rule-based, offline: plain statements from the user's turns (see the module)."""

    name = "embedded"

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        found: list[Candidate | None] = []
        # "Epic ONB-42" -> ("Onboarding redesign", the message that named it so)
        records: dict[str, tuple[str, int]] = {}
        speaking_for = _sides(messages)
        for index, message in enumerate(messages):
            if message.role == "tool":
                found += self._fields(message, index, records)
            elif message.role == "user":
                question, asked = _question(messages, index)
                side = speaking_for.get(message.speaker)
                proposal = _proposal(messages, index)
                asker = speaking_for.get(messages[index - 1].speaker) if question else None
                # a "do you ...?" from the other side may ask what the organisation does
                ours = side if side and asker and asker[0] != side[0] else None
                found += self._statements(message, index, question, asked, side, proposal, ours)
        out: list[Candidate] = []
        seen: set[str] = set()
        for candidate in found:
            if candidate is not None and candidate.statement.lower() not in seen:
                seen.add(candidate.statement.lower())
                out.append(candidate)
        return _without_openers(out)

    def _statements(
        self,
        message: Message,
        index: int,
        question: str | None = None,
        asked: str = "",
        side: tuple[str, tuple[int, ...]] | None = None,
        proposal: str = "",
        asked_of: tuple[str, tuple[int, ...]] | None = None,
    ) -> list[Candidate | None]:
        """A user turn's candidates, clause by clause (None where a clause holds none).
        ``question``: what the turn before asked, which its first sentence may answer
        without a verb ("About 20 km a week."); ``asked``: the questions that turn ends
        with, where "she" may have been named ("How is Dana? Still at the hospital?");
        ``side``: the organisation the speaker speaks for, which their "we" and "our"
        mean, and the messages where the sides named theirs (``_sides``); ``proposal``:
        what others said just before, which a reply may only agree to (``_proposal``);
        ``asked_of``: the speaker's side where the question came from the other side."""
        text = message.content
        return [
            self._candidate(
                message,
                index,
                text[c_start:c_end],
                question,
                text[:c_start],
                n == 0,
                asked,
                side,
                proposal,
                asked_of,
            )
            for n, (start, end) in enumerate(sentence_spans(text))
            if self._may_hold_facts(text[start:end])
            for c_start, c_end in clause_spans(text, start, end)
        ]

    @staticmethod
    def _fields(
        message: Message, index: int, records: dict[str, tuple[str, int]]
    ) -> list[Candidate]:
        """A tool's result read as fields (``language.fields``): one statement per field,
        "<record> <key>: <value>.", citing the span that states it. The field that names
        the record says nothing more, nor do ids, links and hashes. A record an earlier
        result named otherwise keeps that name (``records``: {"epic": "ONB-42", "title":
        "Onboarding redesign"}, then {"epic": "ONB-42", "due": ...}: both "Onboarding
        redesign"), so a changed value replaces the old one; the result that named it
        is cited too, for the name is said there."""
        out: list[Candidate] = []
        read = fields(message.content)
        for other, name in identities(read).items():
            records.setdefault(other, (name, index))
        for found in read:
            named, at = records.get(found.record, (found.record, index))
            found = replace(found, record=named)
            also = (at,) if at != index else ()
            value = found.value.strip()
            if not value or value.lower() in found.record.lower() or len(value) > 200:
                continue
            if found.end <= found.start:
                continue  # not found as written: nothing to cite
            if found.key.rsplit(" ", 1)[-1] in _OPAQUE_KEYS:
                continue  # an identifier or a link: a handle, not a fact to recall
            if _ACTION_DONE.fullmatch(found.key) and value.lower() in _YES_NO:
                continue  # "updated: true": what the tool just did, not the world
            quote = message.content[found.start : found.end]
            statement = stated(found.record, found.key, value)
            members = [(found.record, "record", "subject")]
            if _DATE.fullmatch(value[:10]):
                members.append((value[:10], "time", "when"))
            elif value[:1].isupper() and len(value.split()) <= 5 and value != found.record:
                members.append((value, "entity", "object"))
            out.append(Candidate(statement, tuple(members), index, quote, also=also))
        return out

    @staticmethod
    def _may_hold_facts(sentence: str) -> bool:
        """Questions and hedged or conditional sentences hold no fact in any clause."""
        plain = _asserted(_OPENER.sub("", sentence.strip().replace("\u2019", "'")))
        return not (plain.endswith("?") or _HEDGE.search(plain))

    def _candidate(
        self,
        message: Message,
        index: int,
        clause: str,
        question: str | None = None,
        before: str = "",
        first: bool = True,
        asked: str = "",
        side: tuple[str, tuple[int, ...]] | None = None,
        proposal: str = "",
        asked_of: tuple[str, tuple[int, ...]] | None = None,
    ) -> Candidate | None:
        """The clause's candidate, if it states one. ``question``: what the turn before
        asked, which the clause may answer without a verb ("Two months." to "What's your
        notice period?" says "Ravi's notice period is two months."); ``before``: the
        turn's text before it, where "he" or "she" may have been named; ``first``: it is
        in the turn's first sentence; ``asked``: the questions the turn before ended with
        (``question`` the last of them); ``side``, ``proposal``, ``asked_of``: see
        ``_statements``."""
        plain = clause.strip().replace("\u2019", "'")
        plain = without_pleasantry(plain)
        plain = _asserted(_OPENER.sub("", plain)).rstrip(",;: ")
        plain = _CLOSER.sub("", plain)
        if plain.split(" ", 1)[0] in ("the", "a", "an"):  # "Sorry, correction: the ..."
            plain = plain[0].upper() + plain[1:]
        words = _WORD.findall(plain)
        speaker = message.speaker
        ours = asked_of[0] if asked_of else None
        if question is not None and (
            said := answered(question, plain, speaker, first=first, organisation=ours)
        ):
            if asked_of is None or not said.startswith(f"{asked_of[0]} "):
                members = _entities(said, speaker)
                return Candidate(
                    said, tuple(members), index, clause.strip(), _relation(said), (index - 1,)
                )
            # "How many hosts do you monitor?" put to Brightwave's CTO: Brightwave does
            members = _owned(
                [(speaker, "person", "speaker"), *_others(_entities(said, None), speaker)],
                asked_of[0],
            )
            turns = (index - 1, *(i for i in asked_of[1] if i not in (index, index - 1)))
            return Candidate(
                f"{_cap(speaker)} says {said}", tuple(members), index, clause.strip(), None, turns
            )
        if len(words) < 2 or plain.endswith("?") or PLEASANTRY.match(plain):
            return None
        if proposal and agrees_to_a_time(plain, proposal):
            return None  # "Thursday works.": the proposal it takes holds the fact
        if (question is None or not first) and not has_verb(words) and not verb_in(plain):
            return None  # a fragment ("Mike here.") that answers no question
        if _REQUEST.match(plain) or _HEDGE.search(plain):
            return None
        if all(w.lower() in _EMPTY_WORDS for w in words) or _META.match(plain):
            return None  # about the conversation, not the world
        # "she" is the one the turn named before, or the question it answers did ("How
        # old is Biscuit?" - "She's six."); if both name someone, no one is guessed at
        context = f"{asked or question}\n{before}" if question else before
        also: tuple[int, ...] = ()  # the question, cited where it named "she"
        if THIRD_PERSON.search(plain) and (person := antecedent(context, speaker)):
            plain = resolve(plain, person) or plain  # "she did ..." after "my wife Anya"
            words = _WORD.findall(plain)
            also = (index - 1,) if person.name not in before else ()
        if _IT.match(plain) and (named := thing(before)) and (it := resolve_it(plain, named)):
            plain = it[0].upper() + it[1:]  # "It should land ..." after "the migration"
            words = _WORD.findall(plain)
        if side and FIRST_PLURAL.search(plain) and (ours := resolve_first_plural(plain, side[0])):
            plain = ours  # "We use Datadog" from Brightwave's CTO
            words = _WORD.findall(plain)
            also = (*also, *(i for i in side[1] if i != index))
        if (
            _THERE.search(plain)
            and (where := place(before))
            and (at := resolve_there(plain, where))
        ):
            plain = at  # "I live there" after "I'm joining from Osaka"
            words = _WORD.findall(plain)
        reported = _REPORTED.match(plain)
        first = bool(FIRST_PERSON.search(plain))
        if reported is not None:
            statement = self._reported(reported, speaker)
            relation = None
            members = _entities(statement or "", None)
            if statement is not None:
                members = [(speaker, "person", "speaker"), *_others(members, speaker)]
        elif _AMBIGUOUS.search(_UNNAMED.sub("", plain)):
            return None
        elif _UNNAMED.search(plain):
            # "We fly out on April 3", "they loved the exhibit": the speaker's words, the
            # pronoun kept as said (whom it means is not guessed at); "I fixed it": a
            # statement about the speaker, "it" as said.
            mine = resolve_first_person(plain, speaker) if first else plain
            said = None if mine is None else mine.rstrip(".!") + "."
            own = said is not None and said.startswith(_cap(speaker) + " ")
            if said is None or own:
                statement = said
            else:
                statement = f"{_cap(speaker)} says {_lower_first(said)}"
            members = [
                (speaker, "person", "subject" if own else "speaker"),
                *_others(_entities(said or "", None), speaker),
            ]
            relation = None
        elif first:
            statement = resolve_first_person(plain, speaker)
            members = _entities(statement or "", speaker)
            relation = _relation(statement or "")
        elif plain[0].isupper() and (words[0] not in _NOT_NAMES or words[0] in _ARTICLES):
            # Said about someone or something else: kept as the speaker's statement.
            said = plain if plain.endswith((".", "!")) else plain + "."
            statement = f"{_cap(speaker)} says {_lower_first(said)}"
            members = [(speaker, "person", "speaker"), *_others(_entities(said, None), speaker)]
            relation = None
        else:
            return None
        if statement is None:
            return None
        statement = statement.rstrip("!") + ("" if statement.endswith(".") else ".")
        statement = statement[:1].upper() + statement[1:]
        statement = _introduced(statement)
        if _tautology(statement) or not members or len(_WORD.findall(statement)) < 3:
            return None
        if side and side[0] in statement:
            members = _owned(members, side[0])
        return Candidate(statement, tuple(members), index, clause.strip(), relation, also)

    @staticmethod
    def _reported(match: re.Match[str], speaker: str) -> str | None:
        """ "Bob said: I owe Alice $10,000." from Alice: "Alice says Bob said Bob owes Alice
        $10,000." First person in direct speech is the one quoted; in indirect speech
        ("Bob told me that I ...") it is the speaker."""
        who, what = match.group("who"), match.group("what").strip().strip('"\u201c\u201d')
        if not any(c.isalnum() for c in what) or who in _NOT_NAMES:
            return None
        resolved = resolve_first_person(what, who if match.group("direct") else speaker)
        if resolved is None or _AMBIGUOUS.search(resolved):
            return None
        return f"{_cap(speaker)} says {who} said {_lower_first(resolved)}"


def _question(messages: Sequence[Message], index: int) -> tuple[str | None, str]:
    """The question the turn before ``index`` ends with, put by someone else (else None),
    and the questions it ends with where the last has no subject of its own and goes on
    from the one before ("How is Dana? Still at the clinic?"; "Did Dana run? How's your
    cat?" ends with the cat's)."""
    if index == 0:
        return None, ""
    before = messages[index - 1]
    if before.speaker == messages[index].speaker or not before.content.rstrip().endswith("?"):
        return None, ""
    spans = sentence_spans(before.content)
    if not spans:
        return None, ""
    said = [before.content[start:end] for start, end in spans]
    first = len(said) - 1
    while first > 0 and said[first - 1].rstrip().endswith("?") and _subjectless(said[first]):
        first -= 1
    return said[-1], " ".join(said[first:])


def _proposal(messages: Sequence[Message], index: int) -> str:
    """What others said in the two messages before ``index`` (a tool's result between
    included), which a reply may take ("Can you bring her in on Thursday?" - "Thursday
    is fine.")."""
    speaker = messages[index].speaker
    before = [m for m in messages[max(0, index - 2) : index] if m.speaker != speaker]
    return "\n".join(m.content or "" for m in before)


def _sides(messages: Sequence[Message]) -> dict[str, tuple[str, tuple[int, ...]]]:
    """{speaker: (organisation, messages)} where people of different organisations talk
    (``language.organisations.sides``), so each one's "we" is their organisation; the
    messages are those where each side named theirs, which that reading rests on."""
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    found = sides((messages[i].speaker, messages[i].content) for i in users)
    said = tuple(sorted(users[at] for _, at in found.values()))
    return {speaker: (org, said) for speaker, (org, _) in found.items()}


def _subjectless(sentence: str) -> bool:
    """Whether no word of ``sentence`` is a subject ("Still at the clinic?")."""
    return not any(t.dep_ in ("nsubj", "nsubjpass", "expl", "csubj") for t in parse(sentence))


def _relation(statement: str) -> str | None:
    """The relation of ``RELATIONS`` a statement states, if any."""
    return next((name for name, phrasing in RELATIONS if phrasing.search(statement)), None)


def _owned(members: Sequence[tuple[str, str, str]], owner: str) -> list[tuple[str, str, str]]:
    """``members`` with ``owner`` named alone: "Brightwave's VP" (read from "our VP") is
    Brightwave and the VP, each a member."""
    out: list[tuple[str, str, str]] = []
    for name, kind, role in members:
        rest = name.removeprefix(f"{owner}'s ")
        split = [(owner, "organization", role), (rest, kind, "object")]
        for member in split if rest != name else [(name, kind, role)]:
            if all(member[0].lower() != m[0].lower() for m in out):
                out.append(member)
    return out


def _others(members: Sequence[tuple[str, str, str]], speaker: str) -> list[tuple[str, str, str]]:
    """``members`` without the speaker, the first of them the statement's subject."""
    out = [m for m in members if m[0].lower() != speaker.lower()]
    return [(n, k, "subject" if i == 0 and k != "time" else r) for i, (n, k, r) in enumerate(out)]


def _introduced(statement: str) -> str:
    """ "Jun is Jun, the recruiter." (from "I'm Jun, the recruiter"): "Jun is the
    recruiter."; "Greg is Greg from CloudNine.": "Greg is from CloudNine."."""
    m = re.fullmatch(
        r"(.+?) is (?:called |named )?(.+?)(?:,\s*| (?=(?:from|at|with|of)\b))(.+)", statement
    )
    if m is None or m.group(1).lower() != m.group(2).lower():
        return statement
    return f"{m.group(1)} is {m.group(3)}"


def _tautology(statement: str) -> bool:
    """ "Dana is Dana.": a self-introduction rewritten onto its own speaker."""
    m = re.fullmatch(r"(.+?) is (?:called |named )?(.+?)\.", statement)
    return m is not None and m.group(1).lower() == m.group(2).lower()


def _cap(name: str) -> str:
    return name[0].upper() + name[1:]


def _lower_first(sentence: str) -> str:
    """A sentence to follow "says": its first letter lowered unless it opens a name."""
    first = sentence.split(" ", 1)[0]
    if first[:1].isupper() and first not in _NOT_NAMES:
        return sentence
    return sentence[:1].lower() + sentence[1:]
