"""What a batch of new facts needs to know of the store: the entities, evidence and
live facts they name, read for all of them at once and kept up to date as they are
written.

The write path reads one before it checks a batch (nothing written) and one inside
each write transaction: a transaction of many facts then asks the database nothing
per fact and flushes its rows a table at a time. A row another writer commits
meanwhile is not seen: its unique key fails the commit (``IntegrityError``), and the
transaction runs again with a fresh cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlmodel import Session, col

from memstore.names import normalize_key, statement_hash
from memstore.schemas import FactCreate
from memstore.storage import db
from memstore.storage.tables import (
    ACTIVE_STATUSES,
    EntityAlias,
    Evidence,
    Fact,
    FactMember,
    content_hash,
)

if TYPE_CHECKING:
    from memstore.storage.scope import FactRow

#: A fact's identity for exact duplicates: its statement hash and its member entities.
FactKey = tuple[str, frozenset[str]]


#: The reads, built once (``:namespace`` and an expanding ``:keys`` list bound per
#: call): building a statement costs more than running it on a small batch.
_ALIASES = sa.select(col(EntityAlias.key), col(EntityAlias.entity_id)).where(
    col(EntityAlias.namespace) == sa.bindparam("namespace"),
    col(EntityAlias.key).in_(sa.bindparam("keys", expanding=True)),
)
_EVIDENCE = sa.select(col(Evidence.id), col(Evidence.source), col(Evidence.content_hash)).where(
    col(Evidence.namespace) == sa.bindparam("namespace"),
    col(Evidence.content_hash).in_(sa.bindparam("keys", expanding=True)),
)
_LIVE_FACTS = sa.select(Fact).where(
    col(Fact.namespace) == sa.bindparam("namespace"),
    col(Fact.statement_hash).in_(sa.bindparam("keys", expanding=True)),
    col(Fact.status).in_(ACTIVE_STATUSES),
)
_MEMBERS = sa.select(col(FactMember.fact_id), col(FactMember.entity_id)).where(
    col(FactMember.fact_id).in_(sa.bindparam("keys", expanding=True))
)


@dataclass
class WriteCache:
    """Alias keys to entity ids, (source, content hash) to evidence ids and fact keys to
    live facts, for one namespace within one transaction."""

    entities: dict[str, str] = field(default_factory=dict)
    evidence: dict[tuple[str, str], str] = field(default_factory=dict)
    facts: dict[FactKey, FactRow] = field(default_factory=dict)

    @classmethod
    def read(
        cls,
        session: Session,
        namespace: str,
        news: Sequence[FactCreate],
    ) -> WriteCache:
        """What the database holds for these facts: three reads, chunked for ``IN``."""
        cache = cls()
        run = session.connection().execute
        keys = sorted({normalize_key(m.name) for new in news for m in new.members})
        for chunk in db.chunks(keys):
            for key, entity_id in run(_ALIASES, {"namespace": namespace, "keys": chunk}):
                cache.entities[key] = entity_id
        digests = sorted({content_hash(ev.text) for new in news for ev in new.evidence})
        for chunk in db.chunks(digests):
            for evidence_id, source, digest in run(
                _EVIDENCE, {"namespace": namespace, "keys": chunk}
            ):
                cache.evidence.setdefault((source, digest), evidence_id)
        hashes = sorted({statement_hash(new.statement) for new in news})
        live: dict[str, Fact] = {}
        for chunk in db.chunks(hashes):
            rows = session.scalars(_LIVE_FACTS, {"namespace": namespace, "keys": chunk})
            live.update((row.id, row) for row in rows)
        members: dict[str, set[str]] = {fact_id: set() for fact_id in live}
        for chunk in db.chunks(sorted(live)):
            for fact_id, entity_id in run(_MEMBERS, {"keys": chunk}):
                members[fact_id].add(entity_id)
        for fact_id, row in live.items():  # any one of equal facts, as a query returns
            cache.facts.setdefault((row.statement_hash or "", frozenset(members[fact_id])), row)
        return cache

    def same_fact(self, new: FactCreate, member_ids: Sequence[str]) -> FactRow | None:
        """The live fact ``new`` duplicates, stored or written earlier in the transaction."""
        return self.facts.get((statement_hash(new.statement), frozenset(member_ids)))

    def wrote(self, row: dict[str, Any], member_ids: Sequence[str]) -> None:
        """Note a fact just written (a plain row, ``db.plain_row``): a later equal one is
        its duplicate if it is live (a pending fact, never checked, answers no write)."""
        if row["status"] in ACTIVE_STATUSES:
            key = (row["statement_hash"] or "", frozenset(member_ids))
            self.facts.setdefault(key, row)
