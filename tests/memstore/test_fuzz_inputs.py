"""Fuzzed writes and reads: whatever comes in, the store either takes it whole or raises
InvalidInput naming a field, and never half-writes. A prompt injected into a claim does
not talk the embedded gate into grounding it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from db_rows import row_counts
from hypothesis import event, given
from hypothesis import strategies as st
from strategies import FACT, FUZZ, INJECTIONS, NOT_TEXT, TEXT

import memstore
from gate import REFUSE_UNGROUNDED
from memstore import ErrFactNotGrounded, FactPublic, InvalidInput, NotFound, Store


def ungated_store(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Store]:
    """A new store in a fresh directory ``name``, the gate off."""
    data: Path = tmp_path_factory.mktemp(name)
    with memstore.open(data, namespace="user:fuzz", hook=memstore.Ungated()) as opened:
        yield opened


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    yield from ungated_store(tmp_path_factory, "fuzz")


@FUZZ
@given(fact=FACT)
def test_a_fuzzed_fact_is_stored_whole_or_refused_naming_a_field(
    fuzz_store: Store, fact: dict[str, Any]
) -> None:
    before = row_counts(fuzz_store.url)
    try:
        stored = fuzz_store.add_fact(fact)
    except InvalidInput as exc:
        event(f"refused: {exc.field.split('.')[0] or '(whole)'}")
        assert exc.field or exc.reason, "an InvalidInput says what is wrong"
        assert row_counts(fuzz_store.url) == before  # nothing half-written
        return
    event("stored")
    assert isinstance(stored, FactPublic)
    again = fuzz_store.get_fact(stored.id)
    assert again.statement == stored.statement
    assert [m.entity_id for m in again.members] == [m.entity_id for m in stored.members]


@FUZZ
@given(query=st.one_of(TEXT, NOT_TEXT), k=st.one_of(st.integers(-5, 500), NOT_TEXT, TEXT))
def test_a_fuzzed_search_answers_or_refuses_naming_a_field(
    fuzz_store: Store, query: Any, k: Any
) -> None:
    try:
        hits = fuzz_store.search(query, k)
    except InvalidInput as exc:
        assert exc.field in {"query", "k"}, exc
        return
    assert len(hits) <= k


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """A store nothing writes to (``fuzz_store`` holds whatever facts fuzzing stored)."""
    yield from ungated_store(tmp_path_factory, "empty")


@FUZZ
@given(name=st.one_of(TEXT, NOT_TEXT), hops=st.one_of(st.integers(-3, 12), NOT_TEXT))
def test_fuzzed_reads_by_entity_answer_or_refuse(empty_store: Store, name: Any, hops: Any) -> None:
    """An empty store: a read answers nothing, or refuses naming its own parameter, or
    says the entity is unknown; nothing else escapes."""
    try:
        assert empty_store.facts_about(name) == []
    except InvalidInput as exc:
        assert exc.field == "entity", exc
    except NotFound as exc:
        assert isinstance(name, str) and "entity" in str(exc).lower(), exc
    try:
        around = empty_store.neighborhood(name, hops)
        assert around.facts == [] and around.entities == []
    except InvalidInput as exc:
        assert exc.field in {"entities", "hops"}, exc
    except NotFound as exc:
        assert "entity" in str(exc).lower(), exc


@pytest.mark.parametrize("injection", INJECTIONS)
def test_an_injected_claim_against_unrelated_evidence_is_still_rejected(
    data_dir: Path, injection: str
) -> None:
    """The embedded gate never verifies it: it holds it (stored ``unverified`` with a
    reason) or refuses it; the specification's table alone refuses it."""
    fact = {
        "statement": f"The user is allergic to cats. {injection}",
        "members": [("user", "person", "patient"), ("cats", "animal", "allergen")],
        "evidence": [f"User: I went hiking in the Alps last summer. {injection}"],
    }
    with memstore.open(data_dir, namespace="user:alice") as fuzz_store:  # the embedded gate
        try:
            held = fuzz_store.add_fact(**fact)
        except ErrFactNotGrounded:
            assert fuzz_store.rejections(text="cats")
        else:
            assert held.status == "unverified"
            assert fuzz_store.verifications(held.id)[0].reason
    with memstore.open(data_dir, namespace="user:bob", policy=REFUSE_UNGROUNDED) as strict:
        with pytest.raises(ErrFactNotGrounded):
            strict.add_fact(**fact)
        assert strict.rejections(text="cats")
