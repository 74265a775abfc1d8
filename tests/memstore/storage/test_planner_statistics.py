"""SQLite's planner statistics (``memstore.storage.planner_statistics``, issue 26): a store on
a SQLite file analyzes it once the facts table is worth planning for and again when
it has grown, so that facts read by id are looked up by primary key rather than found
by scanning the namespace; pooled connections that loaded older statistics are
replaced; and nothing of it may lose a fact or fail a write."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import memstore
from memstore.storage import db, planner_statistics
from memstore.storage.planner_statistics import GROWTH, LEAST_FACTS

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


def write(store: memstore.Store, count: int, batch: int, start: int = 0) -> list[str]:
    """``count`` facts, ``batch`` an ``add_facts`` call, numbered from ``start``; their ids."""
    ids: list[str] = []
    for first in range(start, start + count, batch):
        ids += [f.id for f in store.add_facts(facts(min(batch, start + count - first), first))]
    return ids


def plan_by_id(connection: Any, ids: list[str]) -> str:
    """SQLite's plan for a read of facts by id within the namespace, as a neighborhood's
    and a page's reads are."""
    marks = ", ".join(f"'{i}'" for i in ids)
    sql = (
        f"EXPLAIN QUERY PLAN SELECT id FROM facts WHERE id IN ({marks}) "
        f"AND namespace = '{NAMESPACE}' AND status IN ('verified', 'unverified')"
    )
    return " ".join(str(row[-1]) for row in connection.exec_driver_sql(sql).fetchall())


def statistics_of_facts(path: Path) -> list[str]:
    """The facts table's rows in ``sqlite_stat1`` (none before the first ``ANALYZE``)."""
    with closing(sqlite3.connect(path / "memstore.db")) as raw:
        if not raw.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone():
            return []
        return [row[0] for row in raw.execute("SELECT stat FROM sqlite_stat1 WHERE tbl = 'facts'")]


def open_store(target: Path | str) -> memstore.Store:
    return memstore.open(
        target, NAMESPACE, hook=memstore.Ungated(), index=False, near_duplicate=None
    )


#: Facts written in transactions of 20 so that a look (every ``CHECK_EVERY``
#: transactions) finds at least ``LEAST_FACTS``.
LOOKED_AT = (
    20 * planner_statistics.CHECK_EVERY * (-(-LEAST_FACTS // (20 * planner_statistics.CHECK_EVERY)))
)


def test_a_store_that_grows_past_least_facts_analyzes_and_reads_by_primary_key(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path) as store:
        assert not statistics_of_facts(tmp_path)
        ids = write(store, LOOKED_AT, batch=20)
        assert statistics_of_facts(tmp_path), "a look every CHECK_EVERY writes analyzed"
        with store._scope.engine.connect() as connection:
            plan = plan_by_id(connection, ids[:50])
        assert "sqlite_autoindex_facts_1 (id=?)" in plan, plan
        assert store.stats().facts == {"unverified": LOOKED_AT}


def test_statistics_are_taken_again_as_facts_grow_and_older_connections_replaced(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path) as store:
        statistics, engine = store._scope.statistics, store._scope.engine
        write(store, LEAST_FACTS, batch=200)
        statistics.refresh()
        first = statistics_of_facts(tmp_path)
        assert first
        assert not statistics.refresh(), "nothing grew"
        early = engine.connect()  # a pooled connection holding the first statistics
        early.exec_driver_sql("SELECT count(*) FROM facts").all()
        loaded_first = early.connection.dbapi_connection
        write(store, (GROWTH - 1) * LEAST_FACTS, batch=200, start=LEAST_FACTS)
        statistics.refresh()
        assert statistics.analyzed_at >= GROWTH * LEAST_FACTS
        assert statistics_of_facts(tmp_path) != first
        early.close()  # back to the pool
        with engine.connect() as one, engine.connect() as two:
            handed = {id(one.connection.dbapi_connection), id(two.connection.dbapi_connection)}
        assert id(loaded_first) not in handed, "a connection with older statistics was reused"


def test_an_in_memory_store_is_never_analyzed_and_keeps_every_fact() -> None:
    with open_store("sqlite://") as store:
        write(store, LOOKED_AT, batch=20)
        assert store.stats().facts == {"unverified": LOOKED_AT}
        assert not store._scope.statistics.enabled


def test_a_busy_database_puts_the_statistics_off_and_the_store_keeps_working(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path) as store:
        write(store, LEAST_FACTS, batch=200)
        other = sqlite3.connect(tmp_path / "memstore.db", timeout=0)
        other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        try:
            assert not store._scope.statistics.refresh()
        finally:
            other.rollback()
            other.close()
        assert not statistics_of_facts(tmp_path)
        with store._scope.engine.connect() as one, store._scope.engine.connect() as two:
            for connection in (one, two):  # the one that tried waits as long as any again
                timeout = connection.exec_driver_sql("PRAGMA busy_timeout").scalar()
                assert timeout == db.SQLITE_BUSY_TIMEOUT_MS
        assert store._scope.statistics.refresh()
        write(store, 20, batch=20, start=LEAST_FACTS)
        assert store.stats().facts == {"unverified": LEAST_FACTS + 20}


def test_opening_a_store_whose_statistics_are_gone_analyzes_it(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        write(store, LEAST_FACTS // 2, batch=100)
        store._scope.statistics.refresh()
    assert not statistics_of_facts(tmp_path), "too few facts to plan for"
    with open_store(tmp_path) as store:
        write(store, LEAST_FACTS, batch=200, start=LEAST_FACTS // 2)
        store._scope.statistics.refresh()
    with closing(sqlite3.connect(tmp_path / "memstore.db")) as raw, raw:
        raw.execute("DELETE FROM sqlite_stat1")
    with open_store(tmp_path):
        assert statistics_of_facts(tmp_path)
