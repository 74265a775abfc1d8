"""The REST server's pool of open stores (memstore.rest.NamespaceStores): bounded, LRU,
idle stores closed, a store in use never closed. Real stores on SQLite, the real app over
HTTP on 127.0.0.1, and one real ``memstore serve`` process with few file descriptors."""

from __future__ import annotations

import json
import os
import resource
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rest_server import USERS_KEY, serving
from serve_process import memstore_serve

from gate import ConfigError
from memstore import Store
from memstore.config import Settings, load_settings
from memstore.errors import MemstoreError
from memstore.rest import NamespaceStores, create_app

AUTH = {"Authorization": f"Bearer {USERS_KEY}"}
FACT = {
    "statement": "Alice is allergic to peanuts.",
    "members": [["Alice", "person", "patient"], ["peanuts", "food", "allergen"]],
    "evidence": ["Alice: I'm allergic to peanuts."],
}


def pool_settings(url: str, **server: object) -> Settings:
    """Settings with the gate off (the pool is the subject, not the verifier)."""
    return load_settings(
        store={"url": url},
        hallucination={"enabled": False},
        server={"api_keys": {USERS_KEY: ["user:*"]}, **server},
    )


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[tuple[NamespaceStores, Clock]]:
    clock = Clock()
    stores = NamespaceStores(
        pool_settings(str(tmp_path / "mem"), max_open_stores=2, store_idle_timeout="10m"),
        clock=clock,
    )
    yield stores, clock
    stores.close()


# -- settings ------------------------------------------------------------------------


def test_the_pool_settings_have_documented_defaults(tmp_path: Path) -> None:
    server = load_settings(store={"url": str(tmp_path / "mem")}).server
    assert server.max_open_stores == 64
    assert server.store_idle_timeout is not None
    assert server.store_idle_timeout.total_seconds() == 600
    for never in (None, "never"):
        assert (
            pool_settings(str(tmp_path), store_idle_timeout=never).server.store_idle_timeout is None
        )
    for field, bad in (("max_open_stores", 0), ("store_idle_timeout", "0s")):
        with pytest.raises(ConfigError) as err:
            pool_settings(str(tmp_path), **{field: bad})
        assert err.value.field == f"server.{field}"


# -- the pool itself ---------------------------------------------------------------------


def test_the_least_recently_used_idle_store_is_closed_to_make_room(
    pool: tuple[NamespaceStores, Clock],
) -> None:
    stores, _ = pool
    opened = {}
    for namespace in ("user:a", "user:b", "user:a", "user:c"):
        with stores.lease(namespace) as store:
            opened[namespace] = store
            store.stats()
    assert stores.namespaces() == ["user:a", "user:c"]  # b was used least recently
    assert stores.settle(timeout=60)  # closed on the pool's closer thread
    with pytest.raises(MemstoreError, match="closed"):
        opened["user:b"].stats()
    with stores.lease("user:b") as again:  # reopened on its next use
        assert again is not opened["user:b"] and again.stats().namespace == "user:b"


def test_a_leased_store_is_never_closed(pool: tuple[NamespaceStores, Clock]) -> None:
    stores, clock = pool
    with stores.lease("user:held") as held:
        for i in range(5):  # the limit is 2: the others take turns in the other slot
            with stores.lease(f"user:{i}") as other:
                other.stats()
            held.stats()
        with stores.lease("user:x"), stores.lease("user:y"):
            assert stores.namespaces() == ["user:held", "user:x", "user:y"]  # over, briefly
        assert len(stores.namespaces()) == 2 and "user:held" in stores.namespaces()
        clock.now += 3600
        assert stores.sweep() == 1  # the idle one, not the held one
        assert stores.namespaces() == ["user:held"] and stores.leased("user:held") == 1
        held.stats()
    assert stores.leased("user:held") == 0


def test_sweep_closes_stores_idle_for_the_timeout(pool: tuple[NamespaceStores, Clock]) -> None:
    stores, clock = pool
    with stores.lease("user:a") as a:
        a.stats()
    clock.now += 300
    with stores.lease("user:b") as b:
        b.stats()
    clock.now += 300  # a: idle 10 minutes; b: 5 minutes
    assert stores.sweep() == 1
    assert stores.namespaces() == ["user:b"]
    assert stores.settle(timeout=60)
    with pytest.raises(MemstoreError, match="closed"):
        a.stats()
    assert stores.sweep(now=clock.now + 299) == 0
    assert stores.sweep(now=clock.now + 300) == 1 and stores.namespaces() == []


def test_no_idle_timeout_means_only_the_limit_closes_stores(tmp_path: Path) -> None:
    clock = Clock()
    stores = NamespaceStores(
        pool_settings(str(tmp_path / "mem"), store_idle_timeout=None), clock=clock
    )
    try:
        with stores.lease("user:a"):
            pass
        clock.now += 10**9
        assert stores.sweep() == 0 and stores.namespaces() == ["user:a"]
    finally:
        stores.close()


def test_many_threads_share_the_pool_and_never_see_a_closed_store(tmp_path: Path) -> None:
    stores = NamespaceStores(pool_settings(str(tmp_path / "mem"), max_open_stores=3))
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def work(worker: int) -> None:
        start.wait()
        try:
            for i in range(12):
                namespace = f"user:{(worker + i) % 6}"
                with stores.lease(namespace) as store:
                    assert store.stats().namespace == namespace
                    store.rejections(limit=1)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    try:
        assert not failures, failures
        assert len(stores.namespaces()) <= 3
        assert all(stores.leased(f"user:{n}") == 0 for n in range(6))
    finally:
        stores.close()
    with pytest.raises(MemstoreError, match="shutting down"), stores.lease("user:0"):
        pass


