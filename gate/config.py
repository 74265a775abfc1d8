"""The ``hallucination:`` configuration block (docs/design.md, Configuration), from YAML
and the environment.

Precedence: keyword arguments, then ``MEMSTORE_HALLUCINATION__*`` environment
variables (nested with ``__``, e.g. ``MEMSTORE_HALLUCINATION__MEMORY_GATE__MIN_CONFIDENCE``),
then the YAML file's ``hallucination:`` section, then defaults.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from gate.backends.registry import BACKENDS, DEFAULT_BACKEND, create_backend
from gate.budget import DEFAULT_EPS
from gate.engine import (
    DEFAULT_CACHE_TTL_S,
    DEFAULT_DEADLINE_PER_CLAIM_S,
    DEFAULT_DEADLINE_S,
    DEFAULT_LOCK_WAIT_S,
    Gate,
)
from gate.policy import (
    DEFAULT_CONTRADICTION_THRESHOLD,
    DEFAULT_FLAG_THRESHOLD_BITS,
    DEFAULT_MIN_P1,
    DEFAULT_TIMEOUT_REDUCTION,
    GatePolicy,
    PriorSufficientAction,
)

ENV_PREFIX = "MEMSTORE_HALLUCINATION__"
SECTION = "hallucination"
_yaml_file: ContextVar[Path | None] = ContextVar("_yaml_file", default=None)


class ConfigError(ValueError):
    """A configuration value is invalid; ``field`` is its dotted path."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class MemoryGateConfig(BaseModel):
    """Thresholds of the memory gate (docs/design.md, Decision table)."""

    model_config = ConfigDict(extra="forbid")

    min_confidence: float = Field(default=DEFAULT_MIN_P1, ge=0.0, le=1.0)
    reject_unsupported: bool = True
    contradiction_threshold: float = Field(default=DEFAULT_CONTRADICTION_THRESHOLD, ge=0, le=1)
    flag_threshold_bits: float = Field(default=DEFAULT_FLAG_THRESHOLD_BITS, ge=0.0)
    timeout_reduction: float = Field(default=DEFAULT_TIMEOUT_REDUCTION, ge=0.0, le=1.0)
    prior_sufficient: PriorSufficientAction = "store"
    eps: float = Field(default=DEFAULT_EPS, gt=0.0, lt=0.5)


class HallucinationConfig(BaseSettings):
    """The ``hallucination:`` block."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid"
    )

    enabled: bool = True
    backend: str = Field(default=DEFAULT_BACKEND, min_length=1)
    #: Keyword options of the backend's constructor (model path, base_url, threads, ...).
    backend_options: dict[str, Any] = Field(default_factory=dict)
    memory_gate: MemoryGateConfig = MemoryGateConfig()
    output_verification: bool = False
    trace_auditing: bool = False
    batch_size: int = Field(default=32, ge=1, le=4096)
    #: Seconds of verifier work per check: ``timeout + timeout_per_claim x claims``. The
    #: time a check waits for the model behind other checks is not counted; ``lock_wait``
    #: bounds it. Past either, the claims' verdict is ``timeout``.
    timeout: float = Field(default=DEFAULT_DEADLINE_S, gt=0.0, allow_inf_nan=False)
    timeout_per_claim: float = Field(
        default=DEFAULT_DEADLINE_PER_CLAIM_S, ge=0.0, allow_inf_nan=False
    )
    lock_wait: float = Field(default=DEFAULT_LOCK_WAIT_S, gt=0.0, allow_inf_nan=False)
    cache_ttl: float = Field(default=DEFAULT_CACHE_TTL_S, ge=0.0)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = _yaml_file.get()
        if path is not None:
            sources.append(
                YamlConfigSettingsSource(settings_cls, yaml_file=path, yaml_config_section=SECTION)
            )
        return tuple(sources)

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, name: str) -> str:
        if name not in BACKENDS:
            raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
        return name

    def gate(self) -> Gate:
        """A Gate built from these settings (loads the backend's model)."""
        backend = create_backend(self.backend, **self.backend_options)
        return Gate(
            backend,
            self.policy(),
            deadline=self.timeout,
            deadline_per_claim=self.timeout_per_claim,
            lock_wait=self.lock_wait,
            cache_ttl=self.cache_ttl,
        )

    def policy(self) -> GatePolicy:
        """The GatePolicy these settings describe."""
        gate = self.memory_gate
        return GatePolicy(
            eps=gate.eps,
            contradiction_threshold=gate.contradiction_threshold,
            min_p1=gate.min_confidence,
            flag_threshold_bits=gate.flag_threshold_bits,
            timeout_reduction=gate.timeout_reduction,
            prior_sufficient=gate.prior_sufficient,
            reject_unsupported=gate.reject_unsupported,
        )


def load_config(path: str | Path | None = None, **overrides: Any) -> HallucinationConfig:
    """Load the block; raise ConfigError naming the field for any bad value."""
    yaml_path = None if path is None else Path(path)
    if yaml_path is not None:
        _check_yaml(yaml_path)
    token = _yaml_file.set(yaml_path)
    try:
        config = HallucinationConfig(**overrides)
        config.policy()  # cross-field checks of the policy
        return config
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        field = f"{SECTION}.{where}" if where else SECTION
        raise ConfigError(field, err["msg"].removeprefix("Value error, ")) from None
    finally:
        _yaml_file.reset(token)


def _check_yaml(path: Path) -> None:
    if not path.is_file():
        raise ConfigError("path", f"no config file at {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError("path", f"{path} is not valid YAML: {exc}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError("path", f"{path} must hold a mapping at the top level")
    if isinstance(data, dict) and not isinstance(data.get(SECTION, {}), dict | None):
        raise ConfigError(SECTION, "must be a mapping")
