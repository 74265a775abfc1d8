"""What each audit page shows, built from public ``Store`` calls (no SQL here): the
filtered rejections with their counts per day, one rejection with its evidence and
numbers, and the facts re-verification moved. The templates only lay it out."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup

from gate import GatePolicy, VerdictStatus
from gate.evidence import REMOVED, Citation, ContextItem, scrub
from memstore.audit.chain import ChainReport
from memstore.audit.drift import DriftReport
from memstore.errors import InvalidInput, NotFound
from memstore.rest.page import charts
from memstore.schemas import (
    EvidencePublic,
    FactPublic,
    LabelPublic,
    RejectionFilter,
    RejectionPublic,
    VerificationPublic,
)
from memstore.storage.tables import FactStatus, LabelKind
from memstore.store import Store

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
#: The chart shows at most this many days: the last ones with rejections.
CHART_DAYS = 31
#: The list's filters: ``Store.rejections``' names, as the form and its links spell them.
FILTERS = ("verdict", "since", "until", "text", "entity", "min_gap", "max_gap")
MOVED = [FactStatus.STALE.value, FactStatus.CONTRADICTED.value]
#: The verdicts a rejection can have (the gate never refuses a grounded claim).
VERDICTS = [v.value for v in VerdictStatus if v != VerdictStatus.GROUNDED]
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Alert:
    """A banner at the top of every page: ``level`` is ``info``, ``warning`` or ``error``."""

    level: str
    title: str
    detail: str = ""


def alerts(report: DriftReport) -> list[Alert]:
    """The banners for a namespace's pages: each drift alarm (``Store.drift``) and each
    error budget its labels have spent."""
    found = []
    for stream in report.alarms:
        result = stream.result
        went = "fell" if result.direction == "down" else "rose"
        what = "acceptance rate" if stream.metric == "acceptance" else "mean p1"
        found.append(
            Alert(
                "warning",
                f"The gate's {what} {went} ({stream.backend}).",
                f"{result.baseline_mean:.2f} over the baseline, {result.recent_mean:.2f} since it,"
                f" over the latest {stream.writes} gated writes: a changed verifier, prompt or"
                " source shows up this way.",
            )
        )
    for budget in report.spent:
        what = "refusals" if budget.kind == LabelKind.FALSE_REJECTION.value else "admissions"
        found.append(
            Alert(
                "error",
                f"The error budget for wrong {what} is spent.",
                f"People marked {budget.labelled} of {budget.decided} {what} wrong"
                f" ({budget.rate:.1%}; {budget.allowed:.1%} allowed).",
            )
        )
    return found


# -- the list ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """The list's filters as the form shows them (``shown``, text) and as the Store takes
    them (``where``), with the page (``limit`` rows from ``offset``)."""

    shown: dict[str, Any]
    where: dict[str, Any]
    limit: int = PAGE_SIZE
    offset: int = 0

    def query(self, **page: int) -> str:
        """The query string of these filters, with ``page`` (limit, offset) changed."""
        items: list[tuple[str, Any]] = [
            (name, v)
            for name, value in self.shown.items()
            for v in (value if isinstance(value, list) else [value])
            if v not in (None, "")
        ]
        paging = {"limit": self.limit, "offset": self.offset, **page}
        if paging["limit"] != PAGE_SIZE:
            items.append(("limit", paging["limit"]))
        if paging["offset"]:
            items.append(("offset", paging["offset"]))
        return urlencode(items)


def parse_filters(params: Mapping[str, Sequence[str]]) -> Filters:
    """Filters from a query string (each name -> its values). Blank fields are unset;
    ``until`` as a day (``YYYY-MM-DD``) includes that day. The Store checks the rest:
    InvalidInput names a bad field."""
    text = {n: (params.get(n) or [""])[-1].strip() for n in FILTERS if n != "verdict"}
    verdicts = [v for v in params.get("verdict", []) if v]
    shown: dict[str, Any] = {"verdict": verdicts, **text}
    where: dict[str, Any] = {n: v for n, v in text.items() if v}
    if verdicts:
        where["verdict"] = verdicts
    if _DAY.fullmatch(text["until"]):
        try:
            where["until"] = (date.fromisoformat(text["until"]) + timedelta(days=1)).isoformat()
        except (ValueError, OverflowError):  # 2026-02-30; 9999-12-31 has no next day
            raise InvalidInput("until", "is not a day (YYYY-MM-DD) before 9999-12-31") from None
    limit = _whole(params, "limit", PAGE_SIZE, 1, MAX_PAGE_SIZE)
    return Filters(shown, where, limit, _whole(params, "offset", 0, 0, 10**12))


def _whole(
    params: Mapping[str, Sequence[str]], name: str, default: int, low: int, high: int
) -> int:
    given = (params.get(name) or [""])[-1].strip()
    if not given:
        return default
    # ASCII digits only ("²".isdigit() is true), and few enough for int() to take
    if not (given.isascii() and given.isdigit() and len(given) <= 13) or not (
        low <= int(given) <= high
    ):
        raise InvalidInput(name, f"must be a whole number from {low} to {high}")
    return int(given)


@dataclass(frozen=True)
class RejectionList:
    """One page of rejections, how many match in all and by verdict, and the chart."""

    rows: list[RejectionPublic]
    total: int
    by_verdict: dict[str, int]
    days: list[str]
    per_day: dict[str, list[int]]
    chart: Markup
    newer: str | None
    older: str | None


def rejection_list(store: Store, filters: Filters) -> RejectionList:
    """The page of rejections ``filters`` select, newest first, with counts per day."""
    by_verdict = store.count_rejections("verdict", **filters.where)
    total = sum(by_verdict.values())
    rows = store.rejections(limit=filters.limit, offset=filters.offset, **filters.where)
    newest = rows[:1] if not filters.offset else store.rejections(limit=1, **filters.where)
    days, per_day = _per_day(store, filters.where, by_verdict, newest)
    label = f"Rejections per day by verdict, {days[0]} to {days[-1]}" if days else "No rejections"
    newer = None
    if filters.offset:
        newer = filters.query(offset=max(filters.offset - filters.limit, 0))
    older = None
    if filters.offset + len(rows) < total:
        older = filters.query(offset=filters.offset + filters.limit)
    chart = charts.days_by_verdict(days, per_day, label)
    return RejectionList(rows, total, by_verdict, days, per_day, chart, newer, older)


def _per_day(
    store: Store,
    where: dict[str, Any],
    by_verdict: dict[str, int],
    newest: list[RejectionPublic],
) -> tuple[list[str], dict[str, list[int]]]:
    """The last ``CHART_DAYS`` days up to the ``newest`` rejection, and each verdict's
    count on each of them. Only those days are counted (a verdict's count per day is a
    range of the (namespace, verdict, created_at) index)."""
    if not newest:
        return [], {}
    last = newest[0].created_at.astimezone(UTC).date()
    start = datetime.combine(last - timedelta(days=CHART_DAYS - 1), time(), UTC)
    given = RejectionFilter.model_validate(where).since
    recent = {**where, "since": max(start, given) if given else start}
    counts = {
        verdict: store.count_rejections("day", **{**recent, "verdict": [verdict]})
        for verdict in by_verdict
    }
    seen = sorted({day for per in counts.values() for day in per})
    if not seen:
        return [], {}
    first = date.fromisoformat(seen[0])
    days = [(first + timedelta(days=i)).isoformat() for i in range((last - first).days + 1)]
    return days, {v: [per.get(d, 0) for d in days] for v, per in counts.items()}


# -- one rejection ------------------------------------------------------------------------


@dataclass(frozen=True)
class EvidenceView:
    """One evidence text as pieces: ``cited`` (text, whether a citation covers it) and
    ``scrubbed`` (text, whether it is the marker that replaced the cited spans)."""

    evidence: EvidencePublic
    cited: list[tuple[str, bool]]
    scrubbed: list[tuple[str, bool]]


@dataclass(frozen=True)
class RejectionDetail:
    """A rejection with its evidence, its numbers drawn, the audit chain's state and the
    labels people gave it."""

    rejection: RejectionPublic
    evidence: list[EvidenceView]
    probabilities: Markup
    bits: Markup
    chain: ChainReport
    labels: list[LabelPublic]


def rejection_detail(store: Store, rejection_id: str, policy: GatePolicy) -> RejectionDetail:
    """Everything the page of one rejection shows; NotFound for an unknown id."""
    rejection = store.get_rejection(rejection_id)
    said = store.labels(kind=LabelKind.FALSE_REJECTION, target_id=rejection.id)
    return RejectionDetail(
        rejection,
        evidence_views(rejection),
        probability_chart(rejection, policy),
        bits_chart(rejection, policy),
        row_links(store, rejection),
        said,
    )


def row_links(store: Store, rejection: RejectionPublic) -> ChainReport:
    """The audit chain around ``rejection``: its content, its link to the row before and
    the next row's link to it (the chain page walks the whole chain, reading every row)."""
    seq = rejection.chain_seq
    if seq is None:  # outside the chain: the walk's stray check names it
        return store.verify_audit_chain(span=(1, 1))
    return store.verify_audit_chain(span=(max(seq - 1, 1), seq + 1))


