"""The namespace's user: "the user" and the user's name find the same facts."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripted import supports_its_own_words

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore import NotFound, Store
from memstore.read.search import as_named

LIVES = {"role": "user", "content": "I live in Boston."}
ALLERGY = {"role": "user", "content": "I'm allergic to peanuts."}


def open_store(data_dir: Path) -> Store:
    return memstore.open(
        data_dir, "user:maya", gate=Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)
    )


def statements(facts: list) -> set[str]:
    return {f.statement for f in facts}


def test_the_user_finds_what_was_said_under_the_users_name(data_dir: Path) -> None:
    with open_store(data_dir) as store:
        store.remember_conversation([LIVES], user_name="Maya")
        assert statements(store.facts_about("the user")) == {"Maya lives in Boston."}
        asked = as_named(store._scope, "Where does the user live?")
        assert asked == "Where does the user (Maya) live?"
        [hit] = store.search("Where does the user live?", 1)
        assert hit.fact.statement == "Maya lives in Boston."
        assert "Maya lives in Boston." in store.recall("the user's home town").text


def test_a_name_given_later_joins_the_facts_about_the_user(data_dir: Path) -> None:
    with open_store(data_dir) as store:
        store.remember_conversation([LIVES])  # no name known yet
        store.remember_conversation([ALLERGY], user_name="Maya")
        both = {"The user lives in Boston.", "Maya is allergic to peanuts."}
        assert statements(store.facts_about("Maya")) == both
        assert statements(store.facts_about("the user")) == both
        found = [h.fact.statement for h in store.search("Where does Maya live?", 2)]
        assert "The user lives in Boston." in found


def test_a_call_without_a_name_links_nothing(data_dir: Path) -> None:
    with open_store(data_dir) as store:
        store.remember_conversation([LIVES])
        with pytest.raises(NotFound):
            store.entity("Maya")
        assert as_named(store._scope, "Where does the user live?") == "Where does the user live?"
        assert store.search("Where does the user live?", 1)[0].fact.statement == (
            "The user lives in Boston."
        )
