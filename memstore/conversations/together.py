"""Candidates written together: those that replace nothing go into one ``add_facts``
(one transaction, one near-duplicate check) instead of one write each, which took
about a third of a conversation's time. Only where the gate kept its answer for
every candidate (``conversation._ask_together``): the batch asks the verifier nothing.

A gathered candidate is written before anything reads what it would change: before
a later candidate replaces it or reads it verified (``reconcile.changes_any``, reading
the waiting facts as stored ones), or would read more of its subject's newest facts
than reconciliation compares, before a correction reads the store, before a fact
with its statement (the write finds a stored duplicate unasked) and before any write
of a single candidate. So every read sees the store as the one-at-a-time writes left
it, and the outcomes are the same, in the same order (the audit log's too); a fact
is not reported as near another written in the same batch (the index held neither;
one stored before, which a batch-mate duplicates, is).
What differs is an error while the batch is written, or while a read runs with facts
waiting: none of those facts is written (one at a time, those before it were).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memstore.conversations.extractors import Candidate
from memstore.conversations.storelike import StoreLike
from memstore.errors import MemstoreError
from memstore.names import normalize_key, statement_hash
from memstore.schemas import FactPublic

#: What a gathered candidate's write gave: the stored fact, or its rejection.
Written = Any


@dataclass(frozen=True)
class WaitingMember:
    """A waiting fact's member, as ``reconcile`` reads a stored fact's."""

    name: str
    kind: str
    entity_id: str  # ``Together.entity``'s name for it


@dataclass(frozen=True)
class WaitingFact:
    """A gathered candidate's fact, as ``reconcile`` reads a stored one."""

    statement: str
    relation: str | None
    members: tuple[WaitingMember, ...]
    cited: tuple[str, ...]  # the texts of the evidence it cites


@dataclass
class Together:
    """Candidates that replace nothing, waiting for one write (``flush``); ``done`` is
    told each one's place and what its write gave."""

    store: StoreLike
    done: Callable[[int, Written], None]
    _waiting: list[tuple[int, dict[str, Any], WaitingFact]] = field(default_factory=list)
    _known: dict[str, str] = field(default_factory=dict)  # a name's key to its entity

    def add(self, place: int, candidate: Candidate, fact: Mapping[str, Any]) -> None:
        """Gather ``candidate``'s ``fact`` for the next write (its outcome's ``place``)."""
        members = tuple(
            WaitingMember(name, kind, self.entity(name)) for name, kind, _ in candidate.members
        )
        evidence = [item["text"] for item in fact["evidence"]]
        cited = tuple(evidence[c["evidence"]] for c in fact["citations"])
        read = WaitingFact(candidate.statement, candidate.relation, members, cited)
        self._waiting.append((place, dict(fact), read))

    def about(self, name: str) -> list[WaitingFact]:
        """The waiting facts that name the entity ``name`` names (by any alias), newest
        first, as ``active_about`` lists stored ones."""
        entity = self.entity(name)
        return [
            read
            for _, _, read in reversed(self._waiting)
            if any(m.entity_id == entity for m in read.members)
        ]

    def holds(self, statement: str) -> bool:
        """Whether a waiting fact has ``statement`` (as the store compares them)."""
        key = statement_hash(statement)
        return any(statement_hash(read.statement) == key for _, _, read in self._waiting)

    def flush(self) -> None:
        """Write the waiting facts in one ``add_facts``, in the order gathered."""
        if not self._waiting:
            return
        waiting, self._waiting = self._waiting, []
        results = self.store.add_facts([fact for _, fact, _ in waiting])
        ids = {r.id for r in results if isinstance(r, FactPublic) and not r.deduplicated}
        for (place, _, _), result in zip(waiting, results, strict=True):
            if isinstance(result, FactPublic) and result.near_duplicates:
                near = [n for n in result.near_duplicates if n.fact_id not in ids]
                result = result.model_copy(update={"near_duplicates": near})
            self.done(place, result)

    def entity(self, name: str) -> str:
        """The id of the entity ``name`` names, or its key where the store knows none
        yet: a write names a new entity by its own key alone, and no alias is added
        while candidates wait, so two names are one entity exactly when these agree."""
        key = normalize_key(name)
        if key not in self._known:
            try:
                self._known[key] = "id:" + self.store.entity(name).id
            except MemstoreError:  # not known (NotFound), or not a name the store takes
                self._known[key] = "key:" + key
        return self._known[key]
