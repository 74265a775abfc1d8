"""The casual-chat bench: its data, its hit rates and its summary table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import casual_chat  # noqa: E402
import summary  # noqa: E402

CATEGORIES = {"single-hop", "multi-hop", "temporal", "open-domain", "adversarial"}


def test_every_question_names_turns_that_exist_and_each_session_starts_at_its_turn() -> None:
    chats = json.loads(casual_chat.DATA.read_text())["conversations"]
    assert len(chats) == 2
    for chat in chats:
        turns = chat["turns"]
        assert {t["speaker"] for t in turns} == set(chat["speakers"])
        for n, session in enumerate(chat["sessions"]):
            assert turns[session["start"]]["session"] == n
            assert session["start"] == 0 or turns[session["start"] - 1]["session"] == n - 1
        for q in chat["questions"]:
            assert q["category"] in CATEGORIES
            assert all(0 <= e < len(turns) for e in q["evidence"])
            assert (q["category"] == "adversarial") == (not q["evidence"]), q["q"]


def test_hit_rates_count_a_rank_below_k() -> None:
    ranks = [0, 3, 7, None]
    assert casual_chat.hit_rates([{"rank": r} for r in ranks]) == {
        "hit_at_1": 0.25,
        "hit_at_5": 0.5,
        "hit_at_10": 0.75,
    }


def test_the_summary_shows_all_questions_then_each_category() -> None:
    result = {
        "chats": 2,
        "turns": 237,
        "questions": 4,
        "hit_at_1": 0.25,
        "hit_at_5": 0.5,
        "hit_at_10": 0.75,
        "by_category": {
            "temporal": {"questions": 4, "hit_at_1": 0.25, "hit_at_5": 0.5, "hit_at_10": 0.75}
        },
    }
    table = summary.casual_table(result).splitlines()
    assert table[-2:] == [
        "| all | 4 | 0.25 | 0.50 | 0.75 |",
        "| temporal | 4 | 0.25 | 0.50 | 0.75 |",
    ]
