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

import contextlib
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Literal

from gate.subjects import (
    CONTRAST,
    denied,
    quoted_denial,
    quoted_of_someone_else,
    received,
    said_of_someone_else,
)
from language.antonyms import opposites
from language.clauses import clause_spans, without_pleasantry
from language.corrections import corrections, restatements, rewrite
from language.fields import Field, fields, identities, key_words, stated
from language.hedges import HEDGED, KEPT
from language.parsing import Reading, denies, parse, parse_many, read_text
from language.people import PERSON_NOUNS, fold, name_words, overlaps
from language.pronouns import THIRD_PERSON, antecedent, resolve_it, thing
from language.sentences import sentence_spans
from language.speakers import LABEL
from language.values import CALENDAR_WORDS, Value, codes, digits, same, spoken, valued, values

if TYPE_CHECKING:  # spaCy loads numpy and torch, which a read of the store must not
    from spacy.tokens import Token

Effect = Literal["refute", "doubt", "support"]

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

#: Share of a claim's content words a sentence must hold to be "the sentence the claim
#: is about" (below it, no sentence is, and the polarity and speaker checks stay quiet).
ABOUT = 0.5
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


@dataclass(frozen=True, slots=True)
class Finding:
    """What one check found: its name, its effect and its reason in plain words."""

    check: str
    effect: Effect
    reason: str


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
        if _sentence(f.value) or len(f.value.split()) > MAX_VALUE_WORDS:
            continue  # a sentence after a label ("Maya: I like tea."), not a value
        record = "" if _sentence(f.record) else f.record
        unit = f"{record} {key_words(f.key)} {f.value}"
        add(unit)
        records.add(unit.strip())
    return found, frozenset(records)


def _fields(evidence: str) -> list[Field]:
    """The fields of the evidence, and of each of its turns read without its label (a
    tool's result in a conversation: "flights: {...}")."""
    found = fields(evidence)
    blocks = evidence.split("\n\n")
    if len(blocks) > 1 or LABEL.match(evidence) or _RECORD_LABEL.match(evidence):
        for block in blocks:
            body = block.strip()
            label = LABEL.match(body) or _RECORD_LABEL.match(body)
            if label:
                found += fields(body[label.end() :])
    return found


def _sentence(text: str) -> bool:
    """Whether a field's text is a sentence (several words and a full stop), not a value."""
    return len(text.split()) > 2 and text.rstrip().endswith((".", "!", "?"))


#: Verbs that report what someone said ("Maya says Tom is a vegan").
SAYING = frozenset("say tell mention claim report add write state note explain".split())


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
    about = _about(said, sentences)
    quoted = [s for s in sentences if _within(s.text, cited)]
    found += _values(claim, evidence, _about(said, sentences, wordy=True, records=records), cited)
    polarity = _polarity(said, about, sentences)
    if not any(f.effect == "refute" for f in polarity):
        polarity = _cited_polarity(said, quoted) or _opposite(said, claim, cites or []) or polarity
    found += polarity
    found += _names(said, evidence)
    found += _speaker(said, about, sentences, evidence, cited, quoted)
    found += _modality(said, sentences, quoted, cites or [])
    found += _hedged(said, cited)
    found += _mixed(said, sentences)
    if not any(f.effect == "refute" for f in found):
        found += _set_aside(said, claim, evidence, sentences, cited)
    if not any(f.effect == "refute" for f in found):
        found += _words(said, evidence, sentences, about)
        found += _field_stated(claim, evidence)
        found += _corrected(claim, evidence, sentences)
    return tuple(found)


def _mixed(claim: Reading, sentences: list[Reading]) -> list[Finding]:
    """The claim's verb with an object the evidence says in another clause ("Leo
    struggles with factoring" from "I find factoring easy but I struggle with the
    quadratic formula"): no clause of that verb holds the claim's objects, one has
    objects of its own, and another clause of its sentence has the claim's. Held, also
    where the claim cites that other clause: "at home it's Portuguese" cited for "Ana
    speaks Portuguese at home" says the same in other words (a review's examples)."""
    if not claim.clauses or claim.root in _LIGHT or claim.root in SAYING:
        return []
    own = claim.clauses[0]
    objects = {w for w, dep, _ in claim.slots if dep in _OBJECTS} & own.lemmas
    if not objects:
        return []
    for sentence in sentences:
        if any(objects <= c.lemmas for c in sentence.clauses if c.predicate == own.predicate):
            return []  # a clause of the verb says it of the claim's objects
    for sentence in sentences:
        theirs = {w for w, dep, _ in sentence.slots if dep in _OBJECTS}
        for clause in (c for c in sentence.clauses if c.predicate == own.predicate):
            missing = objects - clause.lemmas
            others = (clause.lemmas & theirs) - claim.lemmas
            elsewhere = frozenset().union(
                *(c.lemmas for c in sentence.clauses if c.predicate != own.predicate)
            )
            if missing and others and missing <= elsewhere:
                reason = (
                    f"the evidence has {sorted(missing)[0]} in another clause than "
                    f'"{own.predicate}": "{_short(clause.text)}"'
                )
                return [Finding("mixed", "doubt", reason)]
    return []


#: Where a verb's object stands.
_OBJECTS = frozenset({"dobj", "pobj", "attr", "dative", "oprd"})


#: Verbs with too many senses to read as done or not ("have a pacemaker", "get a refund").
_LIGHT = frozenset("be have get do go make take".split())


