"""The search index on an S3 object store (issue 29): a real one, SeaweedFS's ``weed mini``
on 127.0.0.1 (``tests/support/s3_server.py``), started once per session.

Facts written with the index at ``s3://`` are found by search, after reopening, and by a
second store and a second process within a second (LanceDB asks for the latest version
at most once a second); an erase leaves no object holding the text; a rebuild drops and
recreates the tables there. Settings reach LanceDB from the config file or the
environment, bad ones fail naming the field, and credentials never show in ``repr``,
``config show`` or an error. Several worker processes, each in its own directory, share
one namespace through PostgreSQL and the object store and lose nothing, with the gate
scripted or on one shared llama.cpp verifier server behind a proxy that injects 503s and
stalls.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from crash_checks import check_whole, sql_rows
from s3_server import S3Server
from verifier_proxy import FAULTS, VerifierProxy, fault_of, verifier_proxy
from workers import NS as WORKERS_NS
from workers import HashedWords, read_acks
from workers import fact as worker_fact

import memstore
from gate import ConfigError
from gate.backends.llama_server import MODEL, llama_server
from gate.backends.openai import OpenAIBackend
from memstore import InvalidInput, ObjectStore, StorageError, Store
from memstore.cli.configure import masked_settings
from memstore.config import load_settings
from memstore.index.embeddings import MiniLM
from memstore.index.lance import (
    KEEP_VERSIONS,
    KEEP_VERSIONS_REMOTE,
    REMOTE_READ_CONSISTENCY,
    SearchIndex,
    read_consistency,
)
from memstore.index.rows import FACTS

NS = "user:alice"
ALLERGY = "The user is allergic to peanuts."
CITY = "The user lives in Lisbon."
PET = "The user has a cat named Miso."
WORKER = Path(__file__).resolve().parents[2] / "support" / "scale_out_worker.py"
#: Worker processes of the scale-out test, and the facts each writes.
WORKERS = 3
FACTS_EACH = 12
#: Facts the killed worker acknowledges before its SIGKILL.
VICTIM_ACKS = 3
#: Facts each worker writes through the shared verifier (SmolLM2 on 2 cores: ~1.5 s each).
VERIFIED_EACH = 5
#: The verifier backend's request timeout (s) and retries; a held request costs the former.
REQUEST_TIMEOUT, RETRIES = 12.0, 2
#: ``memory_gate.timeout_reduction``: a fact the verifier gave no verdict on is stored at
#: its stated confidence times this (not the default 0.5: the setting must reach the gate).
TIMEOUT_REDUCTION = 0.4


def fact(statement: str, said: str) -> dict[str, Any]:
    return {"statement": statement, "members": ["user", statement.split()[-1]], "evidence": [said]}


FACTS_SAID = [
    fact(ALLERGY, "User: peanuts make me sick."),
    fact(CITY, "User: I moved to Lisbon last spring."),
    fact(PET, "User: my cat Miso sleeps all day."),
]


def open_s3(target: str | Path, s3: S3Server, uri: str, **options: Any) -> Store:
    chosen = {"object_store": s3.object_store, **options}
    return memstore.open(target, NS, hook=memstore.Ungated(), index=uri, **chosen)


def found(store: Store, query: str) -> list[str]:
    return [h.fact.statement for h in store.search(query, 3)]


@pytest.fixture
def uri(s3: S3Server) -> str:
    return s3.uri()


def object_store_env(s3: S3Server) -> dict[str, str]:
    """The object store's settings as ``MEMSTORE_STORE__OBJECT_STORE__*`` variables."""
    return {
        f"MEMSTORE_STORE__OBJECT_STORE__{field.upper()}": "true" if value is True else str(value)
        for field, value in s3.object_store.items()
    }


# -- one store ---------------------------------------------------------------------------


