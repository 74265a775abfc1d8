"""The training mix of the cross-encoder verifier (issue 23), and its dev sets.

Every training input is one (evidence, claim sentence, label) triple, built with the
same functions the ``embedded-ce`` backend reads a (claim, context) pair with
(``gate.backends.crossencoder.reading.read``): the claim is cut into sentences, each
read against the evidence sentences most about it, packed into about
``EVIDENCE_WORDS`` words (the backend's window), then cut at ``max_length`` word
pieces by the tokenizer exactly as at inference. The context is rendered as the gate
renders it (``[1] ...``), so item tags and scrubbed spans are dropped the same way.

Components (each but ``people`` balanced on its own, so the whole mix is about 50%
supported):

- ``nli``: ``../shared/data/nli/pairs.jsonl``, per source the larger class subsampled
  to the smaller one (optionally capped per class);
- ``nli-hard``: supported NLI pairs edited by one ``perturb`` rule into a false claim,
  each next to the supported pair it was made from (a contrast pair);
- ``am``: the agent-memory ``train`` split (hand-written and generated pairs), the
  smaller class repeated to the larger one, the whole repeated ``am_repeat`` times
  (it looks like the store's writes);
- ``am-hard``: hard negatives from the supported agent-memory ``train`` pairs: up to
  ``am_hard_per_claim`` one-rule edits each (``perturb``), plus the claim read against
  its evidence with its quote scrubbed as the gate scrubs a citation; each next to its
  supported original, repeated ``am_hard_repeat`` times;
- ``grounding``: the *fit* split of ``../shared/data/grounding`` less the documents held
  out as dev (``training.crossencoder.is_dev``), sentence-labelled as the
  old training script does (``labelled_pairs``), balanced per source by repeating the
  smaller class;
- ``people`` (off unless a file is given: ``DataPaths.people``, ``--people FILE``): the
  labels people gave on the audit page, written by ``python -m training.labels`` (a
  wrong refusal: supported; a fact that should not have been stored: not supported).
  They are the store's own writes on which the gate was wrong, judged by a person, so
  each weighs like an agent-memory row: read the same way, repeated ``people_repeat``
  times. They are not balanced: people mostly flag one kind of mistake, and repeating
  a handful of the rarer kind until it matches the other would learn those few claims
  by heart. What an unbalanced component costs is a prior shift of at most
  ``people pairs / mix pairs`` (about 2% for 100 one-sentence labels), which the
  Platt calibration fitted on dev at export takes out. The shipped model's mix has
  none, and without a file the mix is, pair for pair, the one it was before.

Never used: the agent-memory ``test`` split (not even read) and the grounding *check*
split. Dev: the agent-memory ``dev`` split and the held-out fit documents.

The mix is a function of the seed and the data (``reading.gather`` sums its idf
weights in sorted order, so string hashing cannot change a tie); the command line
still pins ``PYTHONHASHSEED=0``, and a run stores its mix, so a resumed run reads the
very pairs it started with.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import os
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.backends.crossencoder.reading import EVIDENCE_WORDS, read
from gate.backends.embedded.features import segments
from gate.evidence import Citation, ContextItem, render, scrub
from training import datasets, labels, perturb
from training.crossencoder import is_dev, labelled_pairs, least_supported

ROOT = Path(__file__).resolve().parents[1]
NLI_PAIRS = ROOT.parent / "shared" / "data" / "nli" / "pairs.jsonl"
AGENT_MEMORY = ROOT / "bench" / "data" / "agent_memory"
#: The agent-memory splits this module may read; ``test`` is never opened.
AGENT_MEMORY_SPLITS = ("train", "dev")


@dataclass(frozen=True, slots=True)
class MixPair:
    """One training input and where it came from."""

    #: The data row it was made from: ``nli/<source>/<line>``, ``am/<id>``,
    #: ``grounding/<dataset>/<key>``.
    row: str
    #: The component and rule: ``nli``, ``nli-hard-number``, ``am``, ``am-hard-scrubbed``, ...
    source: str
    evidence: str
    sentence: str
    label: int


@dataclass(frozen=True, slots=True)
class MixConfig:
    """How much of each component goes in (see the module docstring)."""

    seed: int = 20261123
    #: At most this many pairs per class per NLI source (None: the smaller class, all of it).
    nli_per_class: int | None = None
    #: Supported NLI pairs edited into hard negatives (each with its original).
    nli_hard: int = 4000
    am_repeat: int = 8
    am_hard_per_claim: int = 3
    am_hard_repeat: int = 4
    grounding_repeat: int = 1
    #: How often the ``people`` component goes in (only with a labels file).
    people_repeat: int = 8


@dataclass(frozen=True, slots=True)
class DataPaths:
    """Where the data lives (tests point these at small fixtures)."""

    nli: Path = NLI_PAIRS
    grounding: Path | None = None  # None: training.datasets.default_data_dir()
    agent_memory: Path = AGENT_MEMORY
    #: The labels people gave (``python -m training.labels``); None: no ``people`` component.
    people: Path | None = None

    def describe(self) -> dict[str, str]:
        out = {
            "nli": str(self.nli),
            "grounding": str(self.grounding or datasets.default_data_dir()),
            "agent_memory": str(self.agent_memory),
        }
        if self.people is not None:
            out["people"] = str(self.people)
        return out


@dataclass(frozen=True, slots=True)
class ClaimRow:
    """A labelled claim with its evidence items (a dev or training row)."""

    id: str
    claim: str
    evidence: tuple[str, ...]
    label: int
    quote: str | None = None
    generated_from: str | None = None
    scenario: str | None = None

    def context(self) -> str:
        """The context the gate renders for this claim, all evidence cited."""
        return render_items(self.evidence)


def render_items(evidence: Sequence[str]) -> str:
    return render([ContextItem(str(i), t) for i, t in enumerate(evidence, start=1)])


# ---------------------------------------------------------------------------- loading


def load_agent_memory(split: str, directory: Path = AGENT_MEMORY) -> list[ClaimRow]:
    """One agent-memory split (``train`` or ``dev`` only: this module never reads test)."""
    if split not in AGENT_MEMORY_SPLITS:
        raise ValueError(f"the training pipeline reads only {AGENT_MEMORY_SPLITS}, not {split!r}")
    rows = []
    with (directory / f"{split}.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                rows.append(
                    ClaimRow(
                        id=r["id"],
                        claim=r["claim"],
                        evidence=tuple(r["evidence"]),
                        label=int(r["label"]),
                        quote=r.get("quote"),
                        generated_from=r.get("generated_from"),
                        scenario=r.get("scenario"),
                    )
                )
    return rows


def load_nli(path: Path = NLI_PAIRS) -> list[tuple[str, ClaimRow]]:
    """(source, row) per line of ``pairs.jsonl``; the row id is ``nli/<source>/<line>``."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if line.strip():
                r = json.loads(line)
                row = ClaimRow(
                    id=f"nli/{r['source']}/{i}",
                    claim=r["claim"],
                    evidence=(r["evidence"],),
                    label=int(r["label"] == "supported"),
                )
                out.append((r["source"], row))
    return out


