"""A seeded, synthetic but realistic store: memories an agent keeps about a world.

    from synthetic import World
    world = World(facts=10_000, seed=7)
    for batch in world.batches(1_000): store.add_facts(batch)

Entities (people, places, organisations, foods, projects, events) are drawn with
Zipf-distributed popularity within their kind, so a few are members of many facts
and most of few. Each fact links 2-4 of them; its evidence is a conversation turn
or note that states it in other words, and 1-3 consecutive facts share one turn
(as one message often yields several memories), so the store holds about half as
many evidence texts as facts. Queries, entity picks and 2-hop seeds come from the
same seeded generator.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

#: Zipf exponent of entity popularity within a kind.
ZIPF_S = 1.1

FIRST = (
    "Amara Bruno Chen Dalia Emeka Farah Goran Hana Ines Jonas Kenji Lena Mateo Nadia Omar "
    "Priya Quinn Rosa Sven Tariq Uma Viktor Wren Ximena Yusuf Zofia Aiko Bela Caio Dmitri"
).split()
LAST = (
    "Okafor Larsen Novak Rossi Silva Kim Weber Dubois Haddad Ivanova Mendes Sato Brennan "
    "Castillo Adeyemi Lindqvist Moreau Petrov Quispe Rahman"
).split()
PLACE_A = "North South East West Old New Upper Lower Port Lake".split()
PLACE_B = "haven field ridge brook ford wick stead mouth gate moor".split()
ORG_A = "Lumen Cobalt Meridian Atlas Juniper Vertex Harbor Quill Nimbus Ember".split()
ORG_B = "Labs Systems Health Foods Logistics Studio Bank Press Robotics Clinic".split()
FOODS = (
    "peanuts shellfish sesame gluten lactose walnuts kiwi soy eggs mustard celery lupin "
    "sushi ramen falafel paella pho risotto tacos curry dumplings goulash"
).split()
PROJECT_A = "Apollo Borealis Cinder Delta Echo Falcon Granite Helix Iris Jade".split()
PROJECT_B = "migration launch audit redesign rollout study pilot review".split()
EVENT_A = "spring summer autumn winter harvest lantern river film jazz book".split()
EVENT_B = "festival fair retreat summit marathon workshop reunion concert".split()
MONTHS = "January February March April May June July August September October".split()

KINDS = {  # kind: share of entities
    "person": 0.55,
    "place": 0.12,
    "org": 0.12,
    "food": 0.03,
    "project": 0.1,
    "event": 0.08,
}


def _names(kind: str, count: int, rng: random.Random) -> list[str]:
    """``count`` distinct names of ``kind`` (a numbered suffix once the parts run out)."""
    parts = {
        "person": (FIRST, LAST),
        "place": (PLACE_A, PLACE_B),
        "org": (ORG_A, ORG_B),
        "project": (PROJECT_A, PROJECT_B),
        "event": (EVENT_A, EVENT_B),
    }
    if kind == "food":
        base = list(FOODS)
    else:
        a, b = parts[kind]
        join = "" if kind == "place" else " "
        base = [f"{x}{join}{y}" for x in a for y in b]
    rng.shuffle(base)
    if kind == "food":  # a fixed vocabulary: many people share the same few foods
        return base
    if kind == "person" and count > len(base):  # middle initials before numbers
        base += [
            f"{f} {chr(65 + i)}. {g}" for f, g in (n.split(" ", 1) for n in base) for i in range(26)
        ]
    out = list(base[:count])
    n = 2
    while len(out) < count:
        out.extend(f"{name} {n}" for name in base[: count - len(out)])
        n += 1
    return out


# Templates: (relation, slot kinds, statement, evidence). Evidence states the fact in
# other words, as a person or a note would; {m} is a month, {y} a year.
TEMPLATES: list[tuple[str, tuple[str, ...], str, str]] = [
    ("lives_in", ("person", "place"), "{0} lives in {1}.",
     "{0}: we moved to {1} back in {y} and I still live there."),
    ("works_at", ("person", "org"), "{0} works at {1}.",
     "{0} said she has been working at {1} since {m} {y}."),
    ("allergic_to", ("person", "food"), "{0} is allergic to {1}.",
     "{0}: please no {1} at dinner, I'm allergic to it."),
    ("likes", ("person", "food"), "{0} loves {1}.",
     "{0} told me {1} is their favourite food."),
    ("friends_with", ("person", "person"), "{0} and {1} are friends.",
     "{0}: {1} and I have been close friends since {y}."),
    ("leads", ("person", "project"), "{0} leads the {1} project.",
     "Note from {m} {y}: {0} is the lead on {1}."),
    ("met_at", ("person", "person", "event"), "{0} met {1} at the {2}.",
     "{0}: I first met {1} at the {2} in {m}."),
    ("works_on", ("person", "project", "org"), "{0} works on {1} for {2}.",
     "{0} mentioned that {2} put them on the {1} team in {m}."),
    ("based_in", ("org", "place"), "{0} is based in {1}.",
     "{0} has had its head office in {1} since {y}."),
    ("moved_to", ("person", "org", "place"), "{0} moved to {2} to join {1}.",
     "{0}: I relocated to {2} in {y} when {1} hired me."),
    ("trip", ("person", "person", "person", "place"),
     "{0}, {1} and {2} are planning a trip to {3}.",
     "{0}: {1}, {2} and I booked our trip to {3} for {m}."),
    ("attended", ("person", "person", "org", "event"), "{0} and {1} from {2} attended the {3}.",
     "Calendar, {m} {y}: {0} and {1} ({2}) went to the {3}."),
]  # fmt: skip


@dataclass(frozen=True)
class World:
    """``facts`` synthetic memories over about ``facts / 3`` entities, seeded."""

    facts: int
    seed: int = 7

    @cached_property
    def entities(self) -> dict[str, list[str]]:
        rng = random.Random(self.seed)
        total = max(len(KINDS) * 4, self.facts // 3)
        return {
            kind: _names(kind, max(4, int(total * share)), rng) for kind, share in KINDS.items()
        }

    def items(self) -> Iterator[dict[str, Any]]:
        """The facts, as ``Store.add_facts`` takes them, in a stable order."""
        names = self.entities
        cdfs = {kind: np.cumsum(_zipf(len(pool))) for kind, pool in names.items()}
        rng = np.random.default_rng(self.seed)
        made = 0
        while made < self.facts:
            turn = min(int(rng.integers(1, 4)), self.facts - made)
            facts = [self._fact(rng, names, cdfs) for _ in range(turn)]
            text = " ".join(ev for _, ev in facts)
            for fact, _ in facts:
                yield {**fact, "evidence": [text]}
            made += turn

    def batches(self, size: int) -> Iterator[list[dict[str, Any]]]:
        batch: list[dict[str, Any]] = []
        for item in self.items():
            batch.append(item)
            if len(batch) == size:
                yield batch
                batch = []
        if batch:
            yield batch

    def popular(self, kind: str, count: int, seed: int = 0) -> list[str]:
        """``count`` entity names of ``kind`` drawn by popularity (Zipf), seeded."""
        pool = self.entities[kind]
        rng = np.random.default_rng(self.seed + 1000 + seed)
        return [pool[i] for i in rng.choice(len(pool), size=count, p=_zipf(len(pool)))]

    def queries(self, count: int, seed: int = 0) -> list[str]:
        """Questions an agent would ask of this memory, about popular entities."""
        people = self.popular("person", count, seed)
        rng = random.Random(self.seed + seed)
        forms = [
            "where does {} live",
            "who does {} work for",
            "what is {} allergic to",
            "which projects is {} working on",
            "who are {}'s friends",
            "when did {} travel and with whom",
        ]
        return [rng.choice(forms).format(person) for person in people]

    def _fact(
        self,
        rng: np.random.Generator,
        names: dict[str, list[str]],
        cdfs: dict[str, np.ndarray],
    ) -> tuple[dict[str, Any], str]:
        relation, kinds, statement, evidence = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
        chosen: list[str] = []
        for kind in kinds:
            pool = names[kind]
            while True:  # members are distinct
                i = int(np.searchsorted(cdfs[kind], rng.random() * cdfs[kind][-1]))
                name = pool[min(i, len(pool) - 1)]
                if name not in chosen:
                    break
            chosen.append(name)
        when = {"m": MONTHS[int(rng.integers(len(MONTHS)))], "y": int(rng.integers(1995, 2026))}
        members = [
            (name, kind, f"{kind}{i}" if kinds.count(kind) > 1 else kind)
            for i, (name, kind) in enumerate(zip(chosen, kinds, strict=True))
        ]
        fact = {
            "statement": statement.format(*chosen, **when),
            "members": members,
            "relation": relation,
        }
        return fact, evidence.format(*chosen, **when)


def _zipf(n: int, s: float = ZIPF_S) -> np.ndarray:
    """Probabilities proportional to 1 / rank**s over ``n`` items."""
    w = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    return w / w.sum()
