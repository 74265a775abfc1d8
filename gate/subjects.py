"""Who a claim is about, and who each clause of its evidence is said of.

The gate's ``speaker`` and ``polarity`` checks (``gate.checks``) read the evidence clause
by clause (``language.parsing.clauses``): the subject of each clause is a person (a
turn's "I" is its speaker; "my wife Elena" is Elena; "my husband" and "Priya's dad" are
not Priya; "he" in Priya's own turn is not Priya) or a thing someone has ("Leo's
favourite subject"). A claim is said of someone else where every clause that holds its
words is; denied where every clause that says its predicate of its subject denies it.
"""

from __future__ import annotations

import re

from language.parsing import FIRST_PERSON, THIRD_PERSON, Clause, Reading, same_predicate
from language.people import PERSON_NOUNS, fold, is_role, name_words, overlaps
from language.speakers import LABEL
from language.values import valued


def _person(claim: Reading) -> str | None:
    """Who the claim is about: the one named subject of its main verb ("Maya", "the
    user"), else None (also for a relation between people: "Kofi is Maya's roommate")."""
    if not claim.clauses or len(claim.clauses[0].agents) != 1:
        return None
    if claim.lemmas & PERSON_NOUNS:  # "Kofi is the user's roommate": a relation, not a deed
        return None
    who = claim.clauses[0].agents[0]
    return None if who == FIRST_PERSON or who in THIRD_PERSON or who.startswith("my ") else who


def received(claim: Reading, texts: list[str]) -> bool:
    """Whether the claim's person stands in ``texts`` other than as someone's owner or
    what a "not" sets aside ("Maya's boss gave Maya a promotion" for "Maya got a
    promotion": the one the deed was done to)."""
    person = _person(claim)
    if person is None:
        return False
    word = re.escape(person.split()[-1])
    bare = re.compile(rf"(?<!\bnot )\b{word}\b(?!'s|\u2019s)", re.I)
    return any(bare.search(text) for text in texts)


def _holding(claim: Reading, person: str, sentences: list[Reading]) -> list[tuple[Clause, Reading]]:
    """The evidence's clauses that hold every word of the claim but its subject's and
    its values, each with the sentence it is in."""
    words = name_words(person) | {"user"}
    wanted = frozenset(w for w in claim.lemmas if fold(w) not in words and not valued(w))
    if not wanted:
        return []
    return [(c, s) for s in _stated(sentences) for c in s.clauses if wanted <= c.lemmas]


def said_of_someone_else(
    claim: Reading,
    sentences: list[Reading],
    evidence: str,
    among: list[Reading] | None = None,
) -> str | None:
    """Where clauses of the evidence hold the claim's words: "" when one says it of the
    claim's subject (or of someone these rules cannot place), else why it is said of
    someone else; None where no clause holds them. ``among``: all the evidence's
    pieces, where ``sentences`` are some of them (whether the claim's person is someone
    other than the user is read from all)."""
    person = _person(claim)
    if person is None:
        return None
    holding = _holding(claim, person, sentences)
    if not holding:
        return None
    apart = _apart(person, sentences if among is None else among, evidence)
    reasons = []
    voice = claim.clauses[0].passive
    for clause, sentence in holding:
        if clause.passive != voice:  # "X ranked Bogart" says nothing of X by Bogart's claim
            return ""
        if clause.denied != claim.clauses[0].denied:
            return ""  # "Ana did not win" against "Bo won": the polarity check's to read
        other = _someone_else(clause, sentence.speaker, person, apart)
        if other is None:
            return ""
        reasons.append(other)
    return reasons[0]


def _apart(person: str, sentences: list[Reading], evidence: str) -> bool:
    """Whether the evidence speaks of ``person`` as someone other than the user: named
    as someone's ("my sister Marta", "the user's teacher, Señora Vidal"), or the subject
    of a clause in the user's own turn ("Claire can't eat shellfish")."""
    first = re.escape(person.split()[0])
    if re.search(_INTRODUCED.format(first), evidence, re.I) is not None:
        return True
    return any(
        overlaps(agent, person)
        for s in sentences
        if s.speaker is not None and s.speaker.lower() in _USERLABELS
        for c in s.clauses
        for agent in c.agents
        if agent != FIRST_PERSON and agent not in THIRD_PERSON and "'s " not in agent
    )


_INTRODUCED = r"\b(?:my|our|\w+'s)\s+(?:[\w-]+\s+){{0,2}}?[\w-]+,?\s+(?:[A-Z]\w*\.?\s+)?{}\b"
#: Turn labels of the user's own turns.
_USERLABELS = frozenset({"user", "human"})


def _someone_else(clause: Clause, speaker: str | None, person: str, apart: bool) -> str | None:
    """Why ``clause`` is said of someone other than ``person``, or None where it is said
    of them or these rules cannot tell (a turn labelled "user" may be Maya's, unless it
    speaks of Maya: ``apart``)."""
    if not clause.agents:
        return None
    for agent in clause.agents:
        other = _other(agent, speaker, person, apart)
        if other is None:
            return None
    return other


