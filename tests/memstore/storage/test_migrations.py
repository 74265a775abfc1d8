"""Alembic migrations: models and revisions agree, and the schema moves both ways."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lancedb
import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

import memstore
from memstore.index.rows import FACTS
from memstore.storage import db


def _engine(tmp_path: Path) -> sa.Engine:
    return db.create_engine(f"sqlite:///{tmp_path / 'm.db'}")


def test_models_and_migrations_agree(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    db.upgrade(engine)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, SQLModel.metadata)
    assert diff == [], f"models and migrations differ; write a revision: {diff}"


def test_the_schema_head_opening_compares_with_is_alembics_head() -> None:
    assert db.head_revision() == db.SCHEMA_HEAD, "a new revision: set db.SCHEMA_HEAD to it"


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


def test_threads_of_one_process_migrate_new_databases_at_once(tmp_path: Path) -> None:
    """Alembic's ``context`` is a module global: two migrations running at once in one
    process ran each other's scripts (a table created twice, a KeyError on ``config``)."""
    engines = [db.create_engine(f"sqlite:///{tmp_path / f'{i}.db'}") for i in range(4)]
    start = threading.Barrier(len(engines))
    errors: list[BaseException] = []

    def migrate(engine: sa.Engine) -> None:
        start.wait()
        try:
            db.upgrade(engine)
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=migrate, args=(e,)) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [db.current_revision(e) for e in engines] == [db.SCHEMA_HEAD] * len(engines)


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


@pytest.mark.both_databases
def test_upgrading_closes_the_world_time_of_facts_superseded_before(
    data_dir: Path, tmp_path: Path
) -> None:
    """Before ``supersede`` closed world time, a superseded fact kept ``valid_to`` null and
    ``as_of`` reads (SQL and the search index) missed it; revision 0006 sets it where the
    correction starts to hold (its ``valid_from``, else when it was made) and queues the
    facts for the index."""
    t0, t1 = datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 6, 1, tzinfo=UTC)
    mid, late = t0 + timedelta(days=90), t1 + timedelta(days=30)
    ns, index = "user:alice", tmp_path / "ix"

    def open_store() -> memstore.Store:
        return memstore.open(data_dir, ns, hook=memstore.Ungated(), index=index)

    def said(who: str, what: str, role: str) -> dict[str, object]:
        return {
            "statement": f"{who} {what}.",
            "members": [(who, "person", role)],
            "evidence": [f"{who}: I {what.split(' ', 1)[1]}."],
        }

    with open_store() as store:
        acme = store.add_fact(**said("Alice", "works at Acme", "employee"), valid_from=t0)
        initech = store.supersede(
            acme.id, **said("Alice", "works at Initech", "employee"), valid_from=t1
        )
        tea = store.add_fact(**said("Bob", "likes tea", "fan"), valid_from=t0)
        coffee = store.supersede(tea.id, **said("Bob", "likes coffee", "fan"), valid_from=t1)
        url = store.url
    naive = t1.replace(tzinfo=None)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:  # as an older release left them, in SQL and the index
            tables = sa.MetaData()  # read from the database, as they are
            facts = sa.Table("facts", tables, autoload_with=conn)
            outbox = sa.Table("index_outbox", tables, autoload_with=conn)
            old = facts.c.id.in_([acme.id, tea.id])
            conn.execute(facts.update().where(old).values(valid_to=None))
            conn.execute(facts.update().where(facts.c.id == tea.id).values(superseded_at=naive))
            conn.execute(facts.update().where(facts.c.id == coffee.id).values(valid_from=None))
            for fact_id in (acme.id, tea.id):
                row = {"namespace": ns, "kind": "fact", "target_id": fact_id, "created_at": naive}
                conn.execute(outbox.insert().values(**row))
        with open_store() as store:
            assert store.index_backlog() == 0
            assert store.facts_about("Alice", as_of=mid) == []  # the bug
            # Bob's correction has no valid_from: it holds at every time, his tea never.
            assert [f.id for f in store.facts_about("Bob", as_of=mid)] == [coffee.id]
            assert acme.id not in {h.fact.id for h in store.search("Acme", mode="text", as_of=mid)}
        db.downgrade(engine, "0005")
    finally:
        engine.dispose()

    with open_store() as store:  # upgrades, then applies what the upgrade queued
        assert store.index_backlog() == 0
        assert [f.id for f in store.facts_about("Alice", as_of=mid)] == [acme.id]
        assert [f.id for f in store.facts_about("Alice", as_of=late)] == [initech.id]
        assert [f.id for f in store.facts_about("Bob", as_of=mid)] == [coffee.id, tea.id]
        assert [f.id for f in store.facts_about("Bob", as_of=late)] == [coffee.id]
        assert store.get_fact(acme.id).valid_to == t1  # the correction's valid_from
        assert store.get_fact(tea.id).valid_to == t1  # no valid_from: when it was made
        hits = store.search("Acme", mode="text", as_of=mid)
        assert [h.fact.id for h in hits] == [acme.id]
        assert acme.id not in {h.fact.id for h in store.search("Acme", mode="text", as_of=late)}


