"""Fit the cross-encoder's head (logit + lexical checks) on dev rows and store it in the card.

    python -m training.head --model DIR    # DIR holds verifier.safetensors + verifier.json

The rows are the agent-memory ``dev`` split and the grounding fit documents held out
as dev (``training.mix.dev_sets``): rows the network never trained on and the
agent-memory ``test`` split never touched. The regularisation is chosen from a fixed
grid by cross-validation grouped by scenario (agent memory) or document (grounding),
so no row scores a head fitted on itself; the head is then refitted on all dev rows.
Classes are weighted equally, so p = 0.5, the gate's ``min_p1``, is the balanced point.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gate.backends.crossencoder.backend import CARD, CrossEncoderBackend
from gate.backends.crossencoder.head import HEAD_FEATURES, Head, head_features
from training.embedded import pair
from training.mix import DataPaths, dev_sets

#: The L2 strengths tried (sklearn's C: larger is weaker regularisation).
GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
FOLDS = 5


def dev_rows(paths: DataPaths) -> tuple[list[tuple[str, str]], list[int], list[str], list[str]]:
    """(claim, context) pairs, labels, CV groups and set names of every dev row."""
    am, grounding = dev_sets(paths)
    pairs = [(r.claim, r.context()) for r in am] + [pair(r) for r in grounding]
    labels = [r.label for r in am] + [r.label for r in grounding]
    groups = [f"am/{r.scenario}" for r in am] + [
        f"g/{r.dataset}/{' '.join(r.evidence)}" for r in grounding
    ]
    sets = ["agent_memory"] * len(am) + [f"grounding/{r.dataset}" for r in grounding]
    return pairs, labels, groups, sets


def features(backend: CrossEncoderBackend, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    logits = backend.claim_logits(pairs)
    rows = [head_features(z, c, x) for z, (c, x) in zip(logits, pairs, strict=True)]
    return np.asarray(rows, dtype=np.float64).reshape(len(pairs), len(HEAD_FEATURES))


def _fit(x: np.ndarray, y: np.ndarray, c: float) -> Head:
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000)
    model.fit((x - mean) / scale, y)
    return Head(
        tuple(mean.tolist()),
        tuple(scale.tolist()),
        tuple(model.coef_[0].tolist()),
        float(model.intercept_[0]),
    )


def _scores(y: np.ndarray, p: np.ndarray, sets: Sequence[str]) -> dict[str, Any]:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    out: dict[str, Any] = {}
    names = np.asarray(sets)
    for name in ["agent_memory", "grounding", *sorted({s for s in sets if "/" in s})]:
        idx = names == name if name != "grounding" else np.char.startswith(names, "grounding/")
        if len(set(y[idx].tolist())) < 2:
            continue
        out[name] = {
            "rows": int(idx.sum()),
            "auroc": round(float(roc_auc_score(y[idx], p[idx])), 4),
            "balanced_accuracy": round(float(balanced_accuracy_score(y[idx], p[idx] >= 0.5)), 4),
        }
    return out


def fit_head(model_dir: Path, paths: DataPaths | None = None) -> dict[str, Any]:
    """Fit the head for the model in ``model_dir`` and write it into its card."""
    from sklearn.model_selection import GroupKFold

    card_path = model_dir / CARD.name
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card.pop("head", None)
    backend = CrossEncoderBackend(path=model_dir, card=card)
    pairs, labels, groups, sets = dev_rows(paths or DataPaths())
    x, y = features(backend, pairs), np.asarray(labels)
    cv: dict[float, np.ndarray] = {}
    for c in GRID:
        p = np.zeros(len(y))
        for train, held in GroupKFold(FOLDS).split(x, y, groups):
            p[held] = [_fit(x[train], y[train], c).probability(row) for row in x[held]]
        cv[c] = p
    # The agent-memory rows decide (the store's own writes); grounding breaks ties.
    chosen = max(GRID, key=lambda c: (_scores(y, cv[c], sets)["agent_memory"]["auroc"], c))
    head = _fit(x, y, chosen)
    card["head"] = {
        **head.to_card(),
        "fitted_on": "agent-memory dev + grounding dev (python -m training.head)",
        "c": chosen,
        "cross_validated": {str(c): _scores(y, cv[c], sets) for c in GRID},
        "logit_alone": _scores(y, x[:, 0], sets),
    }
    card_path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card["head"]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, required=True, help="the exported model directory")
    args = p.parse_args(argv)
    head = fit_head(args.model)
    print(json.dumps({"c": head["c"], "cross_validated": head["cross_validated"]}, indent=1))
    print(f"wrote the head into {args.model / CARD.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
