"""Rebuild the agent-memory splits and the generated hard negatives from ``scenarios.jsonl``.

    python bench/data/agent_memory/generate.py            # writes next to this script
    python bench/data/agent_memory/generate.py --out DIR  # writes into DIR instead

Standard library only, seeded and deterministic: running it twice gives the same bytes.

1. Every scenario goes to one split (``train`` about 50%, ``dev`` 20%, ``test`` 30%) by a
   SHA-256 hash of its id, so all claims about one piece of evidence share a split.
2. Each supported claim of a ``train`` or ``dev`` scenario (never ``test``) may yield one
   hard negative, made by a rule that edits the claim itself: swap a person of the
   scenario for another person its evidence names (a speaker for another speaker in a
   multi-speaker chat), swap the two people of a relation, change a number in the same
   units, a day, month, weekday or clock time, or negate the verb. The new value must not
   occur anywhere in the evidence, so the swap cannot land on another true fact by
   accident; claims and contexts where a change can leave the claim true (negated claims,
   bounds such as "after 2 pm" or "more than 5", hedges, symmetric relations such as
   "cousin") are skipped, and the few outputs that a reader
   found still true or meaningless are listed in ``REJECTED`` with the reason.
3. ``generated.jsonl`` holds the generated pairs (with ``generated_from``); ``train.jsonl``,
   ``dev.jsonl`` and ``test.jsonl`` hold the flat pairs of their split, the hand-written
   ones first, then the generated ones of that split (train and dev only).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios.jsonl"
SEED = "agent-memory-v1"
SPLITS = ("train", "dev", "test")

#: People (and account handles) named in the scenarios' evidence. Pets, roles ("Mum") and
#: words that double as something else (``Thu``, the calendar's Thursday) are left out.
PEOPLE: list[str] = """
Abara Abdullah Achterberg Adaeze Adeyemi Aditi Adjoa Ahmad Ahmed Amal Amelia Amelie Amir Ana
Andrés Anika Anouk Arjun Ayumi Beatrix Beatriz Ben Bogdan Bruno Callum Camila Camille Carla Chen
Chiara Chidi Chloe Daniel Dana Declan Dae-ho Dmitri Dominik Eirik Eitan Elif Ella Esperanza
Ethan Ewa Farah Farid Fatima Felipe Felix Fenna Filip Freya Gabriel Grace Gustavo Grzegorz Gwen
Hamid Hana Harriet Helga Hendrik Hiroshi Hollis Hugh Héctor Idris Ifeoma Ilona Ilse Ines Ingrid
Irina Isabela Jana Jon Jonas Jorge Juliette Jun Keiko Keira Keisha Kenji Kofi Kojo Kwame Lars
Layla Lena Leila Leon Lily Lindahl Lotte Lowri Luca Malak Marcus Marek Mariam Marisol Mark Mateo
Mei Min-su Mira Mislav Mohammed Moira Nadia Nadine Ngozi Nino Noah Noor Odile Oduya Okonkwo
Oleksandr Olga Olu Omar Oskar Paul Pieter Pilar Piotr Priscilla Priya Priyanka Rafael Raj Ravi
Rosa Rukmini Ruth Sabine Sade Samir Samuel Sanna Siddharth Sigrid Siobhan Sofia Sunita Sven
Tamar Teodor Teresa Thandiwe Tiago Tobenna Tobias Vikram Vikrant Viktor Wanjiru Wiremu Wojtek
Yara Ye-jin Yewande Yusuf Zoe tomasz kira_dev bea-m haruto lwong ptrivedi jmartins rkaur
""".split()
#: Full names, matched before the first names inside them.
PEOPLE += [
    "Abdullah Rahman",
    "Adjoa Quarshie",
    "Amelia Grant",
    "Amelie Brandt",
    "Ana Costa",
    "Beatrix Hall",
    "Beatriz Lopes",
    "Camila Reyes",
    "Daniel Osei",
    "Daniel Price",
    "Esperanza Ruiz",
    "Ewa Nowicka",
    "Fenna Visser",
    "Grace Tan",
    "Grzegorz Nowak",
    "Gwen Parry",
    "Gustavo Ferreira",
    "Harriet Cole",
    "Helga Lindqvist",
    "Hendrik Vos",
    "Hollis Grant",
    "Hugh Morgan",
    "Idris Evans",
    "Ifeoma Chukwu",
    "Ingrid Solberg",
    "Irina Volkova",
    "Jon Barker",
    "Keisha Brown",
    "Lars Eriksen",
    "Leila Farouk",
    "Lotte de Graaf",
    "Lowri Jenkins",
    "Mariam Haddad",
    "Marisol Ortega",
    "Mei Lin",
    "Mira Patel",
    "Mohammed Al-Sayed",
    "Olu Bankole",
    "Oskar Berg",
    "Paul Dunne",
    "Piotr Zielinski",
    "Ravi Menon",
    "Sabine Keller",
    "Siobhan Kelly",
    "Sunita Rao",
    "Teodor Marin",
    "Thandiwe Dlamini",
    "Tobenna Okeke",
    "Wanjiru Kamau",
    "Wiremu Tane",
    "Yara Said",
]

#: Generated pairs a reader rejected, by id, with the reason. A rejected rule falls through
#: to the claim's next applicable rule.
REJECTED: dict[str, str] = {
    "am-002-c2-g-person": "puts the mother's name on the baby: false, but no one would write it",
    "am-043-c2-g-numword": "'doubled within five years' leaves the exact duration open",
    "am-066-c1-g-number": "'6 hours and 84 minutes' is not a well-formed duration",
    "am-067-c1-g-person": "'Dr. Mira' puts a child's first name in the doctor's full name",
    "am-081-c2-g-number": "Python 4.9 does not exist: too easy to be a hard negative",
    "am-103-c2-g-number": "changes the product's name (Kestrel 2), not a quantity",
    "am-105-c1-g-person": "'Aunt Vikram' puts the cousin's name under the aunt's title",
    "am-105-c2-g-person": "'Aunt Vikram' puts the cousin's name under the aunt's title",
    "am-106-c2-g-numword": (
        "at most once in any twelve months entails at most once in eleven: still true"
    ),
}

NEGATION_WORDS = re.compile(
    r"\b(not|no|never|nothing|nobody|none|neither|nor|without|cannot|no longer)\b|n't", re.I
)
HEDGES = re.compile(r"\b(may|might|could|would|should|probably|likely|perhaps|maybe)\b", re.I)
SYMMETRIC = re.compile(
    r"\b(and|with|both|together|between|each other|met|married|twins?|cousins?|siblings?|"
    r"friends?|neighbours?|partners?|roommates?|colleagues?)\b"
)
#: A number, date or time right after one of these words is a bound ("after 2 pm", "by 15
#: August", "more than 5"): moving it can leave the claim true, so it is never changed.
BOUND_WORDS = set(
    "than least most to up under over above below about around roughly approximately nearly "
    "almost within some top before after until till by since from exceeded exceeds exceeding "
    "older younger".split()
)
MONTHS = (
    "January February March April May June July August September October November December"
).split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60,
}  # fmt: skip
PARTICIPLES = {"been", "got", "gone", "done", "made", "had", "left", "run", "sold", "paid", "seen"}
AUX = {"is", "are", "was", "were", "will", "can", "must", "has", "have", "had"}
NOT_VERBS = {"is", "was", "has", "does", "its", "his", "this", "as", "us", "plus", "always"}

Pair = dict[str, Any]
Edit = tuple[str, str]  # (new claim, phenomenon)


def split_of(scenario_id: str) -> str:
    """``train`` (50%), ``dev`` (20%) or ``test`` (30%) by a SHA-256 hash of the scenario id."""
    bucket = int.from_bytes(hashlib.sha256(scenario_id.encode()).digest()[:8], "big") % 100
    return "train" if bucket < 50 else "dev" if bucket < 70 else "test"


def _word(text: str) -> str:
    """A regex matching ``text`` as a whole word (names may hold '-' or '_')."""
    return rf"(?<![\w-]){re.escape(text)}(?![\w-])"


def _in(text: str, haystack: str) -> bool:
    return re.search(_word(text), haystack) is not None


def _mentions(claim: str, names: Iterable[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping mentions of ``names`` in ``claim``, longest names first."""
    spans: list[tuple[int, int, str]] = []
    for name in sorted(names, key=lambda n: (-len(n), n)):
        for m in re.finditer(_word(name), claim):
            if all(m.end() <= s or m.start() >= e for s, e, _ in spans):
                spans.append((m.start(), m.end(), name))
    return sorted(spans)


