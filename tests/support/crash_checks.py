"""What the crash and soak tests check after a SIGKILL: every fact whole, SQL and the
search index in agreement, read from SQL and LanceDB directly (not through the store)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import lancedb
import sqlalchemy as sa
from workers import NS

from memstore.index.rows import CHUNKS, FACTS

#: The child process the crash and soak tests start and kill.
WORKER = Path(__file__).with_name("workers.py")


def sql_rows(url: str, query: str) -> list[tuple]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(query), {"ns": NS})]
    finally:
        engine.dispose()


def check_whole(
    url: str, index: Path | str, storage_options: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Every fact whole, SQL and the index (a directory, or a URI reached with
    ``storage_options``) in agreement; returns fact id -> status."""
    facts = dict(sql_rows(url, "SELECT id, status FROM facts WHERE namespace = :ns"))
    members = dict(sql_rows(url, "SELECT fact_id, count(*) FROM fact_members GROUP BY fact_id"))
    cited = dict(sql_rows(url, "SELECT fact_id, count(*) FROM citations GROUP BY fact_id"))
    writes = dict(
        sql_rows(
            url,
            "SELECT fact_id, count(*) FROM verifications WHERE kind = 'write' GROUP BY fact_id",
        )
    )
    for fact_id in facts:
        assert (members.get(fact_id), cited.get(fact_id), writes.get(fact_id)) == (2, 2, 1), fact_id
    assert set(members) <= set(facts) and set(cited) <= set(facts)  # nothing orphaned
    # Status and the history row that set it were written together.
    latest = sql_rows(
        url,
        "SELECT v.fact_id, v.status_after FROM verifications v JOIN ("
        " SELECT fact_id, max(chain_seq) AS seq FROM verifications WHERE namespace = :ns"
        " GROUP BY fact_id) m ON v.fact_id = m.fact_id AND v.chain_seq = m.seq",
    )
    assert dict(latest) == facts
    [(entities, keys)] = sql_rows(
        url, "SELECT count(*), count(DISTINCT key) FROM entities WHERE namespace = :ns"
    )
    assert entities == keys
    assert sql_rows(url, "SELECT count(*) FROM index_outbox") == [(0,)]  # replayed at open
    lance = lancedb.connect(index, storage_options=dict(storage_options or {}))
    table = lance.open_table(FACTS)
    indexed = table.search().select(["id", "status"]).limit(None).to_arrow().to_pylist()
    assert len(indexed) == len(facts)  # no twins
    assert {r["id"]: r["status"] for r in indexed} == facts
    chunks = lance.open_table(CHUNKS)
    chunk_sources = chunks.search().select(["evidence_id"]).limit(None).to_arrow()
    assert set(chunk_sources.column("evidence_id").to_pylist()) == live_evidence(url)
    return facts


OPEN = {"verified", "unverified", "pending", "stale", "contradicted"}


def live_evidence(url: str) -> set[str]:
    """Evidence the index must hold, from SQL alone: what a live fact cites (open, or
    superseded by a chain that ends open); a URI source counts as one. Evidence only a
    rejection or a retracted fact cites belongs to the audit log, not the index."""
    chain = {
        fact_id: (status, newer)
        for fact_id, status, newer in sql_rows(
            url, "SELECT id, status, superseded_by_id FROM facts WHERE namespace = :ns"
        )
    }

    def live(fact_id: str | None) -> bool:
        seen: set[str] = set()
        while fact_id is not None and fact_id not in seen:
            seen.add(fact_id)
            status, newer = chain[fact_id]
            if status in OPEN:
                return True
            fact_id = newer if status == "superseded" else None
        return False

    source = dict(sql_rows(url, "SELECT id, source FROM evidence WHERE namespace = :ns"))
    backed = {
        evidence_id
        for evidence_id, fact_id in sql_rows(
            url, "SELECT evidence_id, fact_id FROM citations WHERE namespace = :ns"
        )
        if live(fact_id)
    }
    uris = {source[e] for e in backed} - {"inline"}
    return {e for e, s in source.items() if e in backed or s in uris}
