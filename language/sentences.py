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
from functools import lru_cache

import pysbd

_LIST_ITEM = re.compile(r"(?:[-*•+]|\d{1,3}[.)]|#{1,6})\s+")
_CLOSING = r"[\"'\u201d\u2019)]*(?:\s*\[[^\]\n]{1,60}\])*"
_LINE_END = re.compile(rf"[.!?:]{_CLOSING}\s*$")
#: What a sentence may open with that closes the one before it.
_LEADING_CLOSE = re.compile(r"(?:[\"'\u201d\u2019)\]]+|\[[^\]\n]{1,60}\])(?:\s*\[[^\]\n]{1,60}\])*")


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


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


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, in order, without surrounding space;
    a span holds at least one letter or digit."""
    spans: list[tuple[int, int]] = []
    for block_start, block_end in blocks(text):
        # Lines of one block are wrapped prose: pysbd would end a sentence at each break.
        block = text[block_start:block_end].replace("\r", " ").replace("\n", " ")
        for part in _segmenter().segment(block):
            start, end = block_start + part.start, block_start + part.end
            start, end = strip_span(text, start, end)
            closing = _LEADING_CLOSE.match(text, start, end)
            if closing and spans and spans[-1][1] <= start:
                spans[-1] = (spans[-1][0], closing.end())
                start, end = strip_span(text, closing.end(), end)
            if start < end:
                spans.append((start, end))
    return [(s, e) for s, e in spans if any(ch.isalnum() for ch in text[s:e])]


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see ``sentence_spans``)."""
    return [text[s:e] for s, e in sentence_spans(text)]
