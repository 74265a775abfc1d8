"""Speakers: first person read as the person who said it.

"I'm allergic to peanuts" said by Alice is "Alice is allergic to peanuts."; "my
manager" is "Alice's manager". A rewrite that would leave a first-person word behind
(a case this cannot rewrite) is refused (None), never guessed at.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from language.parsing import parse
from language.people import PERSON_NOUNS
from language.sentences import sentence_spans

if TYPE_CHECKING:
    from spacy.tokens import Token

FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.I)
#: "We" and its forms: an organisation's speaker may say them of it.
FIRST_PLURAL = re.compile(r"\b(?:we|we're|we've|we'd|we'll|our|ours|us|ourselves)\b", re.I)
MODALS = frozenset(
    "can could will would should must might may shall can't cannot won't wouldn't shouldn't "
    "couldn't mustn't didn't wasn't weren't hadn't".split()
)
ADVERBS = frozenset(
    "never always usually often really also still just only sometimes rarely already even "
    "mostly finally recently now no longer last first once currently generally normally "
    "occasionally actually mainly hardly barely seldom regularly".split()
)
#: Common irregular past tenses (kept as they are after a third-person subject).
PAST = frozenset(
    "went had was did got made took saw left met bought came began ran ate drank wrote gave found "
    "told thought lost became felt kept sold spent built taught caught brought fell flew grew "
    "knew quit won wore broke chose drove forgot heard hid held hurt led lent paid put rode "
    "rang sent set shut sang sat slept spoke stood stole swam threw understood woke said meant "
    "dealt sought fought fed shot laid bent lit struck swore tore wept fled froze hung knelt "
    "sank stung".split()
)
#: Pasts written as their present ("I reset it every week": "resets").
_SAME_IN_PRESENT = frozenset("set put hurt quit shut cut let read hit cost".split())
#: Present tenses that end in -ed all the same ("I need" is not a past).
_PRESENT_EED = frozenset(
    "need feed bleed breed speed seed heed weed proceed succeed exceed".split()
)
_IRREGULAR_PRESENT = {
    "have": "has",
    "do": "does",
    "go": "goes",
    "am": "is",
    "be": "is",
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
}
#: Verb forms that already follow "he" or "she" as they are.
_ALREADY_AGREED = frozenset("is was has does goes".split())
#: "Type I diabetes", "World War I": a capital word right before "I" makes it a numeral.
#: "I" before a word no first-person verb is ("Type I diabetes", "I and II"): a
#: numeral, or a sentence this cannot rewrite.
_NUMERAL_I = re.compile(
    r"\bI\s+(?!(?:was|has|does|is)\b)"
    r"(?:[a-z]+(?<![su]s)(?<=[a-z]s)|and|or|of|in|on|at|to|for|with|the|a|an)\b"
)


def third_person(verb: str) -> str:
    """``verb`` as it follows "he" or "she" ("live" -> "lives", "go" -> "goes")."""
    low = verb.lower()
    if low in _IRREGULAR_PRESENT:
        return _IRREGULAR_PRESENT[low]
    if low in _ALREADY_AGREED:
        return verb
    past = low.endswith("ed") and low not in _PRESENT_EED
    prefixed = re.match(r"(?:mis|over|under|out|re|fore|with|un)(?=[a-z]{3})", low)
    if prefixed and low[prefixed.end() :] in PAST - _SAME_IN_PRESENT:
        past = True  # "misspoke", "overslept", "undertook"
    if low in MODALS or low in PAST or past or low.endswith("n't"):
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


#: A first-person subject with its verb, and that verb after a name ("I'm" -> "is").
_I_WITH_VERB = (
    (r"\bI'm\b", "is"),
    (r"\bI am\b", "is"),
    (r"\bI've\b", "has"),
    (r"\bI'd\b", "would"),
    (r"\bI'll\b", "will"),
    (r"\bI was\b", "was"),
)
#: The same for "we" ("we're" -> "is", "we were" -> "was"): said of an organisation.
_WE_WITH_VERB = (
    *(
        (pattern.replace("I", "[Ww]e").replace("'m", "'re").replace(" am", " are"), verb)
        for pattern, verb in _I_WITH_VERB
        if "was" not in pattern
    ),
    (r"\b[Ww]e were\b", "was"),
)


def _with_verbs(text: str, forms: tuple[tuple[str, str], ...], name: str) -> str:
    """``text`` with each subject-and-verb of ``forms`` said of ``name``."""
    for pattern, verb in forms:  # a name is not a template: escape its backslashes
        text = re.sub(pattern, f"{name} {verb}".replace("\\", "\\\\"), text)
    return text


def resolve_first_person(sentence: str, speaker: str) -> str | None:
    """The sentence with "I", "me" and "my" replaced by ``speaker``; None where a first-
    person word is left that this cannot rewrite."""
    text = _without_emphatic_self(sentence.replace("\u2019", "'"))
    possessive = f"{speaker}'s"
    if _NUMERAL_I.search(text):
        return None  # "I" may be a numeral here: not rewritten, not guessed at

    def subject(m: re.Match[str]) -> str:
        adverbs, verb, negation = m.group(1), m.group(2), m.group(3) or ""
        verb = "does" if verb.lower() == "do" and negation else third_person(verb)
        return f"{speaker}{adverbs} {verb}{negation}"

    text = _with_verbs(text, _I_WITH_VERB, speaker)
    adverbs = "|".join(sorted(ADVERBS))
    # "My husband and I are": one of several subjects, the verb stays as it is; not
    # "I live in York and I work ...", where "I" is the subject of a clause of its own.
    if _AND_I.search(text):
        joined = _one_of_several(text)
        text = _AND_I.sub(
            lambda m: f"{m.group(1)} {speaker}" if m.end() - 1 in joined else m.group(0), text
        )
    text = re.sub(rf"\bI((?:\s+(?:{adverbs}))*)\s+([A-Za-z']+)(\s+not\b)?", subject, text)
    text = re.sub(r"\b(?:my|mine)\b", lambda _m: possessive, text, flags=re.I)
    text = re.sub(r"\b(?:all )?by myself\b", "alone", text)  # "I live by myself"
    text = re.sub(r"\b(?:me|myself)\b", lambda _m: speaker, text)
    if FIRST_PERSON.search(text):
        return None
    text = _agree_conjoined(text.strip(), speaker)
    if text.startswith(speaker[0].lower() + speaker[1:]) and speaker[0].islower():
        text = speaker[0].upper() + text[1:]
    return text if text.endswith((".", "!")) else text + "."


#: "and I", "or I": one of several subjects, or a clause's own subject.
_AND_I = re.compile(r"\b(and|or|nor)\s+I\b")


def _one_of_several(text: str) -> set[int]:
    """Where an "I" after "and" / "or" is one of several subjects: the word before the
    "and" (a comma aside) is a subject, or joined to one ("Ana and I share", "Ana, Tom,
    and I are"), not the end of a clause ("I live in York and I work")."""
    doc = parse(text)
    found = set()
    for token in doc:
        if token.text != "I" or token.i < 2 or doc[token.i - 1].lower_ not in ("and", "or", "nor"):
            continue
        before = doc[token.i - 2]
        if before.text == "," and token.i >= 3:
            before = doc[token.i - 3]
        while before.dep_ == "conj" and before.head is not before:
            before = before.head
        subject = before.dep_ in ("nsubj", "nsubjpass") or (
            before.dep_ == "ROOT" and before.pos_ != "PRON"  # misparsed: "Ana and I share"
        )
        if subject and before.pos_ in ("NOUN", "PROPN", "PRON"):
            found.add(token.idx)
    return found


#: A verb that may share the subject of the one before it ("... and need to ...").
_CONJOINED = re.compile(r"\b(?:and|or|but|then)\s+(?:[a-z]+\s+)?[a-z]+\b")


def _agree_conjoined(text: str, speaker: str) -> str:
    """Verbs that share the speaker's subject with the verb before them, in the third
    person too ("Aiko is getting a new kitchen and need ..." -> "... and needs ...")."""
    if not _CONJOINED.search(text):
        return text
    doc = parse(text)
    name = speaker.split()[-1].lower()
    edits: list[tuple[int, int, str]] = []
    for token in doc:
        if token.dep_ != "conj" or token.pos_ not in ("VERB", "AUX"):
            continue
        if any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in token.children):
            continue  # a subject of its own: "... and they need"
        head = token.head
        while head.dep_ == "conj" and head.head is not head:
            head = head.head
        subjects = [c for c in head.children if c.dep_ in ("nsubj", "nsubjpass")]
        if len(subjects) != 1 or subjects[0].text.lower() != name:
            continue
        if any(c.dep_ == "conj" for c in subjects[0].children):
            continue  # "Aiko and Ben live ... and work ...": theirs, plural
        auxes = [c for c in token.children if c.dep_ in ("aux", "auxpass")]
        if auxes:  # "... and have been since": its own auxiliary, if that is finite
            target = auxes[0] if auxes[0].tag_ == "VBP" else None
        elif token.tag_ == "VBP" or (token.tag_ == "VB" and _finite(head)):
            target = token  # "... and need", "lives ... and work": not "can swim and dive"
        else:
            target = None
        if target is not None:
            edits.append((target.idx, target.idx + len(target.text), third_person(target.text)))
    for start, end, word in reversed(edits):
        text = text[:start] + word + text[end:]
    return text


