"""The values check: a number, date, time or code the evidence states otherwise,
and a record field that says what the claim says in other words."""

from __future__ import annotations

import contextlib
import re

from gate.checks.common import Finding, plain_text, shares_words, shortened, squash
from language.fields import fields, identities, stated
from language.parsing import Reading
from language.speakers import LABEL
from language.values import Value, codes, digits, same, spoken, values


def field_findings(claim: str, evidence: str) -> list[Finding]:
    """Support where the claim is a field of a record in the evidence, said as the
    extractor says a tool's result: "<record> <key>: <value>." ("Order 88213 status:
    shipped." from ``{"order_id": "88213", "status": "shipped"}``), word for word; a
    record another result named by its identifier is called by that name."""
    if ": " not in claim:
        return []
    wanted = plain_text(claim)
    read = []
    for block in evidence.split("\n\n"):
        body = block.strip()
        label = LABEL.match(body) or RECORD_LABEL.match(body)
        read.append(fields(body[label.end() :] if label else body))
    named = identities([f for found in read for f in found])  # as the extractor names them
    for found in read:
        for f in found:
            records = {f.record, named.get(f.record, f.record)}  # as written, or as named
            if any(plain_text(stated(r, f.key, f.value)) == wanted for r in records):
                said = f"{f.key}: {f.value}"
                return [Finding("fields", "support", f'the record states it: "{shortened(said)}"')]
    return []


#: A tool's turn, named as tools are ("flights: {...}", "ci: [...]"): a label before JSON.
RECORD_LABEL = re.compile(r"[^\s:{}\[\]\"]+(?: [^\s:{}\[\]\"]+){0,3}:[ \t]+(?=[{\[])")


def value_findings(
    claim: str, evidence: str, about: Reading | None, cited: tuple[str, ...] = ()
) -> list[Finding]:
    """Numbers, dates, times and weekdays of the claim must be the evidence's: another
    value in the sentence the claim is about, or in the words it cites, refutes it;
    elsewhere it only holds it."""
    stated = values(evidence)
    sharing = [text for text in cited if shares_words(claim, text)]
    quoted = [e for text in sharing for e in values(text)]
    out = cited_codes(claim, cited)
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


def cited_codes(claim: str, cited: tuple[str, ...]) -> list[Finding]:
    """A code the claim names after a word of the words it cites ("flight IB6801") where
    those words give another code of its shape and not it ("flight": "AY1652"):
    refused. A record's own name ("Asset IT-2291 model: ...") is not in a field's place."""
    for code in (c for c in codes(claim) if not values(c)):  # a version is a value
        before = re.search(rf"([A-Za-z]+)\W+{re.escape(code)}", claim)
        if before is None or any(squash(code) in squash(text) for text in cited):
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
