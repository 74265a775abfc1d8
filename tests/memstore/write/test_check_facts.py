"""``Store.check_facts``: a dry run of ``add_facts`` that asks the gate the very questions
the write asks, and writes nothing."""

from __future__ import annotations

import pytest
from scripted import supports_its_own_words

from gate import Gate, ScriptedBackend
from memstore import Store
from memstore.errors import InvalidInput

PEANUTS = {
    "statement": "Alice is allergic to peanuts.",
    "members": [("Alice", "person", "patient"), ("peanuts", "food", "allergen")],
    "evidence": ["Alice: I'm allergic to peanuts."],
}
SHELLFISH = {**PEANUTS, "statement": "Alice is allergic to shellfish."}


def test_it_decides_as_the_write_would_and_writes_nothing(opener: object) -> None:
    backend = ScriptedBackend(supports_its_own_words)
    store: Store = opener(gate=Gate(backend))  # type: ignore[operator]
    checked = store.check_facts([PEANUTS, SHELLFISH])
    asked = list(backend.batches)
    assert [a.accepted if a else None for a in checked] == [True, False]
    stats = store.stats()
    assert (stats.facts, stats.evidence, stats.entities, stats.rejections) == ({}, 0, 0, {})
    written = store.add_facts([PEANUTS, SHELLFISH])
    # the write asked the gate the same questions (the evidence goes by place, not by
    # its new random id), so the gate's cache answered them all: no new batch
    assert asked and backend.batches == asked
    # a fact now remembered is answered unchecked by a write: no question, None
    assert store.check_facts([PEANUTS]) == [None] and backend.batches == asked
    assert [a.verdict for a in checked if a is not None] == [
        getattr(w, "verdict", None) for w in written
    ]


def test_bad_input_names_the_field(opener: object) -> None:
    store: Store = opener(gate=Gate(ScriptedBackend(supports_its_own_words)))  # type: ignore[operator]
    with pytest.raises(InvalidInput, match=r"facts\.1\.evidence"):
        store.check_facts([PEANUTS, {**PEANUTS, "evidence": []}])
    assert store.check_facts([]) == []
