"""``hf-nli``: transformers sequence-classification NLI / grounding models.

The context is the premise and the claim the hypothesis. P(claim) is the softmax
mass of the entailment label, found through the model config's ``id2label``
(a label naming entailment, support or consistency) or given explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from gate.backends.base import CallControl, ModelLock, VerifierBackend
from gate.backends.hf_causal import load_pretrained

ENTAILMENT_NAMES = ("entail", "support", "consistent", "faithful", "grounded")


def entailment_index(id2label: dict[int, str], label: str | None = None) -> int:
    """The class index meaning "the premise supports the hypothesis"."""
    if label is not None:
        for index, name in id2label.items():
            if name.lower() == label.lower():
                return int(index)
        raise ValueError(f"label {label!r} is not one of {sorted(id2label.values())}")
    matches = [
        int(i)
        for i, name in id2label.items()
        if any(word in name.lower() for word in ENTAILMENT_NAMES)
        and not name.lower().startswith(("not", "non", "in", "un"))
    ]
    if len(matches) != 1:
        raise ValueError(
            f"cannot tell the entailment label among {sorted(id2label.values())}; "
            "pass entailment_label="
        )
    return matches[0]


class HFNLIBackend(VerifierBackend):
    """Entailment probability of (context, claim) from a sequence classifier."""

    name = "hf-nli"
    deterministic = True

    def __init__(
        self,
        model: str | Path,
        *,
        entailment_label: str | None = None,
        threads: int | None = None,
        batch_size: int = 16,
        max_length: int = 512,
    ) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from transformers import AutoModelForSequenceClassification

        self._tokenizer, self._model = load_pretrained(
            AutoModelForSequenceClassification, model, threads
        )
        self.model = str(model)
        self.batch_size = max(1, batch_size)
        self.max_length = max_length
        self._torch = torch
        id2label = {int(k): str(v) for k, v in self._model.config.id2label.items()}
        self.entailment = entailment_index(id2label, entailment_label)
        self._lock = ModelLock()

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        out: list[float] = []
        for i in range(0, len(pairs), self.batch_size):
            with self._lock.hold(control):  # per mini-batch: fair, and stops when cancelled
                out.extend(self._entailment(pairs[i : i + self.batch_size]))
        return out

    def _entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        torch = self._torch
        batch = self._tokenizer(
            [context for _, context in pairs],
            [claim for claim, _ in pairs],
            return_tensors="pt",
            padding=True,
            truncation="only_first",
            max_length=self.max_length,
        )
        with torch.inference_mode():
            logits = self._model(**batch).logits.double()
        return [float(p) for p in torch.softmax(logits, dim=-1)[:, self.entailment]]

    def close(self) -> None:
        self._model = None
