"""Turning a FactCreate's evidence and citations into a gate Candidate, and storing evidence."""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlmodel import Session, col, func, select

from memstore.errors import InvalidInput
from memstore.index import outbox
from memstore.schemas import CitationCreate, FactCreate
from memstore.storage import db
from memstore.storage.scope import Scope
from memstore.storage.tables import (
    FIXED_SOURCES,
    Evidence,
    OutboxKind,
    content_hash,
    new_id,
)
from memstore.write.hook import Candidate, CitedSpan, EvidenceItem


def _quote_patterns(quote: str, *, loose: bool) -> list[tuple[str, int]]:
    """Regexes for ``quote``, strictest first: the exact text; the same words with any
    whitespace and case; with ``loose``, the same words with any punctuation between."""
    patterns = [(re.escape(quote), 0)]
    if quote.split():
        patterns.append((r"\s+".join(re.escape(w) for w in quote.split()), re.IGNORECASE))
    words = re.findall(r"\w+", quote)
    if loose and words:
        patterns.append((r"\W+".join(re.escape(w) for w in words), re.IGNORECASE))
    return patterns


def find_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Span of ``quote`` in ``text``: exact first, then ignoring case and whitespace runs."""
    for pattern, flags in _quote_patterns(quote, loose=False):
        match = re.search(pattern, text, flags)
        if match:
            return match.span()
    return None


def reanchor(old_text: str, start: int, end: int, new_text: str) -> tuple[int, int] | None:
    """Where the span ``[start, end)`` of ``old_text`` sits in ``new_text``, or None if lost.

    Tries the exact text, then the same words with any whitespace and case, then the
    same words with any punctuation between them. Of several matches, the one whose
    surrounding text best matches the old span's surroundings wins.
    """
    quote = old_text[start:end]
    for pattern, flags in _quote_patterns(quote, loose=True):
        matches = [m.span() for m in re.finditer(pattern, new_text, flags)]
        if matches:
            before, after = (
                old_text[max(0, start - _CONTEXT) : start],
                old_text[end : end + _CONTEXT],
            )
            return max(
                matches,
                key=lambda span: (
                    _similarity(before, new_text[max(0, span[0] - _CONTEXT) : span[0]])
                    + _similarity(after, new_text[span[1] : span[1] + _CONTEXT]),
                    -abs(span[0] - start),
                ),
            )
    return None


_CONTEXT = 40  # characters on each side compared when a quote occurs more than once


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower(), b.lower(), autojunk=False).ratio()


@dataclass(frozen=True, slots=True)
class PreparedEvidence:
    """The evidence of one fact, resolved: context items (stored rows or ``new`` ones)."""

    namespace: str
    items: tuple[EvidenceItem, ...]
    new: tuple[EvidenceItem, ...]
    citations: tuple[CitedSpan, ...]

    def candidate(self, fact: FactCreate) -> Candidate:
        return Candidate(
            namespace=self.namespace,
            statement=fact.statement,
            stated_confidence=fact.confidence,
            evidence=self.items,
            citations=self.citations,
        )


def prepare(
    session: Session,
    namespace: str,
    fact: FactCreate,
    pending: dict[tuple[str, str], str] | None = None,
    stored_ids: dict[tuple[str, str], str] | None = None,
) -> PreparedEvidence:
    """Resolve evidence texts (dedup by content hash) and ids, and anchor every citation.

    ``pending`` maps (source, content hash) to the id given to new evidence by earlier
    facts of the same batch, so one new text gets one id (the gate sees, and caches,
    the same context for all of them); ``stored_ids`` maps them to stored ids, read
    before (``WriteCache``) in place of a query per text. Raises InvalidInput naming
    the field for unknown ids and spans or quotes that do not fit the cited text.
    Writes nothing.
    """
    pending = {} if pending is None else pending
    items: list[EvidenceItem] = []
    new: list[EvidenceItem] = []
    by_key: dict[tuple[str, str], EvidenceItem] = {}
    by_index: list[EvidenceItem] = []
    for ev in fact.evidence:
        key = (ev.source, ev.text)
        if key not in by_key:
            digest = content_hash(ev.text)
            if stored_ids is None:
                stored_id = stored_version(session, namespace, ev.source, digest)
            else:
                stored_id = stored_ids.get((ev.source, digest))
            is_new = stored_id is None
            evidence_id = stored_id or pending.setdefault((ev.source, digest), new_id())
            by_key[key] = EvidenceItem(id=evidence_id, text=ev.text, source=ev.source)
            items.append(by_key[key])
            if is_new:
                new.append(by_key[key])
        by_index.append(by_key[key])

    cited_ids = [c.evidence for c in fact.citations if isinstance(c.evidence, str)]
    wanted = list(dict.fromkeys([*fact.evidence_ids, *cited_ids]))
    stored = _load(session, namespace, wanted)
    for i, evidence_id in enumerate(fact.evidence_ids):
        if evidence_id not in stored:
            raise InvalidInput(
                f"evidence_ids.{i}", f"no evidence {evidence_id!r} in namespace {namespace!r}"
            )
    known = {item.id for item in items}
    for evidence_id in wanted:
        if evidence_id in stored and evidence_id not in known:
            items.append(stored[evidence_id])
            known.add(evidence_id)

    citations = tuple(
        _anchor(i, cite, by_index, stored, namespace) for i, cite in enumerate(fact.citations)
    )
    return PreparedEvidence(namespace, tuple(items), tuple(new), citations)


def stored_version(session: Session, namespace: str, source: str, digest: str) -> str | None:
    """The id of the stored version of ``source`` whose text has this content hash."""
    return session.exec(
        select(Evidence.id).where(
            Evidence.namespace == namespace,
            Evidence.source == source,
            Evidence.content_hash == digest,
        )
    ).first()


def next_version(
    session: Session,
    namespace: str,
    source: str,
    text: str,
    digest: str,
    evidence_id: str | None = None,
) -> Evidence:
    """A new evidence row (not yet added) holding ``text`` as the next version of
    ``source``: one past its latest stored version. Inline evidence and conversation
    turns never change (``FIXED_SOURCES``), so each of their texts is version 1. The one
    place evidence versions are counted."""
    version = 1
    if source not in FIXED_SOURCES:
        db.flush_in_table_order(session)  # versions added in this transaction count too
        latest = session.exec(
            select(func.max(Evidence.version)).where(
                Evidence.namespace == namespace, Evidence.source == source
            )
        ).one()
        version = (latest or 0) + 1
    return Evidence(
        id=evidence_id or new_id(),
        namespace=namespace,
        source=source,
        version=version,
        content_hash=digest,
        text=text,
    )


def _load(session: Session, namespace: str, ids: Sequence[str]) -> dict[str, EvidenceItem]:
    if not ids:
        return {}
    rows = session.exec(
        select(Evidence).where(Evidence.namespace == namespace, col(Evidence.id).in_(ids))
    ).all()
    return {r.id: EvidenceItem(id=r.id, text=r.text, source=r.source) for r in rows}


def _anchor(
    index: int,
    cite: CitationCreate,
    by_index: list[EvidenceItem],
    stored: dict[str, EvidenceItem],
    namespace: str,
) -> CitedSpan:
    field = f"citations.{index}"
    if isinstance(cite.evidence, int):
        item = by_index[cite.evidence]  # range checked by FactCreate
    elif cite.evidence in stored:
        item = stored[cite.evidence]
    else:
        raise InvalidInput(
            f"{field}.evidence", f"no evidence {cite.evidence!r} in namespace {namespace!r}"
        )
    if cite.quote is not None:
        span = find_quote(item.text, cite.quote)
        if span is None:
            raise InvalidInput(f"{field}.quote", "the quoted text is not in the cited evidence")
        return CitedSpan(item.id, *span)
    if cite.start is not None and cite.end is not None:
        if cite.end > len(item.text):
            raise InvalidInput(
                f"{field}.end", f"{cite.end} is past the end of the evidence ({len(item.text)})"
            )
        return CitedSpan(item.id, cite.start, cite.end)
    return CitedSpan(item.id)


def persist(
    session: Session,
    prepared: PreparedEvidence,
    known: dict[tuple[str, str], str] | None = None,
    queue: list[str] | None = None,
    plain: dict[Any, list[dict[str, Any]]] | None = None,
) -> PreparedEvidence:
    """Insert (or, with ``plain``, queue) the new evidence rows, keeping the ids the write
    hook saw.

    Text that another writer stored meanwhile is reused; the returned
    PreparedEvidence then names the stored id. A URI source gets the next version.
    ``known`` ((source, content hash) to id: all that is stored, and kept so) spares
    the lookups within one transaction. The new rows are queued for the index, or, with
    ``queue``, their ids added to it for the caller to queue. With ``plain``, new inline
    text goes there as plain rows (``db.insert_plain``) for the caller to insert; a URI
    source's versions are counted in SQL, so its rows are added to the session.
    """
    if plain is not None and known is None:
        raise ValueError("plain rows need known: SQL does not hold them yet")
    remap: dict[str, str] = {}
    queued: list[str] = []
    sources: set[str] = set()
    for item in prepared.new:
        digest = content_hash(item.text)
        if known is None:
            existing = stored_version(session, prepared.namespace, item.source, digest)
        else:
            existing = known.get((item.source, digest))
        if existing is not None:
            remap[item.id] = existing
            continue
        if plain is not None and item.source in FIXED_SOURCES:  # always version 1
            plain.setdefault(Evidence, []).append(
                db.plain_row(
                    Evidence,
                    id=item.id,
                    namespace=prepared.namespace,
                    source=item.source,
                    content_hash=digest,
                    text=item.text,
                )
            )
        else:
            row = next_version(session, prepared.namespace, item.source, item.text, digest, item.id)
            session.add(row)
            if row.version > 1:
                sources.add(item.source)  # its earlier versions are no longer current
        if known is not None:
            known[(item.source, digest)] = item.id
        queued.append(item.id)
    if queue is None:
        outbox.enqueue(session, prepared.namespace, OutboxKind.EVIDENCE, queued)
    else:
        queue += queued
    for source in sources:
        outbox.enqueue_source(session, prepared.namespace, source)
    if not remap:
        return prepared
    return PreparedEvidence(
        prepared.namespace,
        tuple(replace(i, id=remap.get(i.id, i.id)) for i in prepared.items),
        (),
        tuple(
            replace(c, evidence_id=remap.get(c.evidence_id, c.evidence_id))
            for c in prepared.citations
        ),
    )


def stored_evidence(scope: Scope, ids: Collection[str]) -> set[str]:
    """Which of these ids name evidence stored in this namespace (any evidence:
    a write may cite what the audit log showed it)."""
    found: set[str] = set()
    with scope.session() as session:
        for chunk in db.chunks(sorted(ids)):
            found.update(
                session.exec(
                    select(Evidence.id).where(
                        Evidence.namespace == scope.namespace, col(Evidence.id).in_(chunk)
                    )
                )
            )
    return found