def _speakers(evidence: list[str]) -> set[str]:
    """Names that open a chat turn ("Rosa (no. 14): ...", "@haruto: ...")."""
    found: set[str] = set()
    for text in evidence:
        for line in text.splitlines():
            m = re.match(r"^@?([^:()]{1,40}?)\s*(\([^)]*\))?:", line)
            if m:
                found.update(n for n in PEOPLE if _in(n, m.group(1)))
    return found


def _tokens(name: str) -> set[str]:
    return set(name.split())


def swap_person(claim: str, sc: dict[str, Any], rng: random.Random) -> Edit | None:
    """The claim's one person replaced by another person named in the evidence."""
    evidence = "\n".join(sc["evidence"])
    present = [n for n in PEOPLE if _in(n, evidence)]
    mentions = _mentions(claim, present)
    if len(mentions) != 1:
        return None
    start, end, name = mentions[0]
    taken = _tokens(name)
    # Another name of the same person (a first name inside the mentioned full name) is no swap.
    options = [n for n in present if not (_tokens(n) & taken) and n not in name.split()]
    same_shape = [n for n in options if len(n.split()) == len(name.split())]
    options = same_shape or options
    if not options:
        return None
    new = rng.choice(sorted(options))
    speakers = _speakers(sc["evidence"])
    both_speak = name in speakers and new in speakers and sc["kind"] == "multi_speaker"
    return claim[:start] + new + claim[end:], "speaker_swap" if both_speak else "wrong_entity"


