"""Opposite words: WordNet 3.0's antonyms of adjectives and verbs ("easy" / "hard",
"pass" / "fail"), read from ``data/antonyms.tsv`` (made by ``tools/wordnet_antonyms.py``;
WordNet's license is ``data/WORDNET-LICENSE``). No WordNet is needed at run time."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

#: spaCy's coarse part of speech -> the table's.
_POS = {"ADJ": "a", "VERB": "v"}


@cache
def _table() -> dict[tuple[str, str], frozenset[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    text = files("language").joinpath("data", "antonyms.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        pos, word, opposite = line.split("\t")
        found.setdefault((pos, word), set()).add(opposite)
    return {key: frozenset(words) for key, words in found.items()}


def opposites(lemma: str, pos: str) -> frozenset[str]:
    """The words WordNet gives as opposite to ``lemma`` said as ``pos`` (spaCy's "ADJ" or
    "VERB"; any other part of speech has none here)."""
    table_pos = _POS.get(pos)
    return _table().get((table_pos, lemma.lower()), frozenset()) if table_pos else frozenset()


__all__ = ["opposites"]
