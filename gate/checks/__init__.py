"""Checks that name the mistake: a claim read beside its evidence, no model asked.

Each check compares what the claim states with what the evidence states and answers
with findings: ``refute`` (the evidence says otherwise, in a way these rules read
reliably), ``doubt`` (something the claim needs is not in the evidence, or these rules
cannot tell) or ``support`` (every word, name and value of the claim is in one sentence
of the evidence, with the same polarity). The gate (``gate.policy.decide``) turns them
into an outcome; each finding's reason is one plain sentence a person can act on.

The reading is the shared language layer's: sentences (pysbd), speakers (first person
read as the turn's speaker), fields (JSON and ``key: value`` read as words), values
(numbers, dates, times) and spaCy's lemmas, names, negation and roles.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

from gate.checks.common import Finding, is_sentence, is_within, sentence_about
from gate.checks.corrected import corrected_findings, set_aside_findings
from gate.checks.modality import hedged_findings, modality_findings
from gate.checks.names import name_findings, word_findings
from gate.checks.polarity import (
    cited_polarity,
    mixed_findings,
    opposite_findings,
    polarity_findings,
)
from gate.checks.speaker import speaker_findings
from gate.checks.values import RECORD_LABEL, field_findings, value_findings
from language.clauses import clause_spans
from language.fields import Field, fields, key_words
from language.parsing import Reading, parse_many, read_text
from language.sentences import sentence_spans
from language.speakers import LABEL

#: Names of the checks, in the order their findings are reported.
CHECKS = (
    "values",
    "polarity",
    "modality",
    "mixed",
    "names",
    "speaker",
    "direction",
    "things",
    "words",
    "fields",
    "corrected",
)
#: A field value longer than this many words is prose after a label ("Maya: I ..."),
#: read as a sentence, not as a field.
MAX_VALUE_WORDS = 8
#: Pieces longer than this (a whole JSON object, a table on one line) are too broad to
#: be what a claim is about.
MAX_UNIT_WORDS = 60
MAX_UNITS = 300
#: The characters of a claim and of its evidence the checks read (a write may carry
#: 100,000 of evidence; sentence splitting and parsing grow with it, and the checks run
#: outside the verifier's deadline, or beside it on short evidence: ``engine.BESIDE_CHARS``).
MAX_CHECKED_CHARS = 20_000
#: One claim to check: (claim, evidence), or (claim, evidence, the quotes it cites).
Pair = tuple[str, str] | tuple[str, str, tuple[str, ...]]


def check(claim: str, evidence: str, cited: Sequence[str] = ()) -> tuple[Finding, ...]:
    """The findings for one claim against its evidence (read as said) and the quotes of
    it the claim cites (read as said too)."""
    return check_many([(claim, evidence, tuple(cited))])[0]


def check_many(pairs: Sequence[Pair]) -> list[tuple[Finding, ...]]:
    """The findings for many (claim, evidence[, cited]) pairs, parsed in one batch. Each
    claim and evidence is read up to ``MAX_CHECKED_CHARS``: the checks' work per write is
    bounded like the verifier's (beyond it, a claim the rest states is held, for the
    ``words`` check finds it nowhere). The findings of recent pairs are kept: a write
    the gate was asked about before (``Store.check_facts``) is not read again."""
    triples = [
        (
            p[0][:MAX_CHECKED_CHARS],
            p[1][:MAX_CHECKED_CHARS],
            tuple(q[:MAX_CHECKED_CHARS] for q in p[2]) if len(p) > 2 else (),
        )
        for p in pairs
    ]
    keys = [_key(triple) for triple in triples]
    with _found_lock:
        known = {key: _found[key] for key in keys if key in _found}
    todo = {key: t for key, t in zip(keys, triples, strict=True) if key not in known}
    units = [_units(evidence) for _, evidence, _ in todo.values()]
    texts = [claim for claim, _, _ in todo.values()] + [u for us, _ in units for u in us]
    texts += [q for _, _, cited in todo.values() for q in cited if q.strip()]
    docs = dict(zip(texts, parse_many(texts), strict=True))
    for (key, (claim, evidence, cited)), (pieces, records) in zip(todo.items(), units, strict=True):
        said = [replace(read_text(u, docs[u]), speaker=speaker) for u, speaker in pieces.items()]
        reading = read_text(claim, docs[claim])
        cites = [read_text(q, docs[q]) for q in cited if q.strip()]
        known[key] = _findings(claim, reading, evidence, said, records, cited, cites)
    with _found_lock:
        for key in keys:
            _found[key] = known[key]
            _found.move_to_end(key)
        while len(_found) > FOUND_KEPT:
            _found.popitem(last=False)
    return [known[key] for key in keys]


#: How many (claim, evidence) pairs' findings are kept, newest last (``check_many``),
#: by a digest of the pair: the texts themselves are not kept.
FOUND_KEPT = 2048
_found: OrderedDict[bytes, tuple[Finding, ...]] = OrderedDict()
_found_lock = threading.Lock()


def _key(pair: Pair) -> bytes:
    claim, evidence, *rest = pair
    cited: tuple[str, ...] = rest[0] if rest else ()
    digest = hashlib.blake2b(digest_size=16)
    for text in (claim, evidence, *cited):
        data = text.encode()
        digest.update(len(data).to_bytes(8, "little"))  # no two splits read alike
        digest.update(data)
    return digest.digest()


def _units(evidence: str) -> tuple[dict[str, str | None], frozenset[str]]:
    """The evidence as the pieces a claim may be about, each with the speaker of its
    turn (None outside a turn): sentences, their clauses, each line of a table or log,
    and each field of a record read as words ("paid_on: 2026-10-02" -> "invoice paid on
    2026-10-02"), and which pieces are such fields."""
    found: dict[str, str | None] = {}
    records: set[str] = set()

    def add(text: str, speaker: str | None = None) -> None:
        text = text.strip()
        if 0 < len(text.split()) <= MAX_UNIT_WORDS and len(found) < MAX_UNITS:
            found.setdefault(text, speaker)

    speaker = None
    for start, end in sentence_spans(evidence):
        label = LABEL.match(evidence, start, end)
        if label:  # "Maya: ..." is read as what Maya said, and Maya said it
            speaker, start = label.group("speaker"), label.end()
        elif evidence.rfind("\n", 0, start) > evidence.rfind(":", 0, start):
            speaker = None  # a new line without a label: no longer the last turn
        add(evidence[start:end], speaker)
        for a, b in clause_spans(evidence, start, end):
            add(evidence[a:b], speaker)
    if "\n" in evidence.strip():
        for line in evidence.splitlines():
            label = LABEL.match(line)
            add(line, label.group("speaker") if label else None)
    for f in _fields(evidence):
        if is_sentence(f.value) or len(f.value.split()) > MAX_VALUE_WORDS:
            continue  # a sentence after a label ("Maya: I like tea."), not a value
        record = "" if is_sentence(f.record) else f.record
        unit = f"{record} {key_words(f.key)} {f.value}"
        add(unit)
        records.add(unit.strip())
    return found, frozenset(records)


def _fields(evidence: str) -> list[Field]:
    """The fields of the evidence, and of each of its turns read without its label (a
    tool's result in a conversation: "flights: {...}")."""
    found = fields(evidence)
    blocks = evidence.split("\n\n")
    if len(blocks) > 1 or LABEL.match(evidence) or RECORD_LABEL.match(evidence):
        for block in blocks:
            body = block.strip()
            label = LABEL.match(body) or RECORD_LABEL.match(body)
            if label:
                found += fields(body[label.end() :])
    return found


def _findings(
    claim: str,
    said: Reading,
    evidence: str,
    sentences: list[Reading],
    records: frozenset[str] = frozenset(),
    cited: tuple[str, ...] = (),
    cites: list[Reading] | None = None,
) -> tuple[Finding, ...]:
    found: list[Finding] = []
    about = sentence_about(said, sentences)
    quoted = [s for s in sentences if is_within(s.text, cited)]
    found += value_findings(
        claim, evidence, sentence_about(said, sentences, wordy=True, records=records), cited
    )
    polarity = polarity_findings(said, about, sentences)
    if not any(f.effect == "refute" for f in polarity):
        polarity = (
            cited_polarity(said, quoted) or opposite_findings(said, claim, cites or []) or polarity
        )
    found += polarity
    found += name_findings(said, evidence)
    found += speaker_findings(said, about, sentences, evidence, cited, quoted)
    found += modality_findings(said, sentences, quoted, cites or [])
    found += hedged_findings(said, cited)
    found += mixed_findings(said, sentences)
    if not any(f.effect == "refute" for f in found):
        found += set_aside_findings(said, claim, evidence, sentences, cited)
    if not any(f.effect == "refute" for f in found):
        found += word_findings(said, evidence, sentences, about)
        found += field_findings(claim, evidence)
        found += corrected_findings(claim, evidence, sentences)
    return tuple(found)


__all__ = ["CHECKS", "Finding", "check", "check_many"]
