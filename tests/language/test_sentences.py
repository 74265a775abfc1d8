"""Sentence boundaries: abbreviations, numbers and markers do not end a sentence; lines,
list items and sentence punctuation do."""

from __future__ import annotations

import pytest

from language import sentence_spans, sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hi! I'm Dana, I work as a nurse at St. Mary's Hospital in Leeds.",
            ["Hi!", "I'm Dana, I work as a nurse at St. Mary's Hospital in Leeds."],
        ),
        (
            "Dr. Okafor saw me at 9.30 a.m. on Friday. She said it's fine.",
            ["Dr. Okafor saw me at 9.30 a.m. on Friday.", "She said it's fine."],
        ),
        (
            "The U.S. office paid $3.50 each, e.g. for the J. R. R. Tolkien set. Done.",
            ["The U.S. office paid $3.50 each, e.g. for the J. R. R. Tolkien set.", "Done."],
        ),
        (
            "Acme is in Berlin.[1] It moved in 1990 [2].",
            ["Acme is in Berlin.[1]", "It moved in 1990 [2]."],
        ),
        ('He said "yes." Then he left.', ['He said "yes."', "Then he left."]),
        (
            "Wrapped prose\ncontinues here. Next one.",
            ["Wrapped prose\ncontinues here.", "Next one."],
        ),
        ("- milk is off\n- eggs are fine", ["milk is off", "eggs are fine"]),
        ("First line.\nSecond line", ["First line.", "Second line"]),
        ("...", []),
        # one sentence end, at the end: one sentence, whatever comes before it
        (
            "(Kohler's Dictionary) CONTRACT AUTHORITY - a subset of budget authority.",
            ["(Kohler's Dictionary) CONTRACT AUTHORITY - a subset of budget authority."],
        ),
        ("You did not kill Derry.'", ["You did not kill Derry.'"]),
        ("I like cats\u3002I have a dog", ["I like cats\u3002", "I have a dog"]),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_spans_index_the_text() -> None:
    text = "  I live in Leeds.  St. Mary's is near.  "
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ["I live in Leeds.", "St. Mary's is near."]


def test_a_long_text_is_read_in_pieces_that_never_cut_a_sentence() -> None:
    """Past a few thousand characters pysbd is read piece by piece (it slows down faster
    than its input grows); the cuts fall between sentences, never after "St." or "Dr."."""
    unit = "I live in Leeds. St. Mary's is near. Dr. Okafor works there. "
    assert set(sentences(unit * 400)) == {
        "I live in Leeds.",
        "St. Mary's is near.",
        "Dr. Okafor works there.",
    }
    assert len(sentences(unit * 400)) == 1200