def load_people(path: Path) -> list[ClaimRow]:
    """The labelled decisions of a ``training.labels`` file; the row id is
    ``people/<namespace>/<target id>``."""
    return [
        ClaimRow(
            id=f"people/{e.namespace}/{e.target_id}",
            claim=e.claim,
            evidence=tuple(e.evidence),
            label=e.label,
        )
        for e in labels.load(path)
    ]


def grounding_split(
    data: Path | None = None,
) -> tuple[list[datasets.Example], list[datasets.Example]]:
    """The grounding *fit* split as (training rows, dev rows), dev held out by document."""
    fit = datasets.load(data, split="fit")
    return [r for r in fit if not is_dev(r)], [r for r in fit if is_dev(r)]


def grounding_id(row: datasets.Example) -> str:
    return f"grounding/{row.dataset}/{row.key}"


# ---------------------------------------------------------------------- pair making


def claim_pairs(row: ClaimRow, source: str, context: str | None = None) -> list[MixPair]:
    """The backend's reading of a claim-level row: every sentence when it is supported;
    when it is not, its one sentence (or the least supported of several)."""
    context = row.context() if context is None else context
    reading = read(row.claim, context, EVIDENCE_WORDS)
    pairs = reading.pairs()
    if row.label == 0 and len(pairs) > 1:
        culprit = least_supported(list(reading.sentences), context)
        pairs = [p for p in pairs if p[1] == culprit][:1]
    return [MixPair(row.id, source, ev, sent, row.label) for ev, sent in pairs]


def balance(pairs: Sequence[MixPair], rng: random.Random, *, up: bool) -> list[MixPair]:
    """Both labels equally often: the larger class subsampled (``up=False``) or the
    smaller one repeated, cycling through a shuffled copy (``up=True``)."""
    by_label: dict[int, list[MixPair]] = {0: [], 1: []}
    for p in pairs:
        by_label[p.label].append(p)
    if not by_label[0] or not by_label[1]:
        return list(pairs)
    small, large = sorted(by_label.values(), key=len)
    if not up:
        return [*small, *rng.sample(large, len(small))]
    extra: list[MixPair] = []
    pool = list(small)
    while len(small) + len(extra) < len(large):
        rng.shuffle(pool)
        extra.extend(pool[: len(large) - len(small) - len(extra)])
    return [*large, *small, *extra]