@pytest.mark.scale_out
@pytest.mark.both_databases
def test_facts_on_s3_are_found_after_reopening(data_dir: Path, s3: S3Server, uri: str) -> None:
    with open_s3(data_dir, s3, uri) as store:
        stored = store.add_facts(FACTS_SAID)
        assert found(store, "what is the user allergic to?")[0] == ALLERGY
        assert store.index_backlog() == 0  # written through, nothing left queued
    assert any(key.endswith(".lance") for key in s3.objects(uri))  # it is on the store
    with open_s3(data_dir, s3, uri) as again:
        assert found(again, "where does the user live?")[0] == CITY
        assert {h.fact.id for h in again.search("user", 5)} == {f.id for f in stored}


def seen_soon(store: Store, query: str, want: list[str]) -> None:
    """Poll until ``store``'s search finds exactly ``want``: another process's commit is
    seen within ``REMOTE_READ_CONSISTENCY`` plus one query (the deadline only stops a
    hang; the interval is checked below)."""
    deadline = time.monotonic() + 60
    while [h.fact.id for h in store.search(query, 3)] != want:
        assert time.monotonic() < deadline, f"{query!r} never found {want}"
        time.sleep(0.05)


@pytest.mark.scale_out
@pytest.mark.both_databases
def test_a_second_store_sees_a_write_within_the_read_consistency_interval(
    data_dir: Path, s3: S3Server, uri: str
) -> None:
    """The writer sees its own write at once; another reader within about a second (it
    asks the store for the latest version at most once a second)."""
    assert read_consistency(uri) == REMOTE_READ_CONSISTENCY == timedelta(seconds=1)
    assert read_consistency("/var/lib/memstore/index") == timedelta(0)  # a local index
    with open_s3(data_dir, s3, uri) as writer, open_s3(data_dir, s3, uri) as reader:
        assert reader.search("cat", 3) == []
        pet = writer.add_fact(FACTS_SAID[2])
        assert [h.fact.id for h in writer.search("what pet does the user have?", 3)] == [pet.id]
        seen_soon(reader, "what pet does the user have?", [pet.id])
        writer.retract(pet.id, "the cat was a neighbour's")
        seen_soon(reader, "what pet does the user have?", [])


@pytest.mark.scale_out
@pytest.mark.both_databases
def test_erase_leaves_no_object_holding_the_text(data_dir: Path, s3: S3Server, uri: str) -> None:
    with open_s3(data_dir, s3, uri) as store:
        allergy, city, _ = store.add_facts(FACTS_SAID)
        assert s3.holding(uri, "peanuts")
        store.erase(allergy.id, "the user asked us to forget it")
        assert found(store, "what is the user allergic to?")[0] != ALLERGY
        assert CITY in found(store, "where does the user live?")
        index = SearchIndex(uri, MiniLM(), storage_options=s3.storage_options())
        assert allergy.id not in index.ids(FACTS) and city.id in index.ids(FACTS)
        assert index.keep_versions == KEEP_VERSIONS_REMOTE > KEEP_VERSIONS  # hosts' clocks
    assert s3.holding(uri, "peanuts") == []  # not in a table, an older version or an index


def local_files_holding(directory: Path, needle: str) -> list[Path]:
    """The files under ``directory`` holding ``needle``. The read cache copies a file to
    a partial name and renames it into place (``read_cache.PARTIAL_DIR``), so a file
    listed may be gone when read: it holds nothing any more."""
    holding = []
    for path in directory.rglob("*"):
        try:
            if path.is_file() and needle.encode() in path.read_bytes():
                holding.append(path)
        except FileNotFoundError:
            continue  # renamed into place or dropped since it was listed
    return holding


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll until ``condition``; the deadline only stops a hang."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"waited 60 s for {what}"
        time.sleep(0.05)