def evidence_views(rejection: RejectionPublic) -> list[EvidenceView]:
    """Each evidence text with its cited spans, and as the scrubbed check read it."""
    citations = [
        Citation(c["evidence_id"], c.get("start"), c.get("end")) for c in rejection.citations
    ]
    items = [ContextItem(e.id, e.text) for e in rejection.evidence]
    if not citations:  # no citations: every item counts as cited (docs/design.md, Scrubbing)
        citations = [Citation(item.id) for item in items]
    scrubbed = {item.id: item.text for item in scrub(items, citations)}
    views = []
    for evidence in rejection.evidence:
        spans = [c.span(evidence.text) for c in citations if c.evidence_id == evidence.id]
        views.append(
            EvidenceView(evidence, _pieces(evidence.text, spans), _markers(scrubbed[evidence.id]))
        )
    return views


def _pieces(text: str, spans: list[tuple[int, int]]) -> list[tuple[str, bool]]:
    """``text`` cut at the (merged) spans: (piece, inside a span)."""
    pieces: list[tuple[str, bool]] = []
    cursor = 0
    for start, end in sorted(spans):
        start = max(start, cursor)
        if end <= start:
            continue
        pieces.extend([(text[cursor:start], False), (text[start:end], True)])
        cursor = end
    pieces.append((text[cursor:], False))
    return [(piece, cited) for piece, cited in pieces if piece]


