"""memstore's settings: one YAML file, overridable by environment variables.

Sections (docs/design.md, Configuration): ``store`` (where memory lives),
``hallucination`` (the gate block, :class:`gate.HallucinationConfig`), ``scheduler``
(re-verification runs), ``server`` (``memstore serve``: address and API keys) and
``sources`` (what re-verification may fetch and REST/MCP callers may cite:
:class:`SourcesSettings`).

Precedence, highest first: keyword arguments of :func:`load_settings`, then
environment variables ``MEMSTORE_<SECTION>__<FIELD>`` (nested with ``__``, e.g.
``MEMSTORE_HALLUCINATION__MEMORY_GATE__MIN_CONFIDENCE=0.6``; ``MEMSTORE_URL`` and
``MEMSTORE_NAMESPACE`` are short for ``MEMSTORE_STORE__URL`` and
``MEMSTORE_STORE__NAMESPACE``), then the YAML file, then defaults. A bad value
fails at load with :class:`gate.ConfigError` naming the field.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import threading
from datetime import timedelta
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import (
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from gate import ConfigError, Gate, HallucinationConfig
from gate.config import YamlSettings, read_yaml
from memstore.audit.drift import DriftSettings
from memstore.conversations.settings import ConversationSettings as ConversationSettings
from memstore.conversations.settings import LLMExtractorSettings as LLMExtractorSettings
from memstore.defaults import CONFIG_ENV as CONFIG_ENV
from memstore.defaults import NAMESPACE_ENV as NAMESPACE_ENV
from memstore.defaults import URL_ENV as URL_ENV
from memstore.durations import format_duration as format_duration
from memstore.durations import parse_duration as parse_duration
from memstore.durations import positive_duration
from memstore.index.object_store import ObjectStore, check_index_uri, is_uri
from memstore.limits import DEFAULT_MAX_CLAIMS, DEFAULT_MAX_EVIDENCE_CHARS
from memstore.names import check_namespace
from memstore.reverify.run import DEFAULT_BATCH, DEFAULT_LEASE, DEFAULT_LIMIT
from memstore.reverify.source_policy import SourcePolicy

if TYPE_CHECKING:
    from memstore.store import Store

ENV_PREFIX = "MEMSTORE_"
DEFAULT_STORE = "./memdata"
DEFAULT_PORT = 8765
#: ``server.max_open_stores``: each open store holds a few file descriptors.
DEFAULT_MAX_OPEN_STORES = 64
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
#: ``server.store_idle_timeout``.
DEFAULT_STORE_IDLE_TIMEOUT = timedelta(minutes=10)
#: ``server.header_timeout`` and ``server.body_timeout``: a request's headers, and its
#: body, must arrive within these (slow or silent clients are cut off).
DEFAULT_HEADER_TIMEOUT = timedelta(seconds=10)
DEFAULT_BODY_TIMEOUT = timedelta(seconds=60)
#: ``server.session_ttl``: an audit page sign-in lasts a working day.
DEFAULT_SESSION_TTL = timedelta(hours=8)


def _duration(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError("must be a duration like 30s, 5m, 2h or 1d, not true/false")
    if isinstance(value, str):
        return parse_duration(value)
    if isinstance(value, int | float):
        return positive_duration(value)
    return value


#: A duration: ``"30s"``, ``"5m"``, ``"2h"``, ``"1d"`` or a number of seconds.
Duration = Annotated[
    timedelta,
    BeforeValidator(_duration),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreSettings(_Section):
    """Where memory lives and how writes are indexed."""

    #: A data directory (SQLite, with its search index inside) or a database URL.
    url: str = Field(default=DEFAULT_STORE, min_length=1)
    namespace: str = "default"
    #: Search index directory or LanceDB URI; unset: the default place; false: none.
    index: str | bool | None = None
    #: How to reach an ``s3://`` index: endpoint, region, credentials, TLS.
    object_store: ObjectStore = Field(default_factory=ObjectStore)
    near_duplicate: float | None = Field(default=0.9, gt=0.0, le=1.0)
    vector_index_at: int = Field(default=50_000, ge=1)
    #: The packaged MiniLM's graph for the index: float32, or int8 (1.3 to 1.7 times as
    #: fast; its own index, so switching asks for ``memstore reindex``). The embedded
    #: verifier's ``precision`` option picks its own; the same one embeds a write once.
    embedding_precision: Literal["float32", "int8"] = "float32"
    #: inline: a write returns once its facts are searchable; background: once they are
    #: committed to SQL, a thread indexing them within about a second.
    index_writes: Literal["inline", "background", "queued"] = "inline"
    recheck_after: Duration | None = None
    retry_after: Duration | None = None
    #: Facts (or claims) one call may put through the gate; more is a 400 naming the field.
    max_claims: int = Field(default=DEFAULT_MAX_CLAIMS, ge=1)
    #: Characters of distinct evidence one call may carry; more is a 413 naming the field.
    max_evidence_chars: int = Field(default=DEFAULT_MAX_EVIDENCE_CHARS, ge=1)

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        return check_namespace(value)

    @field_validator("index", mode="before")
    @classmethod
    def _index_word(cls, value: object) -> object:
        # MEMSTORE_STORE__INDEX=false arrives as the string "false", not a directory name.
        if isinstance(value, str) and value.strip().lower() in ("false", "true"):
            return value.strip().lower() == "true"
        return value

    @field_validator("index")
    @classmethod
    def _index(cls, value: str | bool | None) -> str | bool | None:
        if value is True:
            return None
        if isinstance(value, str) and not value.strip():
            raise ValueError("must be a directory or URI, or false for no index")
        if isinstance(value, str) and is_uri(value):
            return check_index_uri(value)
        return value


class SchedulerSettings(_Section):
    """Re-verification runs (``memstore reverify --watch``, and ``serve`` when enabled)."""

    #: ``memstore serve`` re-verifies its namespaces in the background.
    enabled: bool = False
    every: Duration = timedelta(minutes=5)
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=100_000)
    batch: int = Field(default=DEFAULT_BATCH, ge=1, le=500)
    lease: Duration = DEFAULT_LEASE
    fetch_timeout: float = Field(default=10.0, ge=0.1, le=600.0)

    def options(self) -> dict[str, Any]:
        """Keyword arguments of ``Store.reverify``."""
        return {
            "limit": self.limit,
            "batch": self.batch,
            "lease": self.lease,
            "fetch_timeout": self.fetch_timeout,
        }


class ServerSettings(_Section):
    """``memstore serve``: where it listens and who may use which namespaces."""

    host: str = Field(default="127.0.0.1", min_length=1)
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    #: API key -> namespace patterns it may use (``user:alice``, ``user:*``, ``*``).
    api_keys: dict[str, list[str]] = Field(default_factory=dict)
    #: Namespaces whose stores ``serve`` keeps open at once; the least recently used idle
    #: one is closed to make room (a store a request is using is never closed).
    max_open_stores: int = Field(default=DEFAULT_MAX_OPEN_STORES, ge=1, le=100_000)
    #: ``serve`` closes a store no request has used for this long; null (or ``never``):
    #: only to make room.
    store_idle_timeout: Duration | None = DEFAULT_STORE_IDLE_TIMEOUT
    #: Largest request body ``serve`` reads; a larger one is answered 413 (field ``body``).
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1024)
    #: A connection whose request headers take longer than this to arrive is closed
    #: (a slow or silent client); between requests, uvicorn's keep-alive timeout holds.
    header_timeout: Duration = DEFAULT_HEADER_TIMEOUT
    #: A request body that takes longer than this to arrive is answered 408 (``body``).
    body_timeout: Duration = DEFAULT_BODY_TIMEOUT
    #: API keys that may also erase (facts and audit rejections, for good); each must be
    #: one of ``api_keys``. Empty: no key may erase over REST or MCP over HTTP.
    erase_keys: list[str] = Field(default_factory=list)
    #: How long a sign-in to the audit page (``/audit/{namespace}``) lasts.
    session_ttl: Duration = DEFAULT_SESSION_TTL

    @field_validator("store_idle_timeout", mode="before")
    @classmethod
    def _never(cls, value: object) -> object:
        # MEMSTORE_SERVER__STORE_IDLE_TIMEOUT=never (an environment variable is no null).
        if isinstance(value, str) and value.strip().lower() in ("never", "null", "none"):
            return None
        return value

    @field_validator("api_keys")
    @classmethod
    def _keys(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for key, patterns in value.items():
            if len(key) < 16:
                raise ValueError("each API key must be at least 16 characters long")
            if not patterns:
                raise ValueError(f"key {key[:4]}... names no namespaces")
        return value

    @field_validator("erase_keys")
    @classmethod
    def _erase_keys_known(cls, value: list[str], info: ValidationInfo) -> list[str]:
        known = info.data.get("api_keys") or {}
        for i, key in enumerate(value):
            if key not in known:
                raise ValueError(
                    f"entry {i} ({key[:4]}...) is not one of server.api_keys; an erase key "
                    "must also be an API key"
                )
        return value

    def may_erase(self, key: str) -> bool:
        """Whether ``key`` may erase facts and rejections (it is in ``erase_keys``)."""
        return any(hmac.compare_digest(k.encode(), key.encode()) for k in self.erase_keys)

    def namespaces_for(self, key: str) -> list[str]:
        """The namespace patterns ``key`` may use (none for an unknown key)."""
        for known, patterns in self.api_keys.items():
            if hmac.compare_digest(known.encode(), key.encode()):
                return patterns
        return []

    def allows(self, key: str, namespace: str) -> bool:
        """Whether ``key`` may read and write ``namespace``."""
        return any(fnmatchcase(namespace, p) for p in self.namespaces_for(key))


def key_fingerprint(key: str) -> str:
    """``api-key:<12 hex>``: who acted, by a short hash of the API key (never the key)."""
    return "api-key:" + hashlib.sha256(key.encode()).hexdigest()[:12]


#: ``sources``: what re-verification may fetch and remote callers may cite
#: (see ``memstore.reverify.source_policy``).
SourcesSettings = SourcePolicy


class Settings(YamlSettings):
    """Every setting of memstore; see the module docstring for where values come from."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid"
    )

    store: StoreSettings = StoreSettings()
    hallucination: HallucinationConfig = Field(default_factory=HallucinationConfig)
    scheduler: SchedulerSettings = SchedulerSettings()
    server: ServerSettings = ServerSettings()
    #: Which evidence sources may be fetched, and which REST/MCP callers may cite.
    sources: SourcesSettings = Field(default_factory=SourcesSettings)
    #: How facts are extracted from conversations and reconciled with older ones.
    conversations: ConversationSettings = Field(default_factory=ConversationSettings)
    #: Drift alarms on the gate's verdicts and the error budget (``Store.drift``).
    drift: DriftSettings = Field(default_factory=DriftSettings)

    @field_validator(
        "store", "hallucination", "scheduler", "server", "sources", "conversations", mode="before"
    )
    @classmethod
    def _empty_section(cls, value: object) -> object:
        return {} if value is None else value  # an empty YAML section: its defaults

    @classmethod
    def outside_source(cls, source: PydanticBaseSettingsSource) -> PydanticBaseSettingsSource:
        """The environment and the file, less their API keys where a higher source sets
        them."""
        return _KeysReplaced(source)

    def gate(self) -> Gate | None:
        """The Gate of the ``hallucination`` block (None when the gate is disabled).

        Built once per distinct block and shared, so every store opened from the same
        settings shares one verifier model and cache.
        """
        if not self.hallucination.enabled:
            return None
        key = self.hallucination.model_dump_json()
        with _gates_lock:
            if key not in _gates:
                _gates[key] = self.hallucination.gate()
            return _gates[key]

    def recheck_gate(self) -> Gate | None:
        """The Gate of ``hallucination.recheck_backend`` (None when unset or the gate is
        off), built once per distinct block and shared, as ``gate()``."""
        if not self.hallucination.enabled or self.hallucination.recheck_backend is None:
            return None
        key = "recheck:" + self.hallucination.model_dump_json()
        with _gates_lock:
            if key not in _gates:
                built = self.hallucination.recheck_gate()
                if built is None:
                    return None
                _gates[key] = built
            return _gates[key]

    def open(self, namespace: str | None = None, **options: Any) -> Store:
        """A Store as these settings describe (``namespace`` defaults to ``store.namespace``).

        ``options`` are passed on to ``memstore.open`` and win over the settings.
        """
        from memstore.index.embeddings import MiniLM
        from memstore.limits import Limits
        from memstore.store import Store
        from memstore.write.hook import GateHook, Ungated, policy_of

        s = self.store
        settings: dict[str, Any] = {
            "index": True if s.index is None else s.index,
            "near_duplicate": s.near_duplicate,
            "vector_index_at": s.vector_index_at,
            "embedder": MiniLM(s.embedding_precision),
            "index_writes": s.index_writes,
            "recheck_after": s.recheck_after,
            "retry_after": s.retry_after,
            "sources": self.sources,
            "object_store": s.object_store if s.object_store.configured else None,
            "limits": Limits(max_claims=s.max_claims, max_evidence_chars=s.max_evidence_chars),
        }
        if "hook" not in options and "gate" not in options:
            if self.hallucination.enabled:
                # The verifier is built on the first gated write: reads never load it.
                policy = policy_of(options.pop("policy", None)) or self.hallucination.policy()
                settings["hook"] = GateHook(
                    policy=policy, load=self.gate, recheck=self.recheck_gate
                )
            else:
                settings["hook"] = Ungated()
        settings.update(options)
        return Store(s.url, namespace if namespace is not None else s.namespace, **settings)