def _modality(
    claim: Reading, sentences: list[Reading], quoted: list[Reading], cites: list[Reading]
) -> list[Finding]:
    """The claim says its verb was done or holds ("Legal approved the text") where every
    statement of the evidence says it only as wanted, needed, possible or conditional
    ("Legal needs to approve the text", "I can send a proposal"); questions state
    nothing. Held; refused where the claim says it was done (``Reading.done``) and the
    words it cites hold the verb, each time as not done ("I have to take insulin" may
    still mean "takes insulin", never "took")."""
    verb = claim.root
    if verb is None or verb in _LIGHT or (verb, True) in claim.verbs or denies(claim, claim.lemmas):
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
        and not any(q.done or q.negations or _PAST_WANTING.search(q.text) for q in quoted)
    )
    return [
        Finding(
            "modality",
            "refute" if sure else "doubt",
            f'the evidence says "{verb}" as wanted, needed or possible, not done: '
            f'"{_short(where)}"',
        )
    ]


#: A want, need or plan said in the past ("needed to replace"), done or not.
_PAST_WANTING = re.compile(
    r"\b(?:needed|wanted|decided|planned|hoped|tried|meant|had|(?:was|were) going|"
    r"(?:been|was|were)\s+(?:meaning|wanting|hoping|dying|planning|trying))\s+to\b",
    re.I,
)
#: Words that say a thing is set to happen, not that it did ("was due on 20 November").
_DUE = frozenset("due scheduled expected planned supposed estimated".split())


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
    if not said or any(p not in _DUE for p in said):
        return None  # "was due on the 1st and it's already in the account"
    return said[0]


def _hedged(claim: Reading, cited: tuple[str, ...]) -> list[Finding]:
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


#: A statement made a question by a tag ("I pay 1,200 a month, right?").
_TAG_QUESTION = re.compile(
    r",\s*(?P<tag>right|correct|yes|no|yeah|true|"
    r"(?:is|are|was|were|do|does|did|have|has|had|can|will|would|should)n't\s+\w+|"
    r"(?:am|is|are|was|were|do|does|did|have|has|can|will)\s+(?:i|you|he|she|it|we|they))"
    r"\s*\?+\s*$",
    re.I,
)


def _tag_asked(claim: Reading, quote: str) -> str | None:
    """The tag that makes ``quote`` a question ("right?") where the statement it closes
    (after the last comma or sentence end) holds the claim's predicate: the claim
    states what its speaker only asked to have confirmed. "ok?" asks to agree to a
    plan, not to confirm a fact."""
    tag = _TAG_QUESTION.search(quote)
    predicate = claim.clauses[0].predicate if claim.clauses else None
    if tag is None or predicate is None:
        return None
    asked = re.split(r"[.!?;]\s+|,\s*", quote[: tag.start()])[-1]  # the statement it closes
    if _TOLD.match(asked):
        return None  # "I told you I'm vegan now, didn't I?": said before, not asked
    words = re.findall(r"[a-z]+", asked.lower())
    return tag.group("tag") + "?" if any(w.startswith(predicate[:4]) for w in words) else None


#: What the speaker said before, asked back ("I told you ...").
_TOLD = re.compile(r"\s*(?:i|we|\w+)\s+(?:told|said|mentioned)\b", re.I)


#: Where a quote's parts part: a sentence's end, a comma, a clause joined to the one
#: before ("I think Tom is great, and I live in York"; "lands at 14:30 though I might").
_PARTS = re.compile(
    r"\s*(?:[,;.!?]|\s(?:and|but|so|though|although|which|that|because|while|when|who)\s)"
    r"\s*",
    re.I,
)


#: A quote that is only a guess: it opens with one and has at most this many words.
MAX_GUESS_WORDS = 6
_BARE_GUESS = re.compile(
    r"\W*(?:(?:it|that|this)\s+)?(?:could|might|may)\s+be\b(?!\s+(?:better|worse)\b)", re.I
)  # "Could be better." is how one is, not a guess


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
        bare = _BARE_GUESS.match(quote)
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


def _set_aside(
    claim: Reading, text: str, evidence: str, sentences: list[Reading], cited: tuple[str, ...]
) -> list[Finding]:
    """Refuted where the claim holds a value the evidence corrects ("The migration lands
    on Thursday." against "... lands on Wednesday, not Thursday."): the correction ties
    to the claim (``language.corrections.rewrite``), the correcting sentence shares a
    word with the claim besides the value and its subject (a value taken back in one
    turn, ``language.corrections.restatements``, is tied by its unit), and it is said of
    the claim's subject (by them, or naming them: Ines correcting her flight says
    nothing of Tom's), or the claim cites the correcting words themselves. An earlier
    sentence that states the old value does not save the claim. Left to the other
    checks: a claim with a "not" of its own ("... on 2.2.9 but not on 2.3.1"), and a
    correction of who ("Elena is allergic, not Tomás" says nothing else of Tomás)."""
    if _DENYING.search(text):
        return []
    fixes = corrections(evidence) if _CORRECTING.search(evidence) else []
    who = _who(claim)
    named = set().union(*(name_words(w) for w in who))  # "Omar" is in all Omar says
    for fix in [*fixes, *restatements(evidence)]:
        redone = rewrite(text, fix)
        if redone is None or any(overlaps(w, redone.removed) for w in who):
            continue
        removed = redone.removed.lower()
        words = {w for w in claim.lemmas if w not in removed and fold(w) not in named}
        correcting = [s for s in sentences if s.text in evidence[fix.start : fix.end]]
        tied = fix.how == "restated"  # the same unit, taken back in one turn: tied as said
        cites = any(
            _overlaps_span(evidence, quote, fix.start, fix.end)
            and not _shares_outside(claim, redone.removed, evidence, quote, fix.start, fix.end)
            for quote in cited
        )
        if cites or any((tied or words & s.lemmas) and _of(who, s) for s in correcting):
            said = _short(evidence[fix.start : fix.end])
            return [
                Finding("corrected", "refute", f'the evidence sets "{fix.old}" aside: "{said}"')
            ]
    return []


