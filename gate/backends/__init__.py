"""Verifier backends: one module each, one base class."""

from gate.backends.base import CallControl, Cancelled, ModelLock, VerifierBackend
from gate.backends.scripted import ScriptedBackend

__all__ = ["CallControl", "Cancelled", "ModelLock", "ScriptedBackend", "VerifierBackend"]
