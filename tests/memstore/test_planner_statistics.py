"""SQLite's planner statistics (``memstore.planner_statistics``, issue 26): a store
analyzes its database once the facts table is worth planning for, so that facts read
by id are looked up by primary key rather than found by scanning the namespace, and
connections its pool opened before the statistics use them too."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import sqlalchemy as sa

import memstore
from memstore import planner_statistics

NAMESPACE = "t"


def facts(count: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "statement": f"Person {i} likes topic {i % 50}.",
            "members": [f"Person {i}", f"Topic {i % 50}"],
            "evidence": [f"Person {i}: I like topic {i % 50}."],
        }
        for i in range(start, start + count)
    ]


def by_id(ids: list[str]) -> str:
    """A read of facts by id within the namespace, as a neighborhood and a page make."""
    marks = ", ".join(f"'{i}'" for i in ids)
    return (
        f"EXPLAIN QUERY PLAN SELECT id FROM facts WHERE id IN ({marks}) "
        f"AND namespace = '{NAMESPACE}' AND status IN ('verified', 'unverified')"
    )


def plan_of(run: Any, ids: list[str]) -> str:
    return " ".join(str(row[-1]) for row in run(by_id(ids)).fetchall())


def analyzed(path: Path) -> bool:
    """Whether the database holds statistics of the facts table."""
    with sqlite3.connect(path / "memstore.db") as raw:
        if not raw.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone():
            return False
        return raw.execute("SELECT 1 FROM sqlite_stat1 WHERE tbl = 'facts'").fetchone() is not None


def open_store(path: Path) -> memstore.Store:
    return memstore.open(path, NAMESPACE, hook=memstore.Ungated(), index=False, near_duplicate=None)


def write(store: memstore.Store, count: int, batch: int = 20) -> list[str]:
    """``count`` facts in transactions of ``batch``; their ids."""
    ids: list[str] = []
    for start in range(0, count, batch):
        ids += [f.id for f in store.add_facts(facts(batch, start))]
    return ids


def test_a_growing_store_analyzes_and_every_pooled_connection_plans_by_primary_key(
    tmp_path: Path,
) -> None:
    # Transactions of 20: the look every CHECK_EVERY transactions finds LEAST_FACTS.
    count = (
        20
        * planner_statistics.CHECK_EVERY
        * (-(-planner_statistics.LEAST_FACTS // (20 * planner_statistics.CHECK_EVERY)))
    )
    with open_store(tmp_path) as store:
        engine = store._scope.engine
        stale = sqlite3.connect(tmp_path / "memstore.db")  # outside the pool
        early = engine.connect()  # a pooled connection that reads before the statistics
        unknown = [f"x{i}" for i in range(50)]
        assert "namespace" in plan_of(stale.execute, unknown), "no statistics yet: a scan"
        assert "namespace" in plan_of(early.exec_driver_sql, unknown)
        ids = write(store, count)  # on another pooled connection, as early is out
        early.close()  # back to the pool, with what it loaded before
        assert analyzed(tmp_path)
        sample = ids[:50]
        # SQLite loads statistics when a connection opens: one opened before keeps its plan.
        assert "namespace" in plan_of(stale.execute, sample)
        stale.close()
        with engine.connect() as one, engine.connect() as two:  # both pooled ones
            for connection in (one, two):
                plan = plan_of(connection.exec_driver_sql, sample)
                assert "sqlite_autoindex_facts_1 (id=?)" in plan, plan
        assert len(store.list_facts(limit=1000).items) == min(count, 1000)


def test_a_small_store_is_not_analyzed_and_a_reopened_one_is(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        write(store, planner_statistics.LEAST_FACTS // 2, batch=100)
    assert not analyzed(tmp_path)
    with open_store(tmp_path) as store:
        write(store, planner_statistics.LEAST_FACTS, batch=500)
    assert not analyzed(tmp_path), "too few transactions for a look"
    with open_store(tmp_path) as store:  # opening looks
        assert analyzed(tmp_path)
        with store._scope.engine.connect() as connection:
            ids = [row[0] for row in connection.execute(sa.text("SELECT id FROM facts LIMIT 9"))]
            assert "(id=?)" in plan_of(connection.exec_driver_sql, ids)
