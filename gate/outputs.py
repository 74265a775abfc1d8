"""Output verification: check every claim of an agent's text against its context.

``verify_claims`` extracts the text's claims (``gate.claims``), checks all of them
with one ``Gate.check_many`` call, audits the citations, and applies a grounding
profile. The original text is never modified: a profile that rewrites returns a
new text in ``report.output``.

A claim is *supported* when the gate says ``grounded`` or ``prior_sufficient``
(and accepts it) and any passage it quotes is in the evidence it cites. It is
*unverified* when the verifier failed or timed out: as a failed gate never blocks
a write (docs/design.md, Failures never block a write), such claims never block or
strip an output, but they are reported and HEDGE marks them. Every other claim is
*unsupported*.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from gate.claims import Claim, check_text, citation_ids, extract_claims
from gate.engine import Check, Gate, default_gate
from gate.evidence import Citation, ContextItem
from gate.verdict import Verdict, VerdictStatus

#: What HEDGE appends to each unsupported or unverified clause (before its full stop).
UNVERIFIED_MARK = " [unverified]"

SUPPORTED_STATUSES = frozenset({VerdictStatus.GROUNDED, VerdictStatus.PRIOR_SUFFICIENT})
UNVERIFIED_STATUSES = frozenset({VerdictStatus.TIMEOUT, VerdictStatus.VERIFIER_ERROR})


class GroundingProfile(StrEnum):
    """What ``verify_claims`` does with unsupported claims.

    - ``strict_block``: ``report.blocked`` is True if any claim is unsupported, and
      ``report.output`` is None; otherwise the output is the text unchanged.
    - ``strip_unsupported``: ``report.output`` is the text without every sentence
      that holds an unsupported claim (a list item's whole line goes with it).
    - ``hedge``: ``report.output`` is the text with `` [unverified]`` placed right
      after each unsupported or unverified clause, before its punctuation.
    - ``audit_only``: only reports; ``report.output`` is the text unchanged.
    """

    STRICT_BLOCK = "strict_block"
    STRIP_UNSUPPORTED = "strip_unsupported"
    HEDGE = "hedge"
    AUDIT_ONLY = "audit_only"


FindingKind = Literal["unknown_id", "quote_not_found", "orphan_id"]


@dataclass(frozen=True, slots=True)
class CitationFinding:
    """A citation problem.

    ``unknown_id``: a claim cites an id that no context item has. ``quote_not_found``:
    a claim quotes a passage that none of the evidence it cites contains.
    ``orphan_id``: a context item no claim cites (reported only when the text cites
    something; ``claim`` is then None).
    """

    kind: FindingKind
    evidence_id: str
    claim: int | None
    detail: str


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """A checked claim: the gate's verdict and what it means for the output."""

    claim: Claim
    verdict: Verdict
    findings: tuple[CitationFinding, ...] = ()

    @property
    def unverified(self) -> bool:
        """The verifier failed or timed out, so nothing is known about the claim."""
        return self.verdict.status in UNVERIFIED_STATUSES

    @property
    def supported(self) -> bool:
        """Grounded (or true without the evidence) and quoting only what it cites."""
        return (
            self.verdict.accepted
            and self.verdict.status in SUPPORTED_STATUSES
            and not any(f.kind == "quote_not_found" for f in self.findings)
        )

    @property
    def reason(self) -> str:
        """Why the claim is (not) supported, in words."""
        quotes = [f.detail for f in self.findings if f.kind == "quote_not_found"]
        if quotes and self.verdict.status in SUPPORTED_STATUSES:
            return "; ".join(quotes)
        words = f"{self.verdict.status.value}: {self.verdict.reason or 'the evidence supports it'}"
        if self.verdict.p1 is not None and self.verdict.p0 is not None:
            words += f" (p1={self.verdict.p1:.2f}, p0={self.verdict.p0:.2f})"
        return "; ".join([words, *quotes])


@dataclass(frozen=True, slots=True)
class OutputReport:
    """What ``verify_claims`` found, and the text to show under its profile.

    ``results`` holds the checked claims in text order, ``skipped`` the claims that
    are not evidence (questions, instructions, pleasantries, hedges). ``output`` is
    the text to show: see ``GroundingProfile``.
    """

    text: str
    profile: GroundingProfile
    results: tuple[ClaimResult, ...]
    skipped: tuple[Claim, ...]
    findings: tuple[CitationFinding, ...]
    blocked: bool
    output: str | None

    @property
    def supported(self) -> list[ClaimResult]:
        return [r for r in self.results if r.supported]

    @property
    def unsupported(self) -> list[ClaimResult]:
        return [r for r in self.results if not r.supported and not r.unverified]

    @property
    def unverified(self) -> list[ClaimResult]:
        return [r for r in self.results if r.unverified]

    @property
    def ok(self) -> bool:
        """Every checked claim is supported and every citation resolves (orphan
        evidence, which no claim cites, is reported but is no problem)."""
        problems = [f for f in self.findings if f.kind != "orphan_id"]
        return not self.unsupported and not self.unverified and not problems

    def summary(self) -> str:
        """One line: counts of supported, unsupported, unverified and skipped claims."""
        line = (
            f"{len(self.results)} claims checked: {len(self.supported)} supported, "
            f"{len(self.unsupported)} unsupported, {len(self.unverified)} unverified; "
            f"{len(self.skipped)} skipped; {len(self.findings)} citation findings"
        )
        return line + (" (blocked)" if self.blocked else "")

    def as_feedback(self) -> str:
        """A message an agent can act on: each unsupported claim and why, then the
        citation problems. Ready to send back for self-correction."""
        if self.ok:
            return f"All {len(self.results)} checked claims are supported by the evidence."
        lines: list[str] = []
        problems = self.unsupported + self.unverified
        if problems:
            lines.append(f"{len(problems)} claim(s) are not supported by the evidence:")
            for n, result in enumerate(problems, start=1):
                c = result.claim
                lines.append(f'{n}. "{c.content}" (characters {c.start}-{c.end}): {result.reason}')
        other = [f for f in self.findings if f.kind != "quote_not_found"]
        if other:
            lines.append("Citation problems:")
            lines.extend(f"- {f.detail}" for f in other)
        lines.append(
            "Remove or correct these claims, or cite evidence that supports them; "
            "cite only evidence you were given."
        )
        return "\n".join(lines)


def verify_claims(
    text: str,
    context: str | Sequence[str | ContextItem],
    *,
    profile: GroundingProfile | str = GroundingProfile.AUDIT_ONLY,
    gate: Gate | None = None,
) -> OutputReport:
    """Check each claim of ``text`` against ``context`` and apply ``profile``.

    ``context`` is a list of strings (ids "1", "2", ...: ``[1]`` cites the first) or
    of ``ContextItem`` (their own ids), or one string. All claims go to the gate in
    one ``check_many`` call; ``gate`` None uses the process-wide default gate.
    Raises TypeError/ValueError naming the field for bad input.
    """
    check_text("text", text)
    chosen = _profile(profile)
    items = context_items(context)
    if gate is None:
        gate = default_gate()
    elif not isinstance(gate, Gate):
        raise TypeError(f"gate: must be a gate.Gate, got {type(gate).__name__}")
    claims = extract_claims(text)
    checked = [c for c in claims if c.is_evidence]
    verdicts = gate.check_many([claim_check(c, items) for c in checked]) if checked else []
    findings = _claim_findings(checked, items)
    results = tuple(
        ClaimResult(c, v, tuple(f for f in findings if f.claim == i))
        for i, (c, v) in enumerate(zip(checked, verdicts, strict=True))
    )
    findings += _orphans(text, items)
    unsupported = [r for r in results if not r.supported and not r.unverified]
    blocked = chosen is GroundingProfile.STRICT_BLOCK and bool(unsupported)
    return OutputReport(
        text=text,
        profile=chosen,
        results=results,
        skipped=tuple(c for c in claims if not c.is_evidence),
        findings=tuple(findings),
        blocked=blocked,
        output=_output(text, chosen, results, blocked),
    )


def context_items(context: str | Sequence[str | ContextItem]) -> tuple[ContextItem, ...]:
    """The context as items: strings get ids "1", "2", ... by position; ids must be unique."""
    if isinstance(context, str):
        context = [context]
    if not isinstance(context, Sequence):
        raise TypeError(
            f"context: must be a list of strings or ContextItems, got {type(context).__name__}"
        )
    items: list[ContextItem] = []
    for i, item in enumerate(context):
        if isinstance(item, str):
            items.append(ContextItem(str(i + 1), item))
        elif isinstance(item, ContextItem):
            items.append(item)
        else:
            raise TypeError(
                f"context[{i}]: must be a string or a ContextItem, got {type(item).__name__}"
            )
    seen: set[str] = set()
    for i, item in enumerate(items):
        if item.id in seen:
            raise ValueError(f"context[{i}]: evidence id {item.id!r} is used twice")
        seen.add(item.id)
    return tuple(items)


def claim_check(claim: Claim, items: Sequence[ContextItem]) -> Check:
    """The gate's view of a claim: its content, the context, its citations and confidence."""
    return Check(
        claim=claim.content,
        evidence=tuple(items),
        citations=tuple(Citation(i) for i in claim.citations),
        confidence=claim.confidence,
    )


def _profile(profile: GroundingProfile | str) -> GroundingProfile:
    if isinstance(profile, GroundingProfile):
        return profile
    if not isinstance(profile, str):
        raise TypeError(f"profile: must be a GroundingProfile, got {type(profile).__name__}")
    try:
        return GroundingProfile(profile.lower())
    except ValueError:
        names = ", ".join(p.value for p in GroundingProfile)
        raise ValueError(f"profile: unknown profile {profile!r}; choose one of {names}") from None


def _claim_findings(claims: Sequence[Claim], items: Sequence[ContextItem]) -> list[CitationFinding]:
    texts = {item.id: item.text for item in items}
    findings: list[CitationFinding] = []
    for n, claim in enumerate(claims):
        for evidence_id in claim.citations:
            if evidence_id not in texts:
                detail = f"[{evidence_id}] is cited by claim {n + 1} but no evidence has that id"
                findings.append(CitationFinding("unknown_id", evidence_id, n, detail))
        cited = [i for i in claim.citations if i in texts]
        for quote in claim.quotes if cited else ():
            if not any(_normal(quote) in _normal(texts[i]) for i in cited):
                where = ", ".join(f"[{i}]" for i in cited)
                detail = f'the quoted "{quote}" is not in the cited evidence {where}'
                findings.append(CitationFinding("quote_not_found", ",".join(cited), n, detail))
    return findings


def _orphans(text: str, items: Sequence[ContextItem]) -> list[CitationFinding]:
    cited = set(citation_ids(text))
    if not cited:
        return []
    return [
        CitationFinding("orphan_id", item.id, None, f"evidence [{item.id}] is never cited")
        for item in items
        if item.id not in cited
    ]


def _normal(text: str) -> str:
    """Casefolded, quotes straightened, whitespace collapsed: for quote matching."""
    text = text.translate(str.maketrans("\u201c\u201d\u2018\u2019", "\"\"''"))
    return re.sub(r"\s+", " ", text).strip().casefold()


def _output(
    text: str, profile: GroundingProfile, results: Sequence[ClaimResult], blocked: bool
) -> str | None:
    if profile is GroundingProfile.STRICT_BLOCK:
        return None if blocked else text
    if profile is GroundingProfile.STRIP_UNSUPPORTED:
        bad = [r.claim for r in results if not r.supported and not r.unverified]
        return strip_sentences(text, bad)
    if profile is GroundingProfile.HEDGE:
        return mark_claims(text, [r.claim for r in results if not r.supported])
    return text


def strip_sentences(text: str, claims: Sequence[Claim]) -> str:
    """``text`` without the sentences of ``claims``; a line left empty (or holding only
    a list marker) goes too, with its line break."""
    spans = sorted({(c.sentence_start, c.sentence_end) for c in claims}, reverse=True)
    for start, end in spans:
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end == -1 else line_end
        before, after = text[line_start:start], text[end:line_end]
        if re.fullmatch(r"\s*(?:[-*•+]|\d{1,3}[.)]|#{1,6})?\s*", before) and not after.strip():
            if line_end == len(text):  # the last line: drop the break before it instead
                text = text[: max(0, line_start - 1)]
            else:
                text = text[:line_start] + text[line_end + 1 :]
        elif after.strip():
            gap = len(after) - len(after.lstrip())
            text = text[:start] + text[end + gap :]
        else:
            gap = len(before) - len(before.rstrip())
            text = text[: start - gap] + text[end:]
    return text


def mark_claims(text: str, claims: Sequence[Claim], mark: str = UNVERIFIED_MARK) -> str:
    """``text`` with ``mark`` inserted right after each of ``claims`` (clause ends)."""
    for end in sorted({c.end for c in claims}, reverse=True):
        text = text[:end] + mark + text[end:]
    return text
