"""Rule-based claims from evidence sentences, for training the cross-encoder.

A sentence of a document, copied or shortened, is a supported claim. Edited by
one rule it is not: a swapped name, number, date or role, a negation added or
removed, an antonym, or an unsupported addition (the FactCC / MiniCheck
recipe). ``first_person_facts`` adds the memory-store case: what someone says
about themselves, restated as a fact about them. Every function is seeded by
the ``random.Random`` it is given.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

Edit = Callable[[str, Sequence[str], random.Random], str | None]

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
#: Capitalized only because they open a sentence.
_OPENING_WORDS = frozenset(
    """a an the this that these those it its he she they we you i in on at by for with from as
    after before when while if but and or so then there here what which who how why our my his
    her their your some many most all no not one two three however also yet still""".split()
)
_AUX = re.compile(
    r"\b(is|was|are|were|has|have|had|will|can|could|would|should|may|might|must|does|did|do)\b"
)
_NEGATED = re.compile(
    r"\b(?:(is|was|are|were|has|have|had|does|did|do|could|would|should)n't|"
    r"(can)'t|(won)'t|"
    r"(is|was|are|were|has|have|had|will|can|could|would|should|may|might|must|does|did|do)"
    r" not)\b"
)
_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_ANTONYMS = dict(
    pair
    for a, b in (
        ("increase", "decrease"),
        ("increased", "decreased"),
        ("increases", "decreases"),
        ("rise", "fall"),
        ("rose", "fell"),
        ("higher", "lower"),
        ("more", "less"),
        ("most", "least"),
        ("before", "after"),
        ("first", "last"),
        ("won", "lost"),
        ("win", "lose"),
        ("agreed", "refused"),
        ("accepted", "rejected"),
        ("positive", "negative"),
        ("large", "small"),
        ("larger", "smaller"),
        ("strong", "weak"),
        ("stronger", "weaker"),
        ("early", "late"),
        ("earlier", "later"),
        ("open", "closed"),
        ("opened", "closed"),
        ("start", "end"),
        ("started", "ended"),
        ("good", "bad"),
        ("better", "worse"),
        ("best", "worst"),
        ("happy", "unhappy"),
        ("likes", "dislikes"),
        ("like", "dislike"),
        ("love", "hate"),
        ("loves", "hates"),
        ("always", "never"),
        ("above", "below"),
        ("gain", "loss"),
        ("profit", "loss"),
        ("buy", "sell"),
        ("bought", "sold"),
        ("old", "new"),
        ("older", "younger"),
        ("up", "down"),
        ("easy", "difficult"),
        ("allowed", "banned"),
        ("support", "oppose"),
        ("supports", "opposes"),
        ("supported", "opposed"),
        ("include", "exclude"),
        ("included", "excluded"),
        ("male", "female"),
        ("north", "south"),
        ("east", "west"),
        ("husband", "wife"),
        ("brother", "sister"),
        ("son", "daughter"),
    )
    for pair in ((a, b), (b, a))
)
_ANTONYM = re.compile(r"\b(" + "|".join(sorted(_ANTONYMS, key=len, reverse=True)) + r")\b")
_ADDITIONS = (
    " in 2019",
    " last year",
    " for the first time",
    " twice",
    " in London",
    " after a long delay",
    " with his family",
    " on a Sunday",
    " by a wide margin",
    " because of the weather",
    " at the request of the board",
    " for over a decade",
)
_OPENERS = re.compile(
    r"^(?:However|Moreover|In addition|Also|But|And|So|Meanwhile|Still|Then|Now|Well),?\s+"
)


def _name_matches(sentence: str) -> list[re.Match[str]]:
    """Capitalized word runs that look like names (not months, days or sentence openers)."""
    out = []
    for m in _NAME.finditer(sentence):
        first = m.group().split()[0]
        if m.group() in _MONTHS or m.group() in _DAYS:
            continue
        opening = m.start() == 0 or sentence[: m.start()].rstrip()[-1:] in ".!?:\"'"
        if opening and first.lower() in _OPENING_WORDS:
            continue
        out.append(m)
    return out


def numbers(sentence: str, document: Sequence[str], rng: random.Random) -> str | None:
    """Change one number: to another of the document's, else by a factor."""
    found = list(_NUMBER.finditer(sentence))
    if not found:
        return None
    m = rng.choice(found)
    others = sorted({n for s in document for n in _NUMBER.findall(s)} - {m.group()})
    if others and rng.random() < 0.5:
        new = rng.choice(others)
    else:
        value = float(m.group().replace(",", ""))
        new_value = value * rng.choice((2, 3, 0.5, 10)) + rng.choice((0, 1, -1))
        new = str(int(new_value)) if new_value == int(new_value) else f"{new_value:.1f}"
    if new == m.group():
        return None
    return sentence[: m.start()] + new + sentence[m.end() :]


