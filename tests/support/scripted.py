"""Rules in place of models, for tests whose outcomes must not depend on one: a
verifier that reads content words, an extractor that mishears."""

from __future__ import annotations

import re
from collections.abc import Sequence

from gate.evidence import REMOVED
from memstore.conversations import Candidate, Message


def supports_its_own_words(claim: str, context: str) -> float:
    """A verifier that reads only the overlap of content words (a rule, not a model):
    high where every content word of the claim is in the context, low otherwise."""
    words = {w for w in re.findall(r"[a-z]+", claim.lower()) if len(w) > 3}
    seen = set(re.findall(r"[a-z]+", context.replace(REMOVED, " ").lower()))
    stems = {w[:4] for w in seen}
    found = sum(w in seen or w[:4] in stems for w in words)
    return 0.97 if found == len(words) else 0.05


def states(claim: str, context: str) -> float:
    """High when the context holds the claim's words (so scrubbing them lowers it), else low."""
    return 0.97 if claim.rstrip(".!?").lower() in context.lower() else 0.1


class Mishearing:
    """An extractor that gets the object wrong, as an LLM can ("peanuts" -> "shellfish")."""

    name = "mishearing"

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        return [
            Candidate(
                "Alice is allergic to shellfish.",
                (("Alice", "person", "subject"), ("shellfish", "food", "allergen")),
                0,
                messages[0].content,
            )
        ]
