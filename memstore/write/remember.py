"""Remembering an agent's text (``Store.remember``): its claims (``gate.extract_claims``)
become facts and go through the write path together, one gate call for all of them,
each claim stored or rejected (into the audit log) on its own.

The evidence is the texts the agent was given (strings or ``EvidenceCreate``
mappings): ``[1]`` in the text cites the first, a marker such as ``[ev:ID]`` cites
stored evidence by id, and a claim with no marker cites all the evidence. The
members are the entities the facts are about, each as ``add_fact`` takes them (a
name, a ``(name, kind, role)`` tuple or a mapping): one list for every claim, or a
function from a ``gate.Claim`` to its members. A claim's hedge ("probably") lowers
its stated confidence; questions, instructions, pleasantries and strong hedges are
skipped, never written.

A claim citing evidence that exists nowhere is rejected with verdict
``unknown_citation`` (whatever the write hook) and logged like any rejection.
Invalid input raises InvalidInput before anything is checked or written, as does a
gated claim with no evidence to read (none given, none cited by id).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from pydantic import ValidationError

from gate import Claim, VerdictStatus, extract_claims
from memstore.defaults import MAX_BATCH
from memstore.errors import InvalidInput, TooLarge
from memstore.metadata import Metadata
from memstore.schemas import ClaimOutcome, FactCreate, FactPublic, RejectionPublic, RememberReport
from memstore.storage.tables import FactStatus
from memstore.write.evidence import prepare as prepare_evidence
from memstore.write.evidence import stored_evidence
from memstore.write.hook import Admission, WriteHook
from memstore.write.path import WritePath

Members = Sequence[Any] | Callable[[Claim], Sequence[Any]]


def claims_of(text: str) -> list[Claim]:
    """The claims in ``text``; InvalidInput on ``text`` when it is not text."""
    try:
        return extract_claims(text)
    except (TypeError, ValueError) as exc:
        raise InvalidInput("text", str(exc).removeprefix("text: ")) from None


def remember(
    writes: WritePath,
    claims: list[Claim],
    evidence: Sequence[Any],
    members: Members,
    relation: str | None,
    hook: WriteHook,
    metadata: Metadata,
) -> RememberReport:
    """Write each checkable claim as a fact (one hook call for all), reporting every claim;
    each fact carries ``metadata`` (the caller's, checked)."""
    scope = writes.scope
    checkable = [c for c in claims if c.is_evidence]
    if len(checkable) > MAX_BATCH:
        raise InvalidInput("text", f"at most {MAX_BATCH} claims per call, got {len(checkable)}")
    writes.check_gated(hook, len(checkable), "text", "claims")
    by_id = {i for c in checkable for i in c.citations if position(i, len(evidence)) is None}
    stored_ids = stored_evidence(scope, by_id)
    news: list[FactCreate] = []
    missing: list[list[str]] = []
    for n, claim in enumerate(checkable):
        fact, unknown = claim_fact(claim, evidence, members, relation, stored_ids)
        try:
            news.append(FactCreate.model_validate({**fact, "metadata": metadata}))
        except ValidationError as exc:
            raise InvalidInput.from_validation(exc, f"claims.{n}") from None
        missing.append(unknown)
    gated = [n for n, unknown in enumerate(missing) if not unknown]
    writes.check_evidence(hook, [news[n] for n in gated], ["evidence"] * len(gated))
    try:
        written = writes.write([news[n] for n in gated], [None] * len(gated), hook) if gated else []
    except TooLarge as exc:  # the evidence of the call, not of one claim
        raise TooLarge("evidence", exc.reason) from None
    outcomes: dict[int, FactPublic | RejectionPublic] = dict(zip(gated, written, strict=True))
    for n, unknown in enumerate(missing):
        if unknown:
            admission = Admission(
                accepted=False,
                verdict=VerdictStatus.UNKNOWN_CITATION.value,
                status=FactStatus.UNVERIFIED,
                confidence=0.0,
                reason=f"cited evidence not in the context: {', '.join(unknown)}",
            )
            with scope.session() as session:
                prepared = prepare_evidence(session, scope.namespace, news[n])
            outcomes[n] = writes.store_rejection(news[n], prepared, admission)
    done = iter(outcomes[n] for n in range(len(checkable)))
    return RememberReport(
        claims=[claim_outcome(c, next(done) if c.is_evidence else None) for c in claims]
    )


def position(evidence_id: str, count: int) -> int | None:
    """The list index a ``[N]`` marker cites (1-based in the text), if N is in range."""
    if evidence_id.isdigit() and 1 <= int(evidence_id) <= count:
        return int(evidence_id) - 1
    return None


def claim_fact(
    claim: Claim,
    evidence: Sequence[Any],
    members: Members,
    relation: str | None,
    stored_ids: Collection[str],
) -> tuple[dict[str, Any], list[str]]:
    """The ``add_fact`` fields of one claim, and the ids it cites that exist nowhere."""
    cited: list[int | str] = []
    unknown: list[str] = []
    for evidence_id in claim.citations:
        index = position(evidence_id, len(evidence))
        if index is not None:
            cited.append(index)
        elif evidence_id in stored_ids:
            cited.append(evidence_id)
        else:
            unknown.append(evidence_id)
    fact = {
        "statement": claim.content,
        "members": members(claim) if callable(members) else members,
        "evidence": list(evidence),
        "citations": [{"evidence": c} for c in cited],
        "relation": relation,
        "confidence": claim.confidence,
    }
    return fact, unknown


def claim_outcome(claim: Claim, result: FactPublic | RejectionPublic | None) -> ClaimOutcome:
    """What became of one claim: its fact, its rejection, or neither (not checkable)."""
    return ClaimOutcome(
        content=claim.content,
        kind=claim.kind,
        start=claim.start,
        end=claim.end,
        citations=list(claim.citations),
        confidence=claim.confidence,
        fact=result if isinstance(result, FactPublic) else None,
        rejection=result if isinstance(result, RejectionPublic) else None,
    )
