"""Row counts per table, read beside the store: what a refused write must leave as it was."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import SQLModel

import memstore.models  # noqa: F401  (the tables SQLModel.metadata lists)


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