def _other(agent: str, speaker: str | None, person: str, apart: bool) -> str | None:
    """Why ``agent`` (a clause's subject, as ``language.parsing.clauses`` writes it) in a
    turn of ``speaker`` is not ``person``; None where it is, or may be."""
    if "'s " in person:  # "Karen's favourite subject": someone's thing
        return _not_theirs(agent, person)
    is_user = person.lower() == "the user"
    user_turn = speaker is not None and speaker.lower() in _USERLABELS
    if agent.lower() == "the user" and user_turn:
        agent = FIRST_PERSON  # the user's own turn, its "I" read as said
    if agent == FIRST_PERSON:
        if speaker is None:
            return None
        if is_role(speaker):
            if is_user:
                return (
                    None
                    if user_turn
                    else f"the evidence says this of the {speaker.lower()}, not of the user"
                )
            if user_turn and not apart:
                return None  # the user may be the person named
            return f"the evidence says this of the {speaker.lower()}, not of {person}"
        if overlaps(speaker, person):
            return None
        return f"the evidence says this of {speaker}, not of {person}"
    speakers_own = speaker is not None and (overlaps(speaker, person) or (is_user and user_turn))
    if agent in THIRD_PERSON:
        return (
            f'the evidence says this of someone its speaker calls "{agent}", not of {person}'
            if speakers_own
            else None
        )
    if agent.startswith("my "):
        whose = "the user" if speaker is None or is_role(speaker) else speaker
        return (
            f"the evidence says this of {whose}'s {agent[3:]}, not of {person}"
            if speakers_own
            else None
        )
    if "'s " in agent:  # "Priya's dad": not Priya
        owner = agent.split("'s ")[0]
        own = overlaps(owner, person) or (is_user and owner.lower() == "the user")
        return f"the evidence says this of {agent}, not of {person}" if own else None
    if overlaps(agent, person) or (is_user and agent.lower() == "the user"):
        return None
    if (is_user or agent.lower() == "the user") and not speakers_own:
        return None  # a name and "the user" may be one person; not in the user's own turn
    return f"the evidence says this of {agent}, not of {person}"


def _not_theirs(agent: str, person: str) -> str | None:
    """Why ``agent`` ("Leo's subject") is not ``person`` ("Karen's subject"): the same
    thing of another owner; None where it is theirs or another thing."""
    if "'s " not in agent:
        return None
    owner, thing = person.split("'s ", 1)
    their_owner, their_thing = agent.split("'s ", 1)
    if thing != their_thing or overlaps(owner, their_owner) or owner.lower() == their_owner.lower():
        return None
    return f"the evidence says this of {agent}, not of {person}"


def denied(claim: Reading, sentences: list[Reading]) -> str | None:
    """The text of a clause that denies the claim: every clause that says the claim's
    predicate with its words, of its subject or of no one these rules can place, denies
    it ("No fever.", "I'm not vegetarian", "I quit smoking")."""
    person = _person(claim) or ""
    words = name_words(person) | {"user"} if person else set()
    wanted = frozenset(w for w in claim.lemmas if fold(w) not in words)
    if not wanted or not claim.clauses:
        return None
    said = claim.clauses[0].predicate
    holding = [
        c
        for s in _stated(sentences)
        for c in s.clauses
        if wanted <= c.lemmas
        and same_predicate(said, c)  # not a "not" of another verb ("Ono did not approve")
        and not (person and _someone_else(c, s.speaker, person, False))
    ]
    if not holding or not all(c.denied for c in holding):
        return None
    return min((c.text for c in holding), key=len)


def quoted_of_someone_else(
    claim: Reading, quoted: list[Reading], sentences: list[Reading], evidence: str
) -> str | None:
    """Why the words a claim cites say its predicate of someone else ("Felix has already
    read it twice" cited for "Aiko has read Klara and the Sun twice"): every clause of
    the quote with the claim's predicate (and no object the claim lacks) has a subject
    these rules place as another person, and none of them names the claim's person (a
    name there may be the one the deed was done to). None otherwise."""
    person = _person(claim)
    holding = _quoted_clauses(claim, quoted)
    if person is None or not holding:
        return None
    apart = _apart(person, sentences, evidence)
    name = re.escape(person.split()[-1])
    word = re.compile(rf"\b{name}\b", re.I)
    called = re.compile(rf"(?:^|[,;]\s*(?:(?:so|and|but|ok|okay)\s+)?){name}\s*,", re.I)
    reasons = []
    for clause, sentence in holding:
        if clause.passive != claim.clauses[0].passive or word.search(called.sub(",", clause.text)):
            return None  # named there, not only called by name ("so Tom, bring the car")
        if clause.denied != claim.clauses[0].denied:
            return None  # "Ruth did not hit 60": that Maris hit 61 is no one else's "not"
        if _ALSO.search(clause.text):
            return None  # "Mike is allergic to cedar dust too": someone else is, as well
        other = _someone_else(clause, sentence.speaker, person, apart) or _not_the_user(
            clause, sentence.speaker, person, evidence
        )
        if other is None:
            return None
        reasons.append(other)
    return reasons[0]