_TOKEN = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def hard_negatives(
    claim: str, evidence: Sequence[str], rng: random.Random, limit: int
) -> list[tuple[str, str]]:
    """Up to ``limit`` (rule, edited claim) pairs, one rule each, in a seeded order (the
    ``addition`` rule, a word list, last: the swaps are what the model should learn).

    A number or date moved onto a value the evidence already holds is dropped: it may
    land on another true fact of the same evidence."""
    document = [s for text in evidence for s in segments(text)]
    words = _tokens(" ".join(evidence))
    rules = [r for r in perturb.EDITS if r != "addition"]
    rng.shuffle(rules)
    rules.append("addition")  # a word-list addition only where no swap applies
    out: list[tuple[str, str]] = []
    for rule in rules:
        if len(out) >= limit:
            break
        edited = perturb.EDITS[rule](claim, document, rng)
        if not edited or edited.strip() == claim.strip():
            continue
        new = _tokens(edited) - _tokens(claim)
        if rule in ("number", "date") and new <= words:
            continue
        out.append((rule, edited))
    return out


def scrubbed_context(row: ClaimRow) -> str | None:
    """The row's context with its quote scrubbed as the gate scrubs a cited span."""
    if not row.quote:
        return None
    items = [ContextItem(str(i), t) for i, t in enumerate(row.evidence, start=1)]
    for item in items:
        at = item.text.find(row.quote)
        if at >= 0:
            return render(scrub(items, [Citation(item.id, at, at + len(row.quote))]))
    return None


# ----------------------------------------------------------------------- components


def nli_component(
    rows: Sequence[tuple[str, ClaimRow]], config: MixConfig, rng: random.Random
) -> list[MixPair]:
    out: list[MixPair] = []
    by_source: dict[str, list[ClaimRow]] = defaultdict(list)
    for source, row in rows:
        by_source[source].append(row)
    for source in sorted(by_source):
        group = by_source[source]
        pos = [r for r in group if r.label == 1]
        neg = [r for r in group if r.label == 0]
        n = min(len(pos), len(neg))
        if config.nli_per_class is not None:
            n = min(n, config.nli_per_class)
        for r in [*rng.sample(pos, n), *rng.sample(neg, n)]:
            out.extend(claim_pairs(r, "nli"))
    return out


def nli_hard_component(
    rows: Sequence[tuple[str, ClaimRow]], config: MixConfig, rng: random.Random
) -> list[MixPair]:
    supported = [r for _, r in rows if r.label == 1]
    out: list[MixPair] = []
    for r in rng.sample(supported, min(config.nli_hard, len(supported))):
        edits = hard_negatives(r.claim, r.evidence, rng, 1)
        if not edits:
            continue
        rule, claim = edits[0]
        false = dataclasses.replace(r, claim=claim, label=0)
        negatives = claim_pairs(false, f"nli-hard-{rule}")
        positives = claim_pairs(r, "nli-hard-original")
        out.extend([*negatives, *positives[: len(negatives)]])
    return out


def am_component(train: Sequence[ClaimRow], config: MixConfig, rng: random.Random) -> list[MixPair]:
    pairs = [p for r in train for p in claim_pairs(r, "am-generated" if r.generated_from else "am")]
    return [p for _ in range(config.am_repeat) for p in balance(pairs, rng, up=True)]


def am_hard_component(
    train: Sequence[ClaimRow], config: MixConfig, rng: random.Random
) -> list[MixPair]:
    true_by_scenario: dict[str | None, set[str]] = defaultdict(set)
    for r in train:
        if r.label == 1:
            true_by_scenario[r.scenario].add(r.claim.strip().lower())
    once: list[MixPair] = []
    for r in train:
        if r.label != 1 or r.generated_from:
            continue
        negatives: list[MixPair] = []
        for rule, claim in hard_negatives(r.claim, r.evidence, rng, config.am_hard_per_claim):
            if claim.strip().lower() in true_by_scenario[r.scenario]:
                continue
            negatives += claim_pairs(
                dataclasses.replace(r, claim=claim, label=0), f"am-hard-{rule}"
            )
        scrubbed = scrubbed_context(r)
        if scrubbed is not None:
            row = dataclasses.replace(r, label=0)
            negatives += [
                dataclasses.replace(p, label=0)
                for p in claim_pairs(row, "am-hard-scrubbed", scrubbed)
            ]
        positives = claim_pairs(r, "am-hard-original")
        once += negatives
        once += [positives[i % len(positives)] for i in range(len(negatives))]
    return [p for _ in range(config.am_hard_repeat) for p in once]


