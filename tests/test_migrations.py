"""Alembic migrations: models and revisions agree, and the schema moves both ways."""

from __future__ import annotations

from pathlib import Path

import pytest
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


@pytest.mark.both_databases
def test_open_upgrades_an_empty_database_to_head(data_dir: Path) -> None:
    with memstore.open(data_dir) as store:
        engine = sa.create_engine(store.url)
        assert db.current_revision(engine) == db.head_revision()
        engine.dispose()


def test_every_table_has_a_namespace_column() -> None:
    for table in SQLModel.metadata.sorted_tables:
        assert "namespace" in table.columns, table.name


def test_upgrading_chains_and_indexes_existing_audit_rows(tmp_path: Path) -> None:
    """Rows written before the audit chain existed (revision 0001) are chained on upgrade."""
    engine = _engine(tmp_path)
    db.upgrade(engine, "0001")
    now = "2026-11-01 10:00:00.000000"
    rows = {
        "evidence": {
            "id": "e1",
            "namespace": "user:alice",
            "source": "inline",
            "version": 1,
            "content_hash": "h",
            "text": "User: I'm allergic to peanuts.",
            "created_at": now,
        },
        "facts": {
            "id": "f1",
            "namespace": "user:alice",
            "statement": "The user is allergic to peanuts.",
            "stated_confidence": 0.95,
            "confidence": 0.9,
            "status": "verified",
            "recorded_at": now,
            "verdict": "grounded",
        },
        "verifications": {
            "id": "v1",
            "namespace": "user:alice",
            "fact_id": "f1",
            "kind": "write",
            "status_after": "verified",
            "confidence": 0.9,
            "evidence_ids": '["e1"]',
            "created_at": now,
            "verdict": "grounded",
            "p1": 0.97,
        },
        "rejections": {
            "id": "r1",
            "namespace": "user:alice",
            "verdict": "unsupported",
            "statement": "The user is allergic to shellfish.",
            "members": '[{"name": "Shellfish", "kind": "food", "role": "allergen"}]',
            "stated_confidence": 0.95,
            "evidence_ids": '["e1"]',
            "citations": "[]",
            "created_at": "2026-11-01 10:00:01.000000",
            "p1": 0.4,
        },
    }
    with engine.begin() as conn:
        for table, row in rows.items():
            names = ", ".join(row)
            conn.execute(
                sa.text(
                    f"INSERT INTO {table} ({names}) VALUES ({', '.join(':' + k for k in row)})"
                ),
                row,
            )
    engine.dispose()
    with memstore.open(f"sqlite:///{tmp_path / 'm.db'}", namespace="user:alice") as store:
        report = store.verify_audit_chain()
        assert report.ok and report.rows == 2, report.problems
        [rejection] = store.rejections(entity="shellfish", source="inline")
        assert rejection.id == "r1" and rejection.chain_seq == 2
        assert store.verifications("f1")[0].chain_seq == 1
