"""Alembic migrations: models and revisions agree, and the schema moves both ways."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

import memstore
from memstore import db


def _engine(tmp_path: Path) -> sa.Engine:
    return db.create_engine(f"sqlite:///{tmp_path / 'm.db'}")


def test_models_and_migrations_agree(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    db.upgrade(engine)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, SQLModel.metadata)
    assert diff == [], f"models and migrations differ; write a revision: {diff}"


def test_upgrade_downgrade_round_trip(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    db.upgrade(engine)
    assert db.current_revision(engine) == db.head_revision()
    db.downgrade(engine, "base")
    assert db.current_revision(engine) is None
    assert set(sa.inspect(engine).get_table_names()) == {"alembic_version"}
    db.upgrade(engine)
    tables = set(sa.inspect(engine).get_table_names())
    assert {t.name for t in SQLModel.metadata.sorted_tables} <= tables


def test_open_upgrades_an_empty_database_to_head(data_dir: Path) -> None:
    with memstore.open(data_dir) as store:
        engine = sa.create_engine(store.url)
        assert db.current_revision(engine) == db.head_revision()
        engine.dispose()


def test_every_table_has_a_namespace_column() -> None:
    for table in SQLModel.metadata.sorted_tables:
        assert "namespace" in table.columns, table.name
