"""Claim/evidence features of the embedded verifier: embedding alignment plus lexical checks.

Pure functions over text and unit-norm sentence embeddings; no model is loaded
here. ``[EVIDENCE REMOVED]`` markers and the ``[id]`` tags of rendered context
are dropped, so scrubbed evidence contributes nothing.

The cost of a pair is bounded whatever the evidence's length: lexical features read
every segment (cheap), but only ``MAX_SCORED_SEGMENTS`` segments per claim, those
sharing the most words with it, are embedded and compared with the claim.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gate.evidence import REMOVED

Vector = npt.NDArray[np.float32]

FEATURES: tuple[str, ...] = (
    "cos_max",
    "cos_weakest_sentence",
    "cos_top3",
    "lex_recall",
    "lex_missing",
    "lex_recall_near",
    "bigram_recall",
    "numbers_missing",
    "names_missing",
    "negation_mismatch",
    "claim_length",
    "has_context",
    "lex_missing_near",
    "lex_all_found",
    "lex_missing_long",
)

_ITEM_TAG = re.compile(r"^\[[^\]\n]{1,64}\]\s*", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:[.,:/]\d+)*%?")
_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
_NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "twenty": "20",
    "hundred": "100",
    "thousand": "1000",
}
_NEGATIONS = frozenset(
    "no not never none nobody nothing neither nor without cannot can't won't don't doesn't "
    "didn't isn't aren't wasn't weren't hasn't haven't hadn't shouldn't wouldn't couldn't "
    "n't".split()
)
_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves s t d ll m re ve y i'm it's that's there's he's she's they're we're you're
    i've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll
    they'll let's get got like well yes yeah oh um uh okay ok really know think just so
    say said says""".split()
)
_MAX_SEGMENT_CHARS = 600
#: Evidence segments embedded per claim (the ones sharing most content words with it).
MAX_SCORED_SEGMENTS = 16


@dataclass(frozen=True, slots=True)
class Pieces:
    """One (claim, context) pair cut up; ``scored`` indexes the segments to embed."""

    claim: str
    claim_sentences: tuple[str, ...]
    segments: tuple[str, ...]
    scored: tuple[int, ...]

    def texts(self) -> list[str]:
        """The texts that need embeddings."""
        return [self.claim, *self.claim_sentences, *(self.segments[i] for i in self.scored)]


def split(claim: str, context: str, max_scored: int = MAX_SCORED_SEGMENTS) -> Pieces:
    """Cut a pair into the claim, its sentences and the context's segments, and pick
    the at most ``max_scored`` segments to embed."""
    segs = tuple(segments(context))
    return Pieces(claim.strip(), tuple(sentences(claim)), segs, pick(claim, segs, max_scored))


def pick(claim: str, segs: Sequence[str], limit: int) -> tuple[int, ...]:
    """Indices, in document order, of the at most ``limit`` segments that share the most
    content words with ``claim`` (earlier ones first among equals)."""
    if len(segs) <= limit:
        return tuple(range(len(segs)))
    wanted = {_stem(w) for w in _content(claim)}
    shared = [len(wanted & {_stem(w) for w in _content(s)}) for s in segs]
    best = sorted(range(len(segs)), key=lambda i: (-shared[i], i))[: max(1, limit)]
    return tuple(sorted(best))


