"""Fit the embedded verifier's calibration on the ``fit`` split and score it on ``check``.

    python -m training.embedded [--data DIR] [--out params.json] [--limit N]

Writes the logistic parameters with the per-dataset AUROC and balanced accuracy
(threshold 0.5, the gate's ``min_p1``) of both splits, so the shipped file says
how good it is. Needs scikit-learn (``pip install -e '.[dev]'``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gate.backends.embedded.backend import PARAMS_PATH, Calibration, Encoder, pair_features
from gate.backends.embedded.features import FEATURES
from gate.evidence import ContextItem, render
from training import datasets

VERSION = "lr-1"
SEED = 20261121


def pair(example: datasets.Example) -> tuple[str, str]:
    """The (claim, context) the gate would send for this example, all evidence cited."""
    items = [ContextItem(str(i), text) for i, text in enumerate(example.evidence, start=1)]
    return example.claim, render(items)


def features(
    encoder: Encoder, examples: Sequence[datasets.Example], batch: int = 32
) -> npt.NDArray[np.float64]:
    """Feature rows of the examples, computed in batches with a progress line."""
    rows = []
    started = time.perf_counter()
    for i in range(0, len(examples), batch):
        rows.append(pair_features(encoder, [pair(e) for e in examples[i : i + batch]]))
        done = min(i + batch, len(examples))
        rate = done / (time.perf_counter() - started)
        print(f"\r  features {done}/{len(examples)} ({rate:.1f}/s)", end="", file=sys.stderr)
    print(file=sys.stderr)
    return np.vstack(rows) if rows else np.zeros((0, len(FEATURES)))


def scores(
    examples: Sequence[datasets.Example], p: npt.NDArray[np.float64]
) -> dict[str, dict[str, float | None]]:
    """AUROC and balanced accuracy at 0.5, per dataset."""
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    out: dict[str, dict[str, float | None]] = {}
    labels = np.array([e.label for e in examples])
    names = np.array([e.dataset for e in examples])
    for name in sorted(set(names)):
        mask = names == name
        y, q = labels[mask], p[mask]
        both = 0 < y.sum() < len(y)  # the metrics need both labels
        out[name] = {
            "rows": int(mask.sum()),
            "positives": int(y.sum()),
            "auroc": round(float(roc_auc_score(y, q)), 4) if both else None,
            "balanced_accuracy": (
                round(float(balanced_accuracy_score(y, q >= 0.5)), 4) if both else None
            ),
        }
    return out


def fit(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.int64], groups: npt.NDArray[np.str_]
) -> dict[str, Any]:
    """Standardize, then a class-balanced L2 logistic regression, each dataset weighted equally."""
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    weights = np.ones(len(y))
    for name in set(groups):
        for label in (0, 1):
            mask = (groups == name) & (y == label)
            if mask.any():
                weights[mask] = 1.0 / mask.sum()
    weights *= len(y) / weights.sum()
    model = LogisticRegression(C=1.0, max_iter=2000, random_state=SEED)
    model.fit((x - mean) / scale, y, sample_weight=weights)
    return {
        "features": list(FEATURES),
        "mean": mean.round(6).tolist(),
        "scale": scale.round(6).tolist(),
        "coef": model.coef_[0].round(6).tolist(),
        "intercept": round(float(model.intercept_[0]), 6),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="grounding data directory")
    parser.add_argument("--out", type=Path, default=PARAMS_PATH, help="where to write params")
    parser.add_argument(
        "--limit", type=int, default=0, help="at most N rows per split (a smoke run)"
    )
    parser.add_argument(
        "--features-cache", type=Path, default=None, help="reuse/save computed features (.npz)"
    )
    args = parser.parse_args(argv)
    random.seed(SEED)
    np.random.seed(SEED)

    fit_rows = datasets.load(args.data, "fit")
    check_rows = datasets.load(args.data, "check")
    if args.limit:
        fit_rows = random.sample(fit_rows, min(args.limit, len(fit_rows)))
        check_rows = random.sample(check_rows, min(args.limit, len(check_rows)))
    print(f"fit split: {len(fit_rows)} rows; check split: {len(check_rows)} rows", file=sys.stderr)
    cache = args.features_cache
    if cache is not None and cache.exists():
        saved = np.load(cache)
        x_fit, x_check = saved["fit"], saved["check"]
        if len(x_fit) != len(fit_rows) or x_fit.shape[1] != len(FEATURES):
            raise SystemExit(f"{cache} does not match these rows and features; delete it")
    else:
        encoder = Encoder()
        x_fit = features(encoder, fit_rows)
        x_check = features(encoder, check_rows)
        if cache is not None:
            np.savez(cache, fit=x_fit, check=x_check)
    y_fit = np.array([e.label for e in fit_rows])
    params = fit(x_fit, y_fit, np.array([e.dataset for e in fit_rows]))
    params["version"] = VERSION

    calibration = Calibration(params)
    params["scores"] = {
        "fit": scores(fit_rows, calibration.probabilities(x_fit)),
        "check": scores(check_rows, calibration.probabilities(x_check)),
    }
    params["trained_on"] = (
        "fit split of ../shared/data/grounding: SummEdits 'evaluation' rows, "
        "half of BEGIN and WiCE by row hash (training.datasets.Example.split)"
    )
    args.out.write_text(json.dumps(params, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(params["scores"]["check"], indent=2))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
