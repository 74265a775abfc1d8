"""How a (claim, context) pair becomes the cross-encoder's inputs.

The claim is cut into sentences (``hypotheses``); the context, without item tags
and scrubbed spans, into sentences. Each claim sentence is read against the
evidence sentences that share the most (idf-weighted) content words with it,
packed in document order into about ``EVIDENCE_WORDS`` words, so support spread
over a document is read together. The claim is as supported as its weakest
sentence (AlignScore / MiniCheck style). The training script builds its pairs
with these same functions, so training and inference see the same kind of text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from gate.backends.embedded.features import segments, sentences

#: Evidence words read with one claim sentence: with the sentence, inside 128 word pieces.
EVIDENCE_WORDS = 64

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being
    it its this that these those he she they we you i me my our your his her their them us
    has have had do does did not no so than then there here what which who whom when where
    why how all any both each few more most other some such only own same too very can will
    just should now also into over about after before up down out off again""".split()
)


@dataclass(frozen=True, slots=True)
class Reading:
    """The cross-encoder inputs of one claim: each claim sentence with its evidence."""

    sentences: tuple[str, ...]
    evidence: tuple[str, ...]

    def pairs(self) -> list[tuple[str, str]]:
        """(evidence, sentence) pairs; the evidence is empty where the context has none."""
        return list(zip(self.evidence, self.sentences, strict=True))


_ANAPHOR = re.compile(r"(?:he|she|it|they|his|her|its|their|this|these|those|there)\b", re.I)


def claim_sentences(claim: str) -> list[str]:
    """The claim's sentences (the whole claim when it has no sentence break)."""
    return sentences(claim) or [claim.strip()]


def hypotheses(sents: list[str]) -> list[str]:
    """Each claim sentence as the model reads it.

    A sentence that opens with a pronoun ("He teaches chemistry.") keeps the sentence
    before it, where its referent is; the claim's score is a minimum over sentences,
    so repeating that sentence cannot raise it.
    """
    return [f"{sents[i - 1]} {s}" if i and _ANAPHOR.match(s) else s for i, s in enumerate(sents)]


def content_words(text: str) -> list[str]:
    """Lower-cased words that carry content, cut to six letters ("allergic" ~ "allergies")."""
    return [w[:6] for w in _WORD.findall(text.lower()) if w not in _STOP]


def gather(sentence: str, evidence: list[str], words: int = EVIDENCE_WORDS) -> str:
    """The evidence sentences most about ``sentence``, in document order.

    Sentences are taken best first (idf-weighted shared content words, then
    position) while they fit in ``words`` words. The best one always goes in;
    others that share nothing with ``sentence`` never do.
    """
    if not evidence:
        return ""
    bags = [set(content_words(s)) for s in evidence]
    df = Counter(word for bag in bags for word in bag)
    wanted = set(content_words(sentence))
    n = len(evidence)
    score = [sum(math.log(1 + n / df[w]) for w in sorted(wanted & bag)) for bag in bags]
    chosen: list[int] = []
    total = 0
    for i in sorted(range(n), key=lambda i: (-score[i], i)):
        size = len(evidence[i].split())
        if chosen and (score[i] == 0 or total + size > words):
            continue
        chosen.append(i)
        total += size
    return " ".join(evidence[i] for i in sorted(chosen))


def read(claim: str, context: str, words: int = EVIDENCE_WORDS) -> Reading:
    """The claim's sentences (``hypotheses``), each with the evidence it is read against."""
    sents = hypotheses(claim_sentences(claim))
    evidence = segments(context)
    return Reading(tuple(sents), tuple(gather(s, evidence, words) for s in sents))
