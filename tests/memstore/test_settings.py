"""memstore's settings (memstore/config.py): YAML, environment, keywords, defaults.

Precedence is keywords > environment > YAML > defaults, merged field by field; a bad
value fails at load with gate.ConfigError naming its dotted field; Settings.open()
builds a Store as the settings describe.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

import memstore
from gate import ConfigError, Gate, ScriptedBackend
from memstore import ErrFactNotGrounded, MemstoreError, Settings, Ungated, load_settings
from memstore.config import SchedulerSettings, ServerSettings, format_duration, parse_duration
from memstore.write.hook import GateHook

ALICE_KEY = "alice-key-0123456789"
TEAM_KEY = "team-key-0123456789ab"
ADMIN_KEY = "admin-key-0123456789"

FULL_YAML = f"""
store:
  url: /srv/memdata
  namespace: user:carol
  index: false
  near_duplicate: 0.8
  vector_index_at: 1000
  recheck_after: 7200
  retry_after: 90s
hallucination:
  enabled: true
  backend: hf-nli
  timeout: 4
  memory_gate:
    min_confidence: 0.6
    reject_unsupported: false
scheduler:
  enabled: true
  every: 6h
  limit: 10
  batch: 5
  lease: 90
  fetch_timeout: 3
server:
  host: 0.0.0.0
  port: 9000
  api_keys:
    {ALICE_KEY}: ["user:alice"]
    {TEAM_KEY}: ["user:*", "shared"]
"""

EVIDENCE = ["Alice: I'm allergic to peanuts."]


def allergy(food: str) -> dict[str, Any]:
    """Alice is allergic to ``food``, on the peanut evidence (add_fact keyword arguments)."""
    return {
        "statement": f"Alice is allergic to {food}.",
        "members": [("Alice", "person", "patient"), (food, "food", "allergen")],
        "relation": "allergic_to",
        "evidence": EVIDENCE,
    }


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No MEMSTORE_* variable of the outer environment (URL, NAMESPACE, CONFIG, sections,
    INDEX_URI, ...) may reach a test."""
    for name in list(os.environ):
        if name.startswith("MEMSTORE_"):
            monkeypatch.delenv(name)


def write(tmp_path: Path, text: str, name: str = "memstore.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def config_error(*args: Any, **kwargs: Any) -> ConfigError:
    with pytest.raises(ConfigError) as err:
        load_settings(*args, **kwargs)
    return err.value


# -- defaults and the YAML file ---------------------------------------------------------


def test_defaults() -> None:
    settings = load_settings()
    assert isinstance(settings, Settings)
    assert settings.store.url == "./memdata"
    assert settings.store.namespace == "default"
    assert settings.store.index is None and settings.store.recheck_after is None
    assert settings.hallucination.enabled
    assert settings.hallucination.backend == "embedded"
    assert settings.scheduler.every == timedelta(minutes=5)
    assert not settings.scheduler.enabled
    assert (settings.server.host, settings.server.port) == ("127.0.0.1", 8765)
    assert settings.server.api_keys == {}
    assert settings.model_dump(mode="json")["scheduler"]["every"] == "5m"


def test_yaml_file_fills_every_section(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, FULL_YAML))
    store = settings.store
    assert (store.url, store.namespace, store.index) == ("/srv/memdata", "user:carol", False)
    assert (store.near_duplicate, store.vector_index_at) == (0.8, 1000)
    assert store.recheck_after == timedelta(hours=2)  # a number is seconds
    assert store.retry_after == timedelta(seconds=90)
    gate = settings.hallucination
    assert (gate.backend, gate.timeout) == ("hf-nli", 4.0)
    assert gate.memory_gate.min_confidence == 0.6 and not gate.memory_gate.reject_unsupported
    assert gate.policy().min_p1 == 0.6
    scheduler = settings.scheduler
    assert scheduler.enabled and scheduler.every == timedelta(hours=6)
    assert (scheduler.limit, scheduler.batch, scheduler.fetch_timeout) == (10, 5, 3.0)
    assert scheduler.lease == timedelta(seconds=90)
    server_settings = settings.server
    assert (server_settings.host, server_settings.port) == ("0.0.0.0", 9000)
    assert server_settings.api_keys == {ALICE_KEY: ["user:alice"], TEAM_KEY: ["user:*", "shared"]}