def _finite(verb: Token) -> bool:
    """Whether ``verb`` is a present tense of its own ("lives"), or a form of "be" or
    "have" makes it one ("is moving"), so a bare verb joined to it is no infinitive
    under "does", "can" or "will"."""
    if verb.tag_ == "VBZ":
        return True
    return any(
        c.dep_ == "aux" and c.tag_ == "VBZ" and c.lemma_ in ("be", "have") for c in verb.children
    )


def _without_emphatic_self(text: str) -> str:
    """``text`` without an emphatic "myself" ("I used to work at Datadog myself" -> "I
    used to work at Datadog"): it adds no one, and "Greg ... Datadog Greg" would read
    as a name. A reflexive one ("I hurt myself", "by myself") stays."""
    if "myself" not in text.lower():
        return text
    from language.parsing import parse  # spaCy, only for the sentences that need it

    cut = [
        t for t in parse(text) if t.lower_ == "myself" and t.dep_ in ("appos", "npadvmod", "advmod")
    ]
    for token in reversed(cut):
        start = token.idx
        while start > 0 and text[start - 1] == " ":
            start -= 1
        text = text[:start] + text[token.idx + len(token.text) :]
    return text


#: What an organisation does, as a verb after its "we" ("we use Datadog", "we're 120
#: people", "we'd need SSO"); "we met", "we went to the beach", "we should grab dinner"
#: are the people themselves, and stay "we".
ORGANISATION_VERBS = frozenset(
    """be have use run need want require prefer expect pay spend budget buy sell offer
    provide serve ship build develop hire employ monitor host deploy operate process
    store support manage plan sign renew license migrate switch evaluate consider own
    acquire outsource handle cover charge bill invoice launch release close open sponsor
    partner integrate standardize standardise rely depend""".split()
)
#: Words that make "we" some of the people present, or the people themselves: "we
#: both", "each other", "most of us", "we at Brightwave", "you and we".
_PEOPLE_WE = re.compile(
    r"\b(?:both|all|each|together|one another|between us|of us|on us|with us|join us|"
    r"let us|we at|we and|and we|we two|as we|our own|ourselves)\b",
    re.I,
)