class BlockedClose:
    """Makes ``store.close()`` wait for ``release`` (as a long re-verification run would),
    telling ``started`` when it began."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        close = store.close

        def blocked() -> None:
            self.started.set()
            assert self.release.wait(120), "the test never released the close"
            close()

        monkeypatch.setattr(store, "close", blocked)


@pytest.mark.parametrize("how", ["evicted", "swept"])
def test_a_slow_close_never_holds_up_a_request_for_another_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    clock = Clock()
    stores = NamespaceStores(
        pool_settings(str(tmp_path / "mem"), max_open_stores=1, store_idle_timeout="10m"),
        clock=clock,
    )
    try:
        with stores.lease("user:slow") as slow:
            blocked = BlockedClose(slow, monkeypatch)
        if how == "swept":
            clock.now += 3600
            assert stores.sweep() == 1  # hands it over: returns while the close waits
        served = threading.Event()

        def request() -> None:  # evicts user:slow to make room, then serves user:fast
            with stores.lease("user:fast") as fast:
                fast.stats()
            served.set()

        thread = threading.Thread(target=request, daemon=True)
        thread.start()
        assert blocked.started.wait(60), "the store was never closed"
        assert served.wait(60), "a request waited for another namespace's close"
        assert stores.namespaces() == ["user:fast"]
        assert not stores.settle(timeout=0.05)  # user:slow is still closing
        blocked.release.set()
        assert stores.settle(timeout=60)
        with pytest.raises(MemstoreError, match="closed"):
            slow.stats()
        with stores.lease("user:slow") as again:  # reopened after its close finished
            assert again is not slow and again.stats().namespace == "user:slow"
    finally:
        blocked.release.set()
        stores.close()
    assert stores.settle(timeout=0)


# -- through the app -----------------------------------------------------------------------


def test_the_app_keeps_at_most_the_limit_open_and_answers_every_request(tmp_path: Path) -> None:
    app = create_app(pool_settings(str(tmp_path / "mem"), max_open_stores=3))
    stores: NamespaceStores = app.state.stores
    with serving(app) as base, httpx.Client(base_url=base, headers=AUTH, timeout=60) as client:
        ids = {}
        for i in range(25):
            ns = f"/v1/namespaces/user:n{i}"
            written = client.post(f"{ns}/facts", json=FACT)
            assert written.status_code == 201, written.text
            ids[i] = written.json()["id"]
            assert client.get(f"{ns}/rejections").status_code == 200
            assert len(stores.namespaces()) <= 3
        # Closed and reopened: every namespace still has its own fact, and only it.
        for i in (0, 7, 24):
            got = client.get(f"/v1/namespaces/user:n{i}/facts/{ids[i]}")
            assert got.status_code == 200 and got.json()["namespace"] == f"user:n{i}"
            other = client.get(f"/v1/namespaces/user:n{i}/facts/{ids[(i + 1) % 25]}")
            assert other.status_code == 404
        assert len(stores.namespaces()) <= 3

        # A store a request holds survives the traffic of others and the idle sweep.
        with stores.lease("user:held") as held:
            for i in range(6):
                assert client.get(f"/v1/namespaces/user:m{i}/rejections").status_code == 200
            idle = len(stores.namespaces()) - 1
            assert stores.sweep(now=time.monotonic() + 10**6) == idle
            assert stores.namespaces() == ["user:held"]
            held.stats()
        assert client.get("/v1/namespaces/user:n3/rejections").status_code == 200


# -- a real server with few file descriptors ---------------------------------------------------

FILE_LIMIT = 256
NAMESPACES = 300


def _few_files() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    limit = FILE_LIMIT if hard == resource.RLIM_INFINITY else min(FILE_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


@pytest.mark.slow
def test_a_server_with_256_files_serves_300_namespaces(tmp_path: Path) -> None:
    """Default settings: before the pool, the 116th namespace answered 503 (EMFILE)."""
    settings = {
        "MEMSTORE_URL": str(tmp_path / "mem"),
        "MEMSTORE_SERVER__API_KEYS": json.dumps({USERS_KEY: ["user:*"]}),
        "MEMSTORE_HALLUCINATION__ENABLED": "false",
    }
    with memstore_serve(tmp_path, settings, preexec_fn=_few_files) as served:
        with httpx.Client(base_url=served.base_url, headers=AUTH, timeout=60) as client:
            for i in range(NAMESPACES):
                ns = f"/v1/namespaces/user:n{i}"
                response = client.get(f"{ns}/rejections")
                assert response.status_code == 200, (i, response.text)
                if i % 25 == 0:  # writes too (SQL and the search index)
                    written = client.post(f"{ns}/facts", json=FACT)
                    assert written.status_code == 201, (i, written.text)
            assert client.get("/health").json()["status"] == "ok"
        if Path(f"/proc/{served.proc.pid}/fd").is_dir():
            assert len(os.listdir(f"/proc/{served.proc.pid}/fd")) < FILE_LIMIT
    assert "Too many open files" not in served.log.read_text(errors="replace")
