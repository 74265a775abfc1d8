"""Forgetting forgets (issue 24, item 8): evidence reads show only evidence that backs
live memory, and an erase removes a fact (or a rejection) with its evidence from SQL,
the search index and the files on disk, leaving a tombstone the audit chain accepts.

A rejected write's evidence is shown by the audit log's rejection reads only. After
``retract`` a fact's evidence leaves evidence reads unless another live fact cites it.
``erase`` / ``erase_rejection`` (and the CLI, REST and MCP fronts) leave nothing of
the text behind: no SQL column, no LanceDB row, no byte in the data directory.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import lancedb
import pytest
import sqlalchemy as sa
from db_rows import files_holding, row_counts, rows, sql_holding
from fastapi.testclient import TestClient
from hooks import ScriptedHook, admit, refuse
from rest_server import serving
from typer.testing import CliRunner

import memstore
from gate import ConfigError
from memstore import Admission, Candidate, ErrFactNotGrounded, FactStatus, NotFound, Store
from memstore.cli import app as cli_app
from memstore.config import key_fingerprint, load_settings
from memstore.index.embeddings import MiniLM
from memstore.index.lance import SearchIndex
from memstore.index.rows import CHUNKS, FACTS, ChunkDoc
from memstore.rest import create_app
from memstore.storage import db

NS = "user:alice"
SSN = "078-05-1120"
SSN_SAID = f"Alice: my social security number is {SSN}."
EMPLOYER = "Initech"
EMPLOYER_SAID = f"Alice: I have worked at {EMPLOYER} since 2019, in accounting."
MOVED_SAID = f"Alice: at {EMPLOYER} I moved from accounting to payroll."
SHARED_SAID = "Alice: I live in Lisbon and commute by tram."
REASON = "Alice asked us to forget her employer"
KEY = "erase-test-key-0123456789abcdef"
#: A key that may read and write the namespace, but not erase in it.
WRITER = "erase-test-writer-0123456789ab"


def reject_ssn(candidate: Candidate) -> Admission:
    """Refuses facts about social security numbers, admits the rest."""
    if "social security" in candidate.statement:
        return refuse(reason="personal identifiers are not memory")
    return admit(confidence=0.9, reason="scripted")


def open_store(data_dir: Path, index: Path | bool) -> Store:
    return memstore.open(data_dir, NS, hook=ScriptedHook(reject_ssn), index=index)


@pytest.fixture
def ssn_hook_store(data_dir: Path, tmp_path: Path) -> Iterator[Store]:
    """A store with its search index in ``tmp_path/index`` (SQLite or PostgreSQL)."""
    with open_store(data_dir, tmp_path / "index") as opened:
        yield opened


def fact(statement: str, *evidence: str, employer: str = EMPLOYER) -> dict[str, Any]:
    return {
        "statement": statement,
        "members": [("Alice", "person", "employee"), (employer, "org", "employer")],
        "evidence": list(evidence),
    }


def add_home(store: Store) -> memstore.FactPublic:
    """Alice lives in Lisbon, on the evidence that the employer fact may share."""
    return store.add_fact(
        statement="Alice lives in Lisbon.",
        members=[("Alice", "person", "resident"), ("Lisbon", "city", "home")],
        evidence=[SHARED_SAID],
    )


def add_job_and_home(store: Store) -> tuple[memstore.FactPublic, memstore.FactPublic]:
    """Alice's job, on her employer's words and the shared text, and her home."""
    job = store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID, SHARED_SAID))
    return job, add_home(store)


def ssn_rejection(ssn_hook_store: Store) -> memstore.RejectionPublic:
    with pytest.raises(ErrFactNotGrounded) as refused:
        ssn_hook_store.add_fact(
            statement=f"Alice's social security number is {SSN}.",
            members=[("Alice", "person", "holder")],
            evidence=[SSN_SAID],
        )
    return refused.value.rejection


def texts(hits: Sequence[Any]) -> str:
    return " | ".join(h.text for h in hits)


def index_holding(index: Path, needle: str) -> list[str]:
    """Ids of the LanceDB rows (read with lancedb itself) whose text contains ``needle``."""
    db = lancedb.connect(index)
    found: list[str] = []
    for name in (FACTS, CHUNKS):
        rows = db.open_table(name).search().select(["id", "text"]).limit(None).to_arrow()
        found += [r["id"] for r in rows.to_pylist() if needle.lower() in r["text"].lower()]
    return found


# -- evidence reads show live memory only ----------------------------------------------


@pytest.mark.both_databases
def test_a_rejected_writes_evidence_is_in_the_audit_log_and_not_in_evidence_reads(
    ssn_hook_store: Store,
) -> None:
    rejection = ssn_rejection(ssn_hook_store)
    [evidence_id] = rejection.evidence_ids
    assert SSN not in texts(ssn_hook_store.search_evidence(f"social security number {SSN}", 10))
    assert SSN not in texts(ssn_hook_store.search_evidence(SSN, 10, mode="text"))
    with pytest.raises(NotFound):
        ssn_hook_store.get_evidence(evidence_id)
    # The audit log shows auditors what the refused write cited.
    assert [e.text for e in ssn_hook_store.get_rejection(rejection.id).evidence] == [SSN_SAID]
    assert [e.text for r in ssn_hook_store.rejections() for e in r.evidence] == [SSN_SAID]


@pytest.mark.both_databases
def test_a_retracted_facts_evidence_leaves_evidence_reads_unless_a_live_fact_cites_it(
    ssn_hook_store: Store,
) -> None:
    job, home = add_job_and_home(ssn_hook_store)
    moved = ssn_hook_store.supersede(
        job.id, fact(f"Alice works in payroll at {EMPLOYER}.", MOVED_SAID)
    )
    [employer_id] = [i for i in job.evidence_ids if i not in home.evidence_ids]
    # A superseded version's evidence is history, still shown while the fact lives.
    assert ssn_hook_store.get_evidence(employer_id).text == EMPLOYER_SAID
    assert EMPLOYER_SAID in texts(
        ssn_hook_store.search_evidence("worked at Initech since 2019", 10)
    )

    ssn_hook_store.retract(moved.id, REASON)
    for evidence_id in (employer_id, moved.evidence_ids[0]):
        with pytest.raises(NotFound):
            ssn_hook_store.get_evidence(evidence_id)
    assert EMPLOYER not in texts(
        ssn_hook_store.search_evidence("worked at Initech accounting payroll", 10)
    )
    assert EMPLOYER not in texts(ssn_hook_store.search_evidence(EMPLOYER, 10, mode="text"))
    # The home fact still cites the shared evidence: it stays readable and searchable.
    assert ssn_hook_store.get_evidence(home.evidence_ids[0]).text == SHARED_SAID
    assert SHARED_SAID in texts(ssn_hook_store.search_evidence("Lisbon tram commute", 10))


# -- erase -----------------------------------------------------------------------------


@pytest.mark.both_databases
def test_erase_leaves_nothing_of_the_fact_in_sql_the_index_or_any_read(
    data_dir: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    with open_store(data_dir, index) as ssn_hook_store:
        job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
        moved = ssn_hook_store.supersede(
            job.id, fact(f"Alice works in payroll at {EMPLOYER}.", MOVED_SAID)
        )
        home = add_home(ssn_hook_store)
        ssn_hook_store.mark_due()  # a scheduled check of the chain must not keep it either
        assert sql_holding(ssn_hook_store.url, EMPLOYER) and index_holding(index, EMPLOYER)

        tombstone = ssn_hook_store.erase(moved.id, REASON, by="privacy-desk")

        assert tombstone.target == "fact" and tombstone.target_id == moved.id
        assert tombstone.fact_ids == [job.id, moved.id]
        assert tombstone.statement_hashes == [
            hashlib.sha256(f.statement.encode()).hexdigest() for f in (job, moved)
        ]
        assert sorted(e["id"] for e in tombstone.evidence) == sorted(
            [job.evidence_ids[0], moved.evidence_ids[0]]
        )
        assert tombstone.reason == REASON and tombstone.erased_by == "privacy-desk"
        assert [link["table"] for link in tombstone.links] == ["verifications"] * 2
        assert tombstone.kept_evidence_ids == []

        assert sql_holding(ssn_hook_store.url, EMPLOYER) == []
        assert index_holding(index, EMPLOYER) == []
        assert ssn_hook_store.verify_audit_chain().ok, ssn_hook_store.verify_audit_chain().problems
        for erased_id in (job.id, moved.id):
            for read in (
                ssn_hook_store.get_fact,
                ssn_hook_store.history,
                ssn_hook_store.verifications,
            ):
                with pytest.raises(NotFound):
                    read(erased_id)
        with pytest.raises(NotFound):
            ssn_hook_store.get_evidence(job.evidence_ids[0])
        with pytest.raises(NotFound):
            ssn_hook_store.facts_about(EMPLOYER)  # the entity only the erased fact named is gone
        assert [f.id for f in ssn_hook_store.facts_about("Alice")] == [home.id]
        assert [f.id for f in ssn_hook_store.neighborhood("Alice", hops=2).facts] == [home.id]
        everything = [*FactStatus]
        assert EMPLOYER not in " ".join(
            h.fact.statement
            for h in ssn_hook_store.search(f"Alice works at {EMPLOYER}", 10, statuses=everything)
        )
        assert EMPLOYER not in texts(
            ssn_hook_store.search_evidence(EMPLOYER_SAID, 10, current_only=False)
        )
        assert ssn_hook_store.count_due() == 1  # only the home fact
        assert set(ssn_hook_store.graph.facts()) == {home.id}

    with open_store(data_dir, index) as reopened:  # the graph is rebuilt from SQL
        assert set(reopened.graph.facts()) == {home.id}
        assert reopened.verify_audit_chain().ok
        assert [h.fact.id for h in reopened.search("Where does Alice work?", 10)] == [home.id]


@pytest.mark.both_databases
def test_erasing_a_rejection_removes_it_and_its_evidence(
    ssn_hook_store: Store, tmp_path: Path
) -> None:
    kept = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
    rejection = ssn_rejection(ssn_hook_store)
    assert sql_holding(ssn_hook_store.url, SSN)

    tombstone = ssn_hook_store.erase_rejection(
        rejection.id, "the SSN was never ours to keep", by="dpo"
    )

    assert tombstone.target == "rejection" and tombstone.rejection_ids == [rejection.id]
    assert tombstone.statement_hashes == [hashlib.sha256(rejection.statement.encode()).hexdigest()]
    assert [e["id"] for e in tombstone.evidence] == rejection.evidence_ids
    assert [link["id"] for link in tombstone.links] == [rejection.id]
    assert sql_holding(ssn_hook_store.url, SSN) == []
    assert index_holding(tmp_path / "index", SSN) == []
    assert ssn_hook_store.rejections() == []
    with pytest.raises(NotFound):
        ssn_hook_store.get_rejection(rejection.id)
    assert ssn_hook_store.count_rejections() == {}
    assert ssn_hook_store.verify_audit_chain().ok
    assert ssn_hook_store.get_fact(kept.id).status == "verified"


@pytest.mark.both_databases
def test_shared_evidence_stays_while_another_fact_or_rejection_cites_it(
    ssn_hook_store: Store,
) -> None:
    job, home = add_job_and_home(ssn_hook_store)
    with pytest.raises(ErrFactNotGrounded) as refused:  # cites the employer evidence too
        ssn_hook_store.add_fact(
            statement="Alice's social security number is on file at work.",
            members=[("Alice", "person", "holder")],
            evidence=[EMPLOYER_SAID],
        )
    [shared_id] = home.evidence_ids
    employer_id = next(i for i in job.evidence_ids if i != shared_id)

    tombstone = ssn_hook_store.erase(job.id, REASON)

    assert sorted(tombstone.kept_evidence_ids) == sorted([shared_id, employer_id])
    assert tombstone.evidence == []
    assert ssn_hook_store.get_evidence(shared_id).text == SHARED_SAID
    assert SHARED_SAID in texts(ssn_hook_store.search_evidence("Lisbon tram commute", 5))
    # The employer text is held by the rejection only: audit log yes, evidence reads no.
    with pytest.raises(NotFound):
        ssn_hook_store.get_evidence(employer_id)
    assert [e.text for e in ssn_hook_store.get_rejection(refused.value.rejection.id).evidence] == [
        EMPLOYER_SAID
    ]
    later = ssn_hook_store.erase_rejection(refused.value.rejection.id, REASON)
    assert [e["id"] for e in later.evidence] == [employer_id]
    assert sql_holding(ssn_hook_store.url, EMPLOYER) == []
    assert ssn_hook_store.get_fact(home.id).status == "verified"
    assert ssn_hook_store.verify_audit_chain().ok


@pytest.mark.both_databases
def test_erase_refuses_bad_input_and_unknown_ids_and_changes_nothing(ssn_hook_store: Store) -> None:
    job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
    before = row_counts(ssn_hook_store.url)
    for call in (
        lambda: ssn_hook_store.erase(job.id, "   "),
        lambda: ssn_hook_store.erase(job.id, REASON, by=""),
        lambda: ssn_hook_store.erase_rejection("nope", ""),
    ):
        with pytest.raises(memstore.InvalidInput):
            call()
    with pytest.raises(NotFound):
        ssn_hook_store.erase("nope", REASON)
    with pytest.raises(NotFound):
        ssn_hook_store.erase_rejection("nope", REASON)
    # Another namespace's fact is not there to erase.
    with (
        memstore.open(ssn_hook_store.url, "user:bob", hook=memstore.Ungated(), index=False) as bob,
        pytest.raises(NotFound),
    ):
        bob.erase(job.id, REASON)
    assert row_counts(ssn_hook_store.url) == before


def test_the_audit_chain_catches_a_tombstone_edited_or_deleted(ssn_hook_store: Store) -> None:
    job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
    ssn_hook_store.add_fact(
        fact("Alice works at Acme.", "Alice: I moved to Acme.", employer="Acme")
    )
    tombstone = ssn_hook_store.erase(job.id, REASON)
    assert ssn_hook_store.verify_audit_chain().ok
    engine = sa.create_engine(ssn_hook_store.url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE erasures SET reason = 'nothing happened' WHERE id = :id"),
                {"id": tombstone.id},
            )
        assert [p.kind for p in ssn_hook_store.verify_audit_chain().problems] == ["edited"]
        with engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM erasures WHERE id = :id"), {"id": tombstone.id})
        problems = ssn_hook_store.verify_audit_chain().problems
        assert problems and {p.kind for p in problems} == {"deleted"}
    finally:
        engine.dispose()


def test_no_byte_of_the_erased_text_stays_in_the_data_directory(tmp_path: Path) -> None:
    """SQLite pages and log, and LanceDB's data files: a LanceDB delete only marks rows
    deleted, and retracting first leaves an older copy of the row beside the new one."""
    data = tmp_path / "memdata"
    with open_store(data, True) as ssn_hook_store:
        others = [
            fact(
                f"Alice works at Company {i}.",
                f"Alice: I work at Company {i}.",
                employer=f"Company {i}",
            )
            for i in range(30)
        ]
        # One batch: one LanceDB data file holds the erased rows and 30 others.
        secret = fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID)
        job = ssn_hook_store.add_facts([*others[:15], secret, *others[15:]])[15]
        assert isinstance(job, memstore.FactPublic)
        ssn_hook_store.retract(job.id, REASON)  # the index row is rewritten: two copies on disk
        assert files_holding(data, EMPLOYER)
        ssn_hook_store.erase(job.id, REASON)
        assert files_holding(data, EMPLOYER) == []
        assert len(ssn_hook_store.search("works at Company", 40)) == 30


@pytest.mark.both_databases
def test_an_erase_beside_a_reader_says_the_log_keeps_copies_until_the_next_checkpoint(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLite cannot empty its write-ahead log while another connection reads: the erase
    says so (``log_pending``, a warning) instead of claiming the text is gone; once the
    reader has finished, the next checkpoint (here: closing the store) removes the bytes.
    PostgreSQL has no such log to empty: ``log_pending`` stays false."""
    ssn_hook_store = open_store(data_dir, False)
    reader = sa.create_engine(ssn_hook_store.url)
    sqlite = ssn_hook_store.url.startswith("sqlite")
    try:
        job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
        with reader.connect() as conn:
            conn.exec_driver_sql("BEGIN" if sqlite else "BEGIN ISOLATION LEVEL REPEATABLE READ")
            assert conn.exec_driver_sql("SELECT count(*) FROM facts").scalar_one() >= 1
            with caplog.at_level(logging.WARNING, logger="memstore"):
                erased = ssn_hook_store.erase(job.id, REASON)
            assert erased.log_pending is sqlite
            assert ("write-ahead log" in caplog.text) is sqlite
            if sqlite:
                assert files_holding(data_dir, EMPLOYER)  # not claimed gone: it is not
            conn.exec_driver_sql("ROLLBACK")
        assert sql_holding(ssn_hook_store.url, EMPLOYER) == []
    finally:
        reader.dispose()
        ssn_hook_store.close()
    if sqlite:
        assert files_holding(data_dir, EMPLOYER) == []
    with open_store(data_dir, False) as reopened:
        assert reopened.verify_audit_chain().ok


