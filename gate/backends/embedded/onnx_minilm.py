"""The packaged MiniLM as an ONNX graph run by onnxruntime.

The graph (BERT, mean pooling over the attention mask, unit norm) is exported once from
the packaged weights with ``torch.onnx`` and kept in a cache directory
(``MEMSTORE_CACHE_DIR``, default ``~/.cache/memstore``), named by a hash of the weights,
so a later process loads it without importing torch. Nothing is downloaded.

Two precisions (``PRECISIONS``): ``float32`` (the default) gives the embeddings
sentence-transformers gives (within 1e-5), three to four times faster for one short
text; ``int8`` is that graph with its matrix products quantized (``quantize``), 1.3 to
1.7 times as fast again on 2 cores, its vectors at cosine 0.99 of the float ones
(docs/design.md, Embeddings).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

#: Bumped when the exported graph changes, so an older file is not reused.
GRAPH_VERSION = "1"
#: The graphs a model runs as: the exported one, and its quantized copy.
PRECISIONS = ("int8", "float32")


def cache_dir() -> Path:
    """Where exported graphs are kept."""
    configured = os.environ.get("MEMSTORE_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "memstore"


def graph_path(model: Path, cache: Path | None = None, precision: str = "float32") -> Path:
    """The cached graph of ``precision`` for the model directory ``model`` (named by its
    weights' hash)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    cache = cache or cache_dir()
    digest = _weights_digest(model / "model.safetensors", cache)[:16]
    return cache / f"minilm-{digest}{'' if precision == 'float32' else '-' + precision}.onnx"


def _weights_digest(weights: Path, cache: Path) -> str:
    """sha256 of ``GRAPH_VERSION`` and the weights. Reading 90 MB costs about 0.1 s, so
    the digest is kept in the cache beside the weights' path, device, inode, size and
    modification and change times, and read again when any of them differs (a copy
    that keeps the times is a new inode; a rewrite in place moves the change time)."""
    info, where = weights.stat(), str(weights.resolve())
    key = [
        GRAPH_VERSION,
        where,
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    ]
    stamp = cache / f"weights-{hashlib.sha256(where.encode()).hexdigest()[:12]}.json"
    try:
        known = json.loads(stamp.read_text(encoding="utf-8"))
        if known["key"] == key and isinstance(known["digest"], str):
            return known["digest"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # none yet, or unreadable: hash the weights
    digest = hashlib.sha256(GRAPH_VERSION.encode())
    with weights.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    _write_atomically(stamp, json.dumps({"key": key, "digest": digest.hexdigest()}))
    return digest.hexdigest()


def _write_atomically(path: Path, text: str) -> None:
    """``path`` holds ``text`` whole or not at all; a cache that cannot be written is
    left alone (the next load hashes the weights again)."""
    try:
        with _replacing(path) as temporary:
            Path(temporary).write_text(text, encoding="utf-8")
    except OSError:
        pass


@contextmanager
def _replacing(target: Path) -> Iterator[str]:
    """A temporary file beside ``target`` that replaces it whole, as a plain file (not
    mkstemp's owner-only mode), when the block ends; removed if the block fails."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
    os.close(handle)
    try:
        yield temporary
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def export(model: Path, target: Path) -> None:
    """Write the sentence-embedding graph of ``model`` to ``target`` (atomically: another
    process exporting at the same time leaves one whole file)."""
    import torch
    from transformers import AutoModel

    class Sentence(torch.nn.Module):
        """BERT, then the mean of the unmasked token states, then unit norm."""

        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            states = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types)
            weights = mask.unsqueeze(-1).to(states.last_hidden_state.dtype)
            summed = (states.last_hidden_state * weights).sum(1)
            mean = summed / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=1)

    bert = AutoModel.from_pretrained(str(model), local_files_only=True).eval()
    sample = torch.ones((1, 4), dtype=torch.int64)
    tokens = {0: "batch", 1: "tokens"}
    with _replacing(target) as temporary, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer notes
        torch.onnx.export(
            Sentence(bert),
            (sample, sample, torch.zeros_like(sample)),
            temporary,
            input_names=["ids", "mask", "types"],
            output_names=["vectors"],
            dynamic_axes={
                "ids": tokens,
                "mask": tokens,
                "types": tokens,
                "vectors": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )


def quantize(graph: Path, target: Path) -> None:
    """Write ``graph`` with its matrix products quantized to int8 to ``target``
    (atomically): onnxruntime's dynamic quantization, weights per output channel in 7
    bits (``reduce_range``: no overflow on CPUs without VNNI), activations quantized as
    each run sees them. Only ``MatMul`` is quantized: the attention's and the layer
    norms' arithmetic stays float."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with _replacing(target) as temporary, tempfile.TemporaryDirectory() as work:
        prepared = str(Path(work) / "prepared.onnx")
        quant_pre_process(str(graph), prepared, skip_symbolic_shape=True)
        quantize_dynamic(
            prepared,
            temporary,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            reduce_range=True,
            weight_type=QuantType.QInt8,
        )


def _build(model: Path, path: Path, precision: str, cache: Path | None, again: bool) -> None:
    """Write the graph of ``precision`` to ``path``: exported, or quantized from the
    exported graph, which is exported first when it is not cached or ``again`` (the
    cached one may be what is damaged, so also when it cannot be quantized)."""
    exported = graph_path(model, cache)
    fresh = precision == "float32" or again or not exported.exists()
    if fresh:
        export(model, exported)
    if precision == "float32":
        return
    try:
        quantize(exported, path)
    except Exception:
        if fresh:
            raise
        export(model, exported)
        quantize(exported, path)


class OnnxMiniLM:
    """Unit-norm embeddings of texts from the graph of ``precision`` (see the module)."""

    def __init__(self, model: Path, cache: Path | None = None, precision: str = "float32") -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        path = graph_path(model, cache, precision)
        max_tokens = json.loads((model / "sentence_bert_config.json").read_text())["max_seq_length"]
        self._tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only
        # No spinning: onnxruntime's threads otherwise keep busy-waiting after each run,
        # taking the cores from what follows (the index's queries after a search's
        # embedding: 16.7 against 12.4 ms at 100,000 facts on 2 cores); the model's
        # own rate is the same either way (about 240 texts/s in turns of 16).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")

        def session() -> Any:
            return onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )

        if not path.exists():
            _build(model, path, precision, cache, again=False)
        try:
            self._session = session()
        except Exception:  # a damaged file (a disk error, an interrupted copy): once more
            _build(model, path, precision, cache, again=True)
            self._session = session()
        self.path = path
        self.precision = precision

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One row per text, in order. float32 runs the texts together (padded to the
        longest); int8 runs each text alone, unpadded: its activations are quantized on
        the scale of the whole input, so beside other texts a text would embed otherwise
        than alone (cosine 0.99), and the verifier's score of a claim would depend on
        the batch it came in."""
        tokens = [
            (e.ids, e.attention_mask, e.type_ids) for e in self._tokenizer.encode_batch(list(texts))
        ]
        if self.precision == "float32":
            return self._run(tokens)
        return np.concatenate([self._run([_unpadded(*t)]) for t in tokens])

    def lengths(self, texts: Sequence[str]) -> list[int]:
        """How many tokens the model reads of each text (truncated as it is)."""
        return [sum(e.attention_mask) for e in self._tokenizer.encode_batch(list(texts))]

    def _run(
        self, tokens: Sequence[tuple[list[int], list[int], list[int]]]
    ) -> npt.NDArray[np.float32]:
        """The graph's vectors of tokenized texts (ids, attention mask, token types)."""
        ids, mask, types = (
            np.asarray(column, dtype=np.int64) for column in zip(*tokens, strict=True)
        )
        (vectors,) = self._session.run(None, {"ids": ids, "mask": mask, "types": types})
        return np.asarray(vectors, dtype=np.float32)


def _unpadded(
    ids: list[int], mask: list[int], types: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """A tokenized text without the padding its batch gave it."""
    length = sum(mask)
    return ids[:length], mask[:length], types[:length]
