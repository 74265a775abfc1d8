"""The names and words checks: a name or thing the claim holds that the evidence
never mentions, or mentions of something else."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from gate.checks.common import Effect, Finding, is_named, shortened, squash
from language.parsing import Reading
from language.people import overlaps
from language.values import CALENDAR_WORDS, codes, values


def name_findings(claim: Reading, evidence: str) -> list[Finding]:
    """Every person, place or thing the claim names must be named in the evidence. A
    missing subject only holds the claim where the evidence may name it by a pronoun
    ("She moved to Leeds" for "Maya moved to Leeds")."""
    low = evidence.lower()
    found = []
    for name in claim.names:
        if is_named(name, low) or name.lower() in CALENDAR_WORDS:
            continue
        subject = any(overlaps(name, s) for s in claim.subjects)
        effect: Effect = "doubt" if subject and _PRONOUN.search(evidence) else "refute"
        found.append(Finding("names", effect, f"the evidence never mentions {name}"))
    named_codes = dict.fromkeys(codes(claim.text))
    squashed = squash(evidence) if named_codes else ""  # most claims name no code
    for code in named_codes:
        if any(
            squash(name) in squash(code) or squash(code) in squash(name) for name in claim.names
        ):
            continue  # a name, read above ("COVID-19", which "covid" names)
        if not _gives(code, evidence, squashed):
            found.append(Finding("names", "refute", f"the evidence never mentions {code}"))
    return found


def _gives(code: str, evidence: str, squashed: str) -> bool:
    """Whether the evidence gives ``code``, written any way: its letters and digits in
    a row ("AY 1652", "2.13.2" for "v2.13.2"), or its number of three digits or more
    alone ("#4471" for "T-4471")."""
    if squash(code) in squashed or squash(code.lstrip("vV")) in squashed:
        return True
    digits = re.sub(r"\D", "", code)
    if len(digits) < 3 or not code.replace("-", "").rstrip("0123456789").isalpha():
        return False  # a version's digits, or "23H2", say nothing alone
    return re.search(rf"(?<![\d.,]){digits}(?![\d.,]\d)", evidence) is not None


_PRONOUN = re.compile(r"\b(?:he|she|they|him|her|them|his|hers|their|it|its)\b", re.I)


def word_findings(
    claim: Reading, evidence: str, sentences: list[Reading], about: Reading | None
) -> list[Finding]:
    """Support where one sentence holds every content word of the claim; doubt where
    the claim has words the evidence never uses."""
    everywhere = frozenset().union(*(s.lemmas for s in sentences)) if sentences else frozenset()
    low = evidence.lower()
    missing = sorted(w for w in claim.lemmas if w not in everywhere and w not in low)
    swapped = _substituted(claim, about, missing)
    if swapped is not None:
        said, claimed = swapped
        return [Finding("things", "doubt", f"the evidence says {said}, not {claimed}")]
    if missing:
        return [Finding("words", "doubt", f"the evidence never uses {', '.join(missing[:3])}")]
    if about is not None and claim.lemmas <= about.lemmas | _value_words(about.text):
        return [Finding("words", "support", f'the evidence states it: "{shortened(about.text)}"')]
    return []


def _substituted(
    claim: Reading, about: Reading | None, missing: list[str]
) -> tuple[str, str] | None:
    """(the evidence's words, the claim's) where the claim is the sentence it is about
    with one thing put in another's place ("allergic to shellfish" against "allergic to
    peanuts"): aligned word by word, every word of the claim is the sentence's but one
    run of at most two, the run holds the one word the evidence never uses, and the
    sentence has other words in its place."""
    if about is None or len(missing) != 1 or _timely(missing[0]):
        return None
    ours, theirs = list(claim.order), list(about.order)
    swaps = []
    for op, a1, a2, b1, b2 in SequenceMatcher(None, ours, theirs, autojunk=False).get_opcodes():
        if op in ("delete", "replace") and any(w.isalnum() for w in ours[a1:a2]):
            if op == "delete" or a2 - a1 > 2 or b2 - b1 > 3:
                return None
            swaps.append((theirs[b1:b2], ours[a1:a2], about.tokens[b1:b2], claim.tokens[a1:a2]))
    if len(swaps) != 1 or missing[0] not in swaps[0][1] or any(_timely(w) for w in swaps[0][0]):
        return None
    return " ".join(swaps[0][2]), " ".join(swaps[0][3])


#: Words of time, which the values check reads (a day is not a thing put in another's place).
_TIME_WORDS = frozenset(
    "day week month year morning afternoon evening night weekend hour minute time today "
    "tomorrow yesterday".split()
)


def _timely(lemma: str) -> bool:
    return lemma in _TIME_WORDS or lemma in CALENDAR_WORDS or lemma.rstrip("s") in CALENDAR_WORDS


def _value_words(text: str) -> frozenset[str]:
    return frozenset(v.canonical for v in values(text))
