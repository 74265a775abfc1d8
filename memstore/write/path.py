"""The write path: a batch of new facts through the write hook into SQL, then into the
search index.

Per batch: evidence is prepared and members resolved (nothing written), exact
duplicates are answered with the stored fact, the hook decides the rest in one
call, and the batch is written in its order: accepted and rejected facts (a rejection
into the audit log) together, up to ``TRANSACTION_FACTS`` to a transaction, a
correction in a transaction of its own. After the commits
near duplicates are reported and the index is updated. An error while writing (a
database failure, an alias taken meanwhile) stops the batch: the transactions
committed before it stay, the one it hit is rolled back whole. An ungated batch that
fits one transaction is prepared, checked and written in it, with no read before.

A correction (``Store.supersede``) closes world time too: it holds from its
``valid_from`` (the moment of the correction when it has none) and the old fact stops
holding there, so ``as_of`` reads before it find the old fact and after it the new
one. An old fact that already ended earlier keeps its ``valid_to``. A correction of
the past, starting at or before the old fact's ``valid_from``, replaces it over its
whole world time: the old fact's validity becomes empty (``valid_to == valid_from``)
and no ``as_of`` read returns it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from gate import VerdictStatus
from memstore.audit import chain, rejections
from memstore.errors import InvalidInput
from memstore.index import outbox
from memstore.index.handle import IndexHandle
from memstore.limits import Limits
from memstore.names import statement_hash
from memstore.schemas import FactCreate, FactPublic, RejectionPublic
from memstore.storage import db, schedule
from memstore.storage.scope import FactRow, Scope
from memstore.storage.tables import (
    OPEN_STATUSES,
    Citation,
    Fact,
    FactMember,
    FactStatus,
    IndexOutbox,
    OutboxKind,
    Rejection,
    Verification,
    utcnow,
)
from memstore.write import evidence, refusals
from memstore.write.cache import WriteCache
from memstore.write.duplicates import near_duplicates
from memstore.write.entities import resolve_members
from memstore.write.hook import UNVERIFIED_VERDICTS, Admission, GateHook, Ungated, WriteHook, admit

log = logging.getLogger(__name__)

Written = FactPublic | RejectionPublic
#: Facts (accepted or rejected) written in one transaction: a bulk write commits (and,
#: on SQLite, syncs) once per this many facts, and holds the write lock that long at most.
TRANSACTION_FACTS = 200
#: Why a gated write without evidence is refused as bad input, and what to do instead.
NO_EVIDENCE = (
    "the gate checks a fact against its evidence and none was given: pass the text the"
    " fact comes from (evidence), cite stored evidence (evidence_ids), or write it ungated"
)


def has_evidence(new: FactCreate) -> bool:
    """Whether a fact gives evidence: texts, stored evidence ids, or citations of stored ids."""
    return bool(new.evidence or new.evidence_ids) or any(
        isinstance(c.evidence, str) for c in new.citations
    )


@dataclass
class _Rows:
    """What a write transaction sends once the session's rows (a URI source's evidence)
    are flushed, as plain rows: new inline evidence, entities and their aliases, facts,
    members and citations (``db.insert_plain``), the facts' history rows (linked into
    the audit chain) and the facts and evidence to queue for the index."""

    plain: defaultdict[Any, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    facts: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)

    def send(self, session: Session, namespace: str) -> None:
        queued = outbox.outbox_rows(namespace, OutboxKind.FACT, self.facts)
        queued += outbox.outbox_rows(namespace, OutboxKind.EVIDENCE, self.evidence)
        db.insert_plain(session, {**self.plain, IndexOutbox: queued})
        chain.insert_plain(session, "verifications", self.history)


@dataclass
class WritePath:
    """Writes new facts into one scope, keeping its search index in step."""

    scope: Scope
    index: IndexHandle
    limits: Limits
    near_duplicate: float | None
    #: The namespace's re-verification policy, read in the write's own transaction.
    policy: Callable[[Session], schedule.ReverifyPolicy]

    def check_gated(self, hook: WriteHook, count: int, field: str, what: str = "facts") -> None:
        """That the gate may check ``count`` claims in one call (``Ungated`` checks none)."""
        if not isinstance(hook, Ungated):
            self.limits.check_claims(count, field, what)

    @staticmethod
    def check_evidence(hook: WriteHook, news: Sequence[FactCreate], fields: Sequence[str]) -> None:
        """That the gate has something to read for each fact: a gated fact with no
        evidence (none given, none cited by id) is bad input (``fields[i]``), not a
        rejection. Other hooks decide for themselves."""
        if not isinstance(hook, GateHook):
            return
        for new, name in zip(news, fields, strict=True):
            if not has_evidence(new):
                raise InvalidInput(name, NO_EVIDENCE)

    def write(
        self, news: Sequence[FactCreate], supersedes: Sequence[str | None], hook: WriteHook
    ) -> list[Written]:
        """Check every fact with one hook call, then write them together, in order.

        A fact already remembered (same normalized statement and members, live) is
        answered with the stored one, unchecked; superseding facts are never deduplicated.
        """
        fields = (
            ["evidence"] if len(news) == 1 else [f"facts.{i}.evidence" for i in range(len(news))]
        )
        self.check_evidence(hook, news, fields)
        one_transaction = len(news) <= TRANSACTION_FACTS and all(s is None for s in supersedes)
        if type(hook) is Ungated and one_transaction:
            return self._write_ungated(news, hook)
        results: list[Written | None] = [None] * len(news)
        with self.scope.session() as session:
            cache = WriteCache.read(session, self.scope.namespace, news)
            prepared, same = self._prepare(session, news, supersedes, cache)
            repeated = {i: row for i, row in enumerate(same) if row is not None}
            stored = self.scope.hydrate(session, list(repeated.values()))
            for i, fact in zip(repeated, stored, strict=True):
                fact.deduplicated = True
                results[i] = fact
        todo = [i for i, r in enumerate(results) if r is None]
        admissions = admit(hook, [prepared[i].candidate(news[i]) for i in todo])
        # The policy is read only when a checked fact needs it: an ungated fact is
        # never due.
        checked = any(a.verdict != Ungated.verdict for a in admissions)
        admitted = dict(zip(todo, admissions, strict=True))
        pending: list[int] = []  # accepted and rejected facts not yet written, in batch order

        def write_pending() -> None:
            for i, written in zip(
                pending,
                self._store_in_order(pending, news, prepared, admitted, checked),
                strict=True,
            ):
                results[i] = written
            pending.clear()

        # In batch order (the audit chain, and drift judged on it, follow it): a
        # correction first writes the facts decided before it.
        for i, admission in zip(todo, admissions, strict=True):
            if not admission.accepted or supersedes[i] is None:
                pending.append(i)
                if len(pending) == TRANSACTION_FACTS:
                    write_pending()
                continue
            if pending:
                write_pending()
            item = (news[i], prepared[i], admission)
            [results[i]] = self._store_facts([item], checked, supersedes[i])
        if pending:
            write_pending()
        written = [r for r in results if isinstance(r, FactPublic) and not r.deduplicated]
        self._index_written(written, [item.id for p in prepared for item in p.new])
        return [r for r in results if r is not None]

    def check(self, news: Sequence[FactCreate], hook: WriteHook) -> list[Admission | None]:
        """What ``write`` would decide for each fact, nothing written: the evidence
        prepared and the hook asked the very questions a write asks (a dry run). None
        for a fact already remembered, which the write answers unchecked."""
        fields = [f"facts.{i}.evidence" for i in range(len(news))]
        self.check_evidence(hook, news, fields)
        with self.scope.session() as session:
            cache = WriteCache.read(session, self.scope.namespace, news)
            prepared, same = self._prepare(session, news, [None] * len(news), cache)
        todo = [i for i, row in enumerate(same) if row is None]
        admissions = admit(hook, [prepared[i].candidate(news[i]) for i in todo])
        answers: list[Admission | None] = [None] * len(news)
        for i, admission in zip(todo, admissions, strict=True):
            answers[i] = admission
        return answers

    def _prepare(
        self,
        session: Session,
        news: Sequence[FactCreate],
        supersedes: Sequence[str | None],
        cache: WriteCache,
    ) -> tuple[list[evidence.PreparedEvidence], list[FactRow | None]]:
        """Each fact's evidence prepared and its members checked (nothing written), and
        the live fact it repeats (None for a new fact or a correction). Bad input is
        InvalidInput naming the field (under ``facts.<i>`` in a batch) before anything
        is written."""
        pending: dict[tuple[str, str], str] = {}  # one id per new evidence text in the batch
        prepared, same = [], []
        namespace = self.scope.namespace
        for i, (new, old_id) in enumerate(zip(news, supersedes, strict=True)):
            try:
                prepared.append(evidence.prepare(session, namespace, new, pending, cache.evidence))
                member_ids = resolve_members(namespace, new, cache.entities)
            except InvalidInput as exc:
                raise exc if len(news) == 1 else exc.under(f"facts.{i}") from None
            same.append(None if old_id is not None else cache.same_fact(new, member_ids))
        self.limits.check_evidence(p.candidate(new) for p, new in zip(prepared, news, strict=True))
        return prepared, same

    def _write_ungated(self, news: Sequence[FactCreate], hook: Ungated) -> list[Written]:
        """New facts no gate checks, in one transaction with nothing read before it: a
        write with a gate reads first so that a repeated fact never reaches the
        verifier, which an ungated one does not call. Bad input rolls it back whole."""

        def work(
            session: Session,
        ) -> tuple[list[evidence.PreparedEvidence], list[FactPublic]]:
            cache = WriteCache.read(session, self.scope.namespace, news)
            prepared, _ = self._prepare(session, news, [None] * len(news), cache)
            admissions = admit(
                hook, [p.candidate(new) for p, new in zip(prepared, news, strict=True)]
            )
            items = zip(news, prepared, admissions, strict=True)
            return prepared, self._insert_facts(session, items, cache)

        prepared, stored = self.scope.transaction(work)
        written = [(p, f) for p, f in zip(prepared, stored, strict=True) if not f.deduplicated]
        self._index_written([f for _, f in written], [i.id for p, _ in written for i in p.new])
        return list(stored)

    def store_rejection(
        self, new: FactCreate, prepared: evidence.PreparedEvidence, admission: Admission
    ) -> RejectionPublic:
        """Record a rejected fact, with its evidence, in the audit log."""
        [rejection] = self._store_in_order([0], [new], [prepared], {0: admission}, False)
        assert isinstance(rejection, RejectionPublic)
        return rejection

    def _store_in_order(
        self,
        order: Sequence[int],
        news: Sequence[FactCreate],
        prepared: Sequence[evidence.PreparedEvidence],
        admitted: dict[int, Admission],
        checked: bool,
    ) -> list[Written]:
        """The facts ``order`` names, in one transaction and in that order: each run of
        accepted ones inserted together, each rejected one recorded in the audit log
        with its evidence."""

        repeated: dict[int, Admission] = {}  # position in the result: this attempt's answer

        def work(session: Session) -> list[FactPublic | Rejection]:
            out: list[FactPublic | Rejection] = []
            run: list[int] = []
            repeated.clear()  # a transaction retried starts over

            def insert_run() -> None:
                # Read per run: a rejection before it may have stored evidence it cites.
                cache = WriteCache.read(session, self.scope.namespace, [news[i] for i in run])
                policy = self.policy(session) if checked else None
                items = [(news[i], prepared[i], admitted[i]) for i in run]
                out.extend(self._insert_facts(session, items, cache, policy))
                run.clear()

            for i in order:
                if admitted[i].accepted:
                    run.append(i)
                    continue
                if run:
                    insert_run()
                stored = evidence.persist(session, prepared[i])
                row, again = refusals.record(session, news[i], stored, admitted[i])
                if again:
                    repeated[len(out)] = admitted[i]
                out.append(row)
            if run:
                insert_run()
            return out

        done = self.scope.transaction(work)
        refused = [r for r in done if isinstance(r, Rejection)]
        if refused:
            with self.scope.session() as session:
                public = iter(rejections.hydrate(session, refused))
            return [
                refusals.as_attempt(next(public), repeated.get(n))
                if isinstance(r, Rejection)
                else r
                for n, r in enumerate(done)
            ]
        return [r for r in done if isinstance(r, FactPublic)]

    def _store_facts(
        self,
        items: Sequence[tuple[FactCreate, evidence.PreparedEvidence, Admission]],
        checked: bool,
        supersedes: str | None = None,
    ) -> list[FactPublic]:
        """Insert accepted facts in one transaction (all or nothing), audit links and
        all; with ``supersedes`` the one item corrects that fact."""

        def work(session: Session) -> list[FactPublic]:
            policy = self.policy(session) if checked else None
            cache = WriteCache.read(session, self.scope.namespace, [new for new, _, _ in items])
            return self._insert_facts(session, items, cache, policy, supersedes)

        return self.scope.transaction(work)

    def _insert_facts(
        self,
        session: Session,
        items: Iterable[tuple[FactCreate, evidence.PreparedEvidence, Admission]],
        cache: WriteCache,
        policy: schedule.ReverifyPolicy | None = None,
        supersedes: str | None = None,
    ) -> list[FactPublic]:
        """``_insert_fact`` for each item in the transaction of ``session``, the rows
        flushed together, then read back as the transaction will commit them."""
        rows = _Rows()
        with session.no_autoflush:  # the cache answers; the rows go in together
            done = [
                self._insert_fact(
                    session, new, prepared, admission, supersedes, policy, cache, rows
                )
                for new, prepared, admission in items
            ]
            db.flush_in_table_order(session)
            rows.send(session, self.scope.namespace)
        stored = self.scope.hydrate(session, [row for row, _ in done])
        for fact, (_, duplicate) in zip(stored, done, strict=True):
            fact.deduplicated = duplicate
        return stored

    def _insert_fact(
        self,
        session: Session,
        new: FactCreate,
        prepared: evidence.PreparedEvidence,
        admission: Admission,
        supersedes: str | None,
        policy: schedule.ReverifyPolicy | None,
        cache: WriteCache,
        rows: _Rows,
    ) -> tuple[FactRow, bool]:
        """Insert the fact (False), or find the live fact it duplicates (True, nothing
        added). Its members, citations, history row (not yet linked into the audit
        chain) and index-queue entries go into ``rows``.
        """
        namespace = self.scope.namespace
        member_ids = resolve_members(namespace, new, cache.entities, rows.plain)
        if supersedes is None:  # checked again here: another writer (or an earlier
            same = cache.same_fact(new, member_ids)  # item) may have stored it
            if same is not None:  # its evidence is not stored: nothing would cite it
                return same, True
        prepared = evidence.persist(session, prepared, cache.evidence, rows.evidence, rows.plain)
        now = utcnow()
        valid_from = new.valid_from
        if supersedes is not None and valid_from is None:
            valid_from = check_correction_end(new, now)  # a correction holds from now
        row = db.plain_row(
            Fact,
            namespace=namespace,
            statement=new.statement,
            statement_hash=statement_hash(new.statement),
            relation=new.relation,
            stated_confidence=new.confidence,
            confidence=admission.confidence,
            status=admission.status,
            # A held or pending fact says why it is not verified (the gate's plain reason;
            # for a pending one, why the verifier gave no answer).
            status_reason=None if admission.status == FactStatus.VERIFIED else admission.reason,
            valid_from=valid_from,
            valid_to=new.valid_to,
            recorded_at=now,
            verified_at=now if admission.status == FactStatus.VERIFIED else None,
            next_check_at=next_check(admission, policy, now),
            supersedes_id=supersedes,
            meta=new.metadata or None,
            **admission.gate_fields(),
        )
        cache.wrote(row, member_ids)
        fact_id = row["id"]
        if supersedes is None:
            rows.plain[Fact].append(row)
        else:  # the old fact's superseded_by_id names this row: it goes in first
            db.flush_in_table_order(session)
            db.insert_plain(session, {Fact: [row]})
            values = {"superseded_at": now, "superseded_by_id": fact_id}
            bounds = session.exec(
                select(col(Fact.valid_from), col(Fact.valid_to)).where(
                    col(Fact.id) == supersedes, col(Fact.namespace) == namespace
                )
            ).first()
            if bounds is not None:  # open facts never change bounds: safe outside the UPDATE
                values["valid_to"] = world_end(valid_from or now, *bounds)
            if not close_open_fact(session, namespace, supersedes, FactStatus.SUPERSEDED, values):
                raise InvalidInput(
                    "old_id", f"fact {supersedes} was superseded or retracted meanwhile"
                )
        rows.plain[FactMember] += (
            {
                "namespace": namespace,
                "fact_id": fact_id,
                "entity_id": entity_id,
                "role": member.role,
                "position": position,
                "recorded_at": now,
            }
            for position, (member, entity_id) in enumerate(
                zip(new.members, member_ids, strict=True)
            )
        )
        cited = {c.evidence_id for c in prepared.citations}
        citations = [(span.evidence_id, True, span.start, span.end) for span in prepared.citations]
        # Uncited evidence is context; with no citations at all it counts as cited.
        citations += [
            (item.id, not prepared.citations, None, None)
            for item in prepared.items
            if item.id not in cited
        ]
        rows.plain[Citation] += (
            {
                "namespace": namespace,
                "fact_id": fact_id,
                "evidence_id": evidence_id,
                "cited": cited_flag,
                "span_start": start,
                "span_end": end,
                "lost_at": None,
            }
            for evidence_id, cited_flag, start, end in citations
        )
        rows.history.append(
            db.plain_row(
                Verification,
                namespace=namespace,
                fact_id=fact_id,
                kind="write",
                status_after=admission.status,
                confidence=admission.confidence,
                evidence_ids=[item.id for item in prepared.items],
                reason=admission.reason,
                created_at=now,
                **admission.gate_fields(),
            )
        )
        rows.facts.append(fact_id)
        # All it cites is queued, stored before or not (rejected-only, say, or stored by a
        # rejection earlier in the batch): it now backs live memory. The outbox takes an
        # id once per transaction (``outbox.outbox_rows``).
        rows.evidence += (item.id for item in prepared.items)
        return row, False

    def _index_written(self, stored: list[FactPublic], new_evidence: list[str]) -> None:
        """After the commit: report near duplicates of the new facts, then index them
        and the new evidence (or, with a background index writer, wake it: no near
        duplicates are reported then)."""
        if not self.index.usable:
            return
        if self.index.writes != "inline":  # another thread or process applies it
            writer = self.index.writer  # read once: a close() may clear it meanwhile
            if writer is not None:
                writer.wake()
            try:
                self.index.throttle()
            except Exception:  # the write is committed: never fail it for this
                log.warning("could not check how far behind the search index is", exc_info=True)
            return
        touched = [f.id for f in stored]
        touched += [f.supersedes_id for f in stored if f.supersedes_id]
        touched += new_evidence
        touched += [c.evidence_id for f in stored for c in f.citations]
        vectors: dict[str, Any] = {}
        try:
            embedded = self.index.embed([f.statement for f in stored])
            vectors = {f.id: v for f, v in zip(stored, embedded, strict=True)}
            if self.near_duplicate is not None and stored:
                found = near_duplicates(
                    self.scope, self.index, self.near_duplicate, stored, embedded
                )
                for fact, duplicates in zip(stored, found, strict=True):
                    fact.near_duplicates = duplicates
        except Exception:
            log.warning("near-duplicate check failed for %d new facts", len(stored), exc_info=True)
        self.index.apply_queued(touched, vectors)  # at the end of an ``index_batch``


def close_open_fact(
    session: Session, namespace: str, fact_id: str, status: FactStatus, values: dict[str, Any]
) -> bool:
    """Move an open fact to a final status in one guarded UPDATE; False if it was not open.

    The status check lives in the UPDATE itself, so two writers can never both
    retract or supersede the same fact.
    """
    done = session.exec(
        sa.update(Fact)
        .where(
            col(Fact.id) == fact_id,
            col(Fact.namespace) == namespace,
            col(Fact.status).in_(OPEN_STATUSES),
        )
        .values(status=status, **values)
    )
    if done.rowcount != 1:
        return False
    outbox.enqueue(session, namespace, OutboxKind.FACT, [fact_id])
    return True


def next_check(
    admission: Admission, policy: schedule.ReverifyPolicy | None, now: datetime
) -> datetime | None:
    """When the re-verification job should look at a newly stored fact (``policy`` may
    be None for an ungated one)."""
    if admission.verdict == Ungated.verdict:
        return None
    if policy is None:
        raise ValueError("a checked fact needs the re-verification policy")
    if admission.verdict == VerdictStatus.TIMEOUT.value:
        return now  # never checked: due at once, so the next re-verification run checks it
    if admission.verdict in UNVERIFIED_VERDICTS:
        return policy.after_error(now)
    return policy.after_decision(now)


def check_correction(scope: Scope, old_id: str, new: FactCreate) -> FactCreate:
    """That the fact ``old_id`` exists and is open, and ``new`` can correct it now;
    returns ``new``, with the old version's metadata when it brings none of its own."""
    old = scope.get_row(old_id)
    if old.status not in OPEN_STATUSES:
        raise InvalidInput("old_id", f"fact {old_id} is {old.status} and cannot be superseded")
    check_correction_end(new, utcnow())
    if "metadata" in new.model_fields_set:
        return new
    return new.model_copy(update={"metadata": old.meta or {}})


def check_correction_end(new: FactCreate, now: datetime) -> datetime:
    """When a correction starts holding: its ``valid_from``, else ``now``, which must
    then precede its ``valid_to`` (a correction that ended already needs a start)."""
    if new.valid_from is not None:
        return new.valid_from
    if new.valid_to is not None and new.valid_to <= now:
        raise InvalidInput(
            "valid_to",
            "a correction without valid_from holds from now, so valid_to must be in the "
            "future; give valid_from to correct the past",
        )
    return now


def world_end(start: datetime, valid_from: datetime | None, valid_to: datetime | None) -> datetime:
    """Where a superseded fact stops holding when its correction holds from ``start``.

    Its own ``valid_to`` when that is earlier; its ``valid_from`` (an empty validity)
    when the correction starts at or before it; else ``start``.
    """
    if valid_to is not None and valid_to <= start:
        return valid_to
    if valid_from is not None and valid_from >= start:
        return valid_from
    return start
