"""Labelled claim/evidence sets (``../shared/data/grounding``) for calibration and benchmarks.

Each row becomes an ``Example``: the claim, its evidence as a list of texts, the
label (1 = supported) and, where the data says which evidence sentences support
the claim (WiCE), their indices. Rows are assigned to the ``fit`` or ``check``
split deterministically, so calibration never sees the rows it is scored on.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Split = Literal["fit", "check"]

#: Environment variable naming the data directory; default ``../shared/data/grounding``.
DATA_DIR_ENV = "MEMSTORE_GROUNDING_DATA"


@dataclass(frozen=True, slots=True)
class Example:
    """One labelled claim with its evidence."""

    dataset: str
    key: str
    claim: str
    evidence: tuple[str, ...]
    label: int
    supporting: tuple[tuple[int, ...], ...] = field(default=())
    #: The split the data itself assigns (SummEdits: "evaluation" rows -> fit), if any.
    given_split: Split | None = None
    #: SummEdits: the faithful summary this claim was edited from.
    original: str | None = None

    @property
    def split(self) -> Split:
        """The data's own split where it has one, else half the rows by a hash of the key."""
        if self.given_split is not None:
            return self.given_split
        digest = hashlib.sha256(f"{self.dataset}/{self.key}".encode()).digest()
        return "fit" if digest[0] % 2 == 0 else "check"


def default_data_dir() -> Path:
    """The shared data directory: ``$MEMSTORE_GROUNDING_DATA`` or ``../shared/data/grounding``."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "data" / "grounding"


def load(data_dir: Path | None = None, split: Split | None = None) -> list[Example]:
    """Every example in ``data_dir`` (all of them, or one split), in a stable order."""
    data_dir = data_dir or default_data_dir()
    if not data_dir.is_dir():
        raise FileNotFoundError(f"no grounding data at {data_dir}; set ${DATA_DIR_ENV}")
    rows = [*_begin(data_dir), *_summedits(data_dir), *_wice(data_dir)]
    return [r for r in rows if split is None or r.split == split]


def datasets(examples: list[Example]) -> list[str]:
    """The dataset names present, sorted."""
    return sorted({e.dataset for e in examples})


def _begin(data_dir: Path) -> Iterator[Example]:
    csv.field_size_limit(1 << 24)
    for path in sorted(data_dir.glob("begin_dev_*.tsv")):
        name = "begin_" + path.stem.removeprefix("begin_dev_")
        with path.open(newline="", encoding="utf-8") as fh:
            for i, row in enumerate(csv.DictReader(fh, delimiter="\t")):
                yield Example(
                    dataset=name,
                    key=str(i),
                    claim=row["response"],
                    evidence=(row["knowledge"],),
                    label=int(row["begin_label"] == "Fully attributable"),
                )


def _summedits(data_dir: Path) -> Iterator[Example]:
    for path in sorted(data_dir.glob("summedits_*.json")):
        for row in json.loads(path.read_text(encoding="utf-8")):
            yield Example(
                dataset=path.stem,
                key=str(row["id"]),
                claim=row["summary"],
                evidence=(row["doc"],),
                label=int(str(row["label"]) == "1"),
                given_split="fit" if row.get("split") == "evaluation" else "check",
                original=row.get("original_summary"),
            )


def _wice(data_dir: Path) -> Iterator[Example]:
    path = data_dir / "wice_dev.jsonl"
    if not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            row = json.loads(line)
            yield Example(
                dataset="wice",
                key=str(i),
                claim=row["claim"],
                evidence=tuple(row["evidence"]),
                label=int(row["label"] == "supported"),
                supporting=tuple(tuple(s) for s in row.get("supporting_sentences", [])),
            )
