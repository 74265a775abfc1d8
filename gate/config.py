"""The ``hallucination:`` configuration block (docs/design.md, Configuration), from YAML
and the environment.

Precedence: keyword arguments, then ``MEMSTORE_HALLUCINATION__*`` environment
variables (nested with ``__``, e.g. ``MEMSTORE_HALLUCINATION__MEMORY_GATE__MIN_CONFIDENCE``),
then the YAML file's ``hallucination:`` section, then defaults.
"""

from __future__ import annotations

import difflib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, ClassVar, Self

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
    DEFAULT_MAX_SPREAD,
    DEFAULT_MIN_P1,
    DEFAULT_REFUTE_SWAP_P1,
    DEFAULT_TIMEOUT_REDUCTION,
    DEFAULT_VERIFY_P1,
    GatePolicy,
    PriorSufficientAction,
)

ENV_PREFIX = "MEMSTORE_HALLUCINATION__"
SECTION = "hallucination"
#: The settings class a ``YamlSettings.load`` builds and the YAML file it reads.
_loading: ContextVar[tuple[type[BaseSettings], Path] | None] = ContextVar("_loading", default=None)


class ConfigError(ValueError):
    """A configuration value is invalid; ``field`` is its dotted path."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


def config_error(
    exc: ValidationError, section: str | None = None, model: type[BaseModel] | None = None
) -> ConfigError:
    """The first error of ``exc`` as a ConfigError naming its dotted field (under
    ``section``, when given); an unknown key of ``model`` (the settings class) names
    the nearest valid key."""
    err = exc.errors(include_url=False)[0]
    field = ".".join([*([section] if section else []), *(str(p) for p in err["loc"])])
    reason = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden" and model is not None and err["loc"]:
        reason = "not a setting"
        keys = _keys_at(model, [str(p) for p in err["loc"][:-1]])
        near = difflib.get_close_matches(str(err["loc"][-1]), keys, n=1, cutoff=0.6)
        if near:
            reason += f"; did you mean {near[0]!r}?"
        elif keys:
            reason += f" (the settings here: {', '.join(sorted(keys))})"
    return ConfigError(field or "settings", reason)


def _keys_at(model: type[BaseModel], path: list[str]) -> list[str]:
    """The keys a settings mapping accepts at ``path`` inside ``model`` ([] if unknown)."""
    for part in path:
        info = model.model_fields.get(part)
        inner = None if info is None else info.annotation
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return []
        model = inner
    return list(model.model_fields)


def read_yaml(path: Path, field: str) -> dict[str, Any]:
    """The mapping a YAML config file holds (empty for an empty file); ConfigError
    naming ``field`` when the file is missing, not YAML or not a mapping."""
    if not path.is_file():
        raise ConfigError(field, f"no config file at {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(field, f"{path} is not valid YAML: {exc}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(field, f"{path} must hold a mapping at the top level")
    return data or {}


class YamlSettings(BaseSettings):
    """Settings from keyword arguments, then the environment, then the YAML file that
    ``load`` names (its ``yaml_section``, where set), then defaults. Used by the
    ``hallucination`` block and by memstore's whole settings."""

    #: The section of the YAML file these settings are (None: the whole file).
    yaml_section: ClassVar[str | None] = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        outside: list[PydanticBaseSettingsSource] = [env_settings]
        loading = _loading.get()
        if loading is not None and loading[0] is settings_cls:  # not nested settings
            outside.append(
                YamlConfigSettingsSource(
                    settings_cls, yaml_file=loading[1], yaml_config_section=cls.yaml_section
                )
            )
        return (init_settings, *(cls.outside_source(source) for source in outside))

    @classmethod
    def outside_source(cls, source: PydanticBaseSettingsSource) -> PydanticBaseSettingsSource:
        """How the environment and the YAML file are read: as they are (a hook)."""
        return source

    @classmethod
    def load(cls, path: Path | None, **overrides: Any) -> Self:
        """These settings from ``overrides``, the environment and the YAML file at
        ``path``; ConfigError naming the field of a bad value."""
        token = _loading.set(None if path is None else (cls, path))
        try:
            return cls(**overrides)
        except ValidationError as exc:
            raise config_error(exc, cls.yaml_section, cls) from None
        finally:
            _loading.reset(token)


