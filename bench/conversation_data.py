"""The conversation bench's data (``data/conversations/``): its schema, and when a stored
fact counts as an expected memory.

Each file holds one conversation: the ``messages`` exactly as ``Store.remember_conversation``
takes them, and, written before anything was run, what a careful reader should remember
(``expected``), which of those a later turn corrects (``corrections``), questions the
memory should answer afterwards (``questions``) and candidate facts that must be refused
(``traps``). ``load`` checks every file against the schema and the conversation: a turn
cited that does not exist, a correction or an answer naming an unknown memory, a trap
quoting words its turn does not hold, all raise ``ValueError`` naming the file and field.

The matching rule (``Matcher.matches``), fixed before any result was looked at: a fact
(statement and member names) is an expected memory when

1. every entry of ``members`` names one of the fact's members: an entry is one or more
   names separated by ``|``, and a name matches a member when the words of one are all
   words of the other (case-insensitive, a leading "the" and a possessive "'s" ignored:
   "the user" matches a member "User", "Rossi Builders" matches "Rossi");
2. every entry of ``keywords`` (again ``|`` for alternatives) is in the statement, and
   no entry of ``absent`` is: a phrase is found where it starts a word (so "review"
   finds "reviewed") and, where it ends in a digit, is not followed by one ("50" is
   not in "500");
3. the statement and the expected statement have a cosine similarity of at least
   ``MIN_SIMILARITY`` in the packaged all-MiniLM-L6-v2 (it says the two are about the
   same thing; the keywords say they hold the same value).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from memstore.conversations import Message
from memstore.index.embeddings import MiniLM, embed_checked

DATA = Path(__file__).resolve().parent / "data" / "conversations"
MIN_TURNS, MAX_TURNS = 10, 30
MIN_CONVERSATIONS = 20
#: The least cosine similarity of a stored statement and the expected one (rule 3).
MIN_SIMILARITY = 0.5

TrapKind = Literal["misattributed", "stale", "negated", "hedged", "request", "unsupported"]
Text = Annotated[str, Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Expected(_Strict):
    """A memory the conversation should leave, as of its ``turn`` (0-based message index)."""

    id: Text
    statement: Text
    members: Annotated[list[Text], Field(min_length=1)]
    keywords: Annotated[list[Text], Field(min_length=1)]
    absent: list[Text] = []
    turn: Annotated[int, Field(ge=0)]


class Correction(_Strict):
    """At ``turn``, expected memory ``new`` replaces expected memory ``old``."""

    old: Text
    new: Text
    turn: Annotated[int, Field(ge=0)]


class Question(_Strict):
    """A query the memory should answer after the conversation with expected ``answer``."""

    query: Text
    answer: Text


class TrapMember(_Strict):
    name: Text
    kind: Text
    role: Text


class Trap(_Strict):
    """A candidate fact the gate must refuse: hallucinated, misattributed or out of date,
    claimed from ``turn`` with ``quote`` (words of that turn) cited."""

    kind: TrapKind
    statement: Text
    members: Annotated[list[TrapMember], Field(min_length=1)]
    turn: Annotated[int, Field(ge=0)]
    quote: Text
    relation: str | None = None


class Conversation(_Strict):
    id: Text
    domain: Text
    messages: Annotated[list[Message], Field(min_length=MIN_TURNS, max_length=MAX_TURNS)]
    expected: Annotated[list[Expected], Field(min_length=1)]
    corrections: list[Correction]
    questions: Annotated[list[Question], Field(min_length=1)]
    traps: Annotated[list[Trap], Field(min_length=1)]

    @model_validator(mode="after")
    def _consistent(self) -> Conversation:
        turns = len(self.messages)
        ids = [e.id for e in self.expected]
        if len(set(ids)) != len(ids):
            raise ValueError(f"expected: ids repeat ({sorted(ids)})")
        by_id = {e.id: e for e in self.expected}
        for i, e in enumerate(self.expected):
            if e.turn >= turns:
                raise ValueError(f"expected.{i}.turn: {e.turn} is past the last turn ({turns - 1})")
            if not all(has_any(e.statement, k) for k in e.keywords):
                raise ValueError(f"expected.{i}.keywords: not all in its own statement")
            if any(has_any(e.statement, k) for k in e.absent):
                raise ValueError(f"expected.{i}.absent: in its own statement")
        olds = [c.old for c in self.corrections]
        if len(set(olds)) != len(olds):
            raise ValueError("corrections: a memory is corrected twice")
        for i, c in enumerate(self.corrections):
            for field in ("old", "new"):
                if (name := getattr(c, field)) not in by_id:
                    raise ValueError(f"corrections.{i}.{field}: no expected memory {name!r}")
            if c.old == c.new or not by_id[c.old].turn < c.turn == by_id[c.new].turn:
                raise ValueError(
                    f"corrections.{i}.turn: must be the new memory's turn, after the old one's"
                )
        for i, q in enumerate(self.questions):
            if q.answer not in by_id or q.answer in olds:
                raise ValueError(f"questions.{i}.answer: no current expected memory {q.answer!r}")
        for i, t in enumerate(self.traps):
            if t.turn >= turns:
                raise ValueError(f"traps.{i}.turn: {t.turn} is past the last turn ({turns - 1})")
            if t.quote not in self.messages[t.turn].content:
                raise ValueError(f"traps.{i}.quote: not in turn {t.turn}")
        return self

    @property
    def by_id(self) -> dict[str, Expected]:
        return {e.id: e for e in self.expected}

    @property
    def current(self) -> list[Expected]:
        """The expected memories no correction replaces: what should be active at the end."""
        olds = {c.old for c in self.corrections}
        return [e for e in self.expected if e.id not in olds]


def load(directory: Path = DATA) -> list[Conversation]:
    """Every ``*.json`` conversation under ``directory``, by file name, each checked."""
    out = []
    for path in sorted(directory.glob("*.json")):
        try:
            conversation = Conversation.model_validate(json.loads(path.read_text("utf-8")))
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            loc = ".".join(map(str, first["loc"]))
            why = first["msg"].removeprefix("Value error, ")  # _consistent names its field
            raise ValueError(f"{path.name}: {loc + ': ' if loc else ''}{why}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name}: not JSON: {exc}") from None
        if conversation.id != path.stem:
            raise ValueError(f"{path.name}: id: {conversation.id!r} is not the file's name")
        out.append(conversation)
    if not out:
        raise ValueError(f"no conversations in {directory}")
    return out


# -- the matching rule -------------------------------------------------------------------


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


def has_phrase(text: str, phrase: str) -> bool:
    """``phrase`` in ``text`` where it starts a word (and, ending in a digit, where no
    digit follows), case-insensitive."""
    phrase = _norm(phrase.strip())
    end = r"(?!\d)" if phrase[-1:].isdigit() else ""
    return re.search(r"(?<!\w)" + re.escape(phrase) + end, _norm(text)) is not None


def has_any(text: str, entry: str) -> bool:
    """Whether one of the ``|``-separated alternatives of ``entry`` is in ``text``."""
    return any(has_phrase(text, alt) for alt in entry.split("|"))


def _words(name: str) -> frozenset[str]:
    words = [w.strip(".,;:!?()\"'").removesuffix("'s") for w in _norm(name).split()]
    words = [w for w in words if w]
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    return frozenset(words)


def names_match(expected: str, member: str) -> bool:
    """Whether one name's words are all words of the other (rule 1)."""
    a, b = _words(expected), _words(member)
    return bool(a) and bool(b) and (a <= b or b <= a)


def members_match(entries: Sequence[str], members: Iterable[str]) -> bool:
    """Whether every entry (``|`` alternatives) names one of ``members``."""
    names = list(members)
    return all(
        any(names_match(alt, m) for alt in entry.split("|") for m in names) for entry in entries
    )


class Matcher:
    """The matching rule, with the statements' embeddings cached."""

    def __init__(self, min_similarity: float = MIN_SIMILARITY) -> None:
        self.min_similarity = min_similarity
        self._embedder = MiniLM()
        self._vectors: dict[str, np.ndarray] = {}

    def similarity(self, a: str, b: str) -> float:
        missing = [t for t in dict.fromkeys((a, b)) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, embed_checked(self._embedder, missing), strict=True):
                self._vectors[text] = vector
        return float(self._vectors[a] @ self._vectors[b])

    def matches(self, expected: Expected, statement: str, members: Iterable[str]) -> bool:
        """Whether a fact with ``statement`` and ``members`` is ``expected`` (rules 1-3)."""
        return (
            members_match(expected.members, members)
            and all(has_any(statement, k) for k in expected.keywords)
            and not any(has_any(statement, k) for k in expected.absent)
            and self.similarity(expected.statement, statement) >= self.min_similarity
        )