def test_durations_dump_back_as_text(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, FULL_YAML))
    dumped = settings.model_dump(mode="json")
    assert dumped["scheduler"]["every"] == "6h"
    assert dumped["scheduler"]["lease"] == "90s"
    assert dumped["store"]["recheck_after"] == "2h"
    assert dumped["store"]["retry_after"] == "90s"
    assert settings.model_dump()["scheduler"]["every"] == timedelta(hours=6)  # python mode
    # The dump is itself a valid config file that loads to the same settings.
    again = load_settings(write(tmp_path, yaml.safe_dump(dumped), "dumped.yaml"))
    assert again == settings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90", timedelta(seconds=90)),
        ("90s", timedelta(seconds=90)),
        ("5m", timedelta(minutes=5)),
        ("6h", timedelta(hours=6)),
        ("1d", timedelta(days=1)),
        (" 2h ", timedelta(hours=2)),
        ("0.5h", timedelta(minutes=30)),
        ("1.5", timedelta(seconds=1.5)),
    ],
)
def test_parse_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["soon", "", "0", "0s", "-5", "5 minutes", "5w", "1h30m"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(seconds=90), "90s"),
        (timedelta(minutes=5), "5m"),
        (timedelta(hours=6), "6h"),
        (timedelta(hours=36), "36h"),
        (timedelta(days=2), "2d"),
        (timedelta(seconds=1.5), "1.5s"),
    ],
)
def test_format_duration(value: timedelta, text: str) -> None:
    assert format_duration(value) == text
    assert parse_duration(text) == value


# -- precedence -------------------------------------------------------------------------


@pytest.fixture
def yaml_under_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """FULL_YAML on disk, and an environment that sets two of its fields: the memory
    gate's min_confidence (0.7) and the scheduler's period (90 seconds)."""
    monkeypatch.setenv("MEMSTORE_HALLUCINATION__MEMORY_GATE__MIN_CONFIDENCE", "0.7")
    monkeypatch.setenv("MEMSTORE_SCHEDULER__EVERY", "90")
    return write(tmp_path, FULL_YAML)