def names(sentence: str, document: Sequence[str], rng: random.Random) -> str | None:
    """Replace one capitalized name with another name from the document."""
    found = _name_matches(sentence)
    if not found:
        return None
    m = rng.choice(found)
    pool = sorted(
        {n.group() for s in document for n in _name_matches(s)} - {f.group() for f in found}
    )
    if not pool:
        return None
    return sentence[: m.start()] + rng.choice(pool) + sentence[m.end() :]


def roles(sentence: str, document: Sequence[str], rng: random.Random) -> str | None:
    """Swap two different names of the sentence (who did what to whom)."""
    found = list(dict.fromkeys(m.group() for m in _name_matches(sentence)))
    if len(found) < 2:
        return None
    a, b = rng.sample(found, 2)
    out = re.sub(rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m: b if m[0] == a else a, sentence)
    return out if out != sentence else None


def dates(sentence: str, document: Sequence[str], rng: random.Random) -> str | None:
    """Change a month or a weekday."""
    for group in (_MONTHS, _DAYS):
        present = [w for w in group if re.search(rf"\b{w}\b", sentence)]
        if present:
            old = rng.choice(present)
            new = rng.choice([w for w in group if w != old])
            return re.sub(rf"\b{old}\b", new, sentence, count=1)
    return None


def negation(sentence: str, document: Sequence[str], rng: random.Random) -> str | None:
    """Remove a negation, or add one after the first auxiliary verb."""
    negated = _NEGATED.search(sentence)
    if negated:
        aux = next(g for g in negated.groups() if g)
        aux = {"won": "will", "can": "can"}.get(aux, aux)
        return sentence[: negated.start()] + aux + sentence[negated.end() :]
    aux_match = _AUX.search(sentence)
    if aux_match is None:
        return None
    return sentence[: aux_match.end()] + " not" + sentence[aux_match.end() :]


def antonyms(sentence: str, document: Sequence[str], rng: random.Random) -> str | None:
    """Replace one word by its antonym."""
    found = list(_ANTONYM.finditer(sentence))
    if not found:
        return None
    m = rng.choice(found)
    return sentence[: m.start()] + _ANTONYMS[m.group()] + sentence[m.end() :]


def addition(sentence: str, document: Sequence[str], rng: random.Random) -> str | None:
    """Append a detail the evidence never gives."""
    body = sentence.rstrip()
    end = body[-1] if body and body[-1] in ".!?" else ""
    body = body[:-1] if end else body
    extra = rng.choice(_ADDITIONS)
    if extra.strip() in " ".join(document):
        return None
    return body + extra + (end or ".")


EDITS: dict[str, Edit] = {
    "number": numbers,
    "name": names,
    "role": roles,
    "date": dates,
    "negation": negation,
    "antonym": antonyms,
    "addition": addition,
}


def unsupported(
    sentence: str, document: Sequence[str], rng: random.Random
) -> tuple[str, str] | None:
    """One edit that applies to ``sentence``, chosen at random: (rule, edited sentence)."""
    rules = list(EDITS)
    rng.shuffle(rules)
    for rule in rules:
        out = EDITS[rule](sentence, document, rng)
        if out and out.strip() != sentence.strip():
            return rule, out
    return None


def shortened(sentence: str, rng: random.Random) -> str | None:
    """The sentence without an opener, a parenthesis or a trailing clause (still true)."""
    options = []
    if _OPENERS.search(sentence):
        rest = _OPENERS.sub("", sentence)
        options.append(rest[:1].upper() + rest[1:])
    if "(" in sentence:
        options.append(re.sub(r"\s*\([^)]*\)", "", sentence))
    comma = sentence.rfind(", ")
    if comma > 0 and len(sentence[:comma].split()) >= 6:
        options.append(sentence[:comma].rstrip() + ".")
    options = [o for o in options if o.strip() and o != sentence]
    return rng.choice(options) if options else None