def resolve_first_plural(sentence: str, group: str) -> str | None:
    """The sentence with "we", "our" and "us" read as ``group`` ("We use Datadog" ->
    "Brightwave uses Datadog."; "our contract ends in June" -> "Brightwave's contract
    ends in June."; "a must for us" -> "a must for Brightwave"); None where one of them
    may mean the people themselves (a verb not in ``ORGANISATION_VERBS``, "our" before a
    person or a home, "we both", a question) or a form is left this cannot rewrite."""
    text = sentence.replace("\u2019", "'")
    if text.rstrip().endswith("?") or _PEOPLE_WE.search(text):
        return None
    for token in parse(text):
        word = token.lower_
        if word == "we" and not _organisation_verb(token.head):
            return None
        if word in ("our", "ours") and token.head.lemma_.lower() in _PERSONAL:
            return None
        if word == "us" and token.head.lower_ != "for":
            return None  # "a must for us"; not "thanks for having us", "talk to us"
    possessive = f"{group}'s"
    text = _with_verbs(text, _WE_WITH_VERB, group)
    adverbs = "|".join(sorted(ADVERBS))

    def subject(m: re.Match[str]) -> str:
        verb = m.group(2)
        if verb.lower() in MODALS or verb.lower() in ("did", "didn't"):
            return f"{group}{m.group(1)} {verb}"
        return f"{group}{m.group(1)} {third_person(verb)}"

    text = re.sub(rf"\b[Ww]e((?:\s+(?:{adverbs}))*)\s+([a-z']+)", subject, text)
    text = re.sub(r"\b(?:[Oo]ur|[Oo]urs)\b", lambda _m: possessive, text)
    text = re.sub(r"\b(?:us|ourselves)\b", lambda _m: group, text)
    if FIRST_PLURAL.search(text):
        return None
    text = text.strip()
    return text if text.endswith((".", "!")) else text + "."


