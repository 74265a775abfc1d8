"""Recall for the next turn (``Store.recall``) and the relevance threshold of search
(``min_score``): a real SQLite store, its LanceDB index and the packaged MiniLM."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest
from distractors import distractors
from samples import allergy, works_at
from scripted import supports_its_own_words
from transformers import AutoTokenizer

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.backends.embedded.backend import minilm_path
from memstore import AsyncStore, InvalidInput, Store
from memstore.read.recall import DEFAULT_MIN_SCORE, count_tokens

UNRELATED = "How do I reverse a list in Python?"
RELATED = "What is the user allergic to?"
PEANUTS = "The user is allergic to peanuts."
MAYA_SAID = "Maya: I live in Lisbon since May 2025, and I work at Acme as a nurse."
SPRING = datetime(2025, 5, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def haystack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """300 seeded memories of people's lives and the user's peanut allergy (gate off)."""
    data = tmp_path_factory.mktemp("recall") / "mem"
    with memstore.open(data, "user:alice", hook=memstore.Ungated()) as store:
        store.add_facts([*distractors(300), allergy("peanuts")])
        yield store


# -- relevance and the threshold of search ------------------------------------------------


def test_every_hit_has_a_relevance_between_0_and_1(haystack: Store) -> None:
    for mode in ("hybrid", "vector", "text"):
        hits = haystack.search("Who speaks Japanese?", 10, mode=mode)
        assert hits, mode
        assert all(0.0 <= h.relevance <= 1.0 for h in hits), mode
    for hit in haystack.search("Who speaks Japanese?", 10, mode="vector"):
        assert hit.similarity is not None
        assert hit.relevance == pytest.approx(max(0.0, min(1.0, hit.similarity)))


def test_a_hit_only_the_text_side_found_has_the_relevance_the_vector_side_gives_it(
    haystack: Store,
) -> None:
    """Relevance does not depend on the side that found a fact: text-only hits get theirs
    from the fact's stored vector."""
    by_text = {h.fact.id: h for h in haystack.search("peanuts", 5, mode="text")}
    assert by_text and all(h.similarity is None for h in by_text.values())
    by_vector = {h.fact.id: h for h in haystack.search("peanuts", 400, mode="vector")}
    for fact_id, hit in by_text.items():
        assert hit.relevance == pytest.approx(by_vector[fact_id].relevance, abs=1e-4)


def test_an_unrelated_query_finds_nothing_above_the_default_while_a_related_one_does(
    haystack: Store,
) -> None:
    assert len(haystack.search(UNRELATED, 5)) == 5  # without a threshold, something comes back
    assert haystack.search(UNRELATED, 5, min_score=DEFAULT_MIN_SCORE) == []
    related = haystack.search(RELATED, 5, min_score=DEFAULT_MIN_SCORE)
    assert related[0].fact.statement == PEANUTS
    assert all(h.relevance >= DEFAULT_MIN_SCORE for h in related)


def test_min_score_drops_hits_below_it_and_keeps_the_order(haystack: Store) -> None:
    everything = haystack.search("Who lives in Paris?", 20)
    cut = sorted(h.relevance for h in everything)[len(everything) // 2]
    kept = haystack.search("Who lives in Paris?", 20, min_score=cut)
    assert [h.fact.id for h in kept] == [h.fact.id for h in everything if h.relevance >= cut]
    assert 0 < len(kept) < len(everything)


def test_min_score_also_thresholds_evidence_chunks(haystack: Store) -> None:
    assert haystack.search_evidence(UNRELATED, 5)
    assert haystack.search_evidence(UNRELATED, 5, min_score=DEFAULT_MIN_SCORE) == []
    [chunk, *_] = haystack.search_evidence("peanut allergy", 5, min_score=DEFAULT_MIN_SCORE)
    assert "peanuts" in chunk.text and chunk.relevance >= DEFAULT_MIN_SCORE


def test_expansion_is_not_thresholded_but_says_how_relevant_it_is(haystack: Store) -> None:
    hits = haystack.search(RELATED, 1, expand=True, min_score=DEFAULT_MIN_SCORE)
    direct, *expanded = hits
    assert direct.fact.statement == PEANUTS and direct.via is None
    assert expanded and all(h.via == direct.fact.id for h in expanded)
    assert all(0.0 <= h.relevance <= 1.0 for h in expanded)


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, True, "0.5"])
def test_a_bad_min_score_is_refused_naming_it(haystack: Store, bad: object) -> None:
    for call in (haystack.search, haystack.search_evidence, haystack.recall):
        with pytest.raises(InvalidInput) as refused:
            call("peanuts", min_score=bad)  # type: ignore[operator]
        assert refused.value.field == "min_score", call


