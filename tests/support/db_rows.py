"""SQL and files read beside the store: row counts per table (what a refused write must
leave as it was), the rows of a query, and where a text is still held (what an erase
must leave nothing of)."""

from __future__ import annotations

import json
from pathlib import Path

import sqlalchemy as sa
from sqlmodel import SQLModel

import memstore.storage.tables  # noqa: F401  (the tables SQLModel.metadata lists)


def row_counts(url: str) -> dict[str, int]:
    """Rows per memstore table, read through a separate engine."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return {
                t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
                for t in SQLModel.metadata.sorted_tables
            }
    finally:
        engine.dispose()


def rows(url: str, sql: str) -> list[tuple[object, ...]]:
    """The rows ``sql`` (one statement, no parameters) returns, through a separate engine."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(sa.text(sql)).all()]
    finally:
        engine.dispose()


def sql_holding(url: str, needle: str) -> list[str]:
    """``table.column`` of every SQL value (text or JSON) that contains ``needle``."""
    engine = sa.create_engine(url)
    found: list[str] = []
    try:
        with engine.connect() as conn:
            for table in SQLModel.metadata.sorted_tables:
                for row in conn.execute(sa.select(table)).mappings():
                    for column, value in row.items():
                        if needle.lower() in json.dumps(value, default=str).lower():
                            found.append(f"{table.name}.{column}")
    finally:
        engine.dispose()
    return found


def files_holding(root: Path, needle: str) -> list[str]:
    """Files under ``root`` whose bytes contain ``needle``."""
    raw = needle.encode()
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and raw in p.read_bytes()
    )
