"""Request bodies and paths the REST tests share: Alice's namespace and her allergy."""

from __future__ import annotations

ALICE = "/v1/namespaces/user:alice"
BOB = "/v1/namespaces/user:bob"
EVIDENCE = "Alice: I'm allergic to peanuts."
PATIENT = {"name": "Alice", "kind": "person", "role": "patient"}


def allergy_body(food: str, person: dict[str, str] | None = None, evidence: str = EVIDENCE) -> dict:
    """A fact body: Alice (or ``person``) is allergic to ``food``, citing ``evidence``."""
    patient = person or PATIENT
    return {
        "statement": f"{patient['name']} is allergic to {food}.",
        "members": [patient, [food, "food", "allergen"]],
        "relation": "allergic_to",
        "evidence": [evidence],
    }