def swap_roles(claim: str, sc: dict[str, Any], rng: random.Random) -> Edit | None:
    """The two people of an asymmetric relation swapped ("A manages B" -> "B manages A")."""
    if SYMMETRIC.search(claim):
        return None
    evidence = "\n".join(sc["evidence"])
    mentions = _mentions(claim, [n for n in PEOPLE if _in(n, evidence)])
    if len(mentions) != 2 or _tokens(mentions[0][2]) & _tokens(mentions[1][2]):
        return None
    (s1, e1, a), (s2, e2, b) = mentions
    speakers = _speakers(sc["evidence"])
    phenomenon = "speaker_swap" if {a, b} <= speakers else "role_swap"
    return claim[:s1] + b + claim[e1:s2] + a + claim[e2:], phenomenon


NUMBER = re.compile(r"(?<![\w.:/+-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w:/-]|\.\d)")


def _bounded(text: str, index: int) -> bool:
    """Whether the value at ``index`` follows a bound word (skipping a weekday or day number)."""
    words = re.findall(r"[\w'-]+", text[:index])
    while words and (words[-1] in WEEKDAYS or words[-1].isdigit()):
        words.pop()
    return bool(words) and words[-1].lower() in BOUND_WORDS


def _fmt(value: float, decimals: int, commas: bool) -> str:
    text = f"{value:,.{decimals}f}" if commas else f"{value:.{decimals}f}"
    return text


def change_number(claim: str, sc: dict[str, Any], rng: random.Random) -> Edit | None:
    """One number of the claim changed, its units kept (a day, year or hour where it is one)."""
    evidence = "\n".join(sc["evidence"])
    edits: list[Edit] = []
    for m in NUMBER.finditer(claim):
        if _bounded(claim, m.start()):
            continue
        whole, frac = m.group(1), m.group(2) or ""
        commas = "," in whole
        value = float(whole.replace(",", "") + frac)
        decimals = len(frac) - 1 if frac else 0
        after = claim[m.end() :].lstrip().lower()
        before = claim[: m.start()].rstrip()
        month_next = any(after.startswith(mo.lower()) for mo in MONTHS)
        month_prev = any(before.endswith(mo) for mo in MONTHS)
        if not frac and (month_next or month_prev) and value <= 31:
            pool, phenomenon = [value + 1, value + 2, value - 1, value + 7], "wrong_date"
            pool = [v for v in pool if 1 <= v <= 28]
        elif not frac and not commas and 1900 <= value <= 2100:
            pool, phenomenon = [value + 1, value - 1, value + 2], "wrong_date"
        elif not frac and re.match(r"(am|pm|a\.m\.|p\.m\.)\b", after):
            pool, phenomenon = [value + 1, value + 2, value - 1], "wrong_time"
            pool = [v for v in pool if 1 <= v <= 12]
        elif frac:
            step = 10.0**-decimals
            pool, phenomenon = [value + step, value - step, value + 1], "wrong_number"
        elif value >= 100:
            pool = [value + 1, value - 1, value + 10, round(value * 1.25), round(value * 0.8)]
            phenomenon = "wrong_number"
        else:
            pool = [value + 1, value + 2, value - 1, value * 2, value + 10]
            phenomenon = "wrong_number"
        texts = []
        for v in pool:
            text = _fmt(v, decimals, commas)
            if v > 0 and v != value and text not in texts and not _in(text, evidence):
                texts.append(text)
        if texts:
            new = rng.choice(texts)
            edits.append((claim[: m.start()] + new + claim[m.end() :], phenomenon))
    return rng.choice(edits) if edits else None