def test_environment_beats_yaml_field_by_field(
    yaml_under_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTORE_SERVER__API_KEYS", f'{{"{ALICE_KEY}": ["shared"]}}')
    settings = load_settings(yaml_under_env)
    assert settings.hallucination.memory_gate.min_confidence == 0.7
    assert settings.hallucination.policy().min_p1 == 0.7
    assert settings.scheduler.every == timedelta(seconds=90)
    assert settings.server.api_keys[ALICE_KEY] == ["shared"]
    assert not settings.server.allows(ALICE_KEY, "user:alice")
    # The file's other fields of the same sections are kept.
    assert not settings.hallucination.memory_gate.reject_unsupported
    assert settings.hallucination.timeout == 4.0
    assert settings.hallucination.backend == "hf-nli"
    assert settings.scheduler.limit == 10 and settings.scheduler.enabled
    assert settings.server.port == 9000
    assert settings.store.url == "/srv/memdata"


def test_environment_beats_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_SERVER__PORT", "9100")
    monkeypatch.setenv("MEMSTORE_SERVER__API_KEYS", f'{{"{ADMIN_KEY}": ["*"]}}')
    monkeypatch.setenv("MEMSTORE_STORE__RECHECK_AFTER", "6h")
    settings = load_settings()
    assert settings.server.port == 9100
    assert settings.server.api_keys == {ADMIN_KEY: ["*"]}
    assert settings.server.host == "127.0.0.1"
    assert settings.store.recheck_after == timedelta(hours=6)


def test_keywords_beat_environment_and_yaml(yaml_under_env: Path) -> None:
    settings = load_settings(
        yaml_under_env,
        hallucination={"memory_gate": {"min_confidence": 0.9}},
        scheduler={"every": "1m"},
        store={"namespace": "user:dave"},
    )
    assert settings.hallucination.memory_gate.min_confidence == 0.9
    assert settings.scheduler.every == timedelta(minutes=1)
    assert settings.store.namespace == "user:dave"
    # Keyword sections merge field by field too.
    assert not settings.hallucination.memory_gate.reject_unsupported
    assert settings.hallucination.timeout == 4.0
    assert settings.scheduler.limit == 10
    assert settings.store.url == "/srv/memdata"


def test_url_and_namespace_shorthands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_URL", "/data/short")
    monkeypatch.setenv("MEMSTORE_NAMESPACE", "user:erin")
    assert load_settings().store.url == "/data/short"
    settings = load_settings(write(tmp_path, FULL_YAML))
    assert (settings.store.url, settings.store.namespace) == ("/data/short", "user:erin")
    assert settings.store.near_duplicate == 0.8  # the file's other store fields stay
    # Keywords still win over the shorthands.
    settings = load_settings(store={"url": "/data/kw"})
    assert (settings.store.url, settings.store.namespace) == ("/data/kw", "user:erin")


def test_section_variables_beat_the_shorthands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_URL", "/data/short")
    monkeypatch.setenv("MEMSTORE_STORE__URL", "/data/long")
    monkeypatch.setenv("MEMSTORE_NAMESPACE", "user:short")
    monkeypatch.setenv("MEMSTORE_STORE__NAMESPACE", "user:long")
    settings = load_settings()
    assert (settings.store.url, settings.store.namespace) == ("/data/long", "user:long")


def test_empty_shorthands_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_URL", "")
    monkeypatch.setenv("MEMSTORE_NAMESPACE", "")
    settings = load_settings()
    assert (settings.store.url, settings.store.namespace) == ("./memdata", "default")


def test_bad_namespace_shorthand_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_NAMESPACE", "no spaces allowed")
    assert config_error().field == "store.namespace"


def test_config_variable_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_CONFIG", str(write(tmp_path, FULL_YAML)))
    assert load_settings().store.url == "/srv/memdata"
    other = write(tmp_path, "store:\n  url: /other\n", "other.yaml")
    assert load_settings(other).store.url == "/other"  # a path given wins
    monkeypatch.setenv("MEMSTORE_CONFIG", str(tmp_path / "missing.yaml"))
    assert config_error().field == "config"


def test_unrelated_variables_do_not_break_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    baseline = load_settings()
    monkeypatch.setenv("MEMSTORE_REQUIRE_POSTGRES", "1")
    monkeypatch.setenv("MEMSTORE_INDEX_URI", "/tmp/some-index")
    monkeypatch.setenv("MEMSTORE_CONFIG", "")
    assert load_settings() == baseline


# -- bad values name their field --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("store:\n  nope: 1\n", "store.nope"),
        ("nope:\n  a: 1\n", "nope"),
        ("store: ./memdata\n", "store"),
        ("scheduler: [1, 2]\n", "scheduler"),
        ("- store\n- server\n", "config"),
        ("just text\n", "config"),
        ("store: [unclosed\n", "config"),
        ("scheduler:\n  every: soon\n", "scheduler.every"),
        ("scheduler:\n  every: -5\n", "scheduler.every"),
        ("scheduler:\n  every: 0\n", "scheduler.every"),
        ("scheduler:\n  lease: 0s\n", "scheduler.lease"),
        ("store:\n  recheck_after: -1\n", "store.recheck_after"),
        ("server:\n  port: 0\n", "server.port"),
        ("server:\n  port: 70000\n", "server.port"),
        ("store:\n  namespace: 'bad namespace!'\n", "store.namespace"),
        ("store:\n  url: ''\n", "store.url"),
        ("store:\n  index: ''\n", "store.index"),
        ("store:\n  near_duplicate: 1.5\n", "store.near_duplicate"),
        ("store:\n  index_writes: later\n", "store.index_writes"),
        ("store:\n  embedding_precision: int4\n", "store.embedding_precision"),
        ("hallucination:\n  backend: gpt-magic\n", "hallucination.backend"),
        (
            "hallucination:\n  memory_gate:\n    min_confidence: 3\n",
            "hallucination.memory_gate.min_confidence",
        ),
        ("server:\n  api_keys:\n    short-key: ['user:*']\n", "server.api_keys"),
        (f"server:\n  api_keys:\n    {ALICE_KEY}: []\n", "server.api_keys"),
        ("scheduler:\n  batch: 0\n", "scheduler.batch"),
        ("scheduler:\n  batch: 501\n", "scheduler.batch"),
        ("scheduler:\n  fetch_timeout: 0\n", "scheduler.fetch_timeout"),
    ],
)
def test_bad_values_name_the_field(tmp_path: Path, text: str, field: str) -> None:
    err = config_error(write(tmp_path, text))
    assert err.field == field
    assert err.reason and str(err).startswith(f"{field}: ")


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ("halucination:\n  enabled: false\n", "halucination", "did you mean 'hallucination'?"),
        ("store:\n  namspace: x\n", "store.namspace", "did you mean 'namespace'?"),
        ("hallucination:\n  tmeout: 3\n", "hallucination.tmeout", "did you mean 'timeout'?"),
        (
            "hallucination:\n  memory_gate:\n    min_confidnce: 0.5\n",
            "hallucination.memory_gate.min_confidnce",
            "did you mean 'min_confidence'?",
        ),
        ("store:\n  zzzzzz: 1\n", "store.zzzzzz", "(the settings here: "),
    ],
)
def test_a_mistyped_key_names_the_nearest_valid_one(
    tmp_path: Path, text: str, field: str, reason: str
) -> None:
    err = config_error(write(tmp_path, text))
    assert err.field == field
    assert err.reason.startswith("not a setting") and reason in err.reason, err.reason