def _shares_outside(
    claim: Reading, removed: str, evidence: str, quote: str, start: int, end: int
) -> bool:
    """Whether the part of ``quote`` outside ``start:end`` (the correction) has a word of
    the claim's other than the value it sets aside ("The meeting is in room 4, not room 2.
    Room 2 is for the workshop." for "The workshop is in room 2.")."""
    at = evidence.find(quote)
    inside = evidence[max(at, start) : min(end, at + len(quote))]
    outside = evidence[at : at + len(quote)].replace(inside, " ")
    words = set(re.findall(r"[a-z]{3,}", outside.lower())) - set(removed.lower().split())
    return bool(words & {w for w in claim.lemmas if len(w) > 2})


def _overlaps_span(evidence: str, quote: str, start: int, end: int) -> bool:
    """Whether ``quote`` (where it first stands in the evidence) overlaps ``start:end``."""
    at = evidence.find(quote) if quote.strip() else -1
    return at >= 0 and at < end and at + len(quote) > start


def _of(who: list[str], sentence: Reading) -> bool:
    """Whether ``sentence`` may be said of the claim's subject: no one is named as it,
    its speaker is the subject (or owns it: "Tom's flight"), or it names them."""
    if not who:
        return True
    owner = who[0].split("'s ")[0]
    if sentence.speaker is not None and overlaps(owner, sentence.speaker):
        return True
    return bool(name_words(owner) - _ARTICLES & name_words(sentence.text))


_ARTICLES = frozenset({"the", "a", "an"})


def _who(claim: Reading) -> list[str]:
    """Whom the claim is about: its named subject, or its first clause's."""
    agents = claim.clauses[0].agents if claim.clauses else ()
    return [w for w in (claim.subject, *agents) if w]


def _corrected(claim: str, evidence: str, sentences: list[Reading]) -> list[Finding]:
    """Support where the claim is a sentence of the evidence with a value its speaker
    corrected put in ("Yuki is in Flat 3B." and "It's 3C, not 3B." give "Yuki is in Flat
    3C."), rewritten as the conversation's corrections rewrite (``language.corrections``),
    word for word; an "it" that opens the sentence read as the thing the one before
    named, a greeting that opens it left out ("Hi, ..."), and "Ana says ..." as what Ana
    said, where Ana made the correction."""
    fixes = corrections(evidence) if _CORRECTING.search(evidence) else []
    if not fixes:
        return []
    says = _SAYS.match(claim)  # "Ana says ...": what Ana said, if she corrected it
    said_as = [_with_it(without_pleasantry(s.text), evidence) for s in sentences]
    for fix in fixes:
        speaker = _turn_label(evidence, fix.start)
        wanted = {_plain(claim)}
        if says and speaker and says.group("who") == speaker.group("speaker"):
            wanted.add(_plain(claim[says.end() :]))
        for text in said_as:
            redone = rewrite(text, fix)
            if redone is not None and _plain(redone.statement) in wanted:
                said = _short(evidence[fix.start : fix.end])
                return [
                    Finding(
                        "corrected",
                        "support",
                        f'the evidence corrects "{redone.removed}" to "{redone.put}": "{said}"',
                    )
                ]
    return []


def _with_it(sentence: str, evidence: str) -> str:
    """``sentence`` with an "it" that opens it as the one thing the sentence before it
    in its turn named (``language.pronouns.thing``, as the extractor reads it)."""
    if not _IT.match(sentence) or (turn := _in_turn(sentence, evidence)) is None:
        return sentence
    named = thing(turn[0])
    it = resolve_it(sentence, named) if named else None
    return it[0].upper() + it[1:] if it else sentence


#: "Ana says ..." (the extractor's way of giving a speaker's words).
_SAYS = re.compile(r"(?P<who>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3}) says (?=\S)")
_IT = re.compile(r"[Ii]t\b")


#: Words a correction is said with (``language.corrections`` reads which).
_CORRECTING = re.compile(r"\bnot\b|\binstead\b|\brather than\b", re.I)
#: A claim that denies or contrasts something itself.
_DENYING = re.compile(r"\bnot\b|n't\b|\bnever\b|\bno\b|\binstead\b|\brather than\b", re.I)


def _field_stated(claim: str, evidence: str) -> list[Finding]:
    """Support where the claim is a field of a record in the evidence, said as the
    extractor says a tool's result: "<record> <key>: <value>." ("Order 88213 status:
    shipped." from ``{"order_id": "88213", "status": "shipped"}``), word for word; a
    record another result named by its identifier is called by that name."""
    if ": " not in claim:
        return []
    wanted = _plain(claim)
    read = []
    for block in evidence.split("\n\n"):
        body = block.strip()
        label = LABEL.match(body) or _RECORD_LABEL.match(body)
        read.append(fields(body[label.end() :] if label else body))
    named = identities([f for found in read for f in found])  # as the extractor names them
    for found in read:
        for f in found:
            records = {f.record, named.get(f.record, f.record)}  # as written, or as named
            if any(_plain(stated(r, f.key, f.value)) == wanted for r in records):
                said = f"{f.key}: {f.value}"
                return [Finding("fields", "support", f'the record states it: "{_short(said)}"')]
    return []


