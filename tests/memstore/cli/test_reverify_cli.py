"""``memstore reverify`` and ``memstore history`` as a user runs them: real processes,
the real embedded verifier, files that change on disk."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

import memstore

NS = "user:alice"
CLI = [str(Path(sys.executable).with_name("memstore"))]
#: Wide enough for the changed facts' table whole, whatever the length of pytest's
#: temporary paths (under pytest-xdist they are longer) in its source column.
ENV = {**os.environ, "COLUMNS": "400"}


def run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, env=ENV, check=False
    )


def row(output: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is ``first_cell``."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{output}")


@pytest.fixture
def changed_store(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Three facts the embedded gate verified; then one source changes and one is deleted.
    The CLI may fetch files under ``tmp_path`` (``sources.paths`` is empty by default)."""
    monkeypatch.setitem(ENV, "MEMSTORE_SOURCES__PATHS", json.dumps([str(tmp_path)]))
    alice, bob = tmp_path / "alice.md", tmp_path / "bob.txt"
    alice.write_text("# Alice\n\nAlice lives in Paris and works as a data engineer.\n")
    bob.write_text("Bob works at Acme as a chemist.\n")
    with memstore.open(data_dir, NS) as store:
        ids = {
            "alice": store.add_fact(
                statement="Alice lives in Paris.",
                members=["Alice", "Paris"],
                evidence=[{"text": alice.read_text(), "source": alice.as_uri()}],
                citations=[{"evidence": 0, "quote": "Alice lives in Paris"}],
            ).id,
            "bob": store.add_fact(
                statement="Bob works at Acme.",
                members=["Bob", "Acme"],
                evidence=[{"text": bob.read_text(), "source": bob.as_uri()}],
            ).id,
            "peanuts": store.add_fact(
                statement="Alice is allergic to peanuts.",
                members=["Alice"],
                evidence=["Alice: I'm allergic to peanuts, so no satay for me."],
            ).id,
        }
        assert {store.get_fact(i).status for i in ids.values()} == {"verified"}
    alice.write_text("# Shop\n\nThe bakery on the corner opens at 8am on weekdays.\n")
    bob.unlink()
    return ids


def test_reverify_once_prints_the_summary_and_what_changed(
    data_dir: Path, changed_store: dict[str, str]
) -> None:
    done = run("reverify", "--store", str(data_dir), "-n", NS, "--all", "--once")
    assert done.returncode == 0, done.stderr
    summary = row(done.stdout, NS)
    assert summary[1:6] == [
        "3",
        "1",
        "0",
        "2",
        "0",
    ]  # checked, still verified, unverified, stale, contradicted
    assert summary[6:10] == ["0", "0", "0", "1"]  # errors, still pending, skipped, new versions
    assert changed_store["alice"] in done.stdout and changed_store["bob"] in done.stdout
    assert changed_store["peanuts"] not in done.stdout  # unchanged facts are not listed
    assert "no longer exists" in done.stdout
    hint = re.search(r"memstore history ([0-9a-f]{32}) --store (\S+) -n user:alice", done.stdout)
    assert hint and hint.group(1) in (changed_store["alice"], changed_store["bob"])
    assert hint.group(2) == str(data_dir)

    with memstore.open(data_dir, NS) as store:
        alice, bob = store.get_fact(changed_store["alice"]), store.get_fact(changed_store["bob"])
        assert (alice.status, alice.confidence) == ("stale", 0.0)
        assert (bob.status, bob.confidence) == ("stale", 0.0)
        assert store.get_fact(changed_store["peanuts"]).status == "verified"
        last = store.verifications(bob.id)[-1]
        assert (last.kind, last.verdict_before, last.verdict) == (
            "reverify",
            "grounded",
            "source_missing",
        )

    shown = run("history", "--store", str(data_dir), changed_store["alice"], "-n", NS)
    assert shown.returncode == 0, shown.stderr
    assert "verified -> stale" in shown.stdout
    assert "v1 file://" in shown.stdout and "v2 file://" in shown.stdout

    again = run("reverify", "--store", str(data_dir), "-n", NS)
    assert again.returncode == 0
    assert row(again.stdout, NS)[1] == "0"
    assert "Nothing was due" in again.stdout


