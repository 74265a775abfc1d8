"""Namespace isolation: no read returns another namespace's rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from samples import works_at

import memstore
from memstore import InvalidInput, NotFound


def test_every_read_is_confined_to_the_namespace(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace="user:alice", hook=memstore.Ungated()) as alice:
        mine = alice.add_fact(**works_at())
        [evidence_id] = mine.evidence_ids
    with memstore.open(data_dir, namespace="user:bob", hook=memstore.Ungated()) as bob:
        theirs = bob.add_fact(**works_at(company="Globex"))
        with pytest.raises(NotFound):
            bob.get_fact(mine.id)
        with pytest.raises(NotFound):
            bob.history(mine.id)
        with pytest.raises(NotFound):
            bob.verifications(mine.id)
        with pytest.raises(NotFound):
            bob.retract(mine.id, reason="not yours")
        with pytest.raises(NotFound):
            bob.supersede(mine.id, **works_at())
        with pytest.raises(NotFound):
            bob.facts_about("Acme")
        with pytest.raises(NotFound):
            bob.neighborhood("Acme")
        with pytest.raises(NotFound):
            bob.entity("Acme")
        assert [f.id for f in bob.facts_about("Alice")] == [theirs.id]
        assert {e.name for e in bob.neighborhood("Alice", hops=3).entities} == {"Alice", "Globex"}
        assert set(bob.graph.facts()) == {theirs.id}
        # Evidence ids do not cross namespaces either.
        with pytest.raises(InvalidInput, match="no evidence") as err:
            bob.add_fact(**works_at(evidence=[], evidence_ids=[evidence_id]))
        assert err.value.field == "evidence_ids.0"
        with pytest.raises(InvalidInput, match="no evidence"):
            bob.add_fact(**works_at(evidence=[], citations=[{"evidence": evidence_id}]))
    with memstore.open(data_dir, namespace="user:alice", hook=memstore.Ungated()) as alice:
        assert alice.get_fact(mine.id).status == "unverified"
        assert [f.id for f in alice.facts_about("Alice")] == [mine.id]


@pytest.mark.parametrize("bad", ["", " ", "user alice", "-x", "a" * 129, "ns\x00", 7])
def test_bad_namespace(data_dir: Path, bad: object) -> None:
    with pytest.raises(InvalidInput) as err:
        memstore.open(data_dir, namespace=bad, hook=memstore.Ungated())  # type: ignore[arg-type]
    assert err.value.field == "namespace"