def _not_the_user(clause: Clause, speaker: str | None, person: str, evidence: str) -> str | None:
    """Why a named speaker's own clause ("Mike: I'm allergic to cedar dust") is not said
    of the user, where the user speaks in turns of their own ("User: ...")."""
    if person.lower() != "the user" or speaker is None or is_role(speaker):
        return None
    if not clause.agents or not _USER_TURN.search(evidence) or _YOU.search(clause.text):
        return None  # "Mike plays tennis with you": said to the user, of them too
    if all(a == FIRST_PERSON or overlaps(a, speaker) for a in clause.agents):
        return f"the evidence says this of {speaker}, not of the user"
    return None


#: Words that say someone else does or is the same ("too", "also", "as well").
_ALSO = re.compile(r"\b(?:too|also|as well|either)\b", re.I)
#: "you" in another's turn: the one spoken to, the user, may be in it.
_YOU = re.compile(r"\b(?:you|your|yours|yourself)\b", re.I)
#: A turn of the user's own, labelled as such.
_USER_TURN = re.compile(r"(?im)^(?:user|human):")


def quoted_denial(claim: Reading, quoted: list[Reading]) -> str | None:
    """The text of a clause of the words a claim cites that denies it ("Hannah doesn't
    have admin rights on this machine" cited for "Hannah has admin rights on her
    laptop"; "No one was hurt." for "Carlos was hurt in the accident."): every clause of
    the quote with the claim's predicate (and no object the claim lacks), said of its
    subject or of no one these rules can place, denies it. The claim rests on what it
    cites: the words it does not share with the quote do not save it."""
    person = _person(claim)
    holding = [
        clause
        for clause, sentence in _quoted_clauses(claim, quoted)
        if not (person and _someone_else(clause, sentence.speaker, person, False))
    ]
    if not holding or not all(c.denied for c in holding):
        return None
    if any(CONTRAST.search(q.text) for q in quoted):
        return None  # "I didn't win, but I took second place": the "but" says what did hold
    own = name_words(person) | {"user"} if person else set()
    if any(_narrower(c, claim, own) for c in holding):
        return None
    return min((c.text for c in holding), key=len)


#: Words that set one clause against another ("I didn't win, but ...").
CONTRAST = re.compile(r"\b(?:but|though|although|whereas|while|yet)\b", re.I)
#: A "not" of degree ("never felt so welcome", "couldn't be happier").
_EMPHASIS = re.compile(
    r"\b(?:never|not|no)\b.*\b(?:so|such)\s+\w+|n't\b.*\b(?:happier|better|more)\b"
)
#: Words that bound a statement in time: a "not" said of one time says nothing of
#: another ("I don't have time" and "Maya has time next week").
_TIMELY = frozenset(
    "next last this today tonight tomorrow yesterday now week weekend month year morning "
    "evening night afternoon again anymore yet still soon later".split()
)


def _narrower(clause: Clause, claim: Reading, own: set[str]) -> bool:
    """Whether the denied clause is narrower than the claim, or the claim than it, so the
    "not" may say nothing of it: the clause has a word the claim lacks ("I just don't
    like hiking in the rain" for "Maya likes hiking"; "not on Thursday" for "on
    Friday"), other than one in a "this" or "that" phrase, which points at a thing the
    claim may name ("this machine" for "her laptop"); or the claim has a value or a
    word of time the clause lacks ("next week")."""
    low = clause.text.lower()
    if _EMPHASIS.search(low):
        return True  # "never felt so welcome": a "not" of degree, said for emphasis
    for word in clause.lemmas - claim.lemmas - own:
        pointed = re.search(rf"\b(?:this|that|these|those)\s+(?:\w+\s+)?{re.escape(word[:4])}", low)
        if pointed is None:
            return True
    return any(valued(w) or w in _TIMELY for w in claim.lemmas - clause.lemmas)


def _quoted_clauses(claim: Reading, quoted: list[Reading]) -> list[tuple[Clause, Reading]]:
    """The stated clauses of ``quoted`` whose predicate is the claim's main one, with no
    direct object the claim lacks ("I don't eat fish" says nothing of eating meat)."""
    if not claim.clauses or claim.clauses[0].predicate is None:
        return []
    said = claim.clauses[0].predicate
    found = []
    for sentence in _stated(quoted):
        objects = {w for w, dep, _ in sentence.slots if dep == "dobj"}
        for clause in sentence.clauses:
            if same_predicate(said, clause) and not (objects & clause.lemmas) - claim.lemmas:
                found.append((clause, sentence))
    return found


def _stated(sentences: list[Reading]) -> list[Reading]:
    """The pieces of evidence that state something, read without a turn's label: not
    questions ("Any fever?"), not whole labelled lines ("Priya: ...", read as parsed
    with "Priya" a subject; its sentences are pieces of their own)."""
    return [s for s in sentences if not s.text.rstrip().endswith("?") and not LABEL.match(s.text)]


__all__ = [
    "CONTRAST",
    "denied",
    "quoted_denial",
    "quoted_of_someone_else",
    "said_of_someone_else",
]
