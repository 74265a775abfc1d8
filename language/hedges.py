"""Words that say a thing is only thought, guessed or possible, not known.

The extractor skips a sentence its speaker hedges ("I think it's IT-2305"); the gate
refuses a claim stated plainly from words that hedge it. Both read these lists. A
question tag ("..., right?"), a bare guess ("Could be related."), a want said in the
past ("needed to replace") and a deed only due ("was due on the 20th") are read here
too: what they say is not known to be so, or not done.
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


#: A want, need or plan said in the past ("needed to replace"), done or not.
PAST_WANTING = re.compile(
    r"\b(?:needed|wanted|decided|planned|hoped|tried|meant|had|(?:was|were) going|"
    r"(?:been|was|were)\s+(?:meaning|wanting|hoping|dying|planning|trying))\s+to\b",
    re.I,
)
#: Words that say a thing is set to happen, not that it did ("was due on 20 November").
DUE = frozenset("due scheduled expected planned supposed estimated".split())
#: A statement made a question by a tag ("I pay 1,200 a month, right?").
TAG_QUESTION = re.compile(
    r",\s*(?P<tag>right|correct|yes|no|yeah|true|"
    r"(?:is|are|was|were|do|does|did|have|has|had|can|will|would|should)n't\s+\w+|"
    r"(?:am|is|are|was|were|do|does|did|have|has|can|will)\s+(?:i|you|he|she|it|we|they))"
    r"\s*\?+\s*$",
    re.I,
)
#: What the speaker said before, asked back ("I told you ...").
TOLD = re.compile(r"\s*(?:i|we|\w+)\s+(?:told|said|mentioned)\b", re.I)
#: A quote that is only a guess: it opens with one and has at most this many words.
MAX_GUESS_WORDS = 6
BARE_GUESS = re.compile(
    r"\W*(?:(?:it|that|this)\s+)?(?:could|might|may)\s+be\b(?!\s+(?:better|worse)\b)", re.I
)  # "Could be better." is how one is, not a guess


def hedge(text: str) -> str | None:
    """The hedge ``text`` says (as said: "Omar thinks"), or None."""
    found = HEDGED.search(text)
    return found.group(0) if found else None
