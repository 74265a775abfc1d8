"""Verifier backends: one module each, one base class."""

from gate.backends.base import VerifierBackend
from gate.backends.scripted import ScriptedBackend

__all__ = ["ScriptedBackend", "VerifierBackend"]