@pytest.mark.scale_out
def test_a_read_cache_keeps_a_local_copy_that_searches_read_and_erases_reach(
    tmp_path: Path, s3: S3Server, uri: str
) -> None:
    """With ``object_store.read_cache``, the index's files are copied to a local
    directory (a subdirectory per bucket and prefix) that searches read; a write is
    found by its own store at once and by another within a second or so; an erase
    leaves no local file holding the text either, within ``DROP_AFTER`` plus a refresh."""
    cached = {**s3.object_store, "read_cache": str(tmp_path / "cache")}
    data = tmp_path / "data"
    with open_s3(data, s3, uri, object_store=cached) as writer:
        allergy, _, _ = writer.add_facts(FACTS_SAID)
        assert found(writer, "what is the user allergic to?")[0] == ALLERGY  # at once
        copy = tmp_path / "cache" / urlsplit(uri).netloc / urlsplit(uri).path.strip("/")
        wait_for(lambda: bool(local_files_holding(copy, "peanuts")), "the copy to hold it")
        with open_s3(data, s3, uri, object_store=cached) as reader:
            wait_for(lambda: found(reader, "where does the user live?")[:1] == [CITY], "a find")
            # That search read the copy (the index's own reader choice, looked at here).
            assert reader._index.ready()._copy(FACTS) is not None
            writer.erase(allergy.id, "the user asked us to forget it")
            wait_for(lambda: not local_files_holding(copy, "peanuts"), "the copy to drop it")
            assert ALLERGY not in found(reader, "what is the user allergic to?")
        # A rebuild drops and makes the tables again: the copy follows, searches work.
        assert writer.reindex().facts == 2
        assert found(writer, "where does the user live?")[0] == CITY
        wait_for(lambda: writer._index.ready()._copy(FACTS) is not None, "a copy of the new")
        assert found(writer, "where does the user live?")[0] == CITY
    assert s3.holding(uri, "peanuts") == []


@pytest.mark.scale_out
def test_reindex_drops_and_recreates_the_tables_on_s3(
    tmp_path: Path, s3: S3Server, uri: str
) -> None:
    """SeaweedFS still lists a dropped table's prefix; the rebuild must not trip on it."""
    with open_s3(tmp_path / "data", s3, uri) as store:
        store.add_facts(FACTS_SAID)
        rebuilt = store.reindex()
        assert (rebuilt.facts, rebuilt.chunks) == (3, 3)
        assert found(store, "what is the user allergic to?")[0] == ALLERGY
    # Built with another embedder, the index is refused until rebuilt on the store.
    with open_s3(tmp_path / "data", s3, uri, embedder=HashedWords()) as other:
        with pytest.raises(memstore.MemstoreError, match="reindex"):
            other.search("peanuts")
        assert other.reindex().facts == 3
        assert found(other, "peanuts allergic")[0] == ALLERGY


@pytest.mark.scale_out
def test_sqlite_processes_take_turns_through_a_lock_file_beside_the_database(
    tmp_path: Path, s3: S3Server, uri: str
) -> None:
    """An s3:// index has no directory for the usual lock file: SQLite's processes share
    one beside the database file instead."""
    with open_s3(tmp_path / "data", s3, uri) as store:
        store.add_fact(FACTS_SAID[0])
    assert (tmp_path / "data" / "memstore.db.index.lock").exists()
    assert not list((tmp_path / "data").glob("index*"))  # no local index directory


# -- settings ----------------------------------------------------------------------------


