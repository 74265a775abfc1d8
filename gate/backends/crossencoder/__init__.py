"""``embedded-ce``: a MiniLM cross-encoder fine-tuned for grounding (packaged, offline)."""

from gate.backends.crossencoder.backend import CrossEncoderBackend, MixCrossEncoderBackend

__all__ = ["CrossEncoderBackend", "MixCrossEncoderBackend"]
