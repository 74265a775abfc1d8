"""What ``memstore mcp --verifier/--extractor host`` builds: the options' checks, and a
write hook whose re-verification keeps the configured verifier (no client to ask)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    assert host_parts(HostOptions(), settings) == (None, None, None)


def test_writes_ask_the_host_and_rechecks_the_configured_verifier(tmp_path: Path) -> None:
    settings = load_settings(
        None,
        store={"url": str(tmp_path / "mem")},
        hallucination={"memory_gate": {"verify_p1": 0.8}},
    )
    options = HostOptions(verifier="host", extractor="host", samples=3)
    host, hook, extractor = host_parts(options, settings)
    assert host is not None and hook is not None and extractor is not None
    assert isinstance(hook.gate.backend, HostVerifier)
    assert hook.gate.backend.sampler.samples == 3
    assert hook.policy is not None and hook.policy.verify_p1 == 0.8  # the settings' policy
    assert hook.gate.deadline == HostBudget().seconds
    recheck = hook.recheck_gate
    assert recheck is not None and recheck.backend.name == "embedded"
    assert extractor.name == "llm:host" and extractor.completer is host
