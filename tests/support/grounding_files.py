"""A miniature copy of the three file formats in ../shared/data/grounding, for tests that
load, train or calibrate without the real data."""

from __future__ import annotations

import csv
import json
from pathlib import Path

FACTS = [
    ("Alice works at Acme as an engineer.", "Alice is an engineer at Acme."),
    ("The bridge opened in 1932 after six years of work.", "The bridge opened in 1932."),
    ("Tom moved to Berlin in May to study music.", "Tom moved to Berlin in May."),
    ("The museum is closed on Mondays and holidays.", "The museum is closed on Mondays."),
    ("Sara bought a red bicycle for her commute.", "Sara bought a red bicycle."),
    ("The river floods every spring near the village.", "The river floods every spring."),
]
WRONG = [
    "Alice works at Initech.",
    "The bridge opened in 1955.",
    "Tom moved to Paris in May.",
    "The museum is open on Mondays.",
    "Sara bought a blue car.",
    "The river never floods.",
]


def write_fixture(root: Path) -> Path:
    """A miniature copy of the three formats in ../shared/data/grounding."""
    root.mkdir()
    with (root / "begin_dev_wow.tsv").open("w", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t")
        writer.writerow(
            ["model_name", "data_source", "knowledge", "message", "response", "begin_label"]
        )
        for (doc, good), bad in zip(FACTS, WRONG, strict=True):
            writer.writerow(["t5", "wow", doc, "hi", good, "Fully attributable"])
            writer.writerow(["t5", "wow", doc, "hi", bad, "Not fully attributable"])
            writer.writerow(["t5", "wow", doc, "hi", "I love that!", "Generic"])
    rows = []
    for i, ((doc, good), bad) in enumerate(zip(FACTS, WRONG, strict=True)):
        split = "evaluation" if i < 4 else "test"
        rows.append({"id": f"g{i}", "doc": doc, "summary": good, "label": "1", "split": split})
        rows.append({"id": f"b{i}", "doc": doc, "summary": bad, "label": 0, "split": split})
    (root / "summedits_news.json").write_text(json.dumps(rows))
    with (root / "wice_dev.jsonl").open("w") as fh:
        for label, (doc, claim) in zip(
            ["supported", "partially_supported", "not_supported"], FACTS, strict=False
        ):
            row = {"label": label, "supporting_sentences": [[0]], "claim": claim, "evidence": [doc]}
            fh.write(json.dumps(row) + "\n")
    return root
