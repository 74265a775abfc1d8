"""Scrubbing replaces exactly the cited spans and keeps the rest (docs/design.md, Scrubbing)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gate import Citation, ContextItem, scrub
from gate.evidence import REMOVED, render, unknown_citations

A = ContextItem("a", "User: I'm allergic to peanuts. I live in Lisbon.")
B = ContextItem("b", "Assistant: noted.")


def test_span_is_replaced_exactly() -> None:
    start = A.text.index("allergic")
    end = start + len("allergic to peanuts")
    out = scrub([A, B], [Citation("a", start, end)])
    assert out[0].text == f"User: I'm {REMOVED}. I live in Lisbon."
    assert out[1] == B


def test_whole_item_citation() -> None:
    assert scrub([A, B], [Citation("b")]) == [A, ContextItem("b", REMOVED)]


def test_no_citations_scrubs_everything() -> None:
    assert [i.text for i in scrub([A, B], [])] == [REMOVED, REMOVED]


def test_overlapping_spans_make_one_marker() -> None:
    out = scrub([A], [Citation("a", 10, 20), Citation("a", 15, 30), Citation("a", 30, 31)])
    assert out[0].text == A.text[:10] + REMOVED + A.text[31:]


def test_unknown_ids() -> None:
    assert unknown_citations([A, B], [Citation("a"), Citation("z"), Citation("z")]) == ["z"]


def test_render_keeps_ids_and_order() -> None:
    assert render([A, B]) == f"[a] {A.text}\n\n[b] {B.text}"


@given(
    text=st.text(min_size=1, max_size=60),
    spans=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=1, max_size=4),
)
def test_uncited_characters_survive_in_order(text: str, spans: list[tuple[int, int]]) -> None:
    cites = [Citation("x", min(s, e), max(s, e)) for s, e in spans]
    out = scrub([ContextItem("x", text)], cites)[0].text
    covered = {i for c in cites for i in range(*c.span(text))}
    kept = "".join(ch for i, ch in enumerate(text) if i not in covered)
    assert out.replace(REMOVED, "") == kept
