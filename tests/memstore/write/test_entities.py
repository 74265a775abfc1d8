"""Entity resolution: one entity per normalized name (and alias) inside a namespace."""

from __future__ import annotations

from pathlib import Path

import pytest
from db_rows import row_counts

import memstore
from memstore import InvalidInput, NotFound, Store, normalize_key


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("Alice", "alice"),
        ("  alice ", "alice"),
        ("ALICE", "alice"),
        ("Alice\u00a0  Smith", "alice smith"),  # no-break space, repeated spaces
        ("\uff21lice", "alice"),  # fullwidth A (NFKC)
        ("Stra\u00dfe", "strasse"),  # case folding, not just lower()
    ],
)
def test_normalize_key(raw: str, key: str) -> None:
    assert normalize_key(raw) == key


def test_spellings_of_one_name_are_one_entity(store: Store) -> None:
    for i, spelling in enumerate(["Alice", " alice ", "ALICE"]):
        store.add_fact(statement=f"Alice said thing {i}.", members=[spelling], evidence=[f"t{i}"])
    assert row_counts(store.url)["entities"] == 1
    entity = store.entity("aLiCe")
    assert entity.name == "Alice"  # the first spelling is kept as the display name
    assert len(store.facts_about("ALICE  ")) == 3


def test_same_name_in_two_namespaces_is_two_entities(data_dir: Path) -> None:
    ids = []
    for ns in ("user:alice", "user:bob"):
        with memstore.open(data_dir, namespace=ns, hook=memstore.Ungated()) as s:
            s.add_fact(statement="Acme exists.", members=["Acme"], evidence=["Acme Inc."])
            ids.append(s.entity("acme").id)
    assert ids[0] != ids[1]


def test_aliases_resolve_to_the_entity(store: Store) -> None:
    store.add_fact(statement="Robert likes tea.", members=["Robert"], evidence=["Robert: tea!"])
    entity = store.add_alias("robert", "Bob")
    assert entity.aliases == ["Robert", "Bob"]
    fact = store.add_fact(
        statement="Bob drinks coffee.", members=[" BOB"], evidence=["Bob: coffee"]
    )
    assert fact.members[0].entity_id == entity.id
    assert len(store.facts_about("bob")) == 2
    assert store.add_alias("Robert", "bob").aliases == ["Robert", "Bob"]  # idempotent


def test_entities_read_by_id_keep_the_order_asked_and_their_aliases_once(store: Store) -> None:
    """``Scope.entities_by_id`` answers in the order of the ids (an id asked twice comes
    twice), each entity with its aliases in the order they were added, read once."""
    store.add_fact(statement="Robert met Ann.", members=["Robert", "Ann"], evidence=["x"])
    store.add_alias("Robert", "Bob")
    robert, ann = store.entity("Robert").id, store.entity("Ann").id
    scope = store._scope
    with scope.session() as session:
        found = scope.entities_by_id(session, [ann, robert, "no-such-id", ann])
    assert [e.id for e in found] == [ann, robert, ann]
    assert [e.aliases for e in found] == [["Ann"], ["Robert", "Bob"], ["Ann"]]


def test_alias_taken_by_another_entity(store: Store) -> None:
    store.add_fact(statement="Robert and Bobby met.", members=["Robert", "Bobby"], evidence=["x"])
    with pytest.raises(InvalidInput, match="already names another entity") as err:
        store.add_alias("Robert", "bobby")
    assert err.value.field == "alias"


def test_alias_of_unknown_entity(store: Store) -> None:
    with pytest.raises(NotFound):
        store.add_alias("Nobody", "Nemo")


def test_two_aliases_of_one_entity_in_one_role_are_rejected(store: Store) -> None:
    store.add_fact(statement="Robert likes tea.", members=["Robert"], evidence=["Robert: tea!"])
    store.add_alias("Robert", "Bob")
    before = row_counts(store.url)
    with pytest.raises(InvalidInput, match="same entity") as err:
        store.add_fact(statement="Bob met Robert.", members=["Bob", "Robert"], evidence=["y"])
    assert err.value.field == "members.1"
    assert row_counts(store.url) == before


def test_entity_kind_is_kept_from_first_sight(store: Store) -> None:
    store.add_fact(statement="Paris is a city.", members=[("Paris", "place", "x")], evidence=["a"])
    store.add_fact(statement="Paris is nice.", members=[("paris", "entity", "y")], evidence=["b"])
    assert store.entity("Paris").kind == "place"
