"""Refreshed evidence: store what a provider fetched as a version of its source.

Fetching (``memstore.reverify.providers``) happens outside any transaction; ``record``
then stores a changed text as the source's next evidence version (or finds the
version that already holds it, when a source changes back) and remembers the
fetch in ``evidence_sources``: the version it found, the HTTP validators for the
next conditional GET, and the outcome with its reason.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlmodel import Session, col, select

from memstore.index import outbox
from memstore.reverify.providers import Fetched, Outcome, Validators
from memstore.storage.tables import (
    FIXED_SOURCES,
    MAX_EVIDENCE_CHARS,
    Evidence,
    EvidenceSource,
    content_hash,
    utcnow,
)
from memstore.write.evidence import next_version, stored_version


@dataclass(frozen=True, slots=True)
class Refreshed:
    """A source's state after this run's fetch: the current version, if one is known."""

    source: str
    outcome: Outcome
    evidence: Evidence | None = None
    reason: str | None = None
    new_version: bool = False

    @property
    def usable(self) -> bool:
        return self.outcome in (Outcome.CURRENT, Outcome.UNCHANGED) and self.evidence is not None


def unchanged(row: Evidence) -> Refreshed:
    """Inline evidence: immutable, so its current version is itself."""
    return Refreshed(row.source, Outcome.UNCHANGED, row, "inline evidence does not change")


def validators(session: Session, namespace: str, sources: Collection[str]) -> dict[str, Validators]:
    """The validators to send with each source's next fetch (only for a known version)."""
    if not sources:
        return {}
    rows = session.exec(
        select(EvidenceSource).where(
            EvidenceSource.namespace == namespace, col(EvidenceSource.source).in_(list(sources))
        )
    ).all()
    return {
        r.source: Validators(r.etag, r.last_modified) for r in rows if r.evidence_id is not None
    }


def record(session: Session, namespace: str, source: str, fetched: Fetched) -> Refreshed:
    """Store the outcome of fetching ``source`` (inside the caller's transaction)."""
    state = session.exec(
        select(EvidenceSource).where(
            EvidenceSource.namespace == namespace, EvidenceSource.source == source
        )
    ).first()
    if state is None:
        state = EvidenceSource(namespace=namespace, source=source, outcome=fetched.outcome)
    state.outcome = fetched.outcome
    state.reason = fetched.reason
    state.fetched_at = utcnow()
    result: Refreshed
    if fetched.outcome == Outcome.CURRENT and len(fetched.text or "") > MAX_EVIDENCE_CHARS:
        state.outcome = Outcome.ERROR
        state.reason = f"the fetched text is longer than {MAX_EVIDENCE_CHARS} characters"
        result = Refreshed(source, Outcome.ERROR, reason=state.reason)
    elif fetched.outcome == Outcome.CURRENT and fetched.text is not None:
        row, new = _version(session, namespace, source, fetched.text)
        if state.evidence_id != row.id:  # the search index marks which version is current
            outbox.enqueue_source(session, namespace, source)
        state.evidence_id = row.id
        state.etag, state.last_modified = fetched.validators.etag, fetched.validators.last_modified
        result = Refreshed(source, Outcome.CURRENT, row, fetched.reason, new)
    elif fetched.outcome == Outcome.UNCHANGED and state.evidence_id is not None:
        result = Refreshed(source, Outcome.UNCHANGED, session.get(Evidence, state.evidence_id))
    elif fetched.outcome == Outcome.UNCHANGED:
        state.outcome = Outcome.ERROR
        state.reason = "the source answered 'not modified' but no version of it is known"
        result = Refreshed(source, Outcome.ERROR, reason=state.reason)
    elif fetched.outcome == Outcome.MISSING:
        state.etag = state.last_modified = None
        result = Refreshed(source, Outcome.MISSING, reason=fetched.reason)
    else:
        result = Refreshed(source, Outcome.ERROR, reason=fetched.reason)
    session.add(state)
    return result


def _version(session: Session, namespace: str, source: str, text: str) -> tuple[Evidence, bool]:
    """The stored version of ``source`` with this text, adding the next version if new."""
    digest = content_hash(text)
    found = stored_version(session, namespace, source, digest)
    if found is not None:
        return session.get_one(Evidence, found), False
    assert source not in FIXED_SOURCES, "inline evidence and conversation turns are never refreshed"
    row = next_version(session, namespace, source, text, digest)
    session.add(row)
    session.flush()
    return row, True
