"""Sentence boundaries: pysbd inside blocks of lines.

A text is first cut into blocks of lines that may share sentences: a blank line, a
list item, a heading, or a line ending in ``.``, ``!``, ``?`` or ``:`` starts a new
block; hard-wrapped prose stays one block. Each block's sentences come from pysbd
(abbreviations such as "St. Mary's", "Dr.", "e.g.", "U.S.", decimals, initials,
ellipses and quotes), with one change: citation markers (``[1]``, ``[ev:ID]``) and
closing quotes or brackets that pysbd leaves at the start of the next sentence stay
with the sentence they close.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import pysbd

_LIST_ITEM = re.compile(r"(?:[-*•+]|\d{1,3}[.)]|#{1,6})\s+")
_CLOSING = r"[\"'\u201d\u2019)]*(?:\s*\[[^\]\n]{1,60}\])*"
_LINE_END = re.compile(rf"[.!?:]{_CLOSING}\s*$")
#: What a sentence may open with that closes the one before it.
_LEADING_CLOSE = re.compile(r"(?:[\"\u201d\u2019)\]]+|\[[^\]\n]{1,60}\])(?:\s*\[[^\]\n]{1,60}\])*")


_segmenting = threading.Lock()


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    # char_span=True re-scans the block for every sentence (quadratic on long texts):
    # the segments are found in order instead (``_segments``).
    return pysbd.Segmenter(language="en", clean=False, char_span=False)


#: pysbd slows down faster than its input grows past about 10,000 characters: longer
#: blocks are read in pieces of about this many, cut after a likely sentence end.
PIECE = 2_000
#: A likely sentence end: after a word of three lower-case letters or digits ("Leeds."),
#: never an abbreviation such as "St." or "Dr.".
_LIKELY_END = re.compile(r"(?<=[a-z0-9]{3})[.!?][\"')\]]*\s+(?=[A-Z0-9\"'(])")


def _segments(block: str) -> list[tuple[int, int]]:
    """``(start, end)`` of pysbd's sentences in ``block``, in order."""
    spans: list[tuple[int, int]] = []
    offset = 0
    while len(block) - offset > PIECE:
        ends = [m.end() for m in _LIKELY_END.finditer(block, offset + PIECE // 2, offset + PIECE)]
        cut = ends[-1] if ends else block.rfind(" ", offset + 1, offset + PIECE) + 1
        if cut <= offset:
            cut = offset + PIECE
        spans += [(offset + s, offset + e) for s, e in _piece(block[offset:cut])]
        offset = cut
    return spans + [(offset + s, offset + e) for s, e in _piece(block[offset:])]


#: What a block may end with after its last sentence's words: spaces, sentence ends,
#: closing quotes and brackets.
_TAIL = " \t\n\r\f\v\u00a0.!?\u2026\u3002\uff0e\uff01\uff1f\"'\u201d\u2019)]"
_ENDS = re.compile(r"[.!?\u2026\u3002\uff0e\uff01\uff1f]")


def _piece(block: str) -> list[tuple[int, int]]:
    """``(start, end)`` of pysbd's sentences in ``block``, found in order from a cursor.
    A block with no ``.``, ``!``, ``?`` or ellipsis before its end is one sentence, read
    without pysbd (a conversation's turns mostly are: pysbd takes about 1 ms a block)."""
    if not _ENDS.search(block, 0, len(block.rstrip(_TAIL))):
        start, end = strip_span(block, 0, len(block))
        return [(start, end)] if start < end else []
    spans: list[tuple[int, int]] = []
    cursor = 0
    with _segmenting:  # a Segmenter keeps the text it reads on itself: one at a time
        segments = _segmenter().segment(block)
    for segment in segments:
        piece = segment.strip()
        if not piece:
            continue
        at = block.find(piece, cursor)
        if at < 0:  # pysbd changed the text: the rest of the block is one sentence
            spans.append((cursor, len(block)))
            return spans
        spans.append((at, at + len(piece)))
        cursor = at + len(piece)
    return spans


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span ``[start, end)`` of ``text`` without leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def blocks(text: str) -> list[tuple[int, int]]:
    """Runs of lines that may share sentences; list items, headings, blank lines and
    lines that end a sentence split them. A list item's marker is left out."""
    found: list[tuple[int, int]] = []
    start: int | None = None
    previous = ""
    in_item = False  # the block is a list item: only indented lines continue it
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.strip()
        lead = len(line) - len(line.lstrip())
        new_block = (
            not body
            or _LIST_ITEM.match(body) is not None
            or bool(_LINE_END.search(previous))
            or (in_item and lead == 0)
        )
        if start is not None and new_block:
            found.append((start, offset))
            start = None
        if body:
            if start is None:
                item = _LIST_ITEM.match(line, lead)
                start = offset + (item.end() if item else lead)
                in_item = item is not None
            previous = body
        offset += len(line)
    if start is not None:
        found.append((start, len(text)))
    return found


#: Texts up to this long (a turn of a conversation, read again as the context of each
#: later turn's facts) keep their sentences in a cache of ``CACHED_TEXTS``.
CACHED_CHARS = 2_000
CACHED_TEXTS = 4_096


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, in order, without surrounding space;
    a span holds at least one letter or digit."""
    if len(text) <= CACHED_CHARS:
        return list(_cached_spans(text))
    return _spans(text)


@lru_cache(maxsize=CACHED_TEXTS)
def _cached_spans(text: str) -> tuple[tuple[int, int], ...]:
    return tuple(_spans(text))


def _spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for block_start, block_end in blocks(text):
        # Lines of one block are wrapped prose: pysbd would end a sentence at each break.
        block = text[block_start:block_end].replace("\r", " ").replace("\n", " ")
        first = len(spans)  # a close moves back only within its block
        for part_start, part_end in _block_segments(block):
            start, end = block_start + part_start, block_start + part_end
            start, end = strip_span(text, start, end)
            closing = _LEADING_CLOSE.match(text, start, end)
            if closing and len(spans) > first and _closes(text, spans[-1], closing.group(0)):
                spans[-1] = (spans[-1][0], closing.end())
                start, end = strip_span(text, closing.end(), end)
            if start < end:
                spans.append((start, end))
    return [(s, e) for s, e in spans if any(ch.isalnum() for ch in text[s:e])]


def _block_segments(block: str) -> tuple[tuple[int, int], ...] | list[tuple[int, int]]:
    """``_segments`` of a block, kept for blocks up to ``CACHED_CHARS``: a conversation's
    evidence is its turns, one block each, read again in every later fact's context."""
    return _cached_segments(block) if len(block) <= CACHED_CHARS else _segments(block)


@lru_cache(maxsize=CACHED_TEXTS)
def _cached_segments(block: str) -> tuple[tuple[int, int], ...]:
    return tuple(_segments(block))


def _closes(text: str, before: tuple[int, int], close: str) -> bool:
    """Whether ``close`` (what opens the next sentence) closes the one ``before``: a
    marker, a bracket or a curly closing quote does; a straight double quote only when
    that sentence left one open."""
    if not close.startswith('"'):
        return True
    return text[before[0] : before[1]].count('"') % 2 == 1


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see ``sentence_spans``)."""
    return [text[s:e] for s, e in sentence_spans(text)]