def _markers(text: str) -> list[tuple[str, bool]]:
    """``text`` cut at scrubbing's markers: (piece, is the marker)."""
    pieces: list[tuple[str, bool]] = []
    for i, part in enumerate(text.split(REMOVED)):
        if i:
            pieces.append((REMOVED, True))
        if part:
            pieces.append((part, False))
    return pieces


def probability_chart(rejection: RejectionPublic, policy: GatePolicy) -> Markup:
    """p0 and p1 against the stated confidence and the policy's thresholds."""
    rows = [("p0 (cited spans removed)", rejection.p0), ("p1 (with the evidence)", rejection.p1)]
    marks = [
        charts.Mark("stated confidence", rejection.stated_confidence),
        charts.Mark("min p1", policy.min_p1),
        charts.Mark("contradicted below", policy.contradiction_threshold),
    ]
    return charts.bars("The claim's probability without and with its evidence", rows, marks, 1.0)


def bits_chart(rejection: RejectionPublic, policy: GatePolicy) -> Markup:
    """Required and observed bits, with the observed bits the gate needed at least."""
    rows = [("required bits", rejection.required_bits), ("observed bits", rejection.observed_bits)]
    marks = []
    if rejection.required_bits is not None:
        needed = max(rejection.required_bits - policy.flag_threshold_bits, 0.0)
        marks.append(charts.Mark("observed bits needed", needed))
    return charts.bars("Required and observed bits", rows, marks)


# -- facts re-verification moved ----------------------------------------------------------


@dataclass(frozen=True)
class SourceVersion:
    """An evidence version a re-verification read, and whether the fact's previous check
    read another (the source changed)."""

    evidence_id: str
    source: str | None
    version: int | None
    changed: bool


@dataclass(frozen=True)
class MovedFact:
    """A fact re-verification made stale or contradicted: the check that did, the source
    versions it read, and the labels people gave the fact."""

    fact: FactPublic
    check: VerificationPublic | None
    sources: list[SourceVersion]
    labels: list[LabelPublic] = field(default_factory=list)


@dataclass(frozen=True)
class MovedFacts:
    """A page of moved facts and the cursor of the next one."""

    items: list[MovedFact]
    next_cursor: str | None


def moved_facts(store: Store, cursor: str | None, limit: int = PAGE_SIZE) -> MovedFacts:
    """Facts now ``stale`` or ``contradicted``, oldest recorded first (keyset pages)."""
    page = store.list_facts(statuses=MOVED, limit=limit, cursor=cursor)
    items = [
        _moved(store, fact, store.labels(kind=LabelKind.FALSE_ADMISSION, target_id=fact.id))
        for fact in page.items
    ]
    return MovedFacts(items, page.next_cursor)


def _moved(store: Store, fact: FactPublic, said: list[LabelPublic]) -> MovedFact:
    checks = store.verifications(fact.id)
    moving = [c for c in checks if c.kind == "reverify" and c.status_after == fact.status]
    if not moving:
        return MovedFact(fact, None, [], said)
    check = moving[-1]
    before = checks[checks.index(check) - 1].evidence_ids if checks.index(check) else []
    sources = []
    for evidence_id in check.evidence_ids:
        try:
            evidence = store.get_evidence(evidence_id)
            source, version = evidence.source, evidence.version
        except NotFound:  # a version no live fact cites: the check's reason names it
            source, version = None, None
        sources.append(SourceVersion(evidence_id, source, version, evidence_id not in before))
    return MovedFact(fact, check, sources, said)
