"""A short answer read with the question it answers.

"What's your notice period?" answered "Two months." says "Ravi's notice period is two
months."; "How far do you run?" answered "About 20 km a week." says "Dmitri runs about 20
km a week."; "When is your test?" answered "It's on Monday." says "Leo's test is on
Monday."; "Your salary expectation is 95k, correct?" answered "Yes." says it is 95k,
answered "Actually it's 105k now." says it is 105k now; "How many hosts do you monitor?"
answered "It's closer to 600." says "Lena monitors closer to 600." (an "it's" answers an
amount only with a number), or, where Lena speaks for an organisation in a call between
two ("I'm the CTO at Brightwave"; ``language.organisations.sides``), is asked by the other
side, and the verb is one only organisations do (``ORGANISATION_DEEDS``: "monitor",
"deploy", "hire"; with "you guys" or "you all", any of ``ORGANISATION_VERBS``), with
nothing after it, "Brightwave monitors closer to 600." ("do you personally", "...
yourself" stay the person's). Only
questions put to the one who answers ("your", "you") in these shapes are read: what,
when or where is your <thing>; your <thing> is <value>, right; which <thing> are you in,
at or from; how many <things>, how much, how far, how often, where or when do you
<verb>. Anything else (a yes or no to another question, "what do you do?", a question
about someone else) stays unread: the answer is then kept as said.
"""

from __future__ import annotations

import re

from language.parsing import verb_in
from language.speakers import ORGANISATION_VERBS, third_person

#: "What's your notice period?", "When is your test again?"
_YOUR = re.compile(
    r"^(?:and|so|ok|okay)?,?\s*(?:what|when|where)(?:'s|\s+is|\s+was)\s+your\s+"
    r"(?P<thing>[a-z][a-z' -]{0,40}?)(?:\s+again)?\s*\?$",
    re.I,
)
#: "Which flat are you in?"
_WHICH = re.compile(
    r"^(?:and|so|ok|okay)?,?\s*which\s+(?P<thing>[a-z][a-z -]{0,30}?)\s+are\s+you\s+"
    r"(?P<prep>in|at|on|from|with)(?:\s+again)?\s*\?$",
    re.I,
)
#: "How many hosts do you monitor?", "How far do you run?", "Where do you work?"
_DO_YOU = re.compile(
    r"^(?:and|so|ok|okay)?,?\s*(?:how\s+(?:many|much)\s+[a-z][a-z -]{0,30}?|how\s+far|"
    r"how\s+often|where|when)\s+do\s+you(?P<plural>\s+(?:guys|all|folks))?"
    # "do you currently monitor": the adverb is no verb
    r"(?:\s+(?:currently|usually|normally|typically|still|actually|really|(?P<own>personally)))?"
    r"\s+(?P<verb>[a-z]+)(?P<rest>(?:\s+[a-z]+){0,2}?)\s*\?$",
    re.I,
)
#: "yourself" after the verb: the person's own doing, said without it.
_YOURSELF = re.compile(r"\s*\b(?:yourself|yourselves)\b", re.I)
#: "your" after the verb: the one who answers ("renew your passport").
_YOUR_WORD = re.compile(r"\byour\b", re.I)
#: "Your salary expectation is 95k, correct?": a value put to the one who answers.
_CONFIRM = re.compile(
    r"^(?:and|so|ok|okay)?,?\s*your\s+(?P<thing>[a-z][a-z' -]{0,40}?)\s+(?:is|was)\s+"
    r"(?P<value>[^,?]{1,40}?),?\s+(?:correct|right|yes|is that (?:right|correct))\s*\?$",
    re.I,
)
#: Answers that say yes to the value put.
_YES = re.compile(r"^(?:yes|yep|yeah|correct|that's (?:right|correct)|right|exactly)$", re.I)
#: "It's on Monday.": the answer's "it" is the thing asked about.
_IT_IS = re.compile(r"^(?:it's|it is|it was)\s+", re.I)
#: "How many hosts do you monitor?": answered "It's about 600." as well as "About 600."
_AMOUNT = re.compile(r"^(?:and|so|ok|okay)?,?\s*how\s+(?:many|much|far|often)\b", re.I)
#: A number in digits or words: what an "it's ..." answer to ``_AMOUNT`` must hold.
_NUMBER = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|dozen|once|twice)\b",
    re.I,
)
#: What only an organisation does, asked "do you ...?" of one who speaks for it ("How
#: many hosts do you monitor?"). Narrower than the verbs of its "we"
#: (``language.speakers.ORGANISATION_VERBS``): a "you" may be the person, and people
#: run, manage, plan, own, buy, use and expect things too.
ORGANISATION_DEEDS = frozenset(
    """monitor host deploy employ hire process ship sell license licence invoice bill
    migrate integrate outsource operate""".split()
)
#: Verbs too vague to say what the answer means ("what do you do?").
_VAGUE = frozenset("do have get make think mean need want".split())
#: An answer longer than this is a statement of its own, not a short answer.
MAX_ANSWER_WORDS = 10