# Who says what about themselves, and the fact an agent would store.
_SELF = (
    ("I love {x}.", "{n} loves {x}.", "{n} hates {x}."),
    ("I'm really into {x} these days.", "{n} likes {x}.", "{n} likes {x2}."),
    ("honestly I really enjoy {x}.", "{n} enjoys {x}.", "{n} does not enjoy {x}."),
    ("I can't stand {x}.", "{n} dislikes {x}.", "{n} likes {x}."),
    ("I'm allergic to {x}.", "{n} is allergic to {x}.", "{n} is not allergic to {x}."),
    ("I work at {o} as a {j}.", "{n} works at {o}.", "{n} works at {o2}."),
    ("I've been at {o} for {k} years now.", "{n} works at {o}.", "{n} left {o}."),
    ("I live in {c}.", "{n} lives in {c}.", "{n} lives in {c2}."),
    ("I moved to {c} in {y}.", "{n} moved to {c} in {y}.", "{n} moved to {c} in {y2}."),
    ("my sister {m} just started at {o}.", "{n}'s sister is {m}.", "{n}'s brother is {m}."),
    ("I have a dog called {m}.", "{n} has a dog named {m}.", "{n} has a cat named {m}."),
    ("I'm a {j}.", "{n} is a {j}.", "{n} is a {j2}."),
    ("I was born in {y}.", "{n} was born in {y}.", "{n} was born in {y2}."),
    ("I don't drink {x}.", "{n} does not drink {x}.", "{n} drinks {x}."),
    ("my birthday is in {mo}.", "{n}'s birthday is in {mo}.", "{n}'s birthday is in {mo2}."),
)
_PEOPLE = "Maria Tom Priya Kenji Olu Sven Ana Diego Mei Jonas Fatima Liam Zoe Ravi Ingrid".split()
_THINGS = (
    "coffee,cats,jazz,sushi,hiking,chess,spicy food,red wine,gluten,penicillin,"
    "cilantro,horror films,running,dairy,bees,latex,opera,mushrooms"
).split(",")
_ORGS = "Globex,Initrode,Umbrella Corp,Stark Labs,Hooli,Vandelay,Wonka,Cyberdyne,Soylent".split(",")
_JOBS = "nurse,teacher,pilot,chemist,plumber,lawyer,designer,farmer,dentist,librarian".split(",")
_CITIES = "Porto,Oslo,Denver,Nairobi,Osaka,Lyon,Quito,Leeds,Perth,Gdansk,Austin".split(",")


def first_person_facts(rng: random.Random, count: int) -> list[tuple[str, str, int]]:
    """``count`` (evidence, claim, label) triples: a remark about oneself and a fact about them."""
    out = []
    for _ in range(count):
        said, true, false = rng.choice(_SELF)
        n, m = rng.sample(_PEOPLE, 2)
        x, x2 = rng.sample(_THINGS, 2)
        o, o2 = rng.sample(_ORGS, 2)
        j, j2 = rng.sample(_JOBS, 2)
        c, c2 = rng.sample(_CITIES, 2)
        y, y2 = rng.sample(range(1950, 2024), 2)
        mo, mo2 = rng.sample(_MONTHS, 2)
        k = rng.randint(2, 15)
        slots = dict(
            n=n, m=m, x=x, x2=x2, o=o, o2=o2, j=j, j2=j2, c=c, c2=c2, y=y, y2=y2, mo=mo, mo2=mo2
        )
        remark = said.format(k=k, **slots)
        untagged = rng.random() < 0.35  # the user's own message, no speaker tag
        if untagged:
            remark, slots["n"] = remark[:1].upper() + remark[1:], "The user"
        else:
            remark = f"{n}: {remark}"
        evidence = remark
        if not untagged and rng.random() < 0.5:  # a remark among other chat
            other = rng.choice([p for p in _PEOPLE if p not in (n, m)])
            evidence = f"{other}: how was your week?\n{remark}\n{other}: good to know."
        label = rng.random() < 0.5
        claim = (true if label else false).format(**slots)
        if not label and rng.random() < 0.3:  # the same fact, about someone else
            claim, label = true.format(**{**slots, "n": m}), False
        if label and rng.random() < 0.3:  # the fact, with the remark scrubbed away
            evidence, label = evidence.replace(remark, ""), False
        out.append((evidence, claim, int(label)))
    return out
