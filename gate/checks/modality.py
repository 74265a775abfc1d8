"""The modality and hedged checks: a deed only wanted, possible or due, where the
claim says it was done; a claim resting on a guess or a question."""

from __future__ import annotations

import re

from gate.checks.common import LIGHT, Finding, shortened
from language.hedges import (
    BARE_GUESS,
    DUE,
    HEDGED,
    KEPT,
    MAX_GUESS_WORDS,
    PAST_WANTING,
    TAG_QUESTION,
    TOLD,
)
from language.parsing import Reading, denies


def modality_findings(
    claim: Reading, sentences: list[Reading], quoted: list[Reading], cites: list[Reading]
) -> list[Finding]:
    """The claim says its verb was done or holds ("Legal approved the text") where every
    statement of the evidence says it only as wanted, needed, possible or conditional
    ("Legal needs to approve the text", "I can send a proposal"); questions state
    nothing. Held; refused where the claim says it was done (``Reading.done``) and the
    words it cites hold the verb, each time as not done ("I have to take insulin" may
    still mean "takes insulin", never "took")."""
    verb = claim.root
    if verb is None or verb in LIGHT or (verb, True) in claim.verbs or denies(claim, claim.lemmas):
        return []  # a "not" is the polarity check's; "have", "get": too many senses
    due = _only_due(claim, verb, cites)
    if due is not None:
        reason = f'the words it cites say it was "{due}", not that it was done'
        return [Finding("modality", "refute", reason)]
    stated = [s for s in sentences if not s.text.rstrip().endswith("?")]  # a question says nothing
    said = [unrealised for s in stated for lemma, unrealised in s.verbs if lemma == verb]
    if not said or not all(said):
        return []
    where = next(s.text for s in stated if (verb, True) in s.verbs)
    cited = [unrealised for s in quoted for lemma, unrealised in s.verbs if lemma == verb]
    # "I always wanted to visit Kyoto and this spring I finally did!": done after all;
    # "didn't forget to pay", "needed to replace": said as past, it may well be done
    sure = (
        claim.done
        and bool(cited)
        and all(cited)
        and not any(q.done or q.negations or PAST_WANTING.search(q.text) for q in quoted)
    )
    return [
        Finding(
            "modality",
            "refute" if sure else "doubt",
            f'the evidence says "{verb}" as wanted, needed or possible, not done: '
            f'"{shortened(where)}"',
        )
    ]


def _only_due(claim: Reading, verb: str, cites: list[Reading]) -> str | None:
    """The word of the words a claim cites that says its deed was only set to happen
    ("was due on November 20" cited for "Order 88213 was delivered on November 20"):
    the claim says it was done, and the quotes hold no verb said as done ("was due
    Friday, but Maya turned it in on Thursday") nor the claim's own."""
    if not claim.done or not cites:
        return None
    if any(verb == lemma or not unrealised for q in cites for lemma, unrealised in q.verbs):
        return None
    said = [c.predicate for q in cites for c in q.clauses]
    if not said or any(p not in DUE for p in said):
        return None  # "was due on the 1st and it's already in the account"
    return said[0]


def hedged_findings(claim: Reading, cited: tuple[str, ...]) -> list[Finding]:
    """The claim states plainly what the words it cites only suppose ("Omar's asset tag
    is IT-2305." citing "I think it's IT-2305, but I'm not sure.") or ask to have
    confirmed ("..., right?": ``_tag_asked``): in every quote, the
    part that holds most of the claim's words (``_PARTS``) opens with a hedge before
    them (``language.hedges``), and the claim keeps none of its own nor names whose
    word it is (``KEPT``)."""
    if not cited or KEPT.search(claim.text):
        return []
    asked = [_tag_asked(claim, quote) for quote in cited]
    if all(asked):
        reason = f'the words it cites ask it ("{asked[0]}"); the claim states it as known'
        return [Finding("hedged", "refute", reason)]
    said = [_hedge_of(claim, quote) for quote in cited]
    if not all(said):
        return []
    return [
        Finding(
            "hedged",
            "refute",
            f'the words it cites only suppose it ("{said[0]}"); the claim states it as known',
        )
    ]


def _tag_asked(claim: Reading, quote: str) -> str | None:
    """The tag that makes ``quote`` a question ("right?") where the statement it closes
    (after the last comma or sentence end) holds the claim's predicate: the claim
    states what its speaker only asked to have confirmed. "ok?" asks to agree to a
    plan, not to confirm a fact."""
    tag = TAG_QUESTION.search(quote)
    predicate = claim.clauses[0].predicate if claim.clauses else None
    if tag is None or predicate is None:
        return None
    asked = re.split(r"[.!?;]\s+|,\s*", quote[: tag.start()])[-1]  # the statement it closes
    if TOLD.match(asked):
        return None  # "I told you I'm vegan now, didn't I?": said before, not asked
    words = re.findall(r"[a-z]+", asked.lower())
    return tag.group("tag") + "?" if any(w.startswith(predicate[:4]) for w in words) else None


#: Where a quote's parts part: a sentence's end, a comma, a clause joined to the one
#: before ("I think Tom is great, and I live in York"; "lands at 14:30 though I might").
_PARTS = re.compile(
    r"\s*(?:[,;.!?]|\s(?:and|but|so|though|although|which|that|because|while|when|who)\s)"
    r"\s*",
    re.I,
)


def _hedge_of(claim: Reading, quote: str) -> str | None:
    """The hedge that opens the part of ``quote`` holding most of the claim's words,
    before the first of them ("I think it's IT-2305"; not "... at 14:30 which I think
    is early")."""
    parts = [p for p in _PARTS.split(quote) if p.strip()]
    stems = {w[:4] for w in claim.lemmas}

    def words(part: str) -> list[str]:
        return [w[:4] for w in re.findall(r"[\w-]+", part.lower())]

    held = [len(stems & set(words(p))) for p in parts]
    if not parts:
        return None
    if max(held) == 0:  # words of no claim's but a guess ("Could be related.")
        bare = BARE_GUESS.match(quote)
        return bare.group(0).strip() if bare and len(quote.split()) <= MAX_GUESS_WORDS else None
    for part, count in zip(parts, held, strict=True):
        found = HEDGED.search(part)
        if count != max(held) or found is None:
            continue
        at = [  # the claim's words in the part, but the hedge's own ("Omar thinks")
            m.start()
            for m in re.finditer(r"[\w-]+", part)
            if m.group(0).lower()[:4] in stems and not found.start() <= m.start() < found.end()
        ]
        if at and min(at) >= found.end():
            return found.group(0)
    return None
