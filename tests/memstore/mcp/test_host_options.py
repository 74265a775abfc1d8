"""What ``memstore mcp --verifier/--extractor host`` builds: the options' checks, and a
write hook whose re-verification keeps the configured verifier (no client to ask)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate import ConfigError
from memstore.config import load_settings
from memstore.mcp.host import HostBudget, HostOptions, HostVerifier, host_parts


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"verifier": "guess"}, "verifier must be 'configured' or 'host'"),
        ({"extractor": "llm"}, "extractor must be 'configured' or 'host'"),
        ({"samples": 0}, "samples must be a whole number from 1 to 64"),
        ({"samples": 65}, "samples must be"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HostOptions(**options)  # type: ignore[arg-type]


def test_a_budget_needs_something_to_spend() -> None:
    with pytest.raises(ValueError, match="above 0"):
        HostBudget(requests=0)
    with pytest.raises(ValueError, match="above 0"):
        HostBudget(seconds=0.0)


def test_nothing_is_built_unless_asked(tmp_path: Path) -> None:
    settings = load_settings(None, store={"url": str(tmp_path / "mem")})
    assert host_parts(HostOptions(), settings) == (None, None)
    host, hook = host_parts(HostOptions(extractor="host"), settings)
    assert host is not None and hook is None  # the configured gate checks the writes
    assert host.extractor and not host.verifier


def test_the_host_verifier_needs_the_gate_on(tmp_path: Path) -> None:
    settings = load_settings(
        None, store={"url": str(tmp_path / "mem")}, hallucination={"enabled": False}
    )
    with pytest.raises(ConfigError, match=r"hallucination\.enabled: the gate is off"):
        host_parts(HostOptions(verifier="host"), settings)


def test_writes_ask_the_host_and_rechecks_the_configured_verifier(tmp_path: Path) -> None:
    settings = load_settings(
        None,
        store={"url": str(tmp_path / "mem")},
        hallucination={"memory_gate": {"verify_p1": 0.8}},
    )
    options = HostOptions(verifier="host", extractor="host", samples=3)
    host, hook = host_parts(options, settings)
    assert host is not None and hook is not None
    assert isinstance(hook.gate.backend, HostVerifier)
    assert hook.gate.backend.sampler.samples == 3
    assert hook.policy is not None and hook.policy.verify_p1 == 0.8  # the settings' policy
    assert hook.gate.deadline > HostBudget().seconds  # the budget's own timeout ends first
    recheck = hook.recheck_gate
    assert recheck is not None and recheck.backend.name == "embedded"
    first, second = host.new_extractor(), host.new_extractor()
    assert first is not second and first.completer is host and first.name == "llm:host"
