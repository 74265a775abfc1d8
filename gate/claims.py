"""Claim extraction: prose -> atomic, checkable claims with citations, hedges and offsets.

Rule-based (regular expressions and a few word lists), so it is fast, deterministic
and easy to predict, and it has limits worth knowing:

- Sentences come from ``language.sentences`` (pysbd within blocks of lines):
  abbreviations ("St. Mary's", ``Dr.``, ``e.g.``, ``U.S.``), decimals and initials do
  not end one. A line break ends a sentence when the line ends in punctuation or the
  next line is a list item or heading; hard-wrapped prose is joined back up.
- A sentence is split into clauses at ``; ``, ``, and ``, ``, but `` and `` and ``
  when the part on each side has its own verb and the right-hand part starts
  with a subject (a pronoun, a determiner, a name or a number). Verbs are found
  from a word list, ``-ed`` endings and ``-s`` endings right after a subject, so
  some are missed. Shared-subject coordination ("He was born in 1950 and died in
  2000") stays one claim; the subject is never copied. Pronouns are not resolved:
  "it was rebuilt" is checked as written. Text inside quotes or brackets is never
  split.
- Citation markers: ``[1]``, ``[1, 2]``, ``[source:3]`` and ``[ev:ID]`` (ids are
  the text after the colon). A marker belongs to the clause it sits in; a clause
  with none takes the markers that end its sentence ("A and B [1]." cites 1 for
  both). Ranges such as ``[1-3]`` are not understood.
- Non-evidence sentences are marked and skipped by the checkers: questions (ending
  in ``?``), instructions (imperatives such as "Please ...", "Make sure ...", "You
  should ..."), pleasantries ("Thanks!", "Hope this helps.", "Here is ...") and
  hedged statements ("I think ...", "... might ...", "perhaps", "not sure").
  Milder hedges ("probably", "likely", "reportedly") keep the claim checkable
  with a lower stated confidence (see ``MILD_HEDGES``). Markdown headings and
  lead-in lines ending in a colon are skipped too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from gate.engine import DEFAULT_STATED_CONFIDENCE
from language.clauses import clause_spans
from language.sentences import sentence_spans

#: Stated confidence of a claim hedged so strongly that it is not evidence.
HEDGE_CONFIDENCE = 0.5

#: Mild hedges: the claim stays checkable, with this stated confidence (the lowest wins).
MILD_HEDGES: dict[str, float] = {
    "almost certainly": 0.9,
    "very likely": 0.85,
    "most likely": 0.8,
    "probably": 0.75,
    "likely": 0.75,
    "presumably": 0.7,
    "apparently": 0.7,
    "reportedly": 0.7,
    "supposedly": 0.6,
    "allegedly": 0.6,
}


class ClaimKind(StrEnum):
    """What a clause is. Only ``fact`` is evidence; the checkers skip the rest."""

    FACT = "fact"
    QUESTION = "question"
    INSTRUCTION = "instruction"
    PLEASANTRY = "pleasantry"
    HEDGE = "hedge"
    #: A markdown heading or a lead-in line ending in a colon ("Here is what I found:").
    HEADING = "heading"


@dataclass(frozen=True, slots=True)
class Claim:
    """One atomic claim of a text.

    ``content`` is the clause as a sentence of its own (citation markers removed).
    ``start``/``end`` are the clause's character offsets in the source text,
    ``sentence_start``/``sentence_end`` those of its whole sentence. ``citations``
    are the evidence ids it cites, ``quotes`` the passages it quotes in double
    quotes, ``hedge`` the hedging words found (if any).
    """

    content: str
    start: int
    end: int
    sentence: int
    sentence_start: int
    sentence_end: int
    kind: ClaimKind = ClaimKind.FACT
    citations: tuple[str, ...] = ()
    confidence: float = DEFAULT_STATED_CONFIDENCE
    quotes: tuple[str, ...] = ()
    hedge: str | None = None

    @property
    def is_evidence(self) -> bool:
        """Whether the claim states a fact to check (not a question, hedge, ...)."""
        return self.kind is ClaimKind.FACT


def extract_claims(text: str) -> list[Claim]:
    """Split ``text`` into atomic claims, in order; see the module docstring for the rules.

    Raises TypeError for a non-string and ValueError for an empty or blank text.
    """
    check_text("text", text)
    claims: list[Claim] = []
    for index, (start, end) in enumerate(sentence_spans(text)):
        claims.extend(_sentence_claims(text, index, start, end))
    return claims


def citation_ids(text: str) -> list[str]:
    """Every evidence id cited by a marker in ``text``, in order, each once."""
    return list(dict.fromkeys(_ids_in(text)))


def strip_citations(text: str) -> str:
    """``text`` without citation markers, whitespace collapsed."""
    return _tidy(CITATION.sub("", text))


def check_text(field: str, value: object) -> str:
    """``value`` if it is a non-blank string; else TypeError/ValueError naming ``field``."""
    if not isinstance(value, str):
        raise TypeError(f"{field}: must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{field}: must not be empty")
    return value


# -- citation markers ---------------------------------------------------------------

_ID = r"[A-Za-z0-9][\w.\-]*"
_PREFIX = r"(?:source|ev)\s*:\s*"
#: ``[1]``, ``[1, 2]``, ``[source:3]``, ``[ev:abc, ev:def]``.
CITATION = re.compile(
    rf"\[\s*(?:\d+(?:\s*,\s*\d+)*|{_PREFIX}{_ID}(?:\s*,\s*(?:{_PREFIX})?{_ID})*)\s*\]"
)
_ONE_ID = re.compile(rf"(?:{_PREFIX})?({_ID})")


def _ids_in(text: str) -> list[str]:
    ids: list[str] = []
    for marker in CITATION.finditer(text):
        inner = marker.group(0)[1:-1]
        ids.extend(m.group(1) for part in inner.split(",") if (m := _ONE_ID.search(part)))
    return ids


# -- sentences ------------------------------------------------------------------------

#: What may follow a sentence's final punctuation: closing quotes/brackets, then
#: citation markers.
_CLOSING = r"[\"'\u201d\u2019)]*(?:\s*\[[^\]\n]{1,60}\])*"
#: Sentence-final punctuation with what closes it, at a sentence's end.
_TAIL = re.compile(rf"[.!?]+{_CLOSING}\s*$")
_HEADING = re.compile(r"\s*#{1,6}\s+")


# -- clauses --------------------------------------------------------------------------

_QUOTE = re.compile(r"\"([^\"]{3,})\"|\u201c([^\u201d]{3,})\u201d")


def _sentence_claims(text: str, index: int, start: int, end: int) -> list[Claim]:
    tail = _TAIL.search(text, start, end)
    body_end = tail.start() if tail else end
    while body_end > start and text[body_end - 1].isspace():
        body_end -= 1
    terminator = text[tail.start()] if tail else "."
    sentence_text = strip_citations(text[start:end])
    kind, hedge = _sentence_kind(sentence_text, terminator)
    line_start = text.rfind("\n", 0, start) + 1
    if sentence_text.endswith(":") or _HEADING.fullmatch(text, line_start, start):
        kind, hedge = ClaimKind.HEADING, None
    closing = _closing_ids(text, start, body_end, end)
    claims: list[Claim] = []
    for clause_start, clause_end in clause_spans(text, start, body_end):
        raw = text[clause_start:clause_end]
        content = _as_sentence(strip_citations(raw), terminator)
        if not any(ch.isalnum() for ch in content):
            continue
        own = citation_ids(raw)
        clause_kind, clause_hedge = kind, hedge
        if kind is ClaimKind.FACT:  # a clause of its own may ask or instruct ("..., please")
            clause_kind, clause_hedge = _sentence_kind(content, terminator)
        if clause_kind is ClaimKind.FACT:
            clause_kind, clause_hedge = _clause_hedge(content)
        claims.append(
            Claim(
                content=content,
                start=clause_start,
                end=clause_end,
                sentence=index,
                sentence_start=start,
                sentence_end=end,
                kind=clause_kind,
                citations=tuple(own or closing),
                confidence=_confidence(clause_kind, clause_hedge),
                quotes=tuple(a or b for a, b in _QUOTE.findall(raw)),
                hedge=clause_hedge,
            )
        )
    return claims


def _closing_ids(text: str, start: int, body_end: int, end: int) -> list[str]:
    """Ids of the markers that end a sentence (just before or after its punctuation)."""
    ending = re.search(r"(?:\s*\[[^\]\n]{1,60}\])+$", text[start:body_end])
    before = ending.group(0) if ending else ""
    return citation_ids(before + text[body_end:end])


# -- kinds, hedges and confidence -------------------------------------------------------

_PLEASANTRY = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|you'?re welcome|you are welcome|sure|certainly|"
    r"of course|absolutely|great question|good question|glad|happy to|i hope|hope this|"
    r"let me know|feel free|have a (?:nice|great|good)|sorry|apologies|i apologi[sz]e|"
    r"no problem|cheers|best regards|here(?:'s| is| are))\b"
)
_INSTRUCTION = re.compile(
    r"^(?:please|let'?s|let us|make sure|be sure|remember to|don'?t|do not|try|click|run|"
    r"install|consider|ensure|go to|visit|contact|refer to|check|see|ask|call|"
    r"keep in mind|avoid|open|download|follow|"
    r"you (?:should|must|need to|can|could|may want to|might want to|will need to))\b"
)
_HEDGE_LEAD = re.compile(
    r"^(?:i think|i believe|i guess|i suppose|i assume|i'?m not sure|i am not sure|"
    r"not sure|maybe|perhaps|possibly|it seems|it appears|it might|it may|it could|"
    r"i'?d guess|my guess is|arguably)\b"
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|might|could be|could have|i think|i believe|i guess|"
    r"i suppose|not sure|it seems|seems to|appears to|unlikely|may (?:be|have|not))\b"
)
_MILD_HEDGE = re.compile(r"\b(?:" + "|".join(re.escape(h) for h in MILD_HEDGES) + r")\b")


def _sentence_kind(sentence: str, terminator: str) -> tuple[ClaimKind, str | None]:
    lower = sentence.lower().lstrip("\"'\u201c\u2018*_ ").replace("\u2019", "'")
    if terminator == "?":
        return ClaimKind.QUESTION, None
    if _PLEASANTRY.match(lower):
        return ClaimKind.PLEASANTRY, None
    if _INSTRUCTION.match(lower):
        return ClaimKind.INSTRUCTION, None
    lead = _HEDGE_LEAD.match(lower)
    if lead:
        return ClaimKind.HEDGE, lead.group(0)
    return ClaimKind.FACT, None


def _clause_hedge(content: str) -> tuple[ClaimKind, str | None]:
    lower = content.lower().replace("\u2019", "'")
    strong = _HEDGE.search(lower)
    if strong:
        return ClaimKind.HEDGE, strong.group(0)
    mild = sorted(set(_MILD_HEDGE.findall(lower)), key=lambda h: MILD_HEDGES[h])
    return ClaimKind.FACT, (mild[0] if mild else None)


def _confidence(kind: ClaimKind, hedge: str | None) -> float:
    if kind is ClaimKind.HEDGE:
        return HEDGE_CONFIDENCE
    if hedge is not None:
        return MILD_HEDGES[hedge]
    return DEFAULT_STATED_CONFIDENCE


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\s+([,;:.!?])", r"\1", text).strip()


def _as_sentence(clause: str, terminator: str) -> str:
    clause = clause.strip().rstrip(",;:").strip()
    if not clause:
        return ""
    if clause[0].islower():
        clause = clause[0].upper() + clause[1:]
    return clause if clause[-1] in ".!?" else clause + terminator