def test_bad_duration_says_what_it_got(tmp_path: Path) -> None:
    err = config_error(write(tmp_path, "scheduler:\n  every: soon\n"))
    assert "soon" in err.reason


def test_short_api_key_is_rejected_without_leaking_it(tmp_path: Path) -> None:
    err = config_error(write(tmp_path, "server:\n  api_keys:\n    s3cret: ['user:*']\n"))
    assert err.field == "server.api_keys" and "16" in err.reason


def test_missing_file(tmp_path: Path) -> None:
    err = config_error(tmp_path / "nope.yaml")
    assert err.field == "config" and "no config file" in err.reason


def test_empty_file_means_defaults(tmp_path: Path) -> None:
    assert load_settings(write(tmp_path, "")) == load_settings()


@pytest.mark.parametrize(
    ("variable", "value", "field"),
    [
        ("MEMSTORE_SCHEDULER__EVERY", "soon", "scheduler.every"),
        ("MEMSTORE_STORE__NOPE", "1", "store.nope"),
        ("MEMSTORE_SERVER__PORT", "0", "server.port"),
        ("MEMSTORE_HALLUCINATION__MEMORY_GATE__MIN_CONFIDENCE", "3", None),
        ("MEMSTORE_SERVER__API_KEYS", '{"short": ["user:*"]}', "server.api_keys"),
    ],
)
def test_bad_environment_values_name_the_field(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, field: str | None
) -> None:
    monkeypatch.setenv(variable, value)
    expected = field or "hallucination.memory_gate.min_confidence"
    assert config_error().field == expected


def test_bad_keyword_values_name_the_field() -> None:
    assert config_error(server={"port": 70000}).field == "server.port"
    assert config_error(scheduler={"batch": 0}).field == "scheduler.batch"
    assert config_error(store={"nope": 1}).field == "store.nope"


# -- edge cases: empty sections, unusable durations, bounds, env JSON, key replacement