def test_an_erase_the_index_missed_is_finished_at_the_next_open(tmp_path: Path) -> None:
    """The index change is queued with the erase; a process that never applied it (here:
    one opened without the index) leaves it for the next open, which purges the files."""
    data = tmp_path / "memdata"
    with open_store(data, True) as ssn_hook_store:
        job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
        ssn_hook_store.add_fact(
            fact("Alice works at Acme.", "Alice: I moved to Acme.", employer="Acme")
        )
    with open_store(data, False) as offline:
        offline.erase(job.id, REASON)
        assert offline.index_backlog() > 0
    assert index_holding(data / "index", EMPLOYER)  # not applied yet
    with open_store(data, True) as reopened:
        assert reopened.index_backlog() == 0
        assert index_holding(data / "index", EMPLOYER) == []
        assert files_holding(data, EMPLOYER) == []


def test_upgrading_takes_rejected_only_evidence_out_of_an_older_index(tmp_path: Path) -> None:
    """Before revision 0006 every evidence row was indexed; the upgrade queues the rows
    no open fact cites, and the first open takes them out."""
    data = tmp_path / "memdata"
    with open_store(data, True) as ssn_hook_store:
        [evidence_id] = ssn_rejection(ssn_hook_store).evidence_ids
        url = ssn_hook_store.url
    index = SearchIndex(str(data / "index"), MiniLM())
    index.write_chunks(  # as an older release indexed it
        [
            ChunkDoc(
                id=f"{evidence_id}:0",
                namespace=NS,
                evidence_id=evidence_id,
                source="inline",
                version=1,
                status="current",
                start=0,
                end=len(SSN_SAID),
                text=SSN_SAID,
                created_at=datetime.now(UTC),
            )
        ]
    )
    engine = db.create_engine(url)
    try:
        db.downgrade(engine, "0005")
    finally:
        engine.dispose()
    assert index_holding(data / "index", SSN)
    with open_store(data, True) as upgraded:
        assert index_holding(data / "index", SSN) == []
        assert SSN not in texts(upgraded.search_evidence(SSN, 5, mode="text"))


