"""A conversation of any length, remembered in consecutive parts that each fit the
store's limits (``Store.remember_conversation``, the Python API's reading).

The limits bound one call of the gate: ``max_evidence_chars`` of message text,
``max_claims`` candidates. A caller cannot tell how many candidates a transcript will
give, so a long one is cut here: consecutive turns whose text fits, halved while their
candidates do not, each part extracted, gated and written in turn (a later part
reconciles with what an earlier one stored). A part is also no longer than the
extractor's window, where it reads one (the llm extractor's newest ``max_messages``).
A turn at a part's start is read without the turns before it. One message over the
text limit alone, or with more candidates than ``max_claims``, is refused before
anything is written.
The REST API, MCP and the CLI refuse a request over the limits instead: a server
bounds the work of one request.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from memstore.conversations import corrections
from memstore.conversations.conversation import (
    ConversationReport,
    Extracted,
    OnConflict,
    check_claims,
    check_options,
    remember,
)
from memstore.conversations.extractors import Candidate, EmbeddedExtractor, Extractor
from memstore.conversations.messages import MAX_MESSAGES, Message, parse_messages
from memstore.conversations.storelike import StoreLike


def remember_in_parts(
    store: StoreLike,
    messages: Iterable[Message | Mapping[str, Any]],
    extractor: Extractor | None,
    on_conflict: OnConflict,
    single_valued: Collection[str],
    context_turns: int,
    metadata: Mapping[str, Any] | None,
    user_name: str | None,
) -> ConversationReport:
    """``remember`` for a conversation of any length: one call where it fits the limits,
    else one per part (``parts``); the report's message numbers count from the first
    message given. Every part is extracted and checked against the limits before the
    first is written: a part of one message with more candidates than ``max_claims``
    raises InvalidInput with nothing written."""
    check_options(on_conflict, context_turns, metadata)
    turns = parse_messages(messages, user_name, most=None)
    for turn in turns:  # one message over the text limit: refused before any extraction
        store.limits.check_texts([turn.rendered()], "messages")
    extractor = extractor or EmbeddedExtractor()
    options = (on_conflict, single_valued, context_turns, metadata, user_name)
    planned = list(parts(store, turns, extractor))  # every limit holds before any write
    for _, part, candidates in planned:
        check_claims(store, candidates, corrections.pending(part))
    outcomes = []
    for start, part, candidates in planned:
        report = remember(store, part, Extracted(extractor.name, tuple(candidates)), *options)
        outcomes += [c.model_copy(update={"message": c.message + start}) for c in report.candidates]
    return ConversationReport(extractor=extractor.name, messages=len(turns), candidates=outcomes)


def parts(
    store: StoreLike, turns: list[Message], extractor: Extractor
) -> Iterator[tuple[int, list[Message], list[Candidate]]]:
    """(first turn's number, turns, their candidates) of each consecutive part: as many
    turns as fit ``max_evidence_chars``, ``MAX_MESSAGES`` and the extractor's window
    (``max_messages``, ``max_chars``, where it has them), halved until their candidates
    and the corrections they say fit ``max_claims``. A part of one turn is given as it
    is, whatever its candidates."""
    limits = store.limits
    # An extractor that reads a window of the newest messages (the llm one) reads each
    # part whole: the part is no longer than its window.
    most = min(MAX_MESSAGES, getattr(extractor, "max_messages", MAX_MESSAGES))
    chars = min(
        limits.max_evidence_chars, getattr(extractor, "max_chars", limits.max_evidence_chars)
    )
    start = 0
    while start < len(turns):
        end, size = start, 0
        while end < len(turns) and end - start < most:
            size += len(turns[end].rendered()) + _NUMBERED
            if size > chars and end > start:
                break
            end += 1
        part = turns[start:end]
        candidates = extractor.extract(part)
        while (
            len(part) > 1 and len(candidates) + len(corrections.pending(part)) > limits.max_claims
        ):
            part = part[: len(part) // 2]
            candidates = extractor.extract(part)
        yield start, part, candidates
        start += len(part)


#: Characters a message may take beyond its rendered text in an extractor's window
#: ("[12345] ", a role after the name: " (assistant)", a newline).
_NUMBERED = 24