#: A tool's turn, named as tools are ("flights: {...}", "ci: [...]"): a label before JSON.
_RECORD_LABEL = re.compile(r"[^\s:{}\[\]\"]+(?: [^\s:{}\[\]\"]+){0,3}:[ \t]+(?=[{\[])")


def _plain(text: str) -> str:
    return " ".join(text.lower().rstrip(" .").split())


def _about(
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


def _values(
    claim: str, evidence: str, about: Reading | None, cited: tuple[str, ...] = ()
) -> list[Finding]:
    """Numbers, dates, times and weekdays of the claim must be the evidence's: another
    value in the sentence the claim is about, or in the words it cites, refutes it;
    elsewhere it only holds it."""
    stated = values(evidence)
    sharing = [text for text in cited if _shares(claim, text)]
    quoted = [e for text in sharing for e in values(text)]
    out = _cited_codes(claim, cited)
    own = values(claim)
    for v in own:
        given = [e for e in quoted if e.kind == v.kind]
        if (
            len(given) == 1  # not "Monday to Wednesday", not a cron line's "0 */6"
            and not same(v, given[0])
            and v.canonical != given[0].canonical
            and sum(w.kind == v.kind for w in own) == 1  # "out on April 3, back on April 17"
            and not any(_written(v, text) for text in sharing)  # "/orders/771"
            and not v.per
            and not _derived(v, stated)
            and not _bound(v, claim)
        ):
            near = _nearest(v, given)
            reason = f"the words it cites say {spoken(near)}, not {spoken(v)}"
            out.append(Finding("values", "refute", reason))
            continue
        if any(same(v, e) for e in stated):
            continue
        other_rate = next(
            (e for e in stated if e.kind == v.kind and e.canonical == v.canonical), None
        )
        if other_rate is not None and v.per:
            out.append(
                Finding(
                    "values", "refute", f"the evidence says {spoken(other_rate)}, not {spoken(v)}"
                )
            )
            continue
        if _written(v, evidence):
            continue
        if _derived(v, stated) or _bound(v, claim):
            out.append(
                Finding(
                    "values",
                    "doubt",
                    f"{v.text} is not in the evidence as written; it may be worked out from it",
                )
            )
            continue
        here = [e for e in values(about.text) if e.kind == v.kind] if about is not None else []
        here = here or [e for e in quoted if e.kind == v.kind]  # the words the claim cites
        others = [e for e in stated if e.kind == v.kind]
        if here:  # the sentence the claim is about gives another value in its place
            near = _nearest(v, here)
            out.append(
                Finding("values", "refute", f"the evidence says {spoken(near)}, not {spoken(v)}")
            )
        elif others:  # another value, said of something else, maybe
            out.append(
                Finding(
                    "values",
                    "doubt",
                    f"the evidence gives {spoken(_nearest(v, others))} but not {spoken(v)}",
                )
            )
        else:
            out.append(
                Finding(
                    "values", "doubt", f"the evidence gives no {_kind_word(v)} such as {spoken(v)}"
                )
            )
    return out


def _cited_codes(claim: str, cited: tuple[str, ...]) -> list[Finding]:
    """A code the claim names after a word of the words it cites ("flight IB6801") where
    those words give another code of its shape and not it ("flight": "AY1652"):
    refused. A record's own name ("Asset IT-2291 model: ...") is not in a field's place."""
    for code in (c for c in codes(claim) if not values(c)):  # a version is a value
        before = re.search(rf"([A-Za-z]+)\W+{re.escape(code)}", claim)
        if before is None or any(_squash(code) in _squash(text) for text in cited):
            continue  # another quote gives it ("Outbound: BA117", "Return: BA118")
        word = re.escape(before.group(1))
        for text in cited:
            given = [
                g
                for g in codes(text)
                if _shape(g) == _shape(code)
                and re.search(rf"\b{word}\W+{re.escape(g)}", text, re.I)  # "flight": "AY1652"
            ]
            if given:
                reason = f"the words it cites say {given[0]}, not {code}"
                return [Finding("values", "refute", reason)]
    return []


def _shape(code: str) -> str:
    """A code's letters as "A" and digits as "9" ("IB6801" -> "AA9999")."""
    return re.sub(r"[A-Za-z]", "A", re.sub(r"\d", "9", code))


def _shares(claim: str, quote: str) -> bool:
    """Whether ``quote`` holds a word of the claim's, values and short words aside (a
    quote about another thing gives no value in the claim's place), or is one field of
    a record (``"time": "19:00"``: the claim says what that field says)."""
    if _ONE_FIELD.fullmatch(quote.strip()):
        return True
    words = {w for w in re.findall(r"[a-z][a-z'-]{3,}", claim.lower()) if not valued(w)}
    low = quote.lower()
    return any(w[:4] in low for w in words)


#: One field of a record as cited: ``"time": "19:00"``, ``resting_hr: 58``.
_ONE_FIELD = re.compile(r'"?[\w .-]+"?\s*:\s*"?[^",{}\[\]]+"?,?')


def _written(v: Value, evidence: str) -> bool:
    """A number written as is somewhere in the evidence, even inside an identifier
    ("order 771" and "/orders/771")."""
    if v.kind != "number":
        return False
    return re.search(rf"(?<![\d.]){re.escape(v.text)}(?![\d])", digits(evidence)) is not None


_BOUNDS = re.compile(
    r"\b(?:fewer|less|more|greater|higher|lower|over|under|above|below|at least|at most|up to|"
    r"nearly|almost|about|around|roughly|approximately|\w+er than)\s+(?:than\s+)?$",
    re.I,
)


def _bound(v: Value, claim: str) -> bool:
    """A number the claim states as a bound or an estimate ("fewer than ten")."""
    at = digits(claim).find(v.text)
    return at > 0 and _BOUNDS.search(digits(claim)[:at]) is not None


def _derived(v: Value, stated: tuple[Value, ...]) -> bool:
    """A number that the evidence's numbers give by one step of arithmetic or a common
    unit change (a share of rent, minutes from seconds, a duration from two times)."""
    if v.kind == "time":
        hours, minutes = v.canonical.split(":")
        clock = int(hours) * 60 + int(minutes)
        times = [e for e in stated if e.kind == "time"]
        steps = [float(e.canonical) for e in stated if e.kind == "number" and e.canonical.isdigit()]
        return any(
            abs(int(t.canonical[:2]) * 60 + int(t.canonical[3:]) - clock) in steps for t in times
        )
    if v.kind != "number":
        return False
    try:
        target = float(v.canonical)
    except ValueError:
        return False
    nums = []
    for e in stated:
        if e.kind == "number":
            with contextlib.suppress(ValueError):  # a version or a clock reading
                nums.append(float(e.canonical))
        elif e.kind == "time":
            hours, minutes = e.canonical.split(":")
            nums.append(int(hours) * 60 + int(minutes))
    for a in nums:
        for factor in (
            60,
            1 / 60,
            1000,
            1 / 1000,
            100,
            1 / 100,
            24,
            1 / 24,
            7,
            1 / 7,
            12,
            1 / 12,
            2,
            1 / 2,
        ):
            if abs(a * factor - target) < 1e-6 * max(1.0, target):
                return True
        for b in nums:
            if any(
                abs(r - target) < 1e-6 * max(1.0, abs(target))
                for r in (a + b, abs(a - b), a * b, a / b if b else -1)
            ):
                return True
    return False


def _nearest(v: Value, others: list[Value]) -> Value:
    """The evidence value of the same kind most like ``v`` (for the reason)."""
    return min(
        others, key=lambda e: (len(e.canonical) != len(v.canonical), e.canonical != v.canonical)
    )


def _kind_word(v: Value) -> str:
    return {"number": "number", "date": "date", "time": "time", "weekday": "day"}[v.kind]


def _polarity(claim: Reading, about: Reading | None, sentences: list[Reading]) -> list[Finding]:
    """The claim and the sentence it is about must agree on "not" (of the verb, or of a
    thing the claim names). Where the claim does not say "not", the evidence refutes it
    when every clause that holds the claim's words denies its verb, said of the claim's
    subject or of no one named ("No fever.", "I don't drink alcohol."), or when a contrast
    denies a word of the claim ("it's 21 Elm Street, not 12"); another "not" only holds."""
    if about is None:
        return []
    says_not = denies(claim, claim.lemmas)
    clause = None if says_not else denied(claim, sentences)
    if clause is not None:
        return [Finding("polarity", "refute", f'the evidence says "not": "{_short(clause)}"')]
    if _crossed(claim, about):
        return [
            Finding(
                "polarity",
                "refute",
                f'the evidence sets "{about.contrasted[0]}" aside, not "{claim.contrasted[0]}": '
                f'"{_short(about.text)}"',
            )
        ]
    if claim.contrasted and about.contrasted and not set(claim.contrasted) & set(about.contrasted):
        return [  # "not the car" against "not the bus": each sets aside its own
            Finding(
                "polarity",
                "doubt",
                f'the evidence sets "{about.contrasted[0]}" aside, the claim '
                f'"{claim.contrasted[0]}": "{_short(about.text)}"',
            )
        ]
    if says_not == denies(about, claim.lemmas):
        return []
    if not says_not:
        contrasted = next((w for w in about.contrasted if w in claim.lemmas), None)
        if contrasted is not None:
            return [
                Finding(
                    "polarity",
                    "refute",
                    f'the evidence says "not {contrasted}": "{_short(about.text)}"',
                )
            ]
    if says_not:
        return [
            Finding(
                "polarity",
                "refute",
                f'the claim says "not", the evidence does not: "{_short(about.text)}"',
            )
        ]
    return [
        Finding(
            "polarity",
            "doubt",
            f'the evidence says "not" where the claim does not: "{_short(about.text)}"',
        )
    ]


def _cited_polarity(claim: Reading, quoted: list[Reading]) -> list[Finding]:
    """The words the claim cites deny what it asserts (``gate.subjects.quoted_denial``):
    refuted, whatever else the evidence says."""
    if not quoted or denies(claim, claim.lemmas):
        return []
    clause = quoted_denial(claim, quoted)
    if clause is None:
        return []
    return [Finding("polarity", "refute", f'the words it cites say "not": "{_short(clause)}"')]


def _opposite(claim: Reading, text: str, cites: list[Reading]) -> list[Finding]:
    """The words the claim cites say the opposite of one of its adjectives or verbs
    (``language.antonyms``: "easy" against "the hardest part"; "passed" against
    ``"status": "failed"``), not the word itself: refused. Only where the quote is one
    short statement (one clause, or one field of a record whose value is not 0 or false;
    "cheap but the flights were expensive" sets two things against each other) tied to
    the claim (``_shares``), neither says "not" or compares ("smaller than"), and the
    opposite is said of what the claim's word is (``_same_side``, ``_said_of_it``)."""
    if claim.negations or "than" in claim.order:
        return []
    # an adjective the tagger read as a noun ("finds the subjunctive easy") is looked up
    wanted = [
        ("ADJ" if tag == "NOUN" else tag, lemma)
        for lemma, tag in zip(claim.order, claim.tags, strict=False)
    ]
    for quote in cites:
        field = _ONE_FIELD.fullmatch(quote.text.strip()) is not None
        if (
            len(quote.tokens) > MAX_OPPOSED_WORDS
            or len(quote.clauses) > 1
            or len(fields(quote.text)) > 1
            or quote.negations
            or "than" in quote.order
            or CONTRAST.search(quote.text)  # "cheap, but the flights were expensive"
            or _NOTHING.fullmatch(quote.text.strip())  # "failed": 0, "closed": false
            or _BOUNDED.search(quote.text)
            or _BOUNDED.search(text)  # "closed after 22:00"
            or not _shares(text, quote.text)
        ):
            continue
        said = set(quote.order) | {t.lower() for t in quote.tokens}
        flipped = [(tag, lemma, sorted(opposites(lemma, tag) & said)) for tag, lemma in wanted]
        flipped = [(tag, lemma, other) for tag, lemma, other in flipped if other]
        if len(flipped) != 1:
            continue  # none, or two pairs flipped ("the old office was farther"): the same
        _, lemma, other = flipped[0]
        if lemma in said or set(other) & set(claim.order):
            continue  # "an old man becomes younger" says both
        if _same_side(claim, lemma, quote, other[0], field) and (
            field or _said_of_it(claim, lemma, quote, other[0])
        ):
            reason = f'the words it cites say "{other[0]}", the opposite of "{lemma}"'
            return [Finding("polarity", "refute", reason)]
    return []


#: A bound in time, which an opposite word turns round ("open until 22:00" is "closed
#: after 22:00").
_BOUNDED = re.compile(r"\b(?:until|till|after|before|since|from)\b", re.I)
#: A field that says there is none of it: ``"failed": 0``, ``"closed": false``.
_NOTHING = re.compile(r'"?[\w .-]+"?\s*:\s*"?(?:0|false|null|none|no)"?,?', re.I)


def _said_of_it(claim: Reading, word: str, quote: Reading, opposite: str) -> bool:
    """Whether, in the parse, the quote's opposite says what the claim's word says: not
    part of a name ("the Old Town"), not an adjective of a noun other than the subject
    or what it is ("has two older brothers"), not a verb of a governed clause, of the
    other voice ("was lent a laptop by IT") or with another object ("refused Globex's
    counteroffer" for "accepted Acme's offer")."""
    mine = next((t for t in parse(claim.text) if t.lemma_.lower() == word), None)
    theirs = next((t for t in parse(quote.text) if opposite in (t.lemma_.lower(), t.lower_)), None)
    if mine is None or theirs is None or theirs.pos_ == "PROPN":
        return False
    if theirs.dep_ == "amod" and theirs.head.dep_ not in ("nsubj", "nsubjpass", "attr", "ROOT"):
        return False
    if theirs.pos_ != "VERB":
        return True
    if theirs.dep_ in ("advcl", "pcomp", "xcomp", "acl", "relcl"):
        return False
    if mine.pos_ == "VERB" and _passive(mine) != _passive(theirs):
        return False  # ("is closed" is passive beside "open")
    ours = {c.lemma_.lower() for c in mine.children if c.dep_ == "dobj"}
    what = {c.lemma_.lower() for c in theirs.children if c.dep_ == "dobj"}
    return not (ours and what and not ours & what)


def _passive(verb: Token) -> bool:
    return any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)


