"""The hallucination: block loads from YAML and environment; bad values name the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate import (
    ConfigError,
    Gate,
    GatePolicy,
    ScriptedBackend,
    VerdictStatus,
    load_config,
)

YAML = """
store:
  url: ./memdata
hallucination:
  enabled: true
  backend: hf-nli
  timeout: 1.5
  memory_gate:
    min_confidence: 0.6
    reject_unsupported: false
"""


@pytest.fixture(autouse=True)
def no_gate_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("MEMSTORE_HALLUCINATION__"):
            monkeypatch.delenv(name)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "memstore.yaml"
    path.write_text(text)
    return path


def test_defaults() -> None:
    config = load_config()
    assert config.enabled and config.backend == "embedded" and config.timeout == 3.0
    policy = config.policy()
    assert policy.min_p1 == 0.5 and not policy.reject_unsupported  # held, not refused
    assert policy.verify_p1 == 0.9 and policy.checks and policy == GatePolicy()


def test_yaml_section_is_read(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, YAML))
    assert config.backend == "hf-nli" and config.timeout == 1.5
    assert config.memory_gate.min_confidence == 0.6
    assert config.policy().min_p1 == 0.6


def test_environment_overrides_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_HALLUCINATION__TIMEOUT", "3")
    monkeypatch.setenv("MEMSTORE_HALLUCINATION__MEMORY_GATE__MIN_CONFIDENCE", "0.7")
    config = load_config(write(tmp_path, YAML))
    assert config.timeout == 3.0
    assert config.memory_gate.min_confidence == 0.7
    assert config.backend == "hf-nli"  # untouched keys still come from YAML
    assert load_config(write(tmp_path, YAML), timeout=9).timeout == 9.0  # keywords win


@pytest.mark.parametrize(
    ("yaml_text", "field"),
    [
        ("hallucination:\n  timeout: -1\n", "hallucination.timeout"),
        ("hallucination:\n  batch_size: lots\n", "hallucination.batch_size"),
        (
            "hallucination:\n  memory_gate:\n    min_confidence: 2\n",
            "hallucination.memory_gate.min_confidence",
        ),
        (
            "hallucination:\n  memory_gate:\n    prior_sufficient: maybe\n",
            "hallucination.memory_gate.prior_sufficient",
        ),
        ("hallucination:\n  tiemout: 3\n", "hallucination.tiemout"),
        ("hallucination:\n  memory_gate:\n    contradiction_threshold: 0.9\n", "hallucination"),
        ("hallucination: [1, 2]\n", "hallucination"),
        ("hallucination:\n  backend: gpt-magic\n", "hallucination.backend"),
        ("hallucination:\n  backend_options: fast\n", "hallucination.backend_options"),
        ("a: [unclosed\n", "path"),
    ],
)
def test_bad_values_name_the_field(tmp_path: Path, yaml_text: str, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, yaml_text))
    assert err.value.field == field


def test_bad_environment_value_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_HALLUCINATION__CACHE_TTL", "-5")
    with pytest.raises(ConfigError) as err:
        load_config()
    assert err.value.field == "hallucination.cache_ttl"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no config file"):
        load_config(tmp_path / "nope.yaml")


def test_audit_only_policy_stores_unsupported_claims_flagged(tmp_path: Path) -> None:
    policy = load_config(write(tmp_path, YAML)).policy()
    gate = Gate(ScriptedBackend.fixed(0.6, 0.6), policy)
    verdict = gate.check("claim", ["evidence"])
    assert verdict.status == VerdictStatus.UNSUPPORTED
    assert verdict.accepted and verdict.flagged
    contradicted = Gate(ScriptedBackend.fixed(0.6, 0.01), policy).check("claim", ["evidence"])
    assert not contradicted.accepted


def test_the_config_builds_its_gate(tmp_path: Path) -> None:
    from openai_servers import serving

    with serving("logprobs") as server:
        text = (
            "hallucination:\n  backend: openai\n  timeout: 4\n"
            f"  backend_options:\n    model: m\n    base_url: {server.url}\n    mode: logprobs\n"
            "  memory_gate:\n    min_confidence: 0.6\n"
        )
        gate = load_config(write(tmp_path, text)).gate()
        verdict = gate.check("The user is allergic to peanuts.", ["I'm allergic to peanuts."])
    assert gate.deadline == 4.0 and gate.policy.min_p1 == 0.6
    assert verdict.backend.startswith("openai:") and verdict.p1 is not None
    assert len(server.requests) == 2  # p1 and p0