def _organisation_verb(verb: Token) -> bool:
    """Whether ``verb`` says what an organisation does (``ORGANISATION_VERBS``), the verb
    it leads to as well ("we want to buy": "want" and "buy"; not "we need to talk"); "be"
    and "have" in the present only ("we're 120 people"; not "we had a great time")."""
    lemma = verb.lemma_.lower()
    if lemma not in ORGANISATION_VERBS:
        return False
    if lemma in ("be", "have") and verb.tag_ == "VBD":
        return False
    return all(_organisation_verb(c) for c in verb.children if c.dep_ == "xcomp")


#: What "our" may own that is the people's, not an organisation's ("our kids").
_PERSONAL = PERSON_NOUNS | frozenset(
    """house home flat apartment family kid kids child children wedding honeymoon dog cat
    pet car holiday vacation trip garden anniversary call meeting chat conversation talk
    date dinner lunch breakfast plan weekend""".split()
)


#: A turn's speaker label ("Maya: ", "Dr. Okonkwo: "), left out of what is parsed.
LABEL = re.compile(
    r"(?P<speaker>(?:[A-Z][\w.'-]*|@[\w.-]+)(?: [A-Z][\w.'-]*){0,3})"
    r"(?: \([^)\n]{1,40}\))?:[ \t]+(?=\S)"
)
#: "Maya: I live in Leeds." A turn's speaker, its colon, then what they said.
_TURN = re.compile(
    r"^(?P<lead>[ \t]*(?P<who>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,3}):[ \t]+)(?P<said>.+)$", re.M
)
#: Speakers by role, as the statements about them name them; roles that are no one.
_ROLES = {
    "user": "the user",
    "assistant": "the assistant",
    "human": "the user",
    "ai": "the assistant",
}
#: Labels before a colon that name no speaker: roles that are no one, headers and
#: the labels of notes, logs and Q&A.
_NO_ONE = frozenset(
    "system tool function developer note notes subject re fwd from to cc bcc date time "
    "update edit status summary error warning info debug question answer reply response "
    "ps tldr fyi tip todo example step result output input log source title correction "
    "reminder important urgent context background agenda goal goals task tasks plan idea "
    "ideas issue problem fix solution request reason details detail feedback follow-up "
    "update updates news heads-up btw also addendum clarification nb caution quote "
    "location address phone email time place when where who what why how".split()
)
#: A sentence that quotes or reports someone else: its "I" may be theirs.
_OTHERS_WORDS = re.compile(
    r"[\"\u201c\u201d]|\b(?:said|says|told|tells|asked|asks|wrote|writes|texted|replied|"
    r"mentioned|claims|claimed)\b",
    re.I,
)


