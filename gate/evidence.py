"""The evidence of one check: context items with ids, citations, and scrubbing.

See docs/design.md, Scrubbing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from language.organisations import sides
from language.speakers import LABEL, one_turn
from language.speakers import as_said as read_turns

REMOVED = "[EVIDENCE REMOVED]"


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One piece of evidence text, with the id citations refer to."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class Citation:
    """A cited piece of evidence: the whole item, or the characters ``[start, end)``."""

    evidence_id: str
    start: int | None = None
    end: int | None = None

    def span(self, text: str) -> tuple[int, int]:
        start = 0 if self.start is None else max(0, self.start)
        end = len(text) if self.end is None else min(len(text), self.end)
        return start, max(start, end)


def unknown_citations(items: Sequence[ContextItem], citations: Sequence[Citation]) -> list[str]:
    """Ids cited but absent from the context, in citation order."""
    known = {item.id for item in items}
    return list(dict.fromkeys(c.evidence_id for c in citations if c.evidence_id not in known))


def scrub(items: Sequence[ContextItem], citations: Sequence[Citation]) -> list[ContextItem]:
    """Replace exactly the cited spans with ``[EVIDENCE REMOVED]``; keep everything else.

    Overlapping or touching spans in one item become one marker. With no
    citations, every item counts as cited (docs/design.md, Scrubbing).
    """
    if not citations:
        citations = [Citation(item.id) for item in items]
    spans: dict[str, list[tuple[int, int]]] = {}
    texts = {item.id: item.text for item in items}
    for c in citations:
        if c.evidence_id in texts:
            spans.setdefault(c.evidence_id, []).append(c.span(texts[c.evidence_id]))
    return [ContextItem(item.id, _remove(item.text, spans.get(item.id, []))) for item in items]


def _remove(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, cursor = [], 0
    for start, end in merged:
        out.append(text[cursor:start])
        out.append(REMOVED)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def quoted(
    items: Sequence[ContextItem], citations: Sequence[Citation], speakers: bool
) -> tuple[str, ...]:
    """The text of each citation that cites part of an item (a quote), read as said
    where ``speakers``: the turn's label is put before it for the reading ("Tomás: I'm
    allergic" -> "Tomás is allergic") and taken off after (a span that holds its label
    is read from after it). A citation of a whole item narrows nothing and gives no
    text."""
    texts = {item.id: item.text for item in items}
    out: list[str] = []
    for c in citations:
        text = texts.get(c.evidence_id)
        if text is None or (c.start is None and c.end is None):
            continue
        start, end = c.span(text)
        if not text[start:end].strip():
            continue
        line = text.rfind("\n", 0, start) + 1
        label = LABEL.match(text, line)
        if label is not None and start < label.end():  # the span holds its label
            start = label.end()
        head = label.group(0) if label is not None else ""
        said = _read_turns(head + text[start:end]) if speakers and head else text[start:end]
        out.append(said[len(head) :] if said.startswith(head) else said)
    return tuple(out)


def as_said(items: Sequence[ContextItem]) -> list[ContextItem]:
    """The items with each turn's first person read as its speaker
    (``language.speakers.as_said``): "Maya: I've been vegetarian for ten years." is read
    as "Maya: Maya has been vegetarian for ten years.", so the verifier compares the
    claim with what was said about whom, not with "I". Where the items hold speakers of
    different organisations, each one's "we" is theirs (``language.organisations``)."""
    turns = [turn for item in items if (turn := one_turn(item.text)) is not None]
    groups = tuple(sorted((who, org) for who, (org, _) in sides(turns).items()))
    return [ContextItem(item.id, _read_turns(item.text, groups)) for item in items]


#: The same evidence is read for p1 and p0 and for every claim of a batch: once each.
_read_turns = lru_cache(maxsize=64)(read_turns)


def render(items: Sequence[ContextItem]) -> str:
    """The context as one prompt-ready string: each item on its own, tagged with its id."""
    return "\n\n".join(f"[{item.id}] {item.text}" for item in items)