def test_empty_yaml_section_means_its_defaults(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, "store:\nscheduler:\nhallucination:\n"))
    assert settings == load_settings()


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(".nan", id="nan"),
        pytest.param(".inf", id="inf"),
        pytest.param("99999999999d", id="too-long"),
        pytest.param("true", id="bool"),
        pytest.param("0.0000001", id="below-a-microsecond"),
    ],
)
def test_unusable_durations_are_config_errors(tmp_path: Path, value: str) -> None:
    err = config_error(write(tmp_path, f"scheduler:\n  every: {value}\n"))
    assert err.field == "scheduler.every"


def test_scheduler_limit_is_bounded_like_reverify(tmp_path: Path) -> None:
    assert load_settings(scheduler={"limit": 100_000}).scheduler.limit == 100_000
    assert config_error(scheduler={"limit": 100_001}).field == "scheduler.limit"


def test_invalid_json_in_environment_names_its_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_SERVER__API_KEYS", "not json")
    assert config_error().field.startswith("server")


def test_gate_cross_field_error_names_the_gate_block(tmp_path: Path) -> None:
    text = "hallucination:\n  memory_gate:\n    contradiction_threshold: 0.9\n"
    assert config_error(write(tmp_path, text)).field == "hallucination.memory_gate"


def test_api_keys_from_environment_or_keywords_replace_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, FULL_YAML)
    assert load_settings(path, server={"api_keys": {ADMIN_KEY: ["*"]}}).server.api_keys == {
        ADMIN_KEY: ["*"]
    }
    monkeypatch.setenv("MEMSTORE_SERVER__API_KEYS", f'{{"{ADMIN_KEY}": ["*"]}}')
    server_settings = load_settings(path).server
    assert server_settings.api_keys == {ADMIN_KEY: ["*"]}
    assert not server_settings.allows(
        TEAM_KEY, "user:bob"
    )  # a key dropped from service stays dropped


def test_index_false_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_STORE__INDEX", "false")
    assert load_settings().store.index is False


# -- API keys ---------------------------------------------------------------------------


@pytest.fixture
def server_settings() -> ServerSettings:
    return ServerSettings(
        api_keys={
            ALICE_KEY: ["user:alice"],
            TEAM_KEY: ["user:*", "shared"],
            ADMIN_KEY: ["*"],
        }
    )


def test_namespaces_for(server_settings: ServerSettings) -> None:
    assert server_settings.namespaces_for(ALICE_KEY) == ["user:alice"]
    assert server_settings.namespaces_for(TEAM_KEY) == ["user:*", "shared"]
    assert server_settings.namespaces_for(ADMIN_KEY) == ["*"]
    assert server_settings.namespaces_for("unknown-key-0123456789") == []
    assert server_settings.namespaces_for(ALICE_KEY[:-1]) == []  # a prefix of a key is no key
    assert server_settings.namespaces_for(ALICE_KEY + "x") == []
    assert server_settings.namespaces_for("") == []


@pytest.mark.parametrize(
    ("key", "namespace", "allowed"),
    [
        (ALICE_KEY, "user:alice", True),
        (ALICE_KEY, "user:bob", False),
        (ALICE_KEY, "user:alice2", False),
        (ALICE_KEY, "user:alic", False),
        (ALICE_KEY, "User:alice", False),
        (ALICE_KEY, "shared", False),
        (TEAM_KEY, "user:alice", True),
        (TEAM_KEY, "user:bob", True),
        (TEAM_KEY, "shared", True),
        (TEAM_KEY, "shared2", False),
        (TEAM_KEY, "team:x", False),
        (TEAM_KEY, "user", False),
        (ADMIN_KEY, "user:alice", True),
        (ADMIN_KEY, "anything/else", True),
        ("unknown-key-0123456789", "user:alice", False),
        ("unknown-key-0123456789", "default", False),
    ],
)
def test_allows(server_settings: ServerSettings, key: str, namespace: str, allowed: bool) -> None:
    assert server_settings.allows(key, namespace) is allowed