def change_number_word(claim: str, sc: dict[str, Any], rng: random.Random) -> Edit | None:
    """A number written in words ("three", "twice") changed to another."""
    evidence = "\n".join(sc["evidence"]).lower()
    edits: list[Edit] = []
    for m in re.finditer(r"\b(" + "|".join(NUMBER_WORDS) + r"|twice)\b", claim, re.I):
        if _bounded(claim, m.start()):
            continue
        word = m.group(1)
        if word.lower() == "twice":
            options = ["three times", "four times"]
        else:
            value = NUMBER_WORDS[word.lower()]
            options = [
                w
                for w, v in NUMBER_WORDS.items()
                if v != value and (v in (value + 1, value - 1, value * 2) or value >= 20 <= v)
            ]
        options = [o for o in options if not _in(o, evidence)]
        if options:
            new = rng.choice(sorted(options))
            new = new.capitalize() if word[0].isupper() else new
            edits.append((claim[: m.start()] + new + claim[m.end() :], "wrong_number"))
    return rng.choice(edits) if edits else None


def _name_in(name: str, evidence: str) -> bool:
    """Whether the evidence names this month or weekday, in full, plural or abbreviated."""
    return re.search(r"\b" + name[:3], evidence) is not None


def change_month(claim: str, sc: dict[str, Any], rng: random.Random) -> Edit | None:
    """A month name changed to a month the evidence never names."""
    evidence = "\n".join(sc["evidence"])
    pattern = r"\b(January|February|March|April|June|July|August|September|October|November|December)\b|(?<=\d )May\b|\bMay(?= \d)"  # noqa: E501
    matches = [m for m in re.finditer(pattern, claim) if not _bounded(claim, m.start())]
    if not matches:
        return None
    m = rng.choice(matches)
    options = [mo for mo in MONTHS if mo != m.group(0) and not _name_in(mo, evidence)]
    if not options:
        return None
    return claim[: m.start()] + rng.choice(options) + claim[m.end() :], "wrong_date"


def change_weekday(claim: str, sc: dict[str, Any], rng: random.Random) -> Edit | None:
    """A weekday changed to one the evidence never names."""
    evidence = "\n".join(sc["evidence"])
    pattern = r"\b(" + "|".join(WEEKDAYS) + r")(s?)\b"
    matches = [m for m in re.finditer(pattern, claim) if not _bounded(claim, m.start())]
    if not matches:
        return None
    m = rng.choice(matches)
    options = [d for d in WEEKDAYS if d != m.group(1) and not _name_in(d, evidence)]
    if not options:
        return None
    new = rng.choice(options) + m.group(2)
    return claim[: m.start()] + new + claim[m.end() :], "wrong_date"


def change_time(claim: str, sc: dict[str, Any], rng: random.Random) -> Edit | None:
    """A clock time (HH:MM) moved by one to three hours, to a time the evidence never names."""
    evidence = "\n".join(sc["evidence"])
    matches = list(re.finditer(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])", claim))
    if not matches:
        return None
    matches = [m for m in matches if not _bounded(claim, m.start())]
    if not matches:
        return None
    m = rng.choice(matches)
    hour, width = int(m.group(1)), len(m.group(1))
    options = []
    for delta in (1, 2, 3, -1, -2):
        h = (hour + delta) % 24
        if width == 1 and not 1 <= h <= 12:
            continue
        text = f"{h:0{width}d}:{m.group(2)}"
        if text not in evidence:
            options.append(text)
    if not options:
        return None
    return claim[: m.start()] + rng.choice(options) + claim[m.end() :], "wrong_time"


def _base_form(verb: str) -> str:
    if verb == "has":
        return "have"
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "zzes", "oes")):
        return verb[:-2]
    return verb[:-1]