def _same_side(claim: Reading, word: str, quote: Reading, opposite: str, field: bool) -> bool:
    """Whether the quote says ``opposite`` of what the claim says ``word`` of: the claim's
    words before ``word`` (its subject's side, owners aside; "the user" counts) are
    among the quote's before ``opposite``, unless the quote is one field of a record
    ("Tom is Maya's younger brother" is of Tom, not of "Maya ... older"); and, for a
    verb, none of them stand after the opposite, where the one it was done to stands
    ("The Red team lost to the Blue team": the Blue team won; "sells eggs to Ana")."""
    mine = _side(claim, word)
    low = [t.lower() for t in quote.tokens]
    at = quote.order.index(opposite) if opposite in quote.order else low.index(opposite)
    if not field and not mine & _content(quote, 0, at):
        return False
    verb = claim.tags[claim.order.index(word)] == "VERB"
    return not (verb and mine & _content(quote, at + 1))


def _side(reading: Reading, word: str) -> set[str]:
    return _content(reading, 0, reading.order.index(word))


def _content(reading: Reading, start: int, end: int | None = None) -> set[str]:
    """The content lemmas of ``reading``'s tokens from ``start`` to ``end`` ("user"
    counts), a word followed by "'s" (an owner, "Maya's brother") left out."""
    stop = len(reading.order) if end is None else end
    out = set()
    for i in range(start, stop):
        owner = i + 1 < len(reading.tokens) and reading.tokens[i + 1] in ("'s", "\u2019s")
        lemma = reading.order[i]
        if (lemma in reading.lemmas or lemma == "user") and not owner:
            out.add(lemma)
    return out