def people_component(rows: Sequence[ClaimRow], config: MixConfig) -> list[MixPair]:
    """The labelled decisions read as the backend reads them, each ``people_repeat``
    times (not balanced: the module docstring says why)."""
    pairs = [p for r in rows for p in claim_pairs(r, "people")]
    return [p for _ in range(config.people_repeat) for p in pairs]


def grounding_component(
    train_rows: Sequence[datasets.Example], config: MixConfig, rng: random.Random
) -> list[MixPair]:
    by_source: dict[str, list[MixPair]] = defaultdict(list)
    for row in train_rows:
        for p in labelled_pairs([row]):
            family = p.source.removesuffix("-scrubbed")  # WiCE's scrubbed pairs count as WiCE
            by_source[family].append(
                MixPair(grounding_id(row), f"grounding-{p.source}", p.evidence, p.sentence, p.label)
            )
    out: list[MixPair] = []
    for family in sorted(by_source):
        out.extend(balance(by_source[family], rng, up=True))
    return [p for _ in range(config.grounding_repeat) for p in out]


# ------------------------------------------------------------------------------ mix


@dataclass
class Mix:
    """The shuffled training pairs, what went in, and the dev sets."""

    pairs: list[MixPair]
    config: MixConfig
    am_dev: list[ClaimRow]
    grounding_dev: list[datasets.Example]

    def summary(self) -> dict[str, Any]:
        comp: dict[str, Counter[int]] = defaultdict(Counter)
        for p in self.pairs:
            comp[component_of(p.source)][p.label] += 1
        return {
            "pairs": len(self.pairs),
            "labels": {str(k): v for k, v in sorted(Counter(p.label for p in self.pairs).items())},
            "components": {
                name: {"pairs": sum(c.values()), "supported": c[1], "not_supported": c[0]}
                for name, c in sorted(comp.items())
            },
            "sources": dict(sorted(Counter(p.source for p in self.pairs).items())),
            "config": dataclasses.asdict(self.config),
            "am_dev_rows": len(self.am_dev),
            "grounding_dev_rows": len(self.grounding_dev),
            "digest": digest(self.pairs),
        }


def component_of(source: str) -> str:
    for name in ("nli-hard", "am-hard", "grounding", "nli", "people"):
        if source.startswith(name):
            return name
    return "am"


def digest(pairs: Iterable[MixPair]) -> str:
    """A fingerprint of the pairs in order (a resumed run checks it is on the same data)."""
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps(dataclasses.astuple(p)).encode())
    return h.hexdigest()[:16]


def save_pairs(pairs: Sequence[MixPair], path: Path) -> None:
    """The pairs, in order, as gzipped JSON lines (written atomically)."""
    tmp = path.with_name(path.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(dataclasses.astuple(p)) + "\n")
    os.replace(tmp, path)


def load_pairs(path: Path) -> list[MixPair]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [MixPair(*json.loads(line)) for line in fh if line.strip()]


def dev_sets(paths: DataPaths) -> tuple[list[ClaimRow], list[datasets.Example]]:
    """The agent-memory dev split and the grounding fit documents held out as dev."""
    return load_agent_memory("dev", paths.agent_memory), grounding_split(paths.grounding)[1]


def build(config: MixConfig, paths: DataPaths | None = None, *, quiet: bool = False) -> Mix:
    """The whole mix, shuffled; deterministic for ``config.seed``."""
    paths = paths or DataPaths()
    rng = random.Random(config.seed)
    nli = load_nli(paths.nli)
    am_train = [
        dataclasses.replace(r, id=f"am/{r.id}")
        for r in load_agent_memory("train", paths.agent_memory)
    ]
    am_dev = load_agent_memory("dev", paths.agent_memory)
    g_train, g_dev = grounding_split(paths.grounding)
    parts = [
        nli_component(nli, config, random.Random(rng.random())),
        nli_hard_component(nli, config, random.Random(rng.random())),
        am_component(am_train, config, random.Random(rng.random())),
        am_hard_component(am_train, config, random.Random(rng.random())),
        grounding_component(g_train, config, random.Random(rng.random())),
    ]
    if paths.people is not None:  # no draw from rng: the other parts stay as they were
        parts.append(people_component(load_people(paths.people), config))
    pairs = [p for part in parts for p in part]
    rng.shuffle(pairs)
    mix = Mix(pairs, config, am_dev, g_dev)
    if not quiet:
        s = mix.summary()
        print(
            f"mix: {s['pairs']} pairs, labels {s['labels']}, "
            + ", ".join(f"{k} {v['pairs']}" for k, v in s["components"].items()),
            file=sys.stderr,
        )
    return mix
