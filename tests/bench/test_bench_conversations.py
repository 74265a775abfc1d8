"""The conversation bench: its data against the schema, the matching rule, the scoring."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted import supports_its_own_words

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import conversation_data  # noqa: E402
import conversations  # noqa: E402
import summary  # noqa: E402
from conversation_data import Expected, Matcher, Trap, has_phrase, load, members_match  # noqa: E402

from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend  # noqa: E402
from memstore.conversations import Candidate, EmbeddedExtractor  # noqa: E402


def test_every_conversation_fits_the_schema() -> None:
    data = load()
    assert len(data) >= conversation_data.MIN_CONVERSATIONS == 20
    assert len({c.id for c in data}) == len(data)
    for conv in data:
        turns = len(conv.messages)
        assert 10 <= turns <= 30, conv.id
        ids = {e.id for e in conv.expected}
        assert all(0 <= e.turn < turns for e in conv.expected), conv.id
        assert all(c.old in ids and c.new in ids for c in conv.corrections), conv.id
        assert all(q.answer in {e.id for e in conv.current} for q in conv.questions), conv.id
        for trap in conv.traps:
            assert trap.quote in conv.messages[trap.turn].content, conv.id
    assert {m.role for c in data for m in c.messages} == {"user", "assistant", "tool"}
    assert sum(len(c.corrections) for c in data) >= len(data)


def _first() -> dict[str, Any]:
    path = sorted(conversation_data.DATA.glob("*.json"))[0]
    return dict(json.loads(path.read_text("utf-8")))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda c: c["expected"][0].update(turn=99), "expected.0.turn"),
        (lambda c: c["expected"][0].update(keywords=["Reykjavik"]), "expected.0.keywords"),
        (lambda c: c["corrections"][0].update(new="e99"), "corrections.0.new"),
        (lambda c: c["corrections"][0].update(turn=0), "corrections.0.turn"),
        (lambda c: c["questions"][0].update(answer=c["corrections"][0]["old"]), "questions.0"),
        (lambda c: c["traps"][0].update(quote="words nobody said"), "traps.0.quote"),
        (lambda c: c["traps"][0].update(kind="rumour"), "traps.0.kind"),
        (lambda c: c.update(messages=c["messages"][:9]), "messages"),
        (lambda c: c["messages"][0].update(role="robot"), "messages.0.role"),
        (lambda c: c.update(id="another"), "id"),
    ],
)
def test_a_broken_file_is_refused_naming_the_field(tmp_path: Path, change: Any, field: str) -> None:
    conv = _first()
    change(conv)
    (tmp_path / f"{_first()['id']}.json").write_text(json.dumps(conv), encoding="utf-8")
    with pytest.raises(ValueError, match=rf": {field}"):
        load(tmp_path)


def test_the_matching_rule() -> None:
    lives = Expected(
        id="e1",
        statement="The user lives in Porto.",
        members=["the user"],
        keywords=["Porto"],
        absent=["Lisbon"],
        turn=0,
    )
    matcher = Matcher()
    assert matcher.matches(lives, "The user lives in Porto.", ["User"])
    assert matcher.matches(lives, "the user has lived in Porto for years.", ["the user", "Porto"])
    assert not matcher.matches(lives, "Bob lives in Porto.", ["Bob"])  # members
    assert not matcher.matches(lives, "The user lives in Braga.", ["the user"])  # keywords
    assert not matcher.matches(lives, "The user moved from Porto to Lisbon.", ["the user"])
    assert not Matcher(min_similarity=0.99).matches(
        lives, "The user has lived in Porto for years.", ["the user"]
    )
    assert members_match(["Rossi Builders|Mike"], ["Rossi", "kitchen"])
    assert not members_match(["Marta", "the user"], ["Marta"])
    assert has_phrase("Dana reviewed it.", "review") and not has_phrase("two days ago", "go")
    assert has_phrase("about 50 minutes", "50") and not has_phrase("about 500 hosts", "50")


def _candidate(turn: int, statement: str = "x y z.") -> Candidate:
    return Candidate(statement, (("Ann", "person", "subject"),), turn, statement)


def _trap(turn: int) -> Trap:
    member = {"name": "Ann", "kind": "person", "role": "subject"}
    return Trap(kind="stale", statement=f"trap {turn}", members=[member], turn=turn, quote="q")


def test_each_trap_goes_before_the_first_candidate_from_a_later_turn() -> None:
    found = [_candidate(5), _candidate(2), _candidate(8)]  # an llm may answer out of order
    merged, where = conversations.with_traps(found, [_trap(6), _trap(3), _trap(9)])
    assert [c.message for c in merged] == [3, 5, 2, 6, 8, 9]
    assert [merged[i].statement for i in where] == ["trap 6", "trap 3", "trap 9"]


def test_one_conversation_is_scored_with_the_embedded_extractor(tmp_path: Path) -> None:
    # The gate reads only words (a rule, not a model), so what it admits cannot drift.
    conv = next(c for c in load() if c.id == "01-assistant-move")
    gate = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)
    row = conversations.run_conversation(conv, EmbeddedExtractor(), tmp_path, Matcher(), gate)
    assert row["error"] is None and row["messages"] == 16
    states = {k: v["state"] for k, v in row["expected"].items()}
    assert set(states) == {e.id for e in conv.current}
    assert {k for k, v in states.items() if v == "remembered"} >= {"e3", "e5", "e6"}
    assert row["expected"]["e5"]["role"] == "tool"  # a tool result, read as fields
    # "The user says Marta's birthday ...": the rule gate reads words, and "says" is not
    # one of the turn's, so it refuses what a speaker says of someone else.
    assert states["e8"] == "refused"
    assert row["corrections"] == {"e1->e6": {"state": "reconciled", "superseded_by_new": True}}
    # Behind "The user's sister Marta lives in Braga." and a reminder's fields on words: a
    # move of the user's leaves where a relative lives (memstore.conversations.reconcile).
    assert row["questions"]["Where does the user live?"]["rank"] in (1, 2, 3)
    assert row["questions"]["Where does the user live?"]["in_recall"]
    outcomes = {t["statement"]: t["outcome"] for t in row["traps"]}
    assert outcomes["The user lives in Porto."] == "refused"  # stale: "moved to Lisbon"
    assert outcomes["The user works at Google."] == "refused"
    # Every word of the misattribution is in its turn: a reader of words admits it.
    assert outcomes["Marta is allergic to penicillin."] == "stored"

    total = conversations.summarize([row])
    remembered = sum(v == "remembered" for v in states.values())
    assert total["recall"] == round(remembered / len(states), 3)
    assert total["traps_refused"] == round(
        sum(o == "refused" for o in outcomes.values()) / len(outcomes), 3
    )
    assert total["corrections_reconciled"] == 1.0
    assert total["latency"]["per_conversation"]["samples"] == 1

    result = {"data": {"conversations": 1, "messages": 16, "expected": 7, "traps": 4,
                       "corrections": 1, "questions": 3},
              "extractors": {"embedded": total}}  # fmt: skip
    table = summary.conversations_table(result)
    assert f"| expected memories remembered | {total['recall']:.2f} |" in table
    tool = total["expected"]["by_role"]["tool"]
    assert tool == {"expected": 1, "remembered": 1, "recall": 1.0}
    assert "| ... from tool turns | 1.00 (1/1) |" in table
    assert "assistant turns" not in table  # no memory of this conversation comes from one