#: The most tokens a quote may have for an opposite word in it to refute: one short
#: statement (a long sentence says the opposite of other things too).
MAX_OPPOSED_WORDS = 20


def _crossed(claim: Reading, about: Reading) -> bool:
    """Whether the claim's contrast is the evidence's the other way round: what the
    claim sets aside the evidence holds, and what the evidence sets aside the claim
    holds ("on the 9th, not the 11th" against "on the 11th, not the 9th")."""
    return any(w in about.lemmas and w not in about.contrasted for w in claim.contrasted) and any(
        w in claim.lemmas and w not in claim.contrasted for w in about.contrasted
    )


def _names(claim: Reading, evidence: str) -> list[Finding]:
    """Every person, place or thing the claim names must be named in the evidence. A
    missing subject only holds the claim where the evidence may name it by a pronoun
    ("She moved to Leeds" for "Maya moved to Leeds")."""
    low = evidence.lower()
    found = []
    for name in claim.names:
        if _named(name, low) or name.lower() in CALENDAR_WORDS:
            continue
        subject = any(overlaps(name, s) for s in claim.subjects)
        effect: Effect = "doubt" if subject and _PRONOUN.search(evidence) else "refute"
        found.append(Finding("names", effect, f"the evidence never mentions {name}"))
    named_codes = dict.fromkeys(codes(claim.text))
    squashed = _squash(evidence) if named_codes else ""  # most claims name no code
    for code in named_codes:
        if any(
            _squash(name) in _squash(code) or _squash(code) in _squash(name) for name in claim.names
        ):
            continue  # a name, read above ("COVID-19", which "covid" names)
        if not _gives(code, evidence, squashed):
            found.append(Finding("names", "refute", f"the evidence never mentions {code}"))
    return found


