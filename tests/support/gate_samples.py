"""Claims and evidence the verifier tests share, for any backend."""

from __future__ import annotations

from gate import VerdictStatus

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
