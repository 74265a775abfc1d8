"""Opposite words (language/antonyms.py): WordNet's antonyms, by part of speech."""

from __future__ import annotations

from importlib.resources import files

from language.antonyms import opposites


def test_opposites_are_wordnets_by_part_of_speech() -> None:
    assert {"hard", "difficult"} <= opposites("easy", "ADJ")
    assert opposites("pass", "VERB") == {"fail"}
    assert opposites("like", "VERB") == {"dislike"}  # the verb: not "unlike"
    assert "dislike" not in opposites("like", "ADJ")
    assert opposites("Easy", "ADJ") == opposites("easy", "ADJ")
    assert opposites("tea", "NOUN") == frozenset()
    assert opposites("go", "VERB") == frozenset()  # a light verb has no one opposite


def test_the_table_is_one_word_pairs_both_ways_round() -> None:
    lines = files("language").joinpath("data", "antonyms.tsv").read_text().splitlines()
    pairs = {tuple(line.split("\t")) for line in lines}
    assert len(pairs) == len(lines) > 1000
    assert all(pos in ("a", "v") and a.isalpha() and b.isalpha() for pos, a, b in pairs)
    assert all((pos, b, a) in pairs for pos, a, b in pairs)
