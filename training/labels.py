"""The labels people give on the audit page, read out of a store as training examples.

    python -m training.labels --store DIR_OR_URL --namespace NS [--namespace NS2 ...] \\
        --out people.jsonl

A person's label says the gate decided wrong, so it is a (claim, evidence, label) row
with the gate's verdict turned over:

- ``false_rejection`` on a rejection ("this refusal was wrong"): the rejection's
  statement with the evidence texts it was checked against, label 1 (supported);
- ``false_admission`` on a fact ("this fact should not have been stored"): the fact's
  statement with the evidence texts it cites (and the context evidence it was checked
  against with them, as the gate read them), label 0.

Several people labelling one target make one example (``labelled_by`` names them all).
A target whose evidence can no longer be read is left out and counted: a rejection or
fact with no evidence, or a fact whose evidence no live fact cites any more (retracted
since; ``Store.get_evidence`` shows only evidence backing live memory).

Everything is read through the public ``Store`` API. ``training.mix`` reads the file
written here as its optional ``people`` component (``python -m training.verifier
--people FILE``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from memstore.errors import NotFound
from memstore.schemas import MAX_LABEL_PAGE
from memstore.storage.tables import LabelKind

if TYPE_CHECKING:
    from memstore import Store

#: The label each kind of human verdict gives the claim.
LABEL_OF = {LabelKind.FALSE_REJECTION.value: 1, LabelKind.FALSE_ADMISSION.value: 0}

_Text = Annotated[str, Field(min_length=1)]


class PeopleExample(BaseModel):
    """One labelled decision as a training example (one line of the JSONL file)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim: _Text
    evidence: Annotated[list[_Text], Field(min_length=1)]
    #: 1: supported (a wrong refusal), 0: not supported (a wrong admission).
    label: Literal[0, 1]
    kind: Literal["false_rejection", "false_admission"]
    #: The rejection or fact id in its namespace.
    target_id: _Text
    namespace: _Text
    #: Who labelled it, sorted.
    labelled_by: Annotated[list[_Text], Field(min_length=1)]

    @model_validator(mode="after")
    def _label_fits_kind(self) -> PeopleExample:
        if self.label != LABEL_OF[self.kind]:
            raise ValueError(f"a {self.kind} label makes label {LABEL_OF[self.kind]}")
        return self


@dataclass(frozen=True, slots=True)
class Skipped:
    """A labelled target left out, and why."""

    kind: str
    target_id: str
    namespace: str
    reason: str


@dataclass(slots=True)
class Harvest:
    """What one store's labels gave: the examples and the targets left out."""

    examples: list[PeopleExample] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def counts(self) -> dict[str, dict[str, int]]:
        """Examples and skipped targets per kind."""
        return {
            "examples": dict(sorted(Counter(e.kind for e in self.examples).items())),
            "skipped": dict(sorted(Counter(s.kind for s in self.skipped).items())),
        }


# ------------------------------------------------------------------------ reading


@dataclass(frozen=True, slots=True)
class _Target:
    kind: str
    target_id: str
    first: datetime
    by: tuple[str, ...]


def _targets(store: Store) -> list[_Target]:
    """Every labelled target of the namespace, oldest first label first, with who."""
    given: dict[tuple[str, str], list[tuple[datetime, str]]] = {}
    offset = 0
    while True:
        page = store.labels(limit=MAX_LABEL_PAGE, offset=offset)
        for label in page:
            given.setdefault((label.kind, label.target_id), []).append(
                (label.created_at, label.labelled_by)
            )
        if len(page) < MAX_LABEL_PAGE:
            break
        offset += len(page)
    targets = [
        _Target(kind, target_id, min(at for at, _ in said), tuple(sorted({b for _, b in said})))
        for (kind, target_id), said in given.items()
    ]
    return sorted(targets, key=lambda t: (t.first, t.kind, t.target_id))


def _claim_and_evidence(store: Store, target: _Target) -> tuple[str, list[str]]:
    """The claim and the evidence texts the gate read it against (NotFound: gone)."""
    if target.kind == LabelKind.FALSE_REJECTION:
        rejection = store.get_rejection(target.target_id)
        return rejection.statement, [e.text for e in rejection.evidence]
    fact = store.get_fact(target.target_id)
    return fact.statement, [store.get_evidence(i).text for i in fact.evidence_ids]


def read_store(store: Store) -> Harvest:
    """The examples the labels of ``store``'s namespace make, oldest label first."""
    out = Harvest()
    for target in _targets(store):
        try:
            claim, evidence = _claim_and_evidence(store, target)
        except NotFound as gone:
            out.skipped.append(
                Skipped(target.kind, target.target_id, store.namespace, f"not readable: {gone}")
            )
            continue
        if not evidence:
            out.skipped.append(
                Skipped(target.kind, target.target_id, store.namespace, "no evidence")
            )
            continue
        example = {
            "claim": claim,
            "evidence": evidence,
            "label": LABEL_OF[target.kind],
            "kind": target.kind,
            "target_id": target.target_id,
            "namespace": store.namespace,
            "labelled_by": list(target.by),
        }
        out.examples.append(PeopleExample.model_validate(example))
    return out


# -------------------------------------------------------------------------- files


def save(examples: Iterable[PeopleExample], path: Path) -> int:
    """Write the examples as JSON lines (replaced atomically); returns how many."""
    tmp = path.with_name(path.name + ".tmp")
    written = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for example in examples:
            fh.write(example.model_dump_json() + "\n")
            written += 1
    os.replace(tmp, path)
    return written


def load(path: Path) -> list[PeopleExample]:
    """The examples of a file ``save`` wrote; a bad line is a ValueError naming the
    line, the field and why."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                out.append(PeopleExample.model_validate_json(line))
            except ValidationError as bad:
                error = bad.errors()[0]
                where = ".".join(str(p) for p in error["loc"]) or "line"
                raise ValueError(f"{path}:{number}: {where}: {error['msg']}") from None
    return out


# ---------------------------------------------------------------------------- cli


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True, help="the store's data directory or database URL")
    p.add_argument(
        "--namespace", action="append", required=True, help="a namespace to read (repeatable)"
    )
    p.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    import memstore

    args = _parser().parse_args(argv)
    if "://" not in args.store and not Path(args.store).is_dir():
        print(f"--store: {args.store} is no store directory", file=sys.stderr)
        return 2
    examples: list[PeopleExample] = []
    for namespace in dict.fromkeys(args.namespace):
        try:
            store = memstore.open(args.store, namespace, hook=memstore.Ungated(), index=False)
        except memstore.MemstoreError as bad:
            print(f"error: {bad}", file=sys.stderr)
            return 2
        with store:
            harvest = read_store(store)
        examples += harvest.examples
        counts = harvest.counts()
        print(f"{namespace}: examples {counts['examples']}, skipped {counts['skipped']}")
        for left in harvest.skipped:
            print(f"  skipped {left.kind} {left.target_id}: {left.reason}", file=sys.stderr)
    written = save(examples, args.out)
    labels = dict(sorted(Counter(e.label for e in examples).items()))
    print(f"wrote {written} examples to {args.out} (labels {labels})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