def as_said(text: str, groups: tuple[tuple[str, str], ...] = ()) -> str:
    """``text`` with each turn's first person read as its speaker ("Maya: I live in
    Leeds." -> "Maya: Maya lives in Leeds."; "User: my sister ..." -> "User: the user's
    sister ..."), and "we" as the organisation ``groups`` pairs with its speaker, if any
    ("Lena: We use Datadog." -> "Lena: Brightwave uses Datadog."; see
    ``language.organisations.sides``). Kept as written: a sentence that cannot be
    rewritten cleanly, a question, a sentence that quotes or reports someone else ("Bob
    told me ..."), lines that are not turns, and labels that name no one ("System:",
    "Q:", "Update:")."""
    ours = dict(groups)

    def turn(match: re.Match[str]) -> str:
        who = match.group("who")
        if who.lower() in _NO_ONE or len(who) < 2:  # "Q:", "A:", "Update:" name no one
            return match.group(0)
        speaker = _ROLES.get(who.lower(), who)
        said = match.group("said")
        out, cursor = [], 0
        for start, end in sentence_spans(said):
            sentence = said[start:end]
            group = ours.get(who)
            if group and FIRST_PLURAL.search(sentence) and _rewritable(sentence, plural=True):
                sentence = _keep_end(sentence, resolve_first_plural(sentence, group) or sentence)
            rewritten = resolve_first_person(sentence, speaker) if _rewritable(sentence) else None
            out.append(said[cursor:start])
            out.append(sentence if rewritten is None else _keep_end(sentence, rewritten))
            cursor = end
        out.append(said[cursor:])
        return match.group("lead") + "".join(out)

    return _TURN.sub(turn, text)


def _says_what(text: str) -> bool:
    """Whether a text's one-word label says what happened or how it went ("Done:",
    "Confirmed:", "Okay:"), not who speaks: as parsed in its text, a past participle or
    tense, or an interjection. An adjective or adverb may be a name ("Lily:", "Sunny:")."""
    from language.parsing import parse  # spaCy, only for the texts that need it

    doc = parse(text[:200])
    return bool(len(doc)) and (doc[0].tag_ in ("VBN", "VBD") or doc[0].pos_ == "INTJ")


def one_turn(text: str) -> tuple[str, str] | None:
    """(label, words) of a text that is one labelled turn ("Lena: We use Datadog."), read
    as ``as_said`` reads labels; None where it has no label or holds several turns."""
    match = _TURN.match(text)
    if match is None or any(_TURN.match(line) for line in text[match.end() :].splitlines()[1:]):
        return None
    return match.group("who"), text[match.start("said") :]


def turn_label(text: str) -> tuple[str, int] | None:
    """(speaker, where their words start) of a text that is one labelled turn ("Caroline:
    I went to a support group."), else None: no label, a label that names no one
    ("Note:", "Q:", "User:", "Done:"), or several turns in one text."""
    match = _TURN.match(text)
    if match is None:
        return None
    who = match.group("who")
    if who.lower() in _NO_ONE or who.lower() in _ROLES or len(who) < 2:
        return None
    if " " not in who and _says_what(text):
        return None  # "Done: a reminder for Friday.", "Confirmed: your table for two."
    if any(_TURN.match(line) for line in text[match.end() :].splitlines()[1:]):
        return None  # a transcript of several turns: not one speaker's
    return who, match.start("said")


def _rewritable(sentence: str, plural: bool = False) -> bool:
    """A statement in the speaker's own first person (``plural``: "we"): not a question,
    and quoting or reporting no one else."""
    return (
        (FIRST_PLURAL if plural else FIRST_PERSON).search(sentence) is not None
        and not sentence.rstrip().endswith("?")
        and _OTHERS_WORDS.search(sentence) is None
    )


def _keep_end(original: str, rewritten: str) -> str:
    """The rewrite ending as the original did (no "." added to a "?" or a bare end)."""
    body = rewritten.rstrip(".!?")
    tail = original[len(original.rstrip(".!?")) :]
    return body + tail
