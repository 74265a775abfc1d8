"""The agent-memory grounding set (issue 23): is a memory supported by the evidence it cites?

Hand-written scenarios (chat turns, tool outputs, logs, tables, documents, code, email,
calendars, tickets), each with labelled claims, plus rule-made hard negatives for the
``train`` and ``dev`` splits; see ``bench/data/agent_memory/README.md``. The ``test`` split
is for scoring only: never train, fit thresholds, calibrate or choose checkpoints on it.

    from agent_memory import load
    for pair in load("dev"):
        pair.claim, pair.evidence, pair.label
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Split = Literal["train", "dev", "test"]

#: The splits, in the order they are written.
SPLITS: tuple[Split, ...] = ("train", "dev", "test")

#: Where the split files live.
DATA_DIR = Path(__file__).resolve().parent / "data" / "agent_memory"


@dataclass(frozen=True, slots=True)
class AgentMemoryPair:
    """One labelled claim with the evidence it is checked against."""

    #: ``am-NNN-cK`` (hand-written) or ``am-NNN-cK-g-RULE`` (generated).
    id: str
    #: The scenario the evidence comes from; every pair of a scenario is in one split.
    scenario: str
    claim: str
    evidence: tuple[str, ...]
    #: 1: stated or directly entailed by the evidence; 0: not.
    label: int
    #: What the evidence is: chat_first_person, multi_speaker, tool_json, tool_log, ...
    kind: str
    #: What the claim tests: paraphrase, number_words, role_swap, speaker_swap, negation, ...
    phenomenon: str
    #: For supported hand-written claims, where one exists: the span of evidence stating it.
    quote: str | None = None
    #: For generated hard negatives: the id of the supported pair it was made from.
    generated_from: str | None = None

    @property
    def generated(self) -> bool:
        """Whether a rule made this pair (a hard negative) rather than a person."""
        return self.generated_from is not None


def _pair(row: dict[str, Any]) -> AgentMemoryPair:
    return AgentMemoryPair(
        id=row["id"],
        scenario=row["scenario"],
        claim=row["claim"],
        evidence=tuple(row["evidence"]),
        label=int(row["label"]),
        kind=row["kind"],
        phenomenon=row["phenomenon"],
        quote=row.get("quote"),
        generated_from=row.get("generated_from"),
    )


def load(
    split: Split, data_dir: Path | None = None, *, generated: bool = True
) -> list[AgentMemoryPair]:
    """The pairs of one split in file order; ``generated=False`` keeps the hand-written ones."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    path = (data_dir or DATA_DIR) / f"{split}.jsonl"
    with path.open(encoding="utf-8") as f:
        pairs = [_pair(json.loads(line)) for line in f if line.strip()]
    return [p for p in pairs if generated or not p.generated]


def load_all(
    data_dir: Path | None = None, *, generated: bool = True
) -> dict[Split, list[AgentMemoryPair]]:
    """Every split, keyed by name."""
    return {split: load(split, data_dir, generated=generated) for split in SPLITS}


def split_arguments(description: str, argv: list[str] | None) -> argparse.Namespace:
    """The options of a bench over these rows: ``--split``, ``--backend``, ``--out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--split", choices=SPLITS, default="dev")
    parser.add_argument("--backend", default="embedded")
    parser.add_argument("--out", type=Path)
    return parser.parse_args(argv)