def segments(context: str) -> list[str]:
    """Context sentences, without item tags and scrubbed spans; long ones cut."""
    text = _ITEM_TAG.sub("", context).replace(REMOVED, "\n")
    out: list[str] = []
    for sent in sentences(text):
        while len(sent) > _MAX_SEGMENT_CHARS:
            cut = sent.rfind(" ", 0, _MAX_SEGMENT_CHARS)
            cut = cut if cut > 0 else _MAX_SEGMENT_CHARS
            out.append(sent[:cut])
            sent = sent[cut:].strip()
        if sent:
            out.append(sent)
    return out


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` that hold at least one word."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and _WORD.search(s)]


def featurize(pieces: Pieces, embed: Callable[[str], Vector]) -> list[float]:
    """The feature vector (in ``FEATURES`` order) of one pair."""
    segs = pieces.segments
    claim_words = _content(pieces.claim)
    n_claim = max(1, len(claim_words))
    claim_stems = [_stem(w) for w in claim_words]
    # Each segment is tokenized and stemmed once; the context is their concatenation.
    seg_stems = [[_stem(w) for w in _content(s)] for s in segs]
    if not segs:
        return [
            *(0.0, 0.0, 0.0, 0.0, math.log1p(len(claim_words)), 0.0, 0.0),
            *_missing_counts(pieces.claim, ""),
            *(0.0, math.log(n_claim), 0.0),
            *_lexical_window(claim_stems, []),
        ]
    scored = pieces.scored or tuple(range(len(segs)))
    seg_matrix = np.stack([embed(segs[i]) for i in scored])
    claim_cos = seg_matrix @ embed(pieces.claim)
    best_scored = int(np.argmax(claim_cos))
    best = scored[best_scored]  # its place in the document, for the window around it
    top = np.sort(claim_cos)[::-1][:3]
    weakest = min(
        (float(np.max(seg_matrix @ embed(s))) for s in pieces.claim_sentences),
        default=float(claim_cos[best_scored]),
    )
    context_stems = [stem for stems in seg_stems for stem in stems]
    stems = set(context_stems)
    found = [s in stems for s in claim_stems]
    window = slice(max(0, best - 1), best + 2)
    near_stems = {stem for stems in seg_stems[window] for stem in stems}
    return [
        float(claim_cos[best_scored]),
        weakest,
        float(np.mean(top)),
        sum(found) / n_claim,
        math.log1p(len(found) - sum(found)),
        sum(s in near_stems for s in claim_stems) / n_claim,
        _bigram_recall(claim_stems, context_stems),
        *_missing_counts(pieces.claim, " ".join(segs)),
        float(_negated(pieces.claim) != _negated(" ".join(segs[window]))),
        math.log(n_claim),
        1.0,
        *_lexical_window(claim_stems, [set(stems) for stems in seg_stems]),
    ]


def _lexical_window(claim_stems: list[str], seg_stems: Sequence[set[str]]) -> list[float]:
    """Claim words missing from the lexically best window (3 segments) and from everything."""
    everything = set().union(*seg_stems) if seg_stems else set()
    missing_long = math.log1p(sum(s not in everything and len(s) >= 5 for s in claim_stems))
    if not seg_stems:
        return [math.log1p(len(claim_stems)), 0.0, missing_long]
    wanted = set(claim_stems)
    best = max(range(len(seg_stems)), key=lambda i: len(wanted & seg_stems[i]))
    near = set().union(*seg_stems[max(0, best - 1) : best + 2])
    return [
        math.log1p(sum(s not in near for s in claim_stems)),
        float(all(s in everything for s in claim_stems)),
        missing_long,
    ]


#: The embedding-free checks of ``lexical_checks``, in order.
LEXICAL_CHECKS: tuple[str, ...] = (
    "lex_recall",
    "lex_missing",
    "bigram_recall",
    "numbers_missing",
    "names_missing",
    "negation_mismatch",
    "lex_missing_near",
    "lex_all_found",
    "lex_missing_long",
)


def lexical_checks(claim: str, context: str) -> list[float]:
    """What of the claim the context never says, without embeddings (``LEXICAL_CHECKS``).

    The claim's content words, bigrams, numbers and names looked up in the context's
    segments (scrubbed spans and item tags dropped), and whether one side is negated
    where the other is not (against the segments around the lexically best one).
    """
    segs = segments(context)
    claim_stems = [_stem(w) for w in _content(claim)]
    n_claim = max(1, len(claim_stems))
    seg_stems = [[_stem(w) for w in _content(s)] for s in segs]
    context_stems = [stem for stems in seg_stems for stem in stems]
    known = set(context_stems)
    found = sum(s in known for s in claim_stems)
    window = _negation_window(claim_stems, seg_stems)
    return [
        found / n_claim,
        math.log1p(len(claim_stems) - found),
        _bigram_recall(claim_stems, context_stems) if segs else 0.0,
        *_missing_counts(claim, " ".join(segs)),
        float(bool(segs) and _negated(claim) != _negated(" ".join(segs[window]))),
        *_lexical_window(claim_stems, [set(stems) for stems in seg_stems]),
    ]


def _negation_window(claim_stems: list[str], seg_stems: Sequence[list[str]]) -> slice:
    """The segment sharing most claim words (earliest among equals) and its neighbours."""
    if not seg_stems:
        return slice(0, 0)
    wanted = set(claim_stems)
    best = max(range(len(seg_stems)), key=lambda i: (len(wanted & set(seg_stems[i])), -i))
    return slice(max(0, best - 1), best + 2)


def feature_matrix(
    all_pieces: Sequence[Pieces], embed: Callable[[str], Vector]
) -> npt.NDArray[np.float64]:
    """Features of many pairs, one row each."""
    return np.array([featurize(p, embed) for p in all_pieces], dtype=np.float64).reshape(
        len(all_pieces), len(FEATURES)
    )


def _content(text: str) -> list[str]:
    words = (w.lower().strip("'\u2019-") for w in _WORD.findall(text))
    return [_NUMBER_WORDS.get(w, w) for w in words if w and w not in _STOPWORDS]


def _stem(word: str) -> str:
    """Truncation stemming: "allergic" and "allergies" share "allerg"."""
    if word[0].isdigit():
        return word.replace(",", "")
    return word[:6] if len(word) > 6 else word.removesuffix("s")


def _bigram_recall(claim: list[str], context: list[str]) -> float:
    pairs = list(itertools.pairwise(claim))
    if not pairs:
        return 1.0
    known = set(itertools.pairwise(context))
    return sum(p in known for p in pairs) / len(pairs)


def _missing_counts(claim: str, context: str) -> list[float]:
    """log1p of the claim's numbers and names that the context never mentions."""
    context_numbers = {n.replace(",", "") for n in _NUMBER.findall(context)}
    context_numbers |= {
        _NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", context.lower()) if w in _NUMBER_WORDS
    }
    claim_numbers = {n.replace(",", "") for n in _NUMBER.findall(claim)}
    claim_numbers |= {
        _NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", claim.lower()) if w in _NUMBER_WORDS
    }
    lowered = context.lower()
    names = {
        w.lower()
        for sent in sentences(claim)
        for w in _WORD.findall(sent)[1:]
        if w[0].isupper() and w.lower() not in _STOPWORDS
    }
    return [
        math.log1p(len(claim_numbers - context_numbers)),
        math.log1p(sum(name not in lowered for name in names)),
    ]


def _negated(text: str) -> bool:
    """An odd number of negation words."""
    words = re.findall(r"[a-z]+n't|[a-z]+", text.lower().replace("\u2019", "'"))
    count = sum(w in _NEGATIONS or w.endswith("n't") for w in words)
    return count % 2 == 1