def test_no_keys_allow_nothing() -> None:
    assert not load_settings().server.allows(ALICE_KEY, "user:alice")


def test_keys_from_the_file_allow_their_namespaces(tmp_path: Path) -> None:
    server_settings = load_settings(write(tmp_path, FULL_YAML)).server
    assert server_settings.allows(ALICE_KEY, "user:alice") and not server_settings.allows(
        ALICE_KEY, "user:bob"
    )
    assert server_settings.allows(TEAM_KEY, "user:bob") and not server_settings.allows(
        ADMIN_KEY, "user:bob"
    )


# -- Settings.open() ----------------------------------------------------------------------


def settings_for(tmp_path: Path, text: str = "") -> Settings:
    """Settings whose store lives under tmp_path, with ``text`` as the rest of the file."""
    store = f"store:\n  url: {tmp_path / 'memdata'}\n  namespace: user:alice\n"
    if text.startswith("store:\n"):
        store += text.removeprefix("store:\n")
        text = ""
    return load_settings(write(tmp_path, store + text))


UNGATED = "hallucination:\n  enabled: false\n"


def test_open_uses_the_settings_namespace_or_the_argument(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, UNGATED)
    with settings.open(index=False) as store:
        assert store.namespace == "user:alice"
        assert store.data_dir == tmp_path / "memdata"
        fact = store.add_fact(**allergy("peanuts"))
    assert (tmp_path / "memdata" / "memstore.db").is_file()
    with settings.open("user:bob", index=False) as store:
        assert store.namespace == "user:bob"
        with pytest.raises(memstore.NotFound):
            store.get_fact(fact.id)  # another namespace
    with settings.open(index=False) as store:
        assert store.get_fact(fact.id).statement == "Alice is allergic to peanuts."


def test_disabled_gate_stores_writes_ungated(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, UNGATED)
    assert settings.gate() is None
    with settings.open(index=False) as store:
        assert isinstance(store.hook, Ungated)
        fact = store.add_fact(**allergy("shellfish"))  # nothing supports it
        assert fact.verdict == "ungated"
        assert fact.next_check_at is None
        assert store.get_fact(fact.id).statement == "Alice is allergic to shellfish."


GATED = """hallucination:
  enabled: true
  timeout: 30
  memory_gate:
    min_confidence: 0.6
    reject_unsupported: true
"""


def test_enabled_gate_carries_the_policy_and_rejects_ungrounded_facts(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, GATED)
    with settings.open(index=False) as store:
        assert isinstance(store.hook, GateHook)
        assert store.hook.policy is not None and store.hook.policy.min_p1 == 0.6
        assert store.hook.policy.reject_unsupported
        assert store.hook.gate is settings.gate()
        with pytest.raises(ErrFactNotGrounded) as err:
            store.add_fact(**allergy("shellfish"))
        assert err.value.verdict != "ungated"
        assert [r.id for r in store.rejections()] == [err.value.rejection_id]
        fact = store.add_fact(**allergy("peanuts"))
        assert fact.verdict == "grounded"
        live = store.facts_about("Alice")
        assert [f.statement for f in live] == ["Alice is allergic to peanuts."]


def test_gate_is_shared_for_equal_settings(tmp_path: Path) -> None:
    first = load_settings(
        hallucination={"memory_gate": {"min_confidence": 0.6, "reject_unsupported": True}}
    )
    second = load_settings(write(tmp_path, GATED.replace("  timeout: 30\n", "")))
    assert first.hallucination == second.hallucination
    gate = first.gate()
    assert isinstance(gate, Gate)
    assert second.gate() is gate and first.gate() is gate
    assert gate.policy.min_p1 == 0.6
    stricter = load_settings(hallucination={"memory_gate": {"min_confidence": 0.7}}).gate()
    assert stricter is not None and stricter is not gate
    assert stricter.policy.min_p1 == 0.7
    assert load_settings(hallucination={"enabled": False}).gate() is None