@pytest.mark.scale_out
def test_settings_from_the_environment_reach_the_index(
    tmp_path: Path, s3: S3Server, uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTORE_STORE__URL", str(tmp_path / "data"))
    monkeypatch.setenv("MEMSTORE_STORE__INDEX", uri)
    for name, value in object_store_env(s3).items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.store.object_store.endpoint == s3.endpoint
    with settings.open(NS, hook=memstore.Ungated()) as store:
        store.add_fact(FACTS_SAID[1])
        assert found(store, "where does the user live?") == [CITY]
    assert s3.objects(uri)
    shown = json.dumps(masked_settings(settings)) + repr(settings) + str(settings)
    assert s3.secret_key not in shown and s3.access_key not in shown


@pytest.mark.scale_out
def test_wrong_credentials_fail_to_open_without_showing_them(
    tmp_path: Path, s3: S3Server, uri: str
) -> None:
    wrong = {**s3.object_store, "secret_access_key": "not-the-secret-0123456789"}
    with pytest.raises(StorageError) as caught:
        memstore.open(tmp_path / "data", NS, index=uri, object_store=wrong)
    message = str(caught.value)
    assert uri in message and "SignatureDoesNotMatch" in message
    assert "not-the-secret" not in message and s3.secret_key not in message
    elsewhere = {**s3.object_store, "endpoint": "http://127.0.0.1:9", "connect_timeout": 1}
    with pytest.raises(StorageError, match="cannot reach the object store"):
        memstore.open(tmp_path / "data", NS, index=uri, object_store=elsewhere)


@pytest.mark.parametrize(
    ("store", "field"),
    [
        ({"index": "s3:///no-bucket"}, "store.index"),
        ({"object_store": {"endpoint": "http://127.0.0.1:8333"}}, "store.object_store.endpoint"),
        ({"object_store": {"endpoint": "ftp://host"}}, "store.object_store.endpoint"),
        ({"object_store": {"access_key_id": "key-without-a-secret"}}, "store.object_store"),
        ({"object_store": {"timeout": 0}}, "store.object_store.timeout"),
        ({"object_store": {"endpont": "https://typo"}}, "store.object_store.endpont"),
    ],
)
def test_bad_object_store_settings_name_the_field(store: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(store=store)
    assert caught.value.field == field


def test_object_store_options_are_lancedbs_and_secrets_stay_masked() -> None:
    settings = ObjectStore.model_validate(
        {
            "endpoint": "https://s3.example.com/",
            "region": "eu-west-1",
            "access_key_id": "AKIAEXAMPLE",
            "secret_access_key": "very-secret-value",
            "timeout": 2.5,
            "read_cache": "/var/cache/memstore",  # memstore's, not LanceDB's
        }
    )
    assert settings.read_cache == Path("/var/cache/memstore")
    assert settings.storage_options() == {
        "aws_endpoint": "https://s3.example.com",
        "aws_region": "eu-west-1",
        "aws_access_key_id": "AKIAEXAMPLE",
        "aws_secret_access_key": "very-secret-value",
        "timeout": "2500ms",
    }
    assert "very-secret-value" not in repr(settings) + str(settings.model_dump(mode="json"))
    assert ObjectStore().storage_options() == {} and not ObjectStore().configured


def test_object_store_options_need_an_s3_index(tmp_path: Path) -> None:
    """Given with a local index, they would be silently ignored: refused instead."""
    with pytest.raises(InvalidInput) as caught:
        memstore.open(tmp_path, NS, object_store={"region": "eu-west-1"})
    assert caught.value.field == "object_store" and "s3://" in caught.value.reason
    with pytest.raises(InvalidInput) as bad:
        memstore.open(tmp_path, NS, index="s3://bucket", object_store={"regio": "x"})
    assert bad.value.field == "object_store.regio"
    with pytest.raises(InvalidInput) as no_bucket:
        memstore.open(tmp_path, NS, index="s3://")
    assert no_bucket.value.field == "index"


# -- several hosts -----------------------------------------------------------------------


@pytest.fixture
def worker_env(postgres: Any, s3: S3Server, uri: str) -> Iterator[dict[str, str]]:
    """The environment of a worker host: PostgreSQL and the object store, nothing else."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env["MEMSTORE_STORE__URL"] = postgres.new_database()
    env["MEMSTORE_STORE__INDEX"] = uri
    env.update(object_store_env(s3))
    yield env


def start_worker(
    home: Path, first: int, count: int, acked: Path, env: dict[str, str], gate: str = "scripted"
) -> subprocess.Popen[str]:
    """A worker host in its own working directory ``home``; ``gate`` as the worker takes."""
    home.mkdir()
    return subprocess.Popen(
        [sys.executable, str(WORKER), str(first), str(count), str(acked), gate],
        cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def finish(workers: list[subprocess.Popen[str]]) -> dict[str, int]:
    """Wait for each worker; their counts added up."""
    done: dict[str, int] = {}
    for worker in workers:
        out, err = worker.communicate(timeout=540)
        assert worker.returncode == 0, err[-3000:]
        for key, n in json.loads(out.splitlines()[-1]).items():
            done[key] = done.get(key, 0) + n
    return done


def acked_ids(path: Path) -> set[str]:
    return {line.split()[2] for line in read_acks(path)}


def audited(
    url: str, s3: S3Server, uri: str, capsys: pytest.CaptureFixture[str], report: str
) -> None:
    """The namespace as a later host opens it: its audit chain verifies and nothing is
    left queued for the index; then ``report`` is printed past pytest's capture."""
    with reopened(url, s3, uri) as store:
        assert store.verify_audit_chain().ok
        assert store.index_backlog() == 0
    with capsys.disabled():
        print(f"\n{report}")


def reopened(url: str, s3: S3Server, uri: str) -> Store:
    """The namespace as a later host opens it (which applies what is still queued)."""
    settings = load_settings(store={"url": url, "index": uri, "object_store": s3.object_store})
    return settings.open(WORKERS_NS, hook=memstore.Ungated(), embedder=HashedWords())


@pytest.mark.slow
@pytest.mark.scale_out
def test_worker_processes_share_one_namespace_through_postgresql_and_s3(
    tmp_path: Path,
    s3: S3Server,
    uri: str,
    worker_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """N processes, each in its own directory, write a fixed number of facts at once,
    each finding its own write at once and re-verifying as it goes; afterwards every
    acknowledged fact is in SQL once and in the index once, whole, and the audit chain
    verifies. The counts are printed."""
    acked = tmp_path / "acked.txt"
    started = time.monotonic()
    done = finish(
        [
            start_worker(tmp_path / f"host-{w}", (w + 1) * 1000, FACTS_EACH, acked, worker_env)
            for w in range(WORKERS)
        ]
    )
    elapsed = time.monotonic() - started

    stored = acked_ids(acked)
    url = worker_env["MEMSTORE_STORE__URL"]
    in_sql = check_whole(url, uri, s3.storage_options())  # whole, SQL and index agree
    assert set(in_sql) == stored and len(stored) == WORKERS * FACTS_EACH
    assert done == {
        "stored": len(stored),
        "found at once": len(stored),
        "re-verified": done["re-verified"],
    }
    assert done["re-verified"] > 0
    audited(
        url, s3, uri, capsys,
        f"scale-out: {WORKERS} worker processes on PostgreSQL + {uri} ({elapsed:.0f} s): "
        f"facts acknowledged {len(stored)}, in SQL {len(in_sql)}, in the index "
        f"{len(in_sql)} (once each), found by their writer at once {done['found at once']}, "
        f"re-verified {done['re-verified']}; audit chain verifies",
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.scale_out
def test_a_worker_killed_mid_write_loses_nothing_and_the_index_catches_up(
    tmp_path: Path,
    s3: S3Server,
    uri: str,
    worker_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Beside N workers, one more is SIGKILLed once it has acknowledged a few facts: the
    others finish their facts; every acknowledged fact is whole in SQL and the index
    (the victim's last, unacknowledged one is whole or absent) once the next host opens
    the namespace; the audit chain verifies."""
    acked, victim_acked = tmp_path / "acked.txt", tmp_path / "victim.txt"
    victim = start_worker(tmp_path / "victim", 90_000, 10_000, victim_acked, worker_env)
    workers = [
        start_worker(tmp_path / f"host-{w}", (w + 1) * 1000, FACTS_EACH, acked, worker_env)
        for w in range(WORKERS)
    ]
    deadline = time.monotonic() + 300
    while len(read_acks(victim_acked)) < VICTIM_ACKS:
        assert victim.poll() is None, victim.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the victim acknowledged too few facts in 300 s"
        time.sleep(0.05)
    victim.kill()
    victim.communicate()
    others_before_kill = len(read_acks(acked))
    done = finish(workers)

    stored, lost_with_victim = acked_ids(acked), acked_ids(victim_acked)
    url = worker_env["MEMSTORE_STORE__URL"]
    [(queued,)] = sql_rows(url, "SELECT count(*) FROM index_outbox")
    with reopened(url, s3, uri) as store:  # applies what the victim left queued
        assert store.verify_audit_chain().ok
    in_sql = check_whole(url, uri, s3.storage_options())  # whole, SQL and index agree
    assert len(stored) == done["stored"] == WORKERS * FACTS_EACH
    assert stored | lost_with_victim <= set(in_sql)  # nothing acknowledged is lost
    assert len(set(in_sql) - stored - lost_with_victim) <= 1  # the victim's last, if it committed
    with capsys.disabled():
        print(
            f"\nscale-out, one worker killed: victim acknowledged {len(lost_with_victim)} before "
            f"SIGKILL; the {WORKERS} others acknowledged {others_before_kill} before it and "
            f"{len(stored) - others_before_kill} after it; in SQL and the index "
            f"{len(in_sql)} facts (once each), every acknowledged one among them, "
            f"{queued} index changes queued before the next open and none after; audit chain "
            "verifies"
        )


# -- one shared verifier server ----------------------------------------------------------


@pytest.fixture(scope="module")
def verifier(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VerifierProxy]:
    """llama.cpp's OpenAI-compatible server on SmolLM2, behind the fault-injecting proxy;
    warmed up on a longer claim than the workers' (its first answers take several times
    longer than the rest) so that the workers' first requests do not time out."""
    with (
        llama_server(tmp_path_factory.mktemp("llama")) as url,
        verifier_proxy(url, RETRIES + 1) as proxy,
        OpenAIBackend(MODEL, base_url=url, mode="logprobs", timeout=120) as backend,
    ):
        warm_up = worker_fact(0)
        backend.estimate(warm_up["statement"], " ".join(warm_up["evidence"] * 3))
        yield proxy


def verifier_env(url: str) -> dict[str, str]:
    """The gate of a worker host as ``MEMSTORE_HALLUCINATION__*`` variables: the openai
    backend on the verifier at ``url``. Its options go as one JSON object: one variable
    per option would hand the backend strings ("6") where it needs numbers."""
    options = {
        "model": MODEL, "base_url": url, "mode": "logprobs", "timeout": REQUEST_TIMEOUT,
        "retries": RETRIES, "backoff": 0.1, "concurrency": 1,
    }  # fmt: skip
    return {
        "MEMSTORE_HALLUCINATION__BACKEND": "openai",
        "MEMSTORE_HALLUCINATION__BACKEND_OPTIONS": json.dumps(options),
        # the gate's own deadline outlasts every retry: a held claim ends in verifier_error
        "MEMSTORE_HALLUCINATION__TIMEOUT": "60",
        "MEMSTORE_HALLUCINATION__TIMEOUT_PER_CLAIM": "0",
        # The tiny model grounds nothing and finds most of these claims a little
        # contradicted (p1 0.12-0.17): store what it does not support, flagged, and
        # reject only the clearer contradictions, so that both kinds of write happen.
        "MEMSTORE_HALLUCINATION__MEMORY_GATE__REJECT_UNSUPPORTED": "false",
        "MEMSTORE_HALLUCINATION__MEMORY_GATE__CONTRADICTION_THRESHOLD": "0.15",
        "MEMSTORE_HALLUCINATION__MEMORY_GATE__TIMEOUT_REDUCTION": str(TIMEOUT_REDUCTION),
    }


@pytest.mark.slow
@pytest.mark.scale_out
def test_worker_processes_share_one_verifier_server_through_its_timeouts_and_retries(
    tmp_path: Path,
    s3: S3Server,
    uri: str,
    worker_env: dict[str, str],
    verifier: VerifierProxy,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The scale-out test with the gate on the openai backend: N workers, one llama.cpp
    server. The proxy answers the first request of some facts 503 (retried, then
    answered), holds the first of others past the backend's timeout (retried, then
    answered) and holds every attempt of others' writes (each write still returns: the
    fact is stored pending at its stated confidence x ``timeout_reduction``). Afterwards every
    acknowledged fact is whole in SQL and the index once, each worker's facts are stored
    or rejected once each, and the audit chain verifies. The counts are printed."""
    env = {**worker_env, **verifier_env(verifier.url)}
    acked = [tmp_path / f"acked-{w}.txt" for w in range(WORKERS)]
    firsts = [(w + 1) * 1000 for w in range(WORKERS)]
    started = time.monotonic()
    done = finish(
        [
            start_worker(
                tmp_path / f"host-{w}", firsts[w], VERIFIED_EACH, acked[w], env, "settings"
            )
            for w in range(WORKERS)
        ]
    )
    elapsed = time.monotonic() - started

    asked = [n for first in firsts for n in range(first, first + VERIFIED_EACH)]
    for first, path in zip(firsts, acked, strict=True):  # each fact once, stored or rejected
        answered = [int(line.split()[1]) for line in read_acks(path)]
        assert answered == list(range(first, first + VERIFIED_EACH))
    lines = [line.split() for path in acked for line in read_acks(path)]
    stored = {int(line[1]): line[2] for line in lines if line[0] == "fact"}
    rejected = [int(line[1]) for line in lines if line[0] == "rejected"]
    url = worker_env["MEMSTORE_STORE__URL"]
    in_sql = check_whole(url, uri, s3.storage_options())  # whole, SQL and index agree
    assert set(in_sql) == set(stored.values())
    [(rejections,)] = sql_rows(url, "SELECT count(*) FROM rejections WHERE namespace = :ns")
    assert rejections == len(rejected) == done["rejected"]
    assert done["stored"] == len(stored) == done["found at once"]
    assert done["stored"] + done["rejected"] == len(asked) and done["re-verified"] > 0

    # What each fact's requests got from the proxy, and what its write's verdict was.
    per_fact = verifier.per_fact
    writes = {
        fact_id: (verdict, status, confidence, stated, reason)
        for fact_id, verdict, status, confidence, stated, reason in sql_rows(
            url,
            "SELECT v.fact_id, v.verdict, v.status_after, v.confidence, f.stated_confidence,"
            " v.reason FROM verifications v JOIN facts f ON f.id = v.fact_id"
            " WHERE v.namespace = :ns AND v.kind = 'write'",
        )
    }
    held = [n for n in asked if fault_of(n) == "held while written"]
    assert set(held) <= set(stored)  # a verifier that never answers never rejects
    for n, fact_id in stored.items():
        verdict, status, confidence, stated, reason = writes[fact_id]
        if fault_of(n) == "held while written":  # every attempt held past the timeout
            assert (verdict, status) == ("verifier_error", "pending"), (n, verdict, reason)
            assert "Timeout" in reason
            assert confidence == pytest.approx(stated * TIMEOUT_REDUCTION)
        else:  # answered, after a 503 or a held first attempt where the proxy injected one
            assert verdict not in {"verifier_error", "timeout"}, (n, verdict, reason, per_fact)
    assert done["not verified"] == len(held)
    for n in asked:
        fault, got = fault_of(n), per_fact[n]
        if fault == "503 first":
            assert got["answered 503"] >= 2 and got["forwarded"] >= 2 and got["held"] == 0, got
        elif fault == "held first":
            assert got["held"] >= 2 and got["forwarded"] >= 2 and got["answered 503"] == 0, got
        elif fault == "held while written":
            assert got["held"] == RETRIES + 1 and got["answered 503"] == 0, got
        else:
            assert set(got) == {"forwarded"}, got
    assert verifier.retried_after_503() == verifier.done["answered 503"] > 0
    audited(
        url, s3, uri, capsys,
        f"scale-out, shared verifier: {WORKERS} worker processes, one llama.cpp server "
        f"({MODEL}) behind a proxy ({elapsed:.0f} s): facts asked {len(asked)}, "
        f"stored {done['stored']} (in SQL and the index once each), rejected "
        f"{done['rejected']}, stored unverified after every attempt timed out "
        f"{done['not verified']} (confidence x{TIMEOUT_REDUCTION}), re-verified "
        f"{done['re-verified']}; proxy: forwarded {verifier.done['forwarded']}, answered "
        f"503 {verifier.done['answered 503']} (all retried), held past the "
        f"{REQUEST_TIMEOUT:g} s timeout {verifier.done['held']}; faults by fact number mod "
        f"{len(FAULTS)}: {', '.join(FAULTS)}; audit chain verifies",
    )  # fmt: skip
