"""Verifier backends by name, imported only when asked for (torch is heavy)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError

from gate.backends.base import VerifierBackend

#: Backend name -> "module:class". The first is the default.
BACKENDS: dict[str, str] = {
    "embedded": "gate.backends.embedded:EmbeddedBackend",
    "embedded-ce": "gate.backends.crossencoder:CrossEncoderBackend",
    "embedded-ce-mix": "gate.backends.crossencoder:MixCrossEncoderBackend",
    "hf-causal": "gate.backends.hf_causal:HFCausalBackend",
    "hf-nli": "gate.backends.hf_nli:HFNLIBackend",
    "openai": "gate.backends.openai:OpenAIBackend",
    "sampling": "gate.backends.sampling:SamplingBackend",
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
    backend = cls(**typed_options(cls, options))
    assert isinstance(backend, VerifierBackend)
    return backend


def typed_options(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with each text value read as its constructor parameter's type (an
    environment variable such as ``..._BACKEND_OPTIONS__TIMEOUT=6`` arrives as "6").
    ValueError names an option whose text is not of that type."""
    parameters = inspect.signature(cls, eval_str=True).parameters
    typed = dict(options)
    for name, value in options.items():
        parameter = parameters.get(name)
        hint = parameter.annotation if parameter is not None else inspect.Parameter.empty
        if not isinstance(value, str) or hint in (inspect.Parameter.empty, str, Any):
            continue
        try:
            adapter = TypeAdapter(hint)
        except PydanticSchemaGenerationError:  # a client or model object, not a value
            raise ValueError(f"backend option {name} cannot be given as text") from None
        try:
            typed[name] = adapter.validate_python(value)
        except ValidationError:
            try:  # "[1, 2]", "{\"a\": 1}", "null": JSON text of the type
                typed[name] = adapter.validate_json(value)
            except ValidationError as exc:
                reason = exc.errors()[0]["msg"]
                raise ValueError(f"backend option {name}={value!r}: {reason}") from None
    return typed
