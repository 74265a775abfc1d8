"""AsyncStore: the Store's API awaited, with the blocking work off the event loop."""

from __future__ import annotations

import asyncio
import inspect
import multiprocessing
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

import memstore
from gate import REFUSE_UNGROUNDED
from memstore import Admission, AsyncStore, Candidate, FactStatus, Store

NS = "user:alice"
#: Store methods that stay synchronous on purpose: background-thread lifecycle.
#: ``index_batch`` holds back the writes of its own thread; an AsyncStore's calls run on
#: worker threads, so a batch there would hold back nothing.
SYNC_ONLY = {"close", "index_batch", "start_reverifier", "stop_reverifier"}


def fact(i: int) -> dict[str, object]:
    return {
        "statement": f"Person {i} lives in Town {i}.",
        "members": [(f"Person {i}", "person", "resident"), (f"Town {i}", "place", "home")],
        "evidence": [f"Person {i}: I live in Town {i}."],
    }


def test_every_public_store_method_has_an_awaitable_twin() -> None:
    public = {
        name
        for name, member in inspect.getmembers(Store, inspect.isfunction)
        if not name.startswith("_")
    }
    missing = {name for name in public - SYNC_ONLY if not hasattr(AsyncStore, name)}
    assert not missing, f"AsyncStore lacks {sorted(missing)}"
    for name in public - SYNC_ONLY:
        assert inspect.iscoroutinefunction(getattr(AsyncStore, name)), name
        assert inspect.signature(getattr(AsyncStore, name)) == inspect.signature(
            getattr(Store, name)
        ), name


def test_concurrent_tasks_write_and_read_exactly(tmp_path: Path) -> None:
    # In a child process: torch and LanceDB driven from many worker threads leave this
    # process's later hf-causal results unrepeatable (noted for issue 9), which the
    # LM backend tests that follow would inherit.
    child = multiprocessing.get_context("spawn").Process(target=concurrent_tasks, args=(tmp_path,))
    child.start()
    child.join(600)
    assert child.exitcode == 0, "the concurrent run failed (its traceback is above)"
    with memstore.open(tmp_path, NS, index=False) as sync:
        assert sync.stats().facts == {"unverified": 30}


def concurrent_tasks(tmp_path: Path) -> None:
    """30 writes, reads, searches and a batch from concurrent asyncio tasks, checked exactly."""

    async def main() -> None:
        async with await AsyncStore.open(tmp_path, NS, hook=memstore.Ungated()) as store:
            written = await asyncio.gather(*(store.add_fact(fact(i)) for i in range(24)))
            assert len({f.id for f in written}) == 24
            # Reads, searches and a batch, all at once.
            got, hits, batch, hood = await asyncio.gather(
                asyncio.gather(*(store.get_fact(f.id) for f in written)),
                asyncio.gather(
                    *(store.search(f"where does person {i} live?", 3) for i in range(6))
                ),
                store.add_facts([fact(i) for i in range(24, 30)]),
                store.neighborhood("Person 3"),
            )
            assert [f.statement for f in got] == [f.statement for f in written]
            for i, found in enumerate(hits):
                assert found[0].fact.statement == f"Person {i} lives in Town {i}."
            assert all(isinstance(b, memstore.FactPublic) for b in batch)
            assert {e.name for e in hood.entities} == {"Person 3", "Town 3"}
            stats = await store.stats()
            assert stats.facts == {"unverified": 30}  # ungated facts are stored unverified

    asyncio.run(main())


def test_the_gate_rejects_through_await(tmp_path: Path) -> None:
    async def main() -> None:
        # The specification's table: what the verifier cannot ground is refused.
        async with await AsyncStore.open(tmp_path, NS, policy=REFUSE_UNGROUNDED) as store:
            kept = await store.add_fact(
                statement="Alice is allergic to peanuts.",
                members=[("Alice", "person", "patient"), ("peanuts", "food", "allergen")],
                evidence=["Alice: I'm allergic to peanuts."],
            )
            with pytest.raises(memstore.ErrFactNotGrounded) as rejected:
                await store.add_fact(
                    statement="Alice is allergic to shellfish.",
                    members=[("Alice", "person", "patient"), ("shellfish", "food", "allergen")],
                    evidence=["Alice: I'm allergic to peanuts."],
                )
            [logged] = await store.rejections()
            assert logged.id == rejected.value.rejection_id
            assert (await store.get_fact(kept.id)).status == "verified"
            with pytest.raises(memstore.InvalidInput) as bad:
                await store.add_fact(statement="", members=["Alice"], evidence=["x"])
            assert bad.value.field == "statement"

    asyncio.run(main())


class WaitsForTheLoop:
    """A write hook that admits only after the event loop has run another task.

    If a write blocked the loop, the loop could never set ``released``: the hook
    would give up after ``patience`` seconds and reject, and the test fails.
    """

    name = "waits-for-the-loop"

    def __init__(self, patience: float = 30.0) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()
        self.patience = patience

    def admit_many(self, candidates: Sequence[Candidate]) -> list[Admission]:
        self.entered.set()
        ok = self.released.wait(self.patience)
        return [
            Admission(
                accepted=ok,
                verdict="grounded" if ok else "timeout",
                status=FactStatus.VERIFIED,
                confidence=c.stated_confidence,
            )
            for c in candidates
        ]


def test_a_write_in_progress_does_not_block_the_event_loop(tmp_path: Path) -> None:
    hook = WaitsForTheLoop()

    async def release_when_entered() -> None:
        while not hook.entered.is_set():
            await asyncio.sleep(0.01)
        hook.released.set()

    async def main() -> memstore.FactPublic:
        async with await AsyncStore.open(tmp_path, NS, hook=hook, index=False) as store:
            stored, _ = await asyncio.gather(store.add_fact(fact(1)), release_when_entered())
            return stored

    stored = asyncio.run(main())
    assert stored.status == "verified"
