"""Words that say a thing is only thought, guessed or possible, not known.

The extractor skips a sentence its speaker hedges ("I think it's IT-2305"); the gate
refuses a claim stated plainly from words that hedge it. Both read these lists.
"""

from __future__ import annotations

import re

#: Words that leave a statement uncertain wherever they stand.
UNSURE = ("maybe", "perhaps", "might", "probably", "possibly", "supposedly", "apparently")
#: Verbs of belief: "I think ...", "Omar thinks ..." say what someone believes.
BELIEVE = ("think", "guess", "suppose", "wonder", "believe", "doubt")

#: A hedge in words as said: an unsure word, "not sure", or a verb of belief with its
#: subject (the first person read as its speaker: "Omar thinks it's IT-2305").
HEDGED = re.compile(
    r"\b(?:(?i:"
    + "|".join(UNSURE)
    + r"|not sure)|(?:(?i:i|we|you|he|she|they|the user)|[A-Z][\w'-]*)\s+(?i:"
    + "|".join(f"{verb}(?:e?s)?" for verb in BELIEVE)
    + r"))\b",
)

#: What a claim says when it keeps the hedge, or says whose word it is ("Hamid thinks
#: he saw Pixel", "is considering a move", "may be late", "if unpaid", "Maya said ...").
KEPT = re.compile(
    r"\b(?:(?-i:may)|"
    + "|".join(UNSURE)
    + r"|could|would|should|if|unless|whether|likely|unlikely|possible|possibly|unsure|sure"
    + r"|certain|uncertain|undecided|tentative\w*|allegedly|reportedly|roughly|about|around"
    + r"|(?:think|thought|guess|suppos|wonder|believ|doubt|consider|suspect|expect|hop|plan"
    + r"|seem|appear|reckon|feel|felt|estimat|say|said|tell|told|claim|mention|report|hear"
    + r"|heard|assum|imagin|predict)\w*)\b",
    re.I,
)


def hedge(text: str) -> str | None:
    """The hedge ``text`` says (as said: "Omar thinks"), or None."""
    found = HEDGED.search(text)
    return found.group(0) if found else None
