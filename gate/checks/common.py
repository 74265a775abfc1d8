"""What the checks share: a finding, the sentence a claim is about, quotes and turns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from language.fields import one_field
from language.parsing import Reading
from language.people import fold
from language.speakers import LABEL
from language.values import CALENDAR_WORDS, valued, values

Effect = Literal["refute", "doubt", "support"]
#: Share of a claim's content words a sentence must hold to be "the sentence the claim
#: is about" (below it, no sentence is, and the polarity and speaker checks stay quiet).
ABOUT = 0.5


@dataclass(frozen=True, slots=True)
class Finding:
    """What one check found: its name, its effect and its reason in plain words."""

    check: str
    effect: Effect
    reason: str


def is_sentence(text: str) -> bool:
    """Whether a field's text is a sentence (several words and a full stop), not a value."""
    return len(text.split()) > 2 and text.rstrip().endswith((".", "!", "?"))


#: Verbs that report what someone said ("Maya says Tom is a vegan").
SAYING = frozenset("say tell mention claim report add write state note explain".split())
#: Verbs of saying with another sense as common ("writes every morning", "added salt").
_ALSO_DOING = frozenset("write add note report".split())


def reports(claim: Reading) -> bool:
    """Whether the claim says what someone said ("Maya says she is vegan", "Lena
    mentioned the move"); "write", "add", "note" and "report" only with what was said
    after them ("Lena wrote that ..."; not "Lena writes every morning")."""
    if claim.root not in SAYING:
        return False
    return claim.root not in _ALSO_DOING or len(claim.clauses) > 1


#: Verbs with too many senses to read as done or not ("have a pacemaker", "get a refund").
LIGHT = frozenset("be have get do go make take".split())


def plain_text(text: str) -> str:
    return " ".join(text.lower().rstrip(" .").split())


def sentence_about(
    claim: Reading,
    sentences: list[Reading],
    wordy: bool = False,
    records: frozenset[str] = frozenset(),
) -> Reading | None:
    """The sentence that holds most of the claim's content words (None below ``ABOUT``),
    of those alike the shortest; ``wordy``: counting words only, not values (numbers,
    dates, times), which is how the values check finds the sentence whose value a claim
    changed, and a field of a record (in ``records``) without a value of a kind the
    claim has comes after the sentences alike (a record's name field is not where its
    date was changed)."""
    lemmas = frozenset(w for w in claim.lemmas if not valued(w)) if wordy else claim.lemmas
    if not lemmas or not sentences:
        return None
    kinds = {v.kind for v in values(claim.text)} if records else set()

    def held(s: Reading) -> tuple[int, bool, int]:
        bare = s.text in records and not any(v.kind in kinds for v in values(s.text))
        return len(lemmas & s.lemmas), not bare, -len(s.lemmas)

    best = max(sentences, key=held)
    share = len(lemmas & best.lemmas) / len(lemmas)
    return best if share >= ABOUT else None


def shares_words(claim: str, quote: str) -> bool:
    """Whether ``quote`` holds a word of the claim's, values and short words aside (a
    quote about another thing gives no value in the claim's place), or is one field of
    a record (``"time": "19:00"``: the claim says what that field says)."""
    if one_field(quote):
        return True
    words = {w for w in re.findall(r"[a-z][a-z'-]{3,}", claim.lower()) if not valued(w)}
    low = quote.lower()
    return any(w[:4] in low for w in words)


def squash(text: str) -> str:
    """``text`` folded to lower-case letters and digits only ("INV-2231" -> "inv2231")."""
    return re.sub(r"[^a-z0-9]", "", fold(text.lower()))


def is_named(name: str, low: str) -> bool:
    """Whether the evidence (lower case) names ``name``: by any of its words (accents
    folded, titles aside), as a whole word, so "the Red Sox" names "Boston Red Sox"."""
    text = fold(low)
    words = [
        w
        for w in re.findall(r"[a-z0-9']+", fold(name.lower()).replace("'s", ""))
        if w not in _TITLES and w not in CALENDAR_WORDS and (len(w) > 2 or w.isdigit())
    ]
    if not words:
        return True
    return any(re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", text) for w in words)


#: Words of a name that do not tell who is named.
_TITLES = frozenset(
    "the user mr mrs ms dr prof sir dame queen king prince princess count lord lady saint st "
    "of and de la le von van".split()
)


def is_within(text: str, cited: tuple[str, ...]) -> bool:
    """Whether a piece of the evidence is in a quote, or a quote of three words or more
    in it, as whole words ("penicillin" cited alone says nothing of whose it is)."""
    plain = " ".join(text.split())
    for quote in (" ".join(c.split()) for c in cited):
        if quote and _whole(plain, quote):
            return True
        if len(quote.split()) >= MIN_QUOTE_WORDS and _whole(quote, plain):
            return True
    return False


#: The fewest words a quote needs to stand for the sentence around it.
MIN_QUOTE_WORDS = 3


def _whole(text: str, within: str) -> bool:
    """Whether ``text`` stands in ``within`` as whole words."""
    return re.search(rf"(?<!\w){re.escape(text)}(?!\w)", within) is not None


def turn_label_at(evidence: str, at: int) -> re.Match[str] | None:
    """The label ("Ana: ") of the turn that holds ``at``: the last one that starts a
    line at or before it with no blank line between (None outside a turn)."""
    found = None
    for m in LABEL.finditer(evidence):
        if m.start() > at:
            break
        if m.start() == 0 or evidence[m.start() - 1] == "\n":
            found = m
    blank = evidence.rfind("\n\n", 0, at)
    return found if found is not None and found.start() > blank else None


def _turn_start(evidence: str, at: int) -> int:
    """Where the turn (or, outside turns, the evidence text) holding ``at`` opens: after
    its label, else after the blank line before it."""
    label = turn_label_at(evidence, at)
    if label is not None:
        return min(label.end(), at)
    return evidence.rfind("\n\n", 0, at) + 2 if "\n\n" in evidence[:at] else 0


def in_turn(text: str, evidence: str) -> tuple[str, str] | None:
    """Where ``text`` first stands in ``evidence``: its turn's words before it, and
    through it (None where it is not there as written)."""
    at = evidence.find(text)
    if at < 0:
        return None
    start = _turn_start(evidence, at)
    return evidence[start:at], evidence[start : at + len(text)]


def shortened(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