def negate(claim: str, sc: dict[str, Any], rng: random.Random) -> Edit | None:
    """The main verb negated ("X is Y" -> "X is not Y", "X takes Y" -> "X does not take Y")."""
    if NEGATION_WORDS.search(claim) or HEDGES.search(claim):
        return None
    words = claim.split(" ")
    for i, word in enumerate(words[1:], start=1):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        participle = nxt.endswith(("ed", "en")) or nxt in PARTICIPLES
        if word in {"has", "have", "had"} and not participle:
            new = {"has": "does", "have": "do", "had": "did"}[word] + " not have"
        elif word == "can":
            new = "cannot"
        elif word in AUX:
            new = word + " not"
        else:
            continue
        return " ".join([*words[:i], new, *words[i + 1 :]]), "negation"
    evidence = "\n".join(sc["evidence"])
    subjects = ["The user", *sorted((n for n in PEOPLE if _in(n, evidence)), key=len)[::-1]]
    for subject in subjects:
        m = re.match(re.escape(subject) + r" ([a-z]+s)\b", claim)
        if m and m.group(1) not in NOT_VERBS and not m.group(1).endswith("ss"):
            head = claim[: m.start(1)]
            return head + "does not " + _base_form(m.group(1)) + claim[m.end(1) :], "negation"
    return None


RULES: dict[str, Callable[[str, dict[str, Any], random.Random], Edit | None]] = {
    "person": swap_person,
    "roles": swap_roles,
    "number": change_number,
    "numword": change_number_word,
    "month": change_month,
    "weekday": change_weekday,
    "time": change_time,
    "negate": negate,
}


def _norm(text: str) -> str:
    return re.sub(r"[^\w]+", " ", text.lower()).strip()


def hand_pairs(sc: dict[str, Any]) -> list[Pair]:
    """The scenario's labelled claims as flat pairs."""
    return [
        {
            "id": f"{sc['id']}-c{i}",
            "scenario": sc["id"],
            "kind": sc["kind"],
            "phenomenon": c["phenomenon"],
            "claim": c["claim"],
            "evidence": sc["evidence"],
            "label": c["label"],
            "quote": c.get("quote"),
            "generated_from": None,
        }
        for i, c in enumerate(sc["claims"], start=1)
    ]


def generate(sc: dict[str, Any]) -> list[Pair]:
    """At most one hard negative per supported claim of a train/dev scenario."""
    if split_of(sc["id"]) == "test":
        return []
    out: list[Pair] = []
    seen = {_norm(c["claim"]) for c in sc["claims"]}
    for pair in hand_pairs(sc):
        # "No lesson on 25 October" stays true on most other dates: negated claims are left be.
        if pair["label"] != 1 or NEGATION_WORDS.search(pair["claim"]):
            continue
        rng = random.Random(f"{SEED}:{pair['id']}")
        names = list(RULES)
        rng.shuffle(names)
        if rng.random() < 0.6:  # negation applies to most claims; let the swaps lead more often
            names.remove("negate")
            names.append("negate")
        for name in names:
            edit = RULES[name](pair["claim"], sc, rng)
            if edit is None:
                continue
            claim, phenomenon = edit
            gid = f"{pair['id']}-g-{name}"
            if _norm(claim) in seen or claim == pair["claim"] or gid in REJECTED:
                continue
            seen.add(_norm(claim))
            out.append(
                {
                    **pair,
                    "id": gid,
                    "phenomenon": phenomenon,
                    "claim": claim,
                    "label": 0,
                    "quote": None,
                    "generated_from": pair["id"],
                }
            )
            break
    return out


def load_scenarios(path: Path = SCENARIOS) -> list[dict[str, Any]]:
    """The hand-written scenarios, in file order."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _write(path: Path, rows: list[Pair]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def build(out: Path, scenarios_path: Path = SCENARIOS) -> dict[str, list[Pair]]:
    """Write ``generated.jsonl`` and the three split files into ``out``; return the splits."""
    scenarios = load_scenarios(scenarios_path)
    splits: dict[str, list[Pair]] = {s: [] for s in SPLITS}
    generated: list[Pair] = []
    for sc in scenarios:
        splits[split_of(sc["id"])].extend(hand_pairs(sc))
    for sc in scenarios:
        rows = generate(sc)
        generated.extend(rows)
        splits[split_of(sc["id"])].extend(rows)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "generated.jsonl", generated)
    for split, rows in splits.items():
        _write(out / f"{split}.jsonl", rows)
    return splits


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output directory (default: here)")
    parser.add_argument("--scenarios", type=Path, default=SCENARIOS, help="scenarios.jsonl")
    args = parser.parse_args(argv)
    splits = build(args.out, args.scenarios)
    for split, rows in splits.items():
        pos = sum(r["label"] for r in rows)
        gen = sum(r["generated_from"] is not None for r in rows)
        print(
            f"{split}: {len(rows)} pairs ({pos} supported, {len(rows) - pos} not; {gen} generated)"
        )


if __name__ == "__main__":
    main()