def test_watch_runs_on_a_schedule_kept_in_the_database_and_stops_on_sigterm(
    data_dir: Path, changed_store: dict[str, str]
) -> None:
    with memstore.open(data_dir, NS) as store:
        url = store.url
        store.mark_due([changed_store["peanuts"]])
    worker = subprocess.Popen(
        [*CLI, "reverify", "--store", str(data_dir), "-n", NS, "--watch", "--every", "1s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    engine = sa.create_engine(url)
    try:
        deadline = time.monotonic() + 120
        checked = 0
        while time.monotonic() < deadline and not checked:
            time.sleep(0.5)
            with engine.connect() as conn:
                checked = conn.execute(
                    sa.text("SELECT count(*) FROM verifications WHERE kind = 'reverify'")
                ).scalar_one()
        assert checked == 1
        with engine.connect() as conn:
            jobs = conn.execute(sa.text("SELECT id FROM apscheduler_jobs")).scalars().all()
        assert jobs == [f"memstore-reverify:{NS}"]
    finally:
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=60)
        engine.dispose()
    assert worker.returncode == 0, err
    assert row(out, NS)[1:3] == ["1", "1"]
    assert "watching user:alice every 1s" in err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--every", "5x", "--watch"], 2, "is not a duration"),
        (["--once", "--watch"], 2, "not both"),
        (["--batch", "0"], 2, "batch"),
    ],
)
def test_bad_usage_exits_2(data_dir: Path, args: list[str], code: int, message: str) -> None:
    done = run("reverify", "--store", str(data_dir), *args)
    assert done.returncode == code
    assert message in done.stderr


def test_a_missing_store_exits_2_and_is_not_created_an_unknown_fact_2(tmp_path: Path) -> None:
    done = run("reverify", "--store", f"sqlite:///{tmp_path}/missing/dir/memstore.db")
    assert done.returncode == 2
    assert "no memstore store at" in done.stderr and "init" in done.stderr
    assert not (tmp_path / "missing").exists()
    assert run("init", "--store", str(tmp_path / "empty")).returncode == 0
    shown = run("history", "--store", str(tmp_path / "empty"), "no-such-fact")
    assert shown.returncode == 2
    assert "no fact 'no-such-fact'" in shown.stderr


def test_policy_shows_and_sets_the_namespace_schedule(data_dir: Path) -> None:
    assert run("init", "--store", str(data_dir), "-n", NS).returncode == 0
    shown = run("policy", "--store", str(data_dir), "-n", NS)
    assert shown.returncode == 0, shown.stderr
    assert row(shown.stdout, NS)[1:3] == ["1d", "5m, doubling, at most 1d"]
    changed = run("policy", "--store", str(data_dir), "-n", NS, "--every", "12h", "--retry", "90s")
    assert changed.returncode == 0, changed.stderr
    assert row(changed.stdout, NS)[1:3] == ["12h", "90s, doubling, at most 12h"]
    with memstore.open(data_dir, NS) as store:
        assert store.reverify_policy() == memstore.ReverifyPolicy(
            timedelta(hours=12), timedelta(seconds=90)
        )
    assert run("policy", "--store", str(data_dir), "--every", "3x").returncode == 2


def test_all_namespaces_covers_every_namespace_the_gate_looks_after(
    data_dir: Path, changed_store: dict[str, str]
) -> None:
    with memstore.open(data_dir, "user:bob") as bob:
        bob.add_fact(
            statement="Bob is allergic to peanuts.",
            members=["Bob"],
            evidence=["Bob: I'm allergic to peanuts, so no satay for me."],
        )
    with memstore.open(data_dir, "user:carol", hook=memstore.Ungated()) as carol:
        carol.add_fact(statement="Carol likes tea.", members=["Carol"], evidence=["tea"])
    done = run("reverify", "--store", str(data_dir), "--all-namespaces", "--all")
    assert done.returncode == 0, done.stderr
    assert row(done.stdout, NS)[1] == "3"
    assert row(done.stdout, "user:bob")[1:3] == ["1", "1"]
    assert "user:carol" not in done.stdout  # ungated facts are never re-verified
