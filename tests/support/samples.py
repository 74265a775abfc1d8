"""Small valid facts as ``add_fact`` keyword arguments, shared by the store tests."""

from __future__ import annotations


def works_at(person: str = "Alice", company: str = "Acme", **extra: object) -> dict[str, object]:
    """A small valid fact, with its evidence, as add_fact keyword arguments."""
    fact: dict[str, object] = {
        "statement": f"{person} works at {company}.",
        "members": [(person, "person", "employee"), (company, "org", "employer")],
        "relation": "works_at",
        "evidence": [f"{person}: I have worked at {company} since March."],
    }
    fact.update(extra)
    return fact


ALLERGY = "User: just so you know, I'm allergic to peanuts."


def allergy(food: str, **extra: object) -> dict[str, object]:
    """The issue's example fact: the user is allergic to ``food``, on the peanut evidence."""
    fact: dict[str, object] = {
        "statement": f"The user is allergic to {food}.",
        "members": [("user", "person", "patient"), (food, "food", "allergen")],
        "relation": "allergic_to",
        "evidence": [ALLERGY],
    }
    fact.update(extra)
    return fact