def answered(
    question: str,
    answer: str,
    speaker: str,
    *,
    first: bool = True,
    organisation: str | None = None,
) -> str | None:
    """The statement ``answer`` makes as the answer to ``question``, said of ``speaker``
    (or of the ``organisation`` the speaker speaks for, where "do you" asks what an
    organisation does); None where the question is not one of the shapes read, or the
    answer is no short one (a sentence with a subject of its own, or over
    ``MAX_ANSWER_WORDS`` words). Past the answer's ``first`` sentence, only "it's ..."
    answers ("Two months. Sorry, it's three months.")."""
    said = _answered(question, answer, speaker, first, organisation)
    return None if said is None else said[:1].upper() + said[1:]  # "the user's ..." opens one


def _answered(
    question: str, answer: str, speaker: str, first: bool, organisation: str | None
) -> str | None:
    question = " ".join(question.replace("\u2019", "'").split())
    said = " ".join(answer.replace("\u2019", "'").split()).rstrip(".!")
    put = _CONFIRM.match(question)
    if put and first and _YES.match(said):  # "Yes." to "Your test is on Monday, right?"
        return f"{speaker}'s {put.group('thing').strip()} is {put.group('value').strip()}."
    if _YES.match(said) or said.lower() in ("no", "nope"):
        return None  # a yes or no answers no "what" question
    it = _IT_IS.match(said)
    if it:
        said = said[it.end() :]
    if not said or len(said.split()) > MAX_ANSWER_WORDS or said.endswith("?"):
        return None
    if not it and (not first or verb_in(said)):
        return None  # "I work at Acme.": a statement of its own
    value = _lower_first(said)
    if m := _YOUR.match(question):
        return f"{speaker}'s {m.group('thing').strip()} is {value}."
    if put and it:  # "Actually it's 105k now." to "Your salary expectation is 95k, correct?"
        return f"{speaker}'s {put.group('thing').strip()} is {value}."
    if it and not (_AMOUNT.match(question) and _NUMBER.search(value)):
        return None  # "it" is the thing asked about after "what is your ...", "how many"
    if m := _WHICH.match(question):
        return f"{speaker} is {m.group('prep').lower()} {value}."
    if (m := _DO_YOU.match(question)) and m.group("verb").lower() not in _VAGUE:
        rest = m.group("rest").strip()
        base = m.group("verb").lower()
        own = bool(m.group("own") or _YOURSELF.search(rest))  # "personally", "yourself"
        deeds = ORGANISATION_VERBS if m.group("plural") else ORGANISATION_DEEDS  # "you guys"
        ours = organisation and base in deeds and not rest and not own
        who = organisation if ours else speaker
        rest = _YOUR_WORD.sub(f"{who}'s", _YOURSELF.sub("", rest)).strip()
        return f"{who} {third_person(base)}{' ' + rest if rest else ''} {value}."
    return None


def _lower_first(text: str) -> str:
    """The answer's first word in lower case, unless it is a name or a code ("Flat 3B"
    stays; "Two months" -> "two months")."""
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower() and first.lower() in _COMMON_OPENERS:
        return text[:1].lower() + text[1:]
    return text


#: Words that open a short answer in capitals only because they open it.
_COMMON_OPENERS = frozenset(
    """about around roughly almost nearly over under just only maybe one two three four
    five six seven eight nine ten eleven twelve a an the every each on in at since from
    by before after until till last next this mostly usually twice once daily weekly
    monthly yearly annually quarterly hourly nightly today tomorrow yesterday tonight
    always never sometimes often rarely""".split()
)
