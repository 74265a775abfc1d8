"""Drift alarms and the error budget on every front that shows them: REST ``GET /drift``,
the Prometheus gauges, the audit page's banners and ``memstore drift`` (real SQLite,
a rule standing in for the verifier)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from rest_server import ALICE_KEY, KEYS
from samples import works_at
from typer.testing import CliRunner

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED
from memstore import RejectionPublic
from memstore.audit.drift import DriftSettings, GatedWrite, judge
from memstore.cli import app as cli_app
from memstore.cli.console import Exit
from memstore.config import Settings, load_settings
from memstore.rest import create_app
from memstore.rest.metrics import DriftGauges

NS = "user:alice"
ALICE = {"X-API-Key": ALICE_KEY}
#: Judged in batches of 10 against the first 60 writes, so 100 writes can drift.
DRIFT = {"cusum": {"baseline": 60, "batch": 10}}


def admits_kept(claim: str, context: str) -> float:
    """Grounded when the claim's company is called Kept, else refused."""
    if REMOVED in context:
        return 0.05
    return 0.97 if "Kept" in claim else 0.1


def write(data: Path, pattern: str) -> list[str]:
    """One gated write per character (``k`` admitted, ``r`` refused); rejection ids."""
    gate = Gate(ScriptedBackend(admits_kept), REFUSE_UNGROUNDED)
    with memstore.open(data, NS, gate=gate, index=False) as store:
        done = store.add_facts(
            [
                works_at(f"P{n}", "Kept" if mark == "k" else "Refused")
                for n, mark in enumerate(pattern)
            ]
        )
    return [w.id for w in done if isinstance(w, RejectionPublic)]


def settings(data: Path, **drift: object) -> Settings:
    return load_settings(
        store={"url": str(data), "index": False},
        server={"api_keys": KEYS},
        hallucination={"enabled": False},
        drift={**DRIFT, **drift},
    )


@pytest.fixture(scope="module")
def drifted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A namespace whose gate admitted 3 in 5 writes, then 1 in 5."""
    data = tmp_path_factory.mktemp("drift") / "memdata"
    write(data, "kkkrr" * 12 + "krrrr" * 8)
    return data


@pytest.fixture(scope="module")
def client(drifted: Path) -> Iterator[TestClient]:
    with TestClient(create_app(settings(drifted)), follow_redirects=False) as served:
        yield served


def test_the_api_returns_the_alarms(client: TestClient) -> None:
    response = client.get(f"/v1/namespaces/{NS}/drift", headers=ALICE)
    assert response.status_code == 200, response.text
    body = response.json()
    assert {(a["backend"], a["metric"], a["result"]["direction"]) for a in body["alarms"]} == {
        ("scripted:handler", "acceptance", "down"),
        ("scripted:handler", "p1", "down"),
    }
    assert body["settings"]["cusum"] == {"baseline": 60, "batch": 10, "k": 1.0, "h": 5.0}
    assert [b["kind"] for b in body["budgets"]] == ["false_rejection", "false_admission"]
    assert body["spent"] == []
    assert client.get(f"/v1/namespaces/{NS}/drift").status_code == 401


def test_metrics_carry_the_last_report(client: TestClient) -> None:
    client.get(f"/v1/namespaces/{NS}/drift", headers=ALICE)
    text = client.get("/metrics").text
    for metric in ("acceptance", "p1"):
        alarms = f'memstore_gate_drift_alarms{{backend="scripted:handler",metric="{metric}"}} 1.0'
        assert alarms in text
    assert "memstore_gate_error_budgets_spent" in text
    assert "user:alice" not in text  # /metrics needs no key: no namespace is named


def test_the_audit_page_shows_a_banner(client: TestClient) -> None:
    html = client.get(f"/audit/{NS}", headers=ALICE).text
    assert '<section class="alerts" aria-label="Alerts">' in html
    assert "acceptance rate fell (scripted:handler)" in html
    assert "0.60 over the baseline, 0.20 since it" in html


def test_a_spent_error_budget_is_a_banner_and_an_entry(tmp_path: Path) -> None:
    data = tmp_path / "memdata"
    refused = write(data, "kkkrr" * 4)
    with memstore.open(data, NS, index=False) as store:
        store.add_label("false_rejection", refused[0], by="ann")
    with TestClient(create_app(settings(data)), follow_redirects=False) as served:
        body = served.get(f"/v1/namespaces/{NS}/drift", headers=ALICE).json()
        html = served.get(f"/audit/{NS}", headers=ALICE).text
        metrics = served.get("/metrics").text
    assert 'memstore_gate_error_budgets_spent{kind="false_rejection"} 1.0' in metrics
    assert [b["kind"] for b in body["spent"]] == ["false_rejection"]
    assert body["spent"][0]["burn"] == pytest.approx((1 / 8) / 0.05)
    assert "The error budget for wrong refusals is spent." in html
    assert "marked 1 of 8 refusals wrong (12.5%; 5.0% allowed)" in html


def test_the_cli_exits_5_on_an_alarm_and_0_when_quiet(drifted: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    config = tmp_path / "memstore.yaml"
    config.write_text(json.dumps({"drift": DRIFT}))
    env = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None, "MEMSTORE_CONFIG": None}

    def drift(store: Path, *more: str) -> Any:
        args = ["--config", str(config), "drift", "--store", str(store), "-n", NS, *more]
        return runner.invoke(cli_app, args, env=env)

    shown = drift(drifted)
    assert shown.exit_code == Exit.DRIFT, shown.output
    assert "Gate drift in user:alice" in shown.stdout and "down at write" in shown.stdout
    as_json = drift(drifted, "--format", "json")
    assert as_json.exit_code == Exit.DRIFT
    assert len(json.loads(as_json.stdout)["alarms"]) == 2

    quiet = tmp_path / "quiet"
    write(quiet, "kkkrr" * 20)
    calm = drift(quiet)
    assert calm.exit_code == Exit.OK, calm.output
    assert "at write" not in calm.stdout and "false_rejection" in calm.stdout
    bad = drift(drifted, "--format", "xml")
    assert bad.exit_code == Exit.BAD_INPUT and "format" in bad.output


def gated(pattern: str) -> list[GatedWrite]:
    """Gated writes of one backend: ``k`` admitted (p1 0.9), ``r`` refused (p1 0.1)."""
    return [
        GatedWrite(
            chain_seq=n + 1, backend="b", admitted=mark == "k", p1=0.9 if mark == "k" else 0.1
        )
        for n, mark in enumerate(pattern)
    ]


def gauge(gauges: DriftGauges, metric: str) -> float | None:
    labels = {"backend": "b", "metric": metric}
    return gauges.registry.get_sample_value("memstore_gate_drift_alarms", labels)


def test_gauges_count_namespaces_and_forget_a_cleared_alarm() -> None:
    settings = DriftSettings(**DRIFT)
    drifting, quiet = gated("kkkrr" * 12 + "krrrr" * 8), gated("kkkrr" * 20)
    gauges = DriftGauges()
    gauges.observe(judge("user:alice", drifting, settings))
    gauges.observe(judge("user:alice", drifting, settings))  # replaced, not added
    assert gauge(gauges, "acceptance") == 1.0
    gauges.observe(judge("user:bob", drifting, settings))
    assert gauge(gauges, "acceptance") == 2.0
    gauges.observe(judge("user:alice", quiet, settings))  # alice's alarm cleared
    assert gauge(gauges, "acceptance") == 1.0
    gauges.observe(judge("user:bob", quiet, settings))
    assert gauge(gauges, "acceptance") is None  # no namespace left: no series