# -- the fronts ----------------------------------------------------------------------------


def test_the_cli_erases_after_confirmation(tmp_path: Path) -> None:
    data = tmp_path / "memdata"
    with open_store(data, True) as ssn_hook_store:
        job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
        rejection = ssn_rejection(ssn_hook_store)
    runner = CliRunner()
    env = {"MEMSTORE_URL": None, "MEMSTORE_NAMESPACE": None, "MEMSTORE_CONFIG": None}

    def cli(*args: str, input: str | None = None) -> Any:
        return runner.invoke(cli_app, ["--store", str(data), "-n", NS, *args], input=input, env=env)

    declined = cli("erase", job.id, "--reason", REASON, input="n\n")
    assert declined.exit_code == 1 and "nothing was erased" in declined.output
    with open_store(data, False) as ssn_hook_store:
        assert ssn_hook_store.get_fact(job.id).id == job.id

    done = cli("erase", job.id, "--reason", REASON, input="y\n")
    assert done.exit_code == 0, done.output
    assert f"erased fact {job.id}" in done.output
    as_json = cli("erase", rejection.id, "--rejection", "--reason", REASON, "--yes", "--json")
    assert as_json.exit_code == 0, as_json.output
    tombstone = json.loads(as_json.stdout)
    assert tombstone["rejection_ids"] == [rejection.id] and tombstone["erased_by"].startswith("cli")
    missing = cli("erase", job.id, "--reason", REASON, "--yes")
    assert missing.exit_code == 2
    with open_store(data, False) as ssn_hook_store:
        assert ssn_hook_store.verify_audit_chain().ok
        assert (
            sql_holding(ssn_hook_store.url, EMPLOYER) == []
            and sql_holding(ssn_hook_store.url, SSN) == []
        )


