"""Claims and evidence the verifier tests share, and checks that hold for any backend."""

from __future__ import annotations

import pytest

from gate import Citation, ContextItem, Gate, VerdictStatus, VerifierBackend

ALLERGY = ["User: just so you know, I'm allergic to peanuts."]
REJECTED = {VerdictStatus.UNSUPPORTED, VerdictStatus.CONTRADICTED}
OTHER_FOODS = ("shellfish", "milk", "eggs", "wheat", "soy", "fish", "tree nuts", "pollen")

#: A supported claim, a swapped employer and a changed number, for any backend.
REPEATABILITY_PAIRS = [
    ("The user is allergic to peanuts.", "[1] " + ALLERGY[0]),
    ("Alice works at Acme.", "[1] Alice: I have worked at Acme since March."),
    ("Alice works at Initech.", "[1] Alice: I have worked at Acme since March."),
    ("The meeting is at 3 pm.", "[m] The meeting moved to 5 pm on Friday."),
]


def repeatable_estimates(backend: VerifierBackend, tolerance: float) -> list[float]:
    """``backend``'s estimates for ``REPEATABILITY_PAIRS``, checked to be probabilities
    that match one-by-one estimates (within ``tolerance``) and a second batch."""
    batched = backend.estimate_many(REPEATABILITY_PAIRS)
    single = [backend.estimate(claim, context) for claim, context in REPEATABILITY_PAIRS]
    assert batched == pytest.approx(single, abs=tolerance), (batched, single)
    again = backend.estimate_many(REPEATABILITY_PAIRS)
    assert again == pytest.approx(batched, abs=1e-9), (again, batched)
    assert all(0.0 < p < 1.0 for p in batched), batched
    return batched


def scrubbed_support(backend: VerifierBackend) -> tuple[float, float]:
    """The gate's (p0, p1) for the peanut claim citing its sentence of a longer text:
    p0 with that sentence scrubbed, p1 with it."""
    text = "I grew up in Porto. I'm allergic to peanuts. My sister lives in Lisbon."
    start = text.index("I'm allergic")
    end = text.index("My sister")
    verdict = Gate(backend).check(
        "The user is allergic to peanuts.",
        [ContextItem("m1", text)],
        citations=[Citation("m1", start, end)],
    )
    assert verdict.p1 is not None and verdict.p0 is not None
    return verdict.p0, verdict.p1


#: The specification's decision table alone (``gate.REFUSE_UNGROUNDED``) as settings:
#: for tests of the fronts' refusal paths (exit 3, HTTP 422, an MCP refusal), which the
#: default gate's three outcomes would make held facts. The fronts' held facts have
#: their own tests.
REFUSE_UNGROUNDED_GATE = {
    "memory_gate": {"reject_unsupported": True, "checks": False, "verify_p1": 0.0}
}
#: The same, as environment variables for a CLI or server process.
REFUSE_UNGROUNDED_ENV = {
    "MEMSTORE_HALLUCINATION__MEMORY_GATE__REJECT_UNSUPPORTED": "true",
    "MEMSTORE_HALLUCINATION__MEMORY_GATE__CHECKS": "false",
    "MEMSTORE_HALLUCINATION__MEMORY_GATE__VERIFY_P1": "0",
}
