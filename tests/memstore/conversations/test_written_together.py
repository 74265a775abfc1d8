"""Candidates that replace nothing are written together (``conversations.together``),
and each read still sees what the one-at-a-time writes would have left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scripted import supports_its_own_words

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore import InvalidInput, Store
from memstore.conversations.conversation import remember
from memstore.conversations.extractors import Candidate, EmbeddedExtractor
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


def test_a_fact_a_later_sentence_of_its_turn_restates_is_written_before_it_is_read(
    words_store: Store,
) -> None:
    turns = [
        {
            "role": "user",
            "name": "Maya",
            "content": "I last used it at a cafe yesterday. "
            "Actually, I last used it the day before yesterday, not yesterday.",
        }
    ]
    first, second = _remember(CountingStore(words_store), turns).candidates
    assert second.outcome == "superseded" and second.replaced == [first.fact.id], second
    assert "not yesterday" not in second.statement


class Fixed:
    """An extractor that proposes the candidates it was given."""

    name = "fixed"

    def __init__(self, *candidates: Candidate) -> None:
        self.candidates = list(candidates)

    def extract(self, messages: Any) -> list[Candidate]:
        return list(self.candidates)


def _maya(statement: str, message: int, quote: str, *members: tuple[str, str, str]) -> Candidate:
    return Candidate(statement, (("Maya", "person", "subject"), *members), message, quote)


def test_a_statement_said_twice_is_a_duplicate_of_the_first_not_checked_again(
    words_store: Store,
) -> None:
    turns = [
        {"role": "user", "name": "Maya", "content": "I live in Leeds."},
        {"role": "user", "name": "Maya", "content": "I'm going to the cinema."},
    ]
    extractor = Fixed(
        _maya("Maya lives in Leeds.", 0, "I live in Leeds."),
        _maya("Maya lives in Leeds", 1, "I'm going to the cinema."),
    )
    report = remember(words_store, turns, extractor, "supersede", SINGLE_VALUED, 0, None, None)
    first, again = report.candidates
    assert (first.outcome, again.outcome) == ("stored", "duplicate"), report
    assert again.fact is not None and again.fact.id == first.fact.id
    assert words_store.count_rejections() == {}


def test_a_fact_that_is_not_valid_input_fails_as_add_fact_would_with_those_before_written(
    words_store: Store,
) -> None:
    turns = [
        {"role": "user", "name": "Maya", "content": "I live in Leeds."},
        {"role": "user", "name": "Maya", "content": "I'm a nurse."},
    ]
    extractor = Fixed(
        _maya("Maya lives in Leeds.", 0, "I live in Leeds."),
        _maya("Maya is a nurse.", 1, "I'm a nurse.", ("x" * 600, "thing", "object")),
    )
    with pytest.raises(InvalidInput) as raised:
        remember(words_store, turns, extractor, "supersede", SINGLE_VALUED, 0, None, None)
    assert raised.value.field == "members.1.name"
    assert [f.statement for f in words_store.facts_about("Maya")] == ["Maya lives in Leeds."]


def test_a_gate_that_keeps_no_answers_is_asked_one_fact_at_a_time(data_dir: Path) -> None:
    gate = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED, cache_size=0)
    with memstore.open(data_dir, gate=gate) as store:
        counting = CountingStore(store)
        turns = [
            {"role": "user", "name": "Maya", "content": "I live in Leeds."},
            {"role": "user", "name": "Maya", "content": "I'm allergic to penicillin."},
        ]
        report = _remember(counting, turns)
        assert [c.outcome for c in report.candidates] == ["stored", "stored"]
        assert counting.writes == [("add_fact", 1), ("add_fact", 1)]


def test_facts_written_in_one_batch_are_not_reported_near_each_other(data_dir: Path) -> None:
    gate = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)
    with memstore.open(data_dir, gate=gate, near_duplicate=0.05) as store:
        counting = CountingStore(store)
        turns = [
            {"role": "user", "name": "Maya", "content": "I'm really allergic to penicillin."},
            {"role": "user", "name": "Maya", "content": "I love hiking."},
        ]
        report = _remember(counting, turns)
        assert counting.writes == [("add_facts", 2)]
        assert [c.fact.near_duplicates for c in report.candidates if c.fact] == [[], []]


def _failing(claim: str, context: str) -> float:
    raise RuntimeError("the verifier is down")


def test_a_verifier_that_fails_is_asked_again_one_fact_at_a_time(data_dir: Path) -> None:
    with memstore.open(data_dir, gate=Gate(ScriptedBackend(_failing), REFUSE_UNGROUNDED)) as store:
        counting = CountingStore(store)
        turns = [
            {"role": "user", "name": "Maya", "content": "I live in Leeds."},
            {"role": "user", "name": "Maya", "content": "I'm allergic to penicillin."},
        ]
        _remember(counting, turns)
        assert counting.writes == [("add_fact", 1), ("add_fact", 1)]


def test_a_stored_fact_a_batch_mate_repeats_is_still_reported_near_the_others(
    data_dir: Path,
) -> None:
    gate = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)
    with memstore.open(data_dir, gate=gate, near_duplicate=0.05) as store:
        said = {"role": "user", "name": "Maya", "content": "I'm allergic to penicillin."}
        [before] = _remember(CountingStore(store), [said]).candidates
        really = {"role": "user", "name": "Maya", "content": "I'm really allergic to penicillin."}
        counting = CountingStore(store)
        first, again = _remember(counting, [really, said]).candidates
        assert counting.writes == [("add_facts", 2)]
        assert again.outcome == "duplicate" and again.fact.id == before.fact.id
        assert [n.fact_id for n in first.fact.near_duplicates] == [before.fact.id]