# -- recall ---------------------------------------------------------------------------------


def test_recall_answers_the_relevant_memories_as_lines_best_first(haystack: Store) -> None:
    found = haystack.recall(RELATED)
    first, *_ = found.text.splitlines()
    assert first.startswith(f"- {PEANUTS} (unverified; recorded ")
    assert first.endswith("; confidence 0.95; source: inline)")
    assert found.hits[0].fact.statement == PEANUTS
    assert len(found.text.splitlines()) == len(found.hits)
    assert all(h.relevance >= DEFAULT_MIN_SCORE for h in found.hits)
    assert found.tokens == count_tokens(found.text) <= found.budget_tokens == 512


def test_an_unrelated_query_recalls_an_empty_block(haystack: Store) -> None:
    found = haystack.recall(UNRELATED)
    assert (found.text, found.hits, found.tokens, found.left_out) == ("", [], 0, 0)
    assert haystack.recall(UNRELATED, min_score=0).hits  # no threshold: the best come back


@pytest.mark.parametrize("budget", [1, 12, 30, 45, 60, 100, 200])
def test_the_block_never_exceeds_its_budget(haystack: Store, budget: int) -> None:
    whole = haystack.recall("Where do people live?", budget_tokens=10_000, min_score=0)
    lines = whole.text.splitlines()
    assert len(lines) == 20  # k's default; the budget did not cut it
    found = haystack.recall("Where do people live?", budget_tokens=budget, min_score=0)
    assert count_tokens(found.text) == found.tokens <= budget
    shown = found.text.splitlines()
    assert shown == lines[: len(shown)]  # best first, stopping at the first that does not fit
    assert found.left_out == 20 - len(shown)
    if len(shown) < 20:
        assert count_tokens("\n".join(lines[: len(shown) + 1])) > budget


def test_a_budget_of_exactly_the_blocks_tokens_holds_it_all(haystack: Store) -> None:
    whole = haystack.recall("Where do people live?", k=5, min_score=0)
    exact = haystack.recall("Where do people live?", k=5, budget_tokens=whole.tokens, min_score=0)
    assert exact.text == whole.text and exact.left_out == 0
    short = haystack.recall(
        "Where do people live?", k=5, budget_tokens=whole.tokens - 1, min_score=0
    )
    assert short.text.splitlines() == whole.text.splitlines()[:4] and short.left_out == 1


def test_tokens_are_counted_with_the_minilm_tokenizer() -> None:
    reference = AutoTokenizer.from_pretrained(str(minilm_path()))
    for text in [PEANUTS, MAYA_SAID, "- a line\n- another (since 2025-05-01; confidence 0.95)"]:
        expected = len(reference(text, add_special_tokens=False)["input_ids"])
        assert count_tokens(text) == expected, text
    long = " ".join(["supercalifragilistic"] * 400)  # longer than the model's 256: no truncation
    assert count_tokens(long) == len(reference(long, add_special_tokens=False)["input_ids"]) > 512


def test_a_line_says_when_it_held_its_confidence_and_its_source(tmp_path: Path) -> None:
    gate = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)
    with memstore.open(tmp_path / "mem", "user:maya", gate=gate) as store:
        home = store.add_fact(
            statement="Maya lives in Lisbon.",
            members=["Maya", "Lisbon"],
            evidence=[{"text": MAYA_SAID, "source": "https://crm.example/maya"}],
            valid_from=SPRING,
        )
        job = store.add_fact(
            statement="Maya works at Acme as a nurse.",
            members=["Maya", "Acme"],
            evidence=[MAYA_SAID],
            valid_from=datetime(2025, 5, 1, 9, 30, tzinfo=UTC),
            valid_to=datetime(2026, 1, 1, tzinfo=UTC),
            confidence=0.8,
        )
        assert home.status == job.status == "verified"
        found = store.recall("Where does Maya live and work?", min_score=0)
    lines = dict(zip([h.fact.id for h in found.hits], found.text.splitlines(), strict=True))
    assert lines[home.id] == (
        f"- Maya lives in Lisbon. (since 2025-05-01; confidence {home.confidence:.2f}; "
        "source: https://crm.example/maya)"
    )
    assert lines[job.id] == (
        "- Maya works at Acme as a nurse. (held 2025-05-01 09:30 UTC to 2026-01-01; "
        f"confidence {job.confidence:.2f}; source: inline)"
    )