def _gives(code: str, evidence: str, squashed: str) -> bool:
    """Whether the evidence gives ``code``, written any way: its letters and digits in
    a row ("AY 1652", "2.13.2" for "v2.13.2"), or its number of three digits or more
    alone ("#4471" for "T-4471")."""
    if _squash(code) in squashed or _squash(code.lstrip("vV")) in squashed:
        return True
    digits = re.sub(r"\D", "", code)
    if len(digits) < 3 or not code.replace("-", "").rstrip("0123456789").isalpha():
        return False  # a version's digits, or "23H2", say nothing alone
    return re.search(rf"(?<![\d.,]){digits}(?![\d.,]\d)", evidence) is not None


def _squash(text: str) -> str:
    """``text`` folded to lower-case letters and digits only ("INV-2231" -> "inv2231")."""
    return re.sub(r"[^a-z0-9]", "", fold(text.lower()))


_PRONOUN = re.compile(r"\b(?:he|she|they|him|her|them|his|hers|their|it|its)\b", re.I)


def _named(name: str, low: str) -> bool:
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


def _speaker(
    claim: Reading,
    about: Reading | None,
    sentences: list[Reading],
    evidence: str,
    cited: tuple[str, ...],
    quoted: list[Reading],
) -> list[Finding]:
    """What the evidence says of one person must not be claimed of another: the
    sentence the claim is about names someone else as its subject and never the
    claim's own subject (refused); or every clause that holds the claim's words has
    someone else as its subject ("My wife Elena is allergic to penicillin" for "Tomás is
    allergic ..."; Tomás's own "I'm allergic to sulfa drugs" for "Elena is allergic
    ..."): held, for on the test split this reading refused a true claim as often as a
    false one (docs/verifier-decision-rule.md, fourth score), and refused where the
    claim cites a quote and the clauses of the quote that hold its words say it of
    someone else too (the claim rests on what it cites, not on context around it;
    ``_cited_speaker``)."""
    found = (
        _said_of(claim, about)
        or _said_of_pronoun(claim, about, evidence)
        or _owned_by_another(claim, about, evidence)
        or _cited_speaker(claim, quoted, sentences, evidence)
    )
    if found or about is None or claim.root in SAYING:
        return found
    held = said_of_someone_else(claim, sentences, evidence)
    if not held:
        return []
    if (
        quoted
        and said_of_someone_else(claim, quoted, evidence, among=sentences)
        and not received(claim, list(cited))  # "gave Maya a promotion"
    ):
        return [Finding("speaker", "refute", f"{held}, in the words it cites")]
    return [Finding("speaker", "doubt", held)]


def _cited_speaker(
    claim: Reading, quoted: list[Reading], sentences: list[Reading], evidence: str
) -> list[Finding]:
    """The words the claim cites say its predicate of someone else
    (``gate.subjects.quoted_of_someone_else``), or open with a "he" or "she" their turn
    says of someone else (``_said_of_pronoun``): refused."""
    if not quoted or claim.root in SAYING:
        return []
    why = quoted_of_someone_else(claim, quoted, sentences, evidence)
    if why:
        return [Finding("speaker", "refute", f"{why}, in the words it cites")]
    for piece in quoted:
        found = _said_of_pronoun(claim, piece, evidence)
        if found:
            return found
    return []


def _within(text: str, cited: tuple[str, ...]) -> bool:
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


