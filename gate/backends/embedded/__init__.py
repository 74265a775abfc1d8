"""The embedded default verifier (MiniLM alignment + lexical checks, calibrated)."""

from gate.backends.embedded.backend import Calibration, EmbeddedBackend, Encoder, shared_encoder

__all__ = ["Calibration", "EmbeddedBackend", "Encoder", "shared_encoder"]