def test_erase_keys_default_to_none_and_must_be_api_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = load_settings(server={"api_keys": {KEY: [NS]}}).server
    assert server.erase_keys == [] and not server.may_erase(KEY)
    with pytest.raises(ConfigError) as caught:
        load_settings(server={"api_keys": {KEY: [NS]}, "erase_keys": [WRITER]})
    assert caught.value.field == "server.erase_keys" and WRITER not in str(caught.value)
    monkeypatch.setenv("MEMSTORE_SERVER__API_KEYS", json.dumps({KEY: [NS], WRITER: [NS]}))
    monkeypatch.setenv("MEMSTORE_SERVER__ERASE_KEYS", json.dumps([KEY]))
    from_env = load_settings().server
    assert from_env.may_erase(KEY) and not from_env.may_erase(WRITER)
    # Keys given by a higher source replace the environment's, erase keys with them.
    assert load_settings(server={"api_keys": {KEY: [NS]}}).server.erase_keys == []


def test_the_rest_api_erases_a_fact_and_a_rejection(tmp_path: Path) -> None:
    data = tmp_path / "memdata"
    with open_store(data, True) as ssn_hook_store:
        job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
        rejection = ssn_rejection(ssn_hook_store)
    settings = load_settings(
        store={"url": str(data)},
        server={"api_keys": {KEY: [NS], WRITER: [NS]}, "erase_keys": [KEY]},
    )
    headers = {"Authorization": f"Bearer {KEY}"}
    base = f"/v1/namespaces/{NS}"
    with TestClient(create_app(settings)) as client:
        for path in (f"facts/{job.id}", f"rejections/{rejection.id}"):
            refused = client.post(
                f"{base}/{path}/erase", json={"reason": REASON}, headers={"X-API-Key": WRITER}
            )
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"] == "forbidden"
            assert "server.erase_keys" in refused.json()["detail"]
        writer = {"X-API-Key": WRITER}
        assert client.get(f"{base}/facts/{job.id}", headers=writer).status_code == 200
        assert client.get(f"{base}/rejections/{rejection.id}", headers=writer).status_code == 200
        erased = client.post(
            f"{base}/facts/{job.id}/erase", json={"reason": REASON}, headers=headers
        )
        assert erased.status_code == 200, erased.text
        body = erased.json()
        assert body["fact_ids"] == [job.id] and body["reason"] == REASON
        assert body["erased_by"] == key_fingerprint(KEY) and KEY not in erased.text
        assert client.get(f"{base}/facts/{job.id}", headers=headers).status_code == 404
        again = client.post(
            f"{base}/facts/{job.id}/erase", json={"reason": REASON}, headers=headers
        )
        assert again.status_code == 404
        no_reason = client.post(f"{base}/facts/x/erase", json={}, headers=headers)
        assert no_reason.status_code == 400 and no_reason.json()["field"] == "reason"
        gone = client.post(
            f"{base}/rejections/{rejection.id}/erase", json={"reason": REASON}, headers=headers
        )
        assert gone.status_code == 200, gone.text
        assert client.get(f"{base}/rejections/{rejection.id}", headers=headers).status_code == 404
    with open_store(data, False) as ssn_hook_store:
        assert ssn_hook_store.verify_audit_chain().ok
        assert (
            sql_holding(ssn_hook_store.url, EMPLOYER) == []
            and sql_holding(ssn_hook_store.url, SSN) == []
        )


