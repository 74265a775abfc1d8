"""The examples of the README and of docs/ run, and `make demo`'s session prints what it
promises."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

import memstore
from memstore import demo

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.DOTALL)


def test_readme_python_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks((ROOT / "README.md").read_text())
    assert blocks, "README.md has no python example"
    monkeypatch.chdir(tmp_path)
    for run in ("first", "second"):  # a newcomer runs an example again: it must still pass
        for n, block in enumerate(blocks):
            exec(compile(block, f"README.md, python example {n + 1}, {run} run", "exec"), {})


#: The backup recipe (docs/operations.md) copies a live store: its own test gives it one.
BACKUP = ".backup("


@pytest.mark.parametrize("doc", ["gate.md", "configuration.md", "operations.md"])
def test_the_docs_python_examples_run(
    doc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = [b for b in python_blocks((ROOT / "docs" / doc).read_text()) if BACKUP not in b]
    assert blocks, f"docs/{doc} has no python example"
    monkeypatch.chdir(tmp_path)
    for n, block in enumerate(blocks):
        exec(compile(block, f"docs/{doc}, python example {n + 1}", "exec"), {})


def test_the_operations_backup_recipe_restores_a_searchable_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    operations = (ROOT / "docs" / "operations.md").read_text()
    [backup] = [b for b in python_blocks(operations) if BACKUP in b]
    monkeypatch.chdir(tmp_path)
    with memstore.open("memdata", "user:alice", hook=memstore.Ungated()) as store:
        store.add_fact(
            statement="Alice works at Acme.",
            members=["Alice", "Acme"],
            evidence=["Alice: I work at Acme."],
        )
        (tmp_path / "backup").mkdir()
        exec(compile(backup, "docs/operations.md", "exec"), {})  # while the store is open
    with memstore.open("backup", "user:alice") as restored:
        assert restored.search("where does Alice work", 5) == []  # the index is not backed up
        restored.reindex()
        hits = restored.search("where does Alice work", 5)
        assert [h.fact.statement for h in hits] == ["Alice works at Acme."]


def test_readme_shows_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme


def test_demo_prints_a_session(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "160"}
    result = subprocess.run(
        [sys.executable, "-m", "memstore.demo", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=120,
    )
    out = result.stdout
    assert "Facts the gate verified" in out
    held = out[out.index("Held: stored unverified") : out.index("Refused, kept in the audit log")]
    assert "shellfish" in held and "peanuts, not" in held  # the reason, in words
    refused = out[out.index("Refused, kept in the audit log") : out.index("Around Alice")]
    assert "since June" in refused and "March, not" in refused and "shellfish" not in refused
    assert "the audit chain verifies: True" in out
    assert "8 entities, 5 facts in the graph" in out
    assert "Around Alice (2 hops)" in out
    assert re.search(r"Berlin\s+│\s+place\s+│\s+2", out)
    assert re.search(r"Acme is headquartered in Berlin\.\s+│\s+superseded", out)
    assert "Acme is headquartered in Munich." in out
    assert "6. Re-verification after a source changed" in out
    assert re.search(r"Alice lives in Paris\.\s+│\s+verified -> stale", out)
    assert "'Alice lives in Paris.' left default reads: True" in out
    assert "7. Search" in out
    assert re.search(r"Where does Alice work\?\s+│\s+Alice works at Acme as a data engineer\.", out)
    # The superseded Berlin fact is out of search too; the correction is found.
    assert re.search(r"headquarters\s+│\s+Acme is headquartered in Munich\.", out)


def test_the_demos_next_steps_keep_each_command_on_one_line() -> None:
    """At 40 columns the hint's export line once broke in two, and a copy of it failed."""
    console = Console(file=io.StringIO(), width=40, record=True)
    where = Path("/tmp/a-rather-long-directory-name/for-the-demo-store")
    demo.next_steps(where, console)
    lines = console.export_text().splitlines()
    [export] = [line for line in lines if "export" in line]
    assert export.endswith(f"export MEMSTORE_URL={where} MEMSTORE_NAMESPACE={demo.NAMESPACE}")
    assert any(line.strip().startswith("memstore stats;") and "search" in line for line in lines)