def _said_of(claim: Reading, about: Reading | None) -> list[Finding]:
    """The sentence the claim is about names someone else as its subject and never the
    claim's own subject; "Maya says ..." is checked against who said it."""
    if about is None or claim.subject is None:
        return []
    if denies(claim, claim.lemmas) and not denies(about, claim.lemmas):
        return []  # "Ana did not win" against "Bo won": the polarity check's to read
    subject = claim.subject  # of the main verb: not a subordinate clause's
    if claim.root in SAYING and about.speaker is not None:
        if overlaps(about.speaker, subject) or _named(subject, about.text.lower()):
            return []  # "Maya says ...": Maya's turn says it, or reports what Maya said
        return [Finding("speaker", "refute", f"{about.speaker} said this, not {subject}")]
    turned = _turned(claim, about, subject)
    if turned:
        return [
            Finding(
                "direction",
                "refute",
                f"the evidence has it the other way round: {turned} comes before "
                f'"{claim.root}", not {subject}',
            )
        ]
    said_of = [s for s in about.subjects if not overlaps(s, subject)]
    if not said_of:
        return []
    if not any(overlaps(n, subject) for n in about.names):
        return [
            Finding(
                "speaker", "refute", f"the evidence says this of {said_of[0]}, not of {subject}"
            )
        ]
    others = [n for n in claim.names if not overlaps(n, subject)]
    swapped = [s for s in said_of if any(overlaps(s, n) for n in others)]
    if swapped and not any(overlaps(s, subject) for s in about.subjects):
        return [
            Finding(
                "direction",
                "doubt",
                f"in the evidence {swapped[0]} is the subject, not {subject}",
            )
        ]
    return []


def _owned_by_another(claim: Reading, about: Reading | None, evidence: str) -> list[Finding]:
    """The claim gives a thing of one person's ("Karen's favourite subject") that the
    sentence it is about gives as someone else's by name ("Leo's favourite subject"; not
    "Mum's"), and that sentence's turn never names the claim's person: refused."""
    if about is None:
        return []
    turn = _in_turn(about.text, evidence)
    through = (turn[1] if turn else about.text).lower()  # the turn up to that sentence
    for owner, dep, owned in claim.slots:
        if dep != "poss" or not (name := _name_of(owner, claim)) or name.isupper():
            continue  # an acronym ("the SEC's rule") may be the other's short name
        others = [
            o
            for o, d, t in about.slots
            if d == "poss" and t == owned and o != owner and o not in PERSON_NOUNS
        ]  # "Mum's birthday" may be Karen's
        other = next((n for o in others if (n := _name_of(o, about))), None)
        if other is not None and not _named(name, through):
            reason = f"the evidence says {other}'s {owned}, not {name}'s"
            return [Finding("speaker", "refute", reason)]
    return []


def _name_of(lemma: str, reading: Reading) -> str | None:
    """The name in ``reading`` whose last word is ``lemma`` ("karen" -> "Karen")."""
    return next((n for n in reading.names if n.lower().split()[-1] == lemma), None)


#: A sentence or clause whose subject is "he" or "she" ("so she's lactose intolerant").
_HE_OR_SHE = re.compile(r"^(?:(?:and|but|so|because|then|since)\s+)?(?P<pronoun>he|she)\b", re.I)


def _said_of_pronoun(claim: Reading, about: Reading | None, evidence: str) -> list[Finding]:
    """The sentence the claim is about opens with "he" or "she", which its turn says of
    the one person it named before beside a noun for a person (of that gender, if it
    has one), with no other "he" or "her" before it (``language.pronouns.antecedent``:
    "My daughter Ivy is coming too, she's lactose intolerant"), and that turn never
    names the claim's subject: refused, as said of someone else."""
    if about is None or claim.subject is None or about.subjects or claim.root in SAYING:
        return []
    pronoun = _HE_OR_SHE.match(about.text)
    if pronoun is None or (turn := _in_turn(about.text, evidence)) is None:
        return []
    before, through = turn
    person = antecedent(before, about.speaker)
    said = pronoun.group("pronoun")
    if (
        person is None
        or not person.beside  # named beside a noun for a person: not a company
        or person.gender not in (None, said.lower())  # "my husband Tom ... she": not Tom
        or THIRD_PERSON.search(before)  # "took her": someone else is about
        or overlaps(person.name, claim.subject)
        or _named(claim.subject, _OWNER.sub(" ", through.lower()))  # not "Dmitri's wife"
    ):
        return []
    reason = f'the evidence says this of {person.name} ("{said}"), not of {claim.subject}'
    return [Finding("speaker", "refute", reason)]


#: A name as someone's owner ("dmitri's" in "Dmitri's wife Anya ... she did").
_OWNER = re.compile(r"[\w-]+'s\b")


def _turn_label(evidence: str, at: int) -> re.Match[str] | None:
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
    label = _turn_label(evidence, at)
    if label is not None:
        return min(label.end(), at)
    return evidence.rfind("\n\n", 0, at) + 2 if "\n\n" in evidence[:at] else 0


def _in_turn(text: str, evidence: str) -> tuple[str, str] | None:
    """Where ``text`` first stands in ``evidence``: its turn's words before it, and
    through it (None where it is not there as written)."""
    at = evidence.find(text)
    if at < 0:
        return None
    start = _turn_start(evidence, at)
    return evidence[start:at], evidence[start : at + len(text)]


def _turned(claim: Reading, about: Reading, subject: str) -> str | None:
    """The claim's other name where the evidence puts it before the claim's verb and
    the claim's subject after it ("A replaces B" against "B replaces A")."""
    if claim.root is None or claim.root not in about.order:
        return None
    verb = about.order.index(claim.root)
    first = subject.lower().split()[0]
    if first not in about.order or about.order.index(first) < verb:
        return None
    for other in claim.names:
        word = other.lower().split()[0]
        if not overlaps(other, subject) and word in about.order[:verb]:
            return other
    return None


def _words(
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
        return [Finding("words", "support", f'the evidence states it: "{_short(about.text)}"')]
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


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


__all__ = ["CHECKS", "Finding", "check", "check_many"]
