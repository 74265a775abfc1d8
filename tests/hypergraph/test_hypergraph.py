"""hypergraph queries checked against small hand-built graphs and a brute-force reference."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hypergraph import HyperGraph

T2020 = datetime(2020, 1, 1, tzinfo=UTC)
T2022 = datetime(2022, 1, 1, tzinfo=UTC)
T2024 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture
def office() -> HyperGraph:
    """alice-acme (works_at), acme-berlin (based_in, until 2022), acme-munich (based_in,
    from 2022), bob-acme-carol (meeting: a 3-ary fact), dave alone with eve."""
    g = HyperGraph()
    g.add_fact("f1", [("alice", "employee"), ("acme", "employer")], relation="works_at")
    g.add_fact("f2", [("acme", "company"), ("berlin", "city")], relation="based_in", valid_to=T2022)
    g.add_fact(
        "f3", [("acme", "company"), ("munich", "city")], relation="based_in", valid_from=T2022
    )
    g.add_fact("f4", [("bob", "host"), ("acme", "place"), ("carol", "guest")], relation="meeting")
    g.add_fact("f5", [("dave", "a"), ("eve", "b")], relation="knows")
    return g


def test_facts_of_and_members(office: HyperGraph) -> None:
    assert office.facts_of("acme") == {"f1", "f2", "f3", "f4"}
    assert office.facts_of("acme", relation="based_in") == {"f2", "f3"}
    assert office.facts_of("acme", role="employer") == {"f1"}
    assert office.facts_of("nobody") == set()
    assert sorted(office.members("f4")) == [("acme", "place"), ("bob", "host"), ("carol", "guest")]
    assert len(office) == 5


def test_as_of_uses_half_open_validity(office: HyperGraph) -> None:
    assert office.facts_of("acme", relation="based_in", as_of=T2020) == {"f2"}
    assert office.facts_of("acme", relation="based_in", as_of=T2022) == {"f3"}
    assert office.facts_of("acme", relation="based_in", as_of=T2024) == {"f3"}


def test_neighborhood_hops(office: HyperGraph) -> None:
    one = office.neighborhood("alice", 1)
    assert one.entities == {"alice", "acme"}
    assert one.facts == {"f1"}
    two = office.neighborhood("alice", 2)
    assert two.entities == {"alice", "acme", "berlin", "munich", "bob", "carol"}
    assert two.facts == {"f1", "f2", "f3", "f4"}
    assert two.distance["carol"] == 2
    assert office.neighborhood("alice", 0).facts == frozenset()
    assert office.neighborhood(["alice", "dave"], 1).entities == {"alice", "acme", "dave", "eve"}


def test_neighborhood_filters(office: HyperGraph) -> None:
    assert office.neighborhood("alice", 2, relation="works_at").entities == {"alice", "acme"}
    at_2020 = office.neighborhood("acme", 1, relation="based_in", as_of=T2020)
    assert at_2020.entities == {"acme", "berlin"}
    assert at_2020.facts == {"f2"}


def test_linking_and_connection(office: HyperGraph) -> None:
    assert office.linking(["bob", "carol"]) == {"f4"}
    assert office.linking(["acme", "munich"]) == {"f3"}
    assert office.linking(["alice", "carol"]) == set()
    assert office.connection("alice", "carol") == ["alice", "f1", "acme", "f4", "carol"]
    assert office.connection("alice", "dave") is None
    assert office.connection("alice", "carol", relation="works_at") is None
    assert office.connection("alice", "berlin", as_of=T2024) is None


def test_remove_fact_drops_orphan_entities(office: HyperGraph) -> None:
    assert office.remove_fact("f5")
    assert not office.has_entity("dave")
    assert not office.remove_fact("f5")
    assert office.remove_fact("f2")
    assert not office.has_entity("berlin")
    assert office.has_entity("acme")
    assert len(office) == 3


def test_entity_in_two_roles_of_one_fact() -> None:
    g = HyperGraph()
    g.add_fact("f", [("alice", "admirer"), ("alice", "admired")])
    assert sorted(g.members("f")) == [("alice", "admired"), ("alice", "admirer")]
    assert g.facts_of("alice", role="admired") == {"f"}


def test_subgraph_and_export(office: HyperGraph) -> None:
    sub = office.subgraph(["f2", "f4", "missing"])
    assert set(sub.facts()) == {"f2", "f4"}
    assert set(sub.entities()) == {"acme", "berlin", "bob", "carol"}
    data = sub.to_dict()
    assert [f["id"] for f in data["facts"]] == ["f2", "f4"]
    assert data["facts"][0]["valid_to"] == T2022.isoformat()
    assert {"entity": "carol", "role": "guest"} in data["facts"][1]["members"]
    bipartite = sub.to_networkx()
    assert bipartite.number_of_nodes() == 6 and bipartite.number_of_edges() == 5
    assert bipartite.edges[("entity", "carol"), ("fact", "f4")]["roles"] == ("guest",)


def test_add_fact_without_members_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one member"):
        HyperGraph().add_fact("f", [])


def _brute_force_distances(facts: dict[str, set[str]], seed: str, hops: int) -> dict[str, int]:
    """Entity distances by repeated expansion through shared facts."""
    dist = {seed: 0}
    frontier = {seed}
    for step in range(1, hops + 1):
        reached = {e for members in facts.values() if members & frontier for e in members}
        frontier = reached - dist.keys()
        dist.update({e: step for e in frontier})
    return dist


fact_lists = st.dictionaries(
    keys=st.text("fgh", min_size=1, max_size=3),
    values=st.sets(st.sampled_from("abcdefghij"), min_size=1, max_size=4),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(facts=fact_lists, hops=st.integers(0, 4), seed=st.sampled_from("abcdefghij"))
def test_neighborhood_matches_brute_force(facts: dict[str, set[str]], hops: int, seed: str) -> None:
    g = HyperGraph()
    for fact_id, members in facts.items():
        g.add_fact(fact_id, [(m, "r") for m in members])
    expected = _brute_force_distances(facts, seed, hops) if g.has_entity(seed) else {}
    hood = g.neighborhood(seed, hops)
    assert hood.distance == expected
    traversed = {
        f for f, members in facts.items() if any(expected.get(m, hops) < hops for m in members)
    }
    assert hood.facts == traversed


@settings(max_examples=150, deadline=None)
@given(
    facts=fact_lists,
    hops=st.integers(0, 4),
    seed=st.sampled_from("abcdefghij"),
    max_facts=st.integers(0, 12),
)
def test_a_bounded_neighborhood_keeps_the_first_facts_by_hop_then_rank(
    facts: dict[str, set[str]], hops: int, seed: str, max_facts: int
) -> None:
    """With ``max_facts`` the walk keeps the first facts of the whole neighborhood in its
    order (hop, then rank highest first: here the id), and says whether it left any out."""
    g = HyperGraph()
    for fact_id, members in facts.items():
        g.add_fact(fact_id, [(m, "r") for m in members])
    whole = g.neighborhood(seed, hops)
    kept = g.neighborhood(seed, hops, max_facts=max_facts)
    by_id = sorted(whole.facts, reverse=True)
    order = sorted(by_id, key=lambda f: whole.fact_distance[f])  # stable: ids stay descending
    assert kept.facts == set(order[:max_facts])
    assert kept.complete == (len(whole.facts) <= max_facts)
    assert kept.fact_distance == {f: whole.fact_distance[f] for f in kept.facts}
    reached = {m for f in kept.facts for m in facts[f]} | ({seed} & whole.entities)
    assert kept.entities == reached
    assert kept.distance == {e: whole.distance[e] for e in reached}


def test_a_bounded_neighborhood_ranks_by_the_given_key(office: HyperGraph) -> None:
    newest = {"f2": 2, "f3": 3, "f4": 1}
    hood = office.neighborhood(
        "acme", 1, max_facts=2, rank=lambda fact_id, attrs: newest.get(str(fact_id), 0)
    )
    assert hood.facts == {"f2", "f3"} and not hood.complete
    assert hood.fact_distance == {"f2": 1, "f3": 1}
    with pytest.raises(ValueError, match="max_facts"):
        office.neighborhood("acme", 1, max_facts=-1)
