"""The embedded default verifier (MiniLM alignment + lexical checks, calibrated)."""

from gate.backends.embedded.backend import Calibration, EmbeddedBackend, Encoder

__all__ = ["Calibration", "EmbeddedBackend", "Encoder"]