def test_the_mcp_erase_tool_forgets_a_fact_and_a_refusal(ssn_hook_store: Store) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from memstore.mcp.server import build_server

    job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
    rejection = ssn_rejection(ssn_hook_store)

    async def tool_names(**options: Any) -> set[str]:
        async with Client(build_server(ssn_hook_store, **options)) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert "erase" not in anyio.run(tool_names)  # stdio: only with --allow-erase
    assert "erase" in anyio.run(lambda: tool_names(allow_erase=True))

    async def session(work: Callable[[Client], Any]) -> Any:
        async with Client(build_server(ssn_hook_store, allow_erase=True)) as client:
            return await work(client)

    async def erase_both(client: Client) -> tuple[Any, Any, Any]:
        both = await client.call_tool(
            "erase", {"reason": REASON, "fact_id": job.id, "rejection_id": rejection.id}
        )
        fact_done = await client.call_tool("erase", {"reason": REASON, "fact_id": job.id})
        refusal_done = await client.call_tool(
            "erase", {"reason": REASON, "rejection_id": rejection.id}
        )
        return both, fact_done, refusal_done

    both, fact_done, refusal_done = anyio.run(session, erase_both)
    assert both.is_error and "fact_id" in str(both.content)
    assert not fact_done.is_error and fact_done.structured_content is not None
    assert fact_done.structured_content["fact_ids"] == [job.id]
    assert not refusal_done.is_error and refusal_done.structured_content is not None
    assert refusal_done.structured_content["target_id"] == rejection.id
    assert (
        sql_holding(ssn_hook_store.url, EMPLOYER) == []
        and sql_holding(ssn_hook_store.url, SSN) == []
    )
    assert ssn_hook_store.verify_audit_chain().ok


