"""Verifier backends by name, imported only when asked for (torch is heavy)."""

from __future__ import annotations

import importlib
from typing import Any

from gate.backends.base import VerifierBackend

#: Backend name -> "module:class". The first is the default.
BACKENDS: dict[str, str] = {
    "embedded": "gate.backends.embedded:EmbeddedBackend",
    "embedded-ce": "gate.backends.crossencoder:CrossEncoderBackend",
    "embedded-ce-mix": "gate.backends.crossencoder:MixCrossEncoderBackend",
    "hf-causal": "gate.backends.hf_causal:HFCausalBackend",
    "hf-nli": "gate.backends.hf_nli:HFNLIBackend",
    "openai": "gate.backends.openai:OpenAIBackend",
}
DEFAULT_BACKEND = "embedded"


def create_backend(name: str = DEFAULT_BACKEND, **options: Any) -> VerifierBackend:
    """A backend by its name, with its constructor's keyword options."""
    try:
        target = BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}") from None
    module, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    backend = cls(**options)
    assert isinstance(backend, VerifierBackend)
    return backend