def test_open_options_win_over_the_settings(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, GATED)
    with settings.open(index=False, hook=Ungated()) as store:
        assert isinstance(store.hook, Ungated)
    scripted = Gate(ScriptedBackend.fixed(0.01, 0.99))
    with settings.open(index=False, gate=scripted) as store:
        assert isinstance(store.hook, GateHook) and store.hook.gate is scripted


def test_index_false_opens_a_store_without_search(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "store:\n  index: false\n" + UNGATED)
    assert settings.store.index is False
    with settings.open() as store:
        assert store.index_uri is None
        store.add_fact(**allergy("peanuts"))
        with pytest.raises(MemstoreError, match="no search index"):
            store.search("peanuts")
    assert not (tmp_path / "memdata" / "index").exists()


def test_embedding_precision_picks_the_index_embedder(tmp_path: Path) -> None:
    for precision, name in (("float32", "all-MiniLM-L6-v2"), ("int8", "all-MiniLM-L6-v2-int8")):
        (tmp_path / precision).mkdir()
        settings = settings_for(
            tmp_path / precision, f"store:\n  embedding_precision: {precision}\n" + UNGATED
        )
        with settings.open() as store:
            stored = store.add_fact(**allergy("peanuts"))
            assert store._index.ready().embedder.name == name
            assert store.search("peanuts", 1)[0].fact.id == stored.id
    assert load_settings().store.embedding_precision == "float32"


def test_index_writes_from_the_environment_start_the_background_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTORE_STORE__INDEX_WRITES", "background")
    settings = settings_for(tmp_path, UNGATED)
    assert settings.store.index_writes == "background"
    with settings.open() as store:
        assert store._index.writer is not None
        store.add_fact(**allergy("peanuts"))
        store.sync_index()
        assert [h.fact.statement for h in store.search("peanuts", k=1)] == [
            allergy("peanuts")["statement"]
        ]
    with settings_for(tmp_path, UNGATED).open(index_writes="inline") as store:
        assert store._index.writer is None


def test_index_directory_from_settings(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, f"store:\n  index: {tmp_path / 'idx'}\n" + UNGATED)
    with settings.open() as store:
        assert store.index_uri == str(tmp_path / "idx")


def test_recheck_and_retry_after_apply_to_the_store(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "store:\n  recheck_after: 6h\n  retry_after: 90s\n")
    grounded = Gate(ScriptedBackend.fixed(0.01, 0.99))  # the gate's verdict is not the point
    with settings.open(index=False, gate=grounded) as store:
        policy = store.reverify_policy()
        assert policy.recheck_after == timedelta(hours=6)
        assert policy.retry_after == timedelta(seconds=90)
        fact = store.add_fact(**allergy("peanuts"))
        assert fact.verdict == "grounded" and fact.next_check_at is not None
        wait = fact.next_check_at - fact.recorded_at
        assert abs(wait - timedelta(hours=6)) < timedelta(seconds=5)


# -- the scheduler ------------------------------------------------------------------------


def test_scheduler_options(tmp_path: Path) -> None:
    scheduler = load_settings(write(tmp_path, FULL_YAML)).scheduler
    assert scheduler.options() == {
        "limit": 10,
        "batch": 5,
        "lease": timedelta(seconds=90),
        "fetch_timeout": 3.0,
    }


@pytest.mark.parametrize(
    "scheduler",
    [
        SchedulerSettings(),
        SchedulerSettings(limit=1, batch=1, lease="1s", fetch_timeout=0.1),  # type: ignore[arg-type]
        SchedulerSettings(limit=100_000, batch=500, lease="1d", fetch_timeout=600),  # type: ignore[arg-type]
    ],
    ids=["defaults", "smallest", "largest"],
)
def test_scheduler_options_are_accepted_by_reverify(
    tmp_path: Path, scheduler: SchedulerSettings
) -> None:
    settings = settings_for(tmp_path, UNGATED)
    with settings.open(index=False) as store:
        report = store.reverify(**scheduler.options())
    assert report.checked == 0 and report.namespace == "user:alice"
