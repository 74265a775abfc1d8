"""Long casual chats: does ``search`` find the turn a question's answer is in?

    python bench/casual_chat.py

``data/casual/chats.json``: two chats between friends, five sessions each (237 turns),
with 90 questions in the categories of public long-conversation benchmarks (single-hop,
multi-hop, temporal, open-domain, and adversarial ones about what was never said, which
are not scored), each naming the turns that hold its answer. The data was written for
this project by a helper who had not seen the code; design choices of the search and
the extractor were compared on it (``asked_of``, 2026-12-07), so it is a development set,
not a held-out one. Each chat goes through ``remember_conversation`` (embedded extractor,
default gate) into a fresh store; each question's ``search(question, 10)`` hits count
when a hit is a fact extracted from one of its answer turns. Results go to
``results/casual_chat.json`` with the machine, the date, the commit and the command.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from measure import RESULTS, provenance, save

import memstore
from memstore.conversations import EmbeddedExtractor

DATA = Path(__file__).resolve().parent / "data" / "casual" / "chats.json"
OUT = RESULTS / "casual_chat.json"
K = 10


def run(chat: dict[str, Any], extractor: EmbeddedExtractor) -> dict[str, Any]:
    """One chat's questions: the rank of the first hit from an answer turn (None: not in
    the top ``K``), and what was stored."""
    turns = chat["turns"]
    messages = [{"role": "user", "name": t["speaker"], "content": t["text"]} for t in turns]
    with tempfile.TemporaryDirectory(prefix="casual-") as tmp, memstore.open(Path(tmp)) as store:
        began = time.perf_counter()
        report = store.remember_conversation(messages, extractor=extractor)
        seconds = time.perf_counter() - began
        turns_of: dict[str, set[int]] = defaultdict(set)
        for candidate in report.candidates:
            if candidate.fact is not None:
                turns_of[candidate.fact.id].add(candidate.message)
        questions = []
        for q in chat["questions"]:
            if not q["evidence"]:
                continue  # adversarial: nothing to find
            hits = store.search(q["q"], K)
            ranks = [n for n, h in enumerate(hits) if turns_of[h.fact.id] & set(q["evidence"])]
            questions.append(
                {"q": q["q"], "category": q["category"], "rank": ranks[0] if ranks else None}
            )
    return {
        "id": chat["id"],
        "turns": len(turns),
        "candidates": len(report.candidates),
        "stored": len(turns_of),
        "turns_with_a_fact": len({m for found in turns_of.values() for m in found}),
        "ms_per_turn": round(seconds / len(turns) * 1000, 1),
        "questions": questions,
    }


def hit_rates(questions: list[dict[str, Any]]) -> dict[str, float]:
    """hit@1, @5 and @10 of ``questions``."""
    return {
        f"hit_at_{k}": round(
            sum(q["rank"] is not None and q["rank"] < k for q in questions) / len(questions), 3
        )
        for k in (1, 5, 10)
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    chats = json.loads(DATA.read_text())["conversations"]
    extractor = EmbeddedExtractor()
    runs = [run(chat, extractor) for chat in chats]
    questions = [q for r in runs for q in r["questions"]]
    categories = Counter(q["category"] for q in questions)
    result = {
        **provenance("casual_chat"),
        "chats": len(runs),
        "turns": sum(r["turns"] for r in runs),
        "questions": len(questions),
        **hit_rates(questions),
        "by_category": {
            c: {"questions": n, **hit_rates([q for q in questions if q["category"] == c])}
            for c, n in sorted(categories.items())
        },
        "per_chat": runs,
    }
    save(result, OUT)


if __name__ == "__main__":
    main()
