"""At 80 columns the CLI's tables fit the terminal by wrapping: every line is at most 80
characters and the statement column holds the whole statement, never cut to "…"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore.cli import Exit, app

NS = "user:alice"
LONG = (
    "Alice is allergic to peanuts, to several European tree nuts and to the sesame "
    "oil that her favourite bakery on the corner uses in its bread."
)
NARROW = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None, "MEMSTORE_CONFIG": None}
NARROW["COLUMNS"] = "80"


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one long fact and one long rejection."""
    data = tmp_path_factory.mktemp("narrow") / "mem"
    fact = {
        "statement": LONG,
        "members": ["Alice", "peanuts"],
        "evidence": [f"Alice: {LONG}"],
    }
    with memstore.open(data, NS, hook=memstore.Ungated()) as store:
        store.add_fact(**fact)
    doubtful = Gate(ScriptedBackend(lambda claim, context: 0.02), REFUSE_UNGROUNDED)  # type: ignore[arg-type]
    with memstore.open(data, NS, gate=doubtful, index=False) as store:
        store.add_facts([{**fact, "statement": LONG.replace("Alice", "Bob")}])
    return data


def statement_cells(output: str) -> str:
    """The statement column's cells of the table in ``output``, joined, no spaces."""
    lines = output.splitlines()
    header = next(line for line in lines if line.startswith("┃") and "statement" in line)
    column = [c.strip() for c in header.split("┃")].index("statement")
    cells = [line.split("│")[column] for line in lines if line.startswith("│")]
    return "".join(cells).replace(" ", "")


@pytest.mark.parametrize(
    ("args", "statement"),
    [
        (["list"], LONG),
        (["search", "what is Alice allergic to?"], LONG),
        (["audit"], LONG.replace("Alice", "Bob")),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_a_table_at_80_columns_wraps_the_whole_statement(
    where: Path, args: list[str], statement: str
) -> None:
    done: Any = CliRunner().invoke(app, ["--store", str(where), "-n", NS, *args], env=NARROW)
    assert done.exit_code == Exit.OK, done.output
    assert max(len(line) for line in done.stdout.splitlines()) <= 80, done.stdout
    assert "…" not in done.stdout
    assert statement_cells(done.stdout) == statement.replace(" ", ""), done.stdout