@pytest.mark.both_databases
def test_mcp_over_http_erases_only_for_erase_keys_and_records_the_key(
    ssn_hook_store: Store,
) -> None:
    """Over HTTP the erase tool is listed for every key, and refuses unless the bearer
    key is in server.erase_keys; the tombstone names the key by its fingerprint."""
    pytest.importorskip("mcp")
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from memstore.mcp.server import HTTP_PATH, build_server, http_app

    job = ssn_hook_store.add_fact(fact(f"Alice works at {EMPLOYER}.", EMPLOYER_SAID))
    rejection = ssn_rejection(ssn_hook_store)
    server = load_settings(
        server={"api_keys": {KEY: [NS], WRITER: [NS]}, "erase_keys": [KEY]}
    ).server
    app = http_app(build_server(ssn_hook_store, keys=server), server, NS, "127.0.0.1")

    async def as_key(url: str, key: str, calls: list[dict[str, str]]) -> tuple[set[str], list[Any]]:
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as client,
            Client(streamable_http_client(url, http_client=client)) as session,
        ):
            names = {t.name for t in (await session.list_tools()).tools}
            return names, [await session.call_tool("erase", c) for c in calls]

    both = [{"reason": REASON, "fact_id": job.id}, {"reason": REASON, "rejection_id": rejection.id}]
    with serving(app) as base:
        writer_tools, refused = anyio.run(as_key, base + HTTP_PATH, WRITER, both)
        assert ssn_hook_store.get_fact(job.id).id == job.id  # nothing erased
        eraser_tools, done = anyio.run(as_key, base + HTTP_PATH, KEY, both)
    assert "erase" in writer_tools and "erase" in eraser_tools
    for result in refused:
        assert result.is_error and "server.erase_keys" in str(result.content)
    assert [r.is_error for r in done] == [False, False], [str(r.content) for r in done]
    by = rows(ssn_hook_store.url, "SELECT DISTINCT erased_by FROM erasures")
    assert by == [(key_fingerprint(KEY),)] and KEY not in json.dumps(by)