@pytest.mark.both_databases
def test_upgrading_gives_facts_and_an_older_search_index_metadata(
    data_dir: Path, tmp_path: Path
) -> None:
    """Revision 0007 adds ``metadata`` to facts and rejections (none for the rows there);
    a search index made before it gets its column when a store opens it."""
    index = tmp_path / "ix"

    def open_store() -> memstore.Store:
        return memstore.open(data_dir, "user:alice", hook=memstore.Ungated(), index=index)

    def fact(person: str, **extra: object) -> dict[str, object]:
        said = f"{person}: I work at Acme."
        return {
            "statement": f"{person} works at Acme.",
            "members": [person],
            "evidence": [said],
            **extra,
        }

    with open_store() as store:
        old = store.add_fact(fact("Alice"))
        url = store.url
    engine = sa.create_engine(url)
    try:
        db.downgrade(engine, "0006")  # as an older release left the database
        assert "metadata" not in {c["name"] for c in sa.inspect(engine).get_columns("facts")}
    finally:
        engine.dispose()
    lancedb.connect(index).open_table(FACTS).drop_columns(["metadata"])  # and the index
    with open_store() as store:
        assert store.get_fact(old.id).metadata == {}
        new = store.add_fact(fact("Bob", metadata={"team": "red"}))
        assert {h.fact.id for h in store.search("works at Acme", mode="text")} == {old.id, new.id}
        hits = store.search("works at Acme", mode="text", metadata={"team": "red"})
        assert [h.fact.id for h in hits] == [new.id]
        assert [f.id for f in store.list_facts(metadata={"team": "red"}).items] == [new.id]
    assert "metadata" in lancedb.connect(index).open_table(FACTS).schema.names


@pytest.mark.both_databases
def test_upgrading_copies_each_facts_recording_time_to_its_members(data_dir: Path) -> None:
    """Revision 0010 gives member rows their fact's ``recorded_at``, which ``facts_about``
    pages by (newest first, from the members' index)."""
    with memstore.open(data_dir, "user:alice", hook=memstore.Ungated(), index=False) as store:
        made = [
            store.add_fact(
                statement=f"Alice visited {city}.", members=["Alice", city], evidence=[city]
            )
            for city in ("Lisbon", "Porto", "Faro")
        ]
        url = store.url
    engine = sa.create_engine(url)
    try:
        db.downgrade(engine, "0009")  # as an older release left the database
        assert "recorded_at" not in {
            c["name"] for c in sa.inspect(engine).get_columns("fact_members")
        }
        db.upgrade(engine)
        with engine.connect() as conn:
            pairs = conn.execute(
                sa.text(
                    "SELECT m.recorded_at, f.recorded_at FROM fact_members m "
                    "JOIN facts f ON f.id = m.fact_id"
                )
            ).all()
        indexes = {i["name"] for i in sa.inspect(engine).get_indexes("fact_members")}
    finally:
        engine.dispose()
    assert len(pairs) == 6 and all(member == fact for member, fact in pairs)
    assert "ix_fact_members_namespace_entity_recorded" in indexes
    with memstore.open(data_dir, "user:alice", hook=memstore.Ungated(), index=False) as store:
        page = store.facts_about("Alice", limit=2)
        assert [f.id for f in page] == [made[2].id, made[1].id]
        rest = store.facts_about("Alice", limit=2, cursor=page.next_cursor)
        assert [f.id for f in rest] == [made[0].id]
