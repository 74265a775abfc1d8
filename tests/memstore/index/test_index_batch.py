"""``Store.index_batch``: writes inside are indexed together when the block ends."""

from __future__ import annotations

from pathlib import Path

import lancedb
from samples import works_at
from workers import NS, HashedWords

import memstore
from memstore.index.rows import FACTS


def indexed_ids(data_dir: Path) -> set[str]:
    return set(indexed_statuses(data_dir))


def indexed_statuses(data_dir: Path) -> dict[str, str]:
    rows = lancedb.connect(str(data_dir / "index")).open_table(FACTS).to_arrow()
    ids, statuses = rows.column("id").to_pylist(), rows.column("status").to_pylist()
    return dict(zip(ids, statuses, strict=True))


def test_facts_written_in_a_batch_are_indexed_when_it_ends(data_dir: Path) -> None:
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), embedder=HashedWords()) as store:
        before = store.add_fact(**works_at("Zoe"))
        with store.index_batch():
            inside = [store.add_fact(**works_at(n, f"{n}corp")) for n in ("Ana", "Bo", "Cy")]
            with store.index_batch():  # nested: applied by the outer block
                inside.append(store.add_fact(**works_at("Di", "Dicorp")))
            assert store.index_backlog() > 0
            assert {f.id for f in inside}.isdisjoint(indexed_ids(data_dir))
            assert [f.statement for f in store.facts_about("Ana")] == ["Ana works at Anacorp."]
        assert store.index_backlog() == 0
        assert {before.id, *(f.id for f in inside)} <= indexed_ids(data_dir)
        assert [h.fact.id for h in store.search("Bocorp", 5)][:1] == [inside[1].id]


def test_an_error_inside_a_batch_still_indexes_what_was_written(data_dir: Path) -> None:
    class Crash(Exception):
        pass

    with memstore.open(data_dir, NS, hook=memstore.Ungated(), embedder=HashedWords()) as store:
        try:
            with store.index_batch():
                written = store.add_fact(**works_at("Ana"))
                raise Crash
        except Crash:
            pass
        assert written.id in indexed_ids(data_dir)  # the block's end applies what it held
        assert store.index_backlog() == 0


def test_a_batch_holds_back_only_its_own_threads_writes(data_dir: Path) -> None:
    import threading

    with memstore.open(data_dir, NS, hook=memstore.Ungated(), embedder=HashedWords()) as store:
        other: list[str] = []
        with store.index_batch():
            inside = store.add_fact(**works_at("Ana", "Anacorp"))
            thread = threading.Thread(
                target=lambda: other.append(store.add_fact(**works_at("Bo", "Bocorp")).id)
            )
            thread.start()
            thread.join()
            indexed = indexed_ids(data_dir)
            assert other[0] in indexed and inside.id not in indexed
        assert inside.id in indexed_ids(data_dir)


def test_a_retraction_in_a_batch_reaches_the_index_when_it_ends(data_dir: Path) -> None:
    with memstore.open(data_dir, NS, hook=memstore.Ungated(), embedder=HashedWords()) as store:
        kept = store.add_fact(**works_at("Ana", "Anacorp"))
        gone = store.add_fact(**works_at("Bo", "Bocorp"))
        with store.index_batch():
            store.retract(gone.id, "wrong")
            assert store.index_backlog() > 0  # held back: queued meanwhile
            assert indexed_statuses(data_dir)[gone.id] == gone.status
        assert store.index_backlog() == 0
        statuses = indexed_statuses(data_dir)
        assert statuses[gone.id] == "retracted" and statuses[kept.id] == kept.status
        assert gone.id not in [h.fact.id for h in store.search("Bocorp", 5)]