class _KeysReplaced(PydanticBaseSettingsSource):
    """``source``, less its ``server.api_keys`` when a higher source sets them: key maps
    are replaced whole, never merged key by key, so a file's keys cannot outlive
    MEMSTORE_SERVER__API_KEYS or a keyword ``server={"api_keys": ...}``."""

    def __init__(self, source: PydanticBaseSettingsSource) -> None:
        super().__init__(source.settings_cls)
        self._source = source
        self.__name__ = type(source).__name__

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ delegates

    def __call__(self) -> dict[str, Any]:
        data = self._source()
        server = data.get("server")
        higher = self.current_state.get("server")
        if isinstance(higher, dict) and "api_keys" in higher and isinstance(server, dict):
            keyed = ("api_keys", "erase_keys")  # erase keys name keys: replaced with them
            data = {**data, "server": {k: v for k, v in server.items() if k not in keyed}}
        return data


_gates: dict[str, Gate] = {}
_gates_lock = threading.Lock()


def load_settings(path: str | Path | None = None, **overrides: Any) -> Settings:
    """Settings from ``path`` (default: ``$MEMSTORE_CONFIG`` if set), the environment and
    ``overrides`` (sections as dicts: ``store={"url": ...}``).

    Raises ConfigError naming the field (``store.url``, ``hallucination.timeout``, ...).
    """
    if path is None and os.environ.get(CONFIG_ENV):
        path = os.environ[CONFIG_ENV]
    yaml_path = None if path is None else Path(path)
    if yaml_path is not None:
        for section, value in read_yaml(yaml_path, "config").items():
            if value is not None and not isinstance(value, dict):
                raise ConfigError(str(section), "must be a mapping")
    for field, short in (("url", URL_ENV), ("namespace", NAMESPACE_ENV)):
        value = os.environ.get(short)
        if value and f"{ENV_PREFIX}STORE__{field.upper()}" not in os.environ:
            store = dict(overrides.get("store") or {})
            store.setdefault(field, value)
            overrides["store"] = store
    try:
        settings = Settings.load(yaml_path, **overrides)
    except SettingsError as exc:  # e.g. a MEMSTORE_* variable that is not valid JSON
        named = re.search(r'field "([^"]+)"', str(exc))
        raise ConfigError(named.group(1) if named else "environment", str(exc)) from None
    try:
        settings.hallucination.policy()  # the gate block's cross-field checks
    except ValidationError as exc:
        reason = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
        raise ConfigError("hallucination.memory_gate", reason) from None
    return settings