class MemoryGateConfig(BaseModel):
    """Thresholds of the memory gate (docs/design.md, Decision table)."""

    model_config = ConfigDict(extra="forbid")

    min_confidence: float = Field(default=DEFAULT_MIN_P1, ge=0.0, le=1.0)
    #: False: hold (store ``unverified``) what the verifier cannot ground; True: refuse it.
    reject_unsupported: bool = False
    #: The p1 a fact needs to be verified rather than held.
    verify_p1: float = Field(default=DEFAULT_VERIFY_P1, ge=0.0, le=1.0)
    #: Below this p1 a thing swapped for another ("shellfish" for "peanuts") is refused.
    refute_swap_p1: float = Field(default=DEFAULT_REFUTE_SWAP_P1, ge=0.0, le=1.0)
    #: Read each claim beside its evidence with ``gate.checks`` (values, polarity, ...).
    checks: bool = True
    #: A sampled p1 or p0 (``sampling``, the MCP host) with a larger standard deviation
    #: holds the fact instead of verifying or refusing it.
    max_spread: float = Field(default=DEFAULT_MAX_SPREAD, ge=0.0, le=1.0)
    contradiction_threshold: float = Field(default=DEFAULT_CONTRADICTION_THRESHOLD, ge=0, le=1)
    flag_threshold_bits: float = Field(default=DEFAULT_FLAG_THRESHOLD_BITS, ge=0.0)
    timeout_reduction: float = Field(default=DEFAULT_TIMEOUT_REDUCTION, ge=0.0, le=1.0)
    prior_sufficient: PriorSufficientAction = "store"
    eps: float = Field(default=DEFAULT_EPS, gt=0.0, lt=0.5)


class HallucinationConfig(YamlSettings):
    """The ``hallucination:`` block."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid"
    )
    yaml_section = SECTION

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

    #: A stronger verifier for re-verification (held facts rechecked in the background
    #: are promoted or refused by it), e.g. ``openai`` at a server; None: ``backend``.
    recheck_backend: str | None = None
    recheck_backend_options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("backend", "recheck_backend")
    @classmethod
    def _known_backend(cls, name: str | None) -> str | None:
        if name is not None and name not in BACKENDS:
            raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
        return name

    def gate(self) -> Gate:
        """A Gate built from these settings (loads the backend's model)."""
        return self._gate(self.backend, self.backend_options)

    def recheck_gate(self) -> Gate | None:
        """The Gate re-verification uses when ``recheck_backend`` is set (same policy and
        deadlines as ``gate()``), else None."""
        if self.recheck_backend is None:
            return None
        return self._gate(self.recheck_backend, self.recheck_backend_options)

    def _gate(self, name: str, options: dict[str, Any]) -> Gate:
        return Gate(
            create_backend(name, **options),
            self.policy(),
            deadline=self.timeout,
            deadline_per_claim=self.timeout_per_claim,
            lock_wait=self.lock_wait,
            cache_ttl=self.cache_ttl,
        )

    def policy(self) -> GatePolicy:
        """The GatePolicy these settings describe: ``memory_gate``'s fields under the same
        names, ``min_confidence`` as ``min_p1``."""
        gate = self.memory_gate.model_dump(exclude={"min_confidence"})
        return GatePolicy(min_p1=self.memory_gate.min_confidence, **gate)


def load_config(path: str | Path | None = None, **overrides: Any) -> HallucinationConfig:
    """Load the block; raise ConfigError naming the field for any bad value."""
    yaml_path = None if path is None else Path(path)
    if yaml_path is not None and not isinstance(
        read_yaml(yaml_path, "path").get(SECTION, {}), dict | None
    ):
        raise ConfigError(SECTION, "must be a mapping")
    config = HallucinationConfig.load(yaml_path, **overrides)
    try:
        config.policy()  # cross-field checks of the policy
    except ValidationError as exc:
        raise config_error(exc, SECTION) from None
    return config
