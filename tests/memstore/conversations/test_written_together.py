"""Candidates that replace nothing are written together (``conversations.together``),
and each read still sees what the one-at-a-time writes would have left."""

from __future__ import annotations

from typing import Any

from memstore import Store
from memstore.conversations.conversation import remember
from memstore.conversations.extractors import EmbeddedExtractor
from memstore.conversations.reconcile import SINGLE_VALUED


class CountingStore:
    """A real store, its writes counted (which method, how many facts)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.writes: list[tuple[str, int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def add_fact(self, *args: Any, **kwargs: Any) -> Any:
        self.writes.append(("add_fact", 1))
        return self._store.add_fact(*args, **kwargs)

    def add_facts(self, facts: list[Any], **kwargs: Any) -> Any:
        self.writes.append(("add_facts", len(facts)))
        return self._store.add_facts(facts, **kwargs)

    def supersede(self, *args: Any, **kwargs: Any) -> Any:
        self.writes.append(("supersede", 1))
        return self._store.supersede(*args, **kwargs)


def _remember(store: CountingStore, turns: list[dict[str, Any]]) -> Any:
    return remember(store, turns, EmbeddedExtractor(), "supersede", SINGLE_VALUED, 4, None, None)


def test_facts_that_replace_nothing_are_written_in_one_call(words_store: Store) -> None:
    counting = CountingStore(words_store)
    turns = [
        {"role": "user", "name": "Maya", "content": "I live in Leeds."},
        {"role": "user", "name": "Maya", "content": "My sister Ines is a pilot."},
        {"role": "user", "name": "Maya", "content": "I'm allergic to penicillin."},
    ]
    report = _remember(counting, turns)
    assert [c.outcome for c in report.candidates] == ["stored"] * 3, report
    assert counting.writes == [("add_facts", 3)]
    assert {f.statement for f in words_store.facts_about("Maya")} >= {
        c.statement for c in report.candidates
    }


def test_a_fact_waiting_to_be_written_is_written_before_one_that_replaces_it(
    words_store: Store,
) -> None:
    counting = CountingStore(words_store)
    turns = [
        {"role": "user", "name": "Maya", "content": "I'm allergic to penicillin."},
        {"role": "user", "name": "Maya", "content": "I live in Boston."},
        {"role": "user", "name": "Maya", "content": "I moved from Boston to Seattle last month."},
    ]
    allergy, boston, seattle = _remember(counting, turns).candidates
    assert counting.writes == [("add_facts", 2), ("supersede", 1)]
    assert seattle.outcome == "superseded" and seattle.replaced == [boston.fact.id]
    assert words_store.get_fact(boston.fact.id).status == "superseded"
    assert words_store.get_fact(allergy.fact.id).status != "superseded"


def test_the_outcomes_come_in_the_turns_order(
    words_store: Store,
) -> None:
    turns = [
        {"role": "user", "name": "Maya", "content": "I live in Leeds."},
        {"role": "user", "name": "Maya", "content": "I live in York."},
        {"role": "user", "name": "Maya", "content": "I'm a nurse."},
    ]
    leeds, york, nurse = _remember(CountingStore(words_store), turns).candidates
    assert (leeds.outcome, york.outcome, nurse.outcome) == ("stored", "superseded", "stored")
    assert york.replaced == [leeds.fact.id]
    assert [c.message for c in (leeds, york, nurse)] == [0, 1, 2]