def test_a_line_names_two_sources_and_cuts_a_long_one(store: Store) -> None:
    long = "https://docs.example/" + "notes/" * 30 + "maya.md"
    store.add_fact(
        statement="Maya lives in Lisbon.",
        members=["Maya"],
        evidence=[
            {"text": "Maya lives in Lisbon.", "source": long},
            {"text": "Maya: Lisbon is home.", "source": "https://b.example/2"},
            {"text": "Lisbon, says Maya.", "source": "https://c.example/3"},
        ],
    )
    [line] = store.recall("Where does Maya live?").text.splitlines()
    assert line.endswith(f"; source: {long[:77]}..., https://b.example/2 +1 more)")


def test_recall_keeps_to_active_facts_unless_asked(store: Store) -> None:
    old = store.add_fact(works_at("Alice", "Acme", valid_from=datetime(2020, 1, 1, tzinfo=UTC)))
    new = store.supersede(old.id, works_at("Alice", "Globex", valid_from=SPRING))
    gone = store.add_fact(allergy("peanuts"))
    store.retract(gone.id, reason="the user was wrong")
    query = "Where does Alice work and what is she allergic to?"
    assert [h.fact.id for h in store.recall(query, min_score=0).hits] == [new.id]
    asked = store.recall(query, statuses=["retracted"], min_score=0)
    assert [h.fact.id for h in asked.hits] == [gone.id]
    assert asked.text.startswith(f"- {PEANUTS} (retracted; recorded ")
    then = store.recall(query, as_of=datetime(2022, 1, 1, tzinfo=UTC), min_score=0)
    assert [h.fact.id for h in then.hits] == [old.id]
    assert "(superseded; held 2020-01-01 to 2025-05-01;" in then.text


def test_an_empty_store_or_an_unknown_entity_recalls_an_empty_block(store: Store) -> None:
    empty = store.recall("Where does Alice work?")
    assert (empty.text, empty.hits, empty.tokens, empty.left_out) == ("", [], 0, 0)
    store.add_fact(works_at("Alice", "Acme"))
    assert store.recall("Where does Alice work?", entity="Nobody").text == ""
    assert store.recall("Where does Alice work?", entity="Alice").text.startswith(
        "- Alice works at Acme. ("
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": "  "}, "query"),
        ({"budget_tokens": 0}, "budget_tokens"),
        ({"budget_tokens": 100_001}, "budget_tokens"),
        ({"budget_tokens": True}, "budget_tokens"),
        ({"k": 0}, "k"),
        ({"statuses": ["forgotten"]}, "statuses"),
        ({"as_of": "yesterday"}, "as_of"),
    ],
)
def test_bad_recall_input_is_refused_naming_the_field(
    store: Store, arguments: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        store.recall(**{"query": "Alice", **arguments})  # type: ignore[arg-type]
    assert refused.value.field == field


def test_async_store_recalls_off_the_event_loop(tmp_path: Path) -> None:
    async def main() -> str:
        async with await AsyncStore.open(tmp_path / "mem", hook=memstore.Ungated()) as store:
            await store.add_fact(**allergy("peanuts"))
            return (await store.recall(RELATED)).text

    assert anyio.run(main).startswith(f"- {PEANUTS} (")


def test_where_no_memory_covers_a_question_the_turns_said_are_quoted(tmp_path: Path) -> None:
    gate = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)
    with memstore.open(tmp_path / "m", "user:ravi", gate=gate) as store:
        store.remember_conversation(
            [
                {"role": "user", "name": "Ravi", "content": "Is the office close to the Spire?"},
                {"role": "assistant", "content": "Yes, a five-minute walk from the Spire."},
                {"role": "user", "name": "Ravi", "content": "I drink green tea every morning."},
            ]
        )  # one fact (the tea); the turns before it are stored as its context
        covered = store.recall("What does Ravi drink?")
        assert [h.fact.statement for h in covered.hits] == ["Ravi drinks green tea every morning."]
        assert covered.turns == []  # a memory answers: no turn is quoted
        found = store.recall("How far is the office from the Spire?")
        assert found.hits == [] and len(found.turns) == len(found.text.splitlines()) >= 1
        first = re.sub(
            r"recorded \d{4}-\d{2}-\d{2}\)$", "recorded <day>)", found.text.splitlines()[0]
        )
        assert first in (
            '- Ravi said: "Is the office close to the Spire?" (a stored turn, recorded <day>)',
            '- Assistant said: "Yes, a five-minute walk from the Spire." (a stored turn, '
            "recorded <day>)",
        )
        assert found.tokens == count_tokens(found.text)
        assert store.recall("How far is the office from the Spire?", entity="Ravi").turns == []
        assert store.recall(UNRELATED).text == ""
