"""Remember a conversation: extract candidates, gate each against its turn, reconcile.

Each candidate is written as a fact whose evidence is the message it came from
(cited: the exact sentence) plus up to ``context_turns`` earlier messages as
uncited context, so the gate reads it in the conversation while p0 scrubs only the
speaker's own words. A hallucinated or misattributed candidate is refused into the
audit log like any other write. An admitted candidate that replaces active facts
(``reconcile.replaced_by``) supersedes them, or, with ``on_conflict="flag"``, is
stored beside them and the answer names them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from gate import Verdict, VerdictStatus
from memstore.conversations import corrections
from memstore.conversations.extractors import Candidate, EmbeddedExtractor, Extractor, fact_of
from memstore.conversations.messages import Message, parse_messages
from memstore.conversations.reconcile import MAX_COMPARED, active_about, changes_any, replaced_by
from memstore.conversations.settings import ConversationSettings
from memstore.conversations.storelike import StoreLike
from memstore.conversations.together import Together
from memstore.conversations.user import link_user
from memstore.errors import ErrFactNotGrounded, InvalidInput, MemstoreError
from memstore.metadata import check as check_metadata
from memstore.schemas import FactPublic, RejectionPublic

OnConflict = Literal["supersede", "flag"]
Outcome = Literal["stored", "refused", "duplicate", "superseded", "conflict"]
#: Earlier messages given to the gate as context with each candidate's own message.
CONTEXT_TURNS = 4


class CandidateMember(BaseModel):
    name: str
    kind: str
    role: str


class CandidateOutcome(BaseModel):
    """What happened to one extracted candidate."""

    statement: str
    members: list[CandidateMember]
    relation: str | None = None
    #: The message it came from (index into the call's messages) and the sentence cited.
    message: int
    quote: str
    outcome: Outcome
    fact: FactPublic | None = None
    rejection: RejectionPublic | None = None
    #: Active facts this one superseded (``superseded``) or sits beside (``conflict``).
    replaced: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)


class ConversationReport(BaseModel):
    """Per candidate, in the order extracted: stored, refused (and why), or what it replaced."""

    extractor: str
    messages: int
    candidates: list[CandidateOutcome]

    @property
    def stored(self) -> list[FactPublic]:
        return [c.fact for c in self.candidates if c.fact is not None]

    @property
    def refused(self) -> list[RejectionPublic]:
        return [c.rejection for c in self.candidates if c.rejection is not None]


def remember(
    store: StoreLike,
    messages: Iterable[Message | Mapping[str, Any]],
    extractor: Extractor | None,
    on_conflict: OnConflict,
    single_valued: Collection[str],
    context_turns: int,
    metadata: Mapping[str, Any] | None,
    user_name: str | None,
) -> ConversationReport:
    """The work of ``Store.remember_conversation`` (whose docstring says what it does),
    every option given: check them, parse the messages, extract, gate and reconcile."""
    meta = check_options(on_conflict, context_turns, metadata)
    turns = parse_messages(messages, user_name)
    if user_name is not None:  # before writing: "Maya" joins "the user" if that came first
        link_user(store, user_name.strip())
    # The store's per-call limits, as for any write: the messages are the evidence the
    # gate reads, and each candidate is a claim it checks; over either, nothing is
    # extracted (too much text) or checked (too many candidates).
    store.limits.check_texts([turn.rendered() for turn in turns], "messages")
    extractor = extractor or EmbeddedExtractor()
    candidates = extractor.extract(turns)
    said = corrections.pending(turns)
    check_claims(store, candidates, said)
    kept = _ask_together(store, candidates, turns, context_turns)
    with store.index_batch():  # one index commit for the conversation, not one per fact
        outcomes = _write(
            store, turns, candidates, said, on_conflict, single_valued, context_turns, meta, kept
        )
    if user_name is not None and any(o.fact is not None for o in outcomes):
        link_user(store, user_name.strip())  # now that both may be known
    return ConversationReport(extractor=extractor.name, messages=len(turns), candidates=outcomes)


def _ask_together(
    store: StoreLike, candidates: Sequence[Candidate], turns: Sequence[Message], context_turns: int
) -> bool:
    """Ask the gate about every extracted candidate in one verifier call (``check_facts``,
    nothing stored) where the gate keeps its answers: each write below then finds them
    kept, instead of one call per candidate (several times the work on a CPU). Whether
    every candidate's answer is kept and each is valid input (a batch of writes then
    asks the verifier nothing: ``together``); False for one candidate, where the gate
    keeps none, or where the verifier failed or timed out (a check's refusal may hide
    that: an answer without p1 or p0 counts), as each write then asks it again, alone,
    within its own deadline."""
    if len(candidates) < 2 or not getattr(getattr(store.hook, "gate", None), "caches", False):
        return False
    try:
        admissions = store.check_facts([fact_of(c, turns, context_turns) for c in candidates])
    except MemstoreError:
        return False  # the write of the candidate at fault says what is wrong with it
    return not any(
        a is not None
        and (
            a.verdict in (VerdictStatus.TIMEOUT, VerdictStatus.VERIFIER_ERROR)
            or a.p1 is None
            or a.p0 is None
        )
        for a in admissions
    )


def _write(
    store: StoreLike,
    turns: Sequence[Message],
    candidates: Sequence[Candidate],
    said: Sequence[tuple[int, corrections.Correction]],
    on_conflict: OnConflict,
    single_valued: Collection[str],
    context_turns: int,
    metadata: Mapping[str, Any] | None,
    together: bool,
) -> list[CandidateOutcome]:
    """Each candidate written, in turn order (``_in_turn_order``): with ``together``,
    one that replaces nothing waits to be written with the next ones (``together``);
    any other is written alone, after those waiting."""
    outcomes: list[CandidateOutcome] = []

    def done(place: int, written: FactPublic | RejectionPublic) -> None:
        if isinstance(written, RejectionPublic):
            outcomes[place] = outcomes[place].model_copy(update={"rejection": written})
        else:
            outcome: Outcome = "duplicate" if written.deduplicated else "stored"
            outcomes[place] = outcomes[place].model_copy(
                update={"outcome": outcome, "fact": written, "reasons": {}}
            )

    waiting = Together(store, done)
    for candidate, stale in _in_turn_order(store, turns, candidates, said, waiting.flush):
        if stale:
            waiting.flush()
            if not _refused(store, candidate, turns, context_turns):
                continue
        source = turns[candidate.message].rendered()
        olds = _olds(store, waiting, candidate, source, single_valued)
        corroborated: dict[str, Verdict] = {}
        old, why = replaced_by(
            store,
            candidate,
            source,
            single_valued=single_valued,
            corroborated=corroborated,
            olds=olds,
        )
        fact = fact_of(candidate, turns, context_turns)
        if metadata is not None:
            fact["metadata"] = metadata
        if not together or old or candidate.replaces or corroborated:
            waiting.flush()
            outcomes.append(
                _remember_one(store, candidate, fact, turns, on_conflict, old, why, corroborated)
            )
        else:
            if waiting.holds(candidate.statement):  # the write's duplicate is a stored one
                waiting.flush()
            waiting.add(len(outcomes), candidate, fact)
            outcomes.append(_unwritten(candidate))
    waiting.flush()
    return outcomes


def _olds(
    store: StoreLike,
    waiting: Together,
    candidate: Candidate,
    source: str,
    single_valued: Collection[str],
) -> list[FactPublic]:
    """The active facts ``replaced_by`` reads for ``candidate``, after writing those
    waiting where it would read one of them: one it replaces or verifies, or one
    among its subject's ``MAX_COMPARED`` newest (the stored ones it reads change)."""
    subject = candidate.members[0][0]
    if candidate.replaces:  # a correction's rewrite: what it corrects may be waiting
        waiting.flush()
    olds = active_about(store, subject)
    about = waiting.about(subject)
    if about and (
        len(olds) + len(about) > MAX_COMPARED
        or changes_any(store, candidate, source, about, {waiting.entity(subject)}, single_valued)
    ):
        waiting.flush()
        olds = active_about(store, subject)
    return olds


def _refused(
    store: StoreLike, candidate: Candidate, turns: Sequence[Message], context_turns: int
) -> bool:
    """Whether the gate refuses ``candidate`` (asked without writing): what the
    extractor read from a correcting sentence other than the correction as said is
    written only to be refused, with its reason in the audit log; one the gate would let
    in is left out, as the correction's rewrite replaces it."""
    try:
        [admission] = store.check_facts([fact_of(candidate, turns, context_turns)])
    except MemstoreError:
        return False
    return admission is not None and not admission.accepted


def _in_turn_order(
    store: StoreLike,
    turns: Sequence[Message],
    candidates: Sequence[Candidate],
    said: Sequence[tuple[int, corrections.Correction]],
    settle: Callable[[], None],
) -> Iterator[tuple[Candidate, bool]]:
    """The candidates turn by turn, each turn's corrections first: read when their turn
    comes (the fact a correction rewrites may come from an earlier turn of this call),
    and in place of what the extractor read from the same sentence. What the extractor
    read there other than the correction as said ("Maya's cough started three weeks
    ago." from "four weeks ago, not three"; a value misheard) comes with True: only
    the gate's refusal writes it. ``settle`` is called before a correction reads the
    store (it writes what waits to be written)."""
    by_turn: dict[int, list[Candidate]] = {}
    for candidate in candidates:
        by_turn.setdefault(candidate.message, []).append(candidate)
    for index in sorted({*by_turn, *(i for i, _ in said)}):
        done: list[corrections.Correction] = []
        unplaced: list[corrections.Correction] = []  # no statement takes the new value
        if any(at == index for at, _ in said):
            settle()
        for at, correction in said:
            if at != index:
                continue
            if found := corrections.corrected(store, turns, at, correction):
                done.append(correction)
                yield corrections.fuller(found, by_turn.get(index, ()), turns, correction), False
            else:
                unplaced.append(correction)
        for candidate in by_turn.get(index, ()):
            placed = [c for c in done if corrections.within(candidate, turns, c)]
            if placed:
                if not any(corrections.sets_aside(candidate, c) for c in placed):
                    yield candidate, True  # not the correction as said: a misreading
                continue
            within = [c for c in unplaced if corrections.within(candidate, turns, c)]
            if within:
                settle()  # it reads the speaker's facts: this turn's may be waiting
            restated = (corrections.restated(store, turns, candidate, c) for c in within)
            yield next((r for r in restated if r is not None), candidate), False


def check_claims(store: StoreLike, candidates: Sequence[Candidate], said: Sequence[object]) -> None:
    """InvalidInput naming ``messages`` where the candidates and the corrections the turns
    say (``corrections.pending``) are more claims than the store's ``max_claims``."""
    count = len(candidates) + len(said)
    store.limits.check_claims(count, "messages", "candidate facts extracted")


def check_options(
    on_conflict: str, context_turns: int, metadata: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """InvalidInput naming the option that is wrong; the metadata, checked."""
    if on_conflict not in ("supersede", "flag"):
        raise InvalidInput("on_conflict", "must be 'supersede' or 'flag'")
    if isinstance(context_turns, bool) or not isinstance(context_turns, int) or context_turns < 0:
        raise InvalidInput("context_turns", "must be a whole number >= 0")
    try:
        return None if metadata is None else check_metadata(metadata)
    except ValueError as exc:
        raise InvalidInput("metadata", str(exc)) from None


def rehearse(
    store: StoreLike,
    messages: Iterable[Message | Mapping[str, Any]],
    extractor: Extractor,
    single_valued: Collection[str],
    context_turns: int,
    user_name: str | None,
    gate: bool = True,
) -> list[Candidate]:
    """Ask the extractor and (with ``gate``) the gate what ``remember`` would ask them,
    and write nothing: the facts' checks in one batch, then each fact's look at the
    active facts it may replace. Returns the candidates (``Extracted`` hands them to the
    write, so it neither extracts again nor sees other ones). For a model that answers
    between calls (``memstore.mcp.host``): its questions are gathered in one round, and
    the write that follows finds the answers.
    Bad input fails here as in ``remember``, before any question is asked."""
    turns = parse_messages(messages, user_name)
    store.limits.check_texts([turn.rendered() for turn in turns], "messages")
    candidates = extractor.extract(turns)
    store.limits.check_claims(len(candidates), "messages", "candidate facts extracted")
    if not gate:
        return candidates
    facts = [fact_of(c, turns, context_turns) for c in candidates]
    if facts:
        store.check_facts(facts)
    for candidate in candidates:
        source = turns[candidate.message].rendered()
        replaced_by(store, candidate, source, single_valued=single_valued)
    return candidates


@dataclass
class Extracted:
    """An extractor that answers with candidates already extracted from the same
    messages (a rehearsal's), under the name of the one that extracted them."""

    name: str
    candidates: tuple[Candidate, ...]

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        return list(self.candidates)


def _unwritten(candidate: Candidate) -> CandidateOutcome:
    """The outcome of ``candidate`` before its write: refused until the write says."""
    return CandidateOutcome(
        statement=candidate.statement,
        members=[CandidateMember(name=n, kind=k, role=r) for n, k, r in candidate.members],
        relation=candidate.relation,
        message=candidate.message,
        quote=candidate.quote,
        outcome="refused",
    )


def _remember_one(
    store: StoreLike,
    candidate: Candidate,
    fact: dict[str, Any],
    turns: Sequence[Message],
    on_conflict: OnConflict,
    old: list[FactPublic],
    why: dict[str, str],
    corroborated: dict[str, Verdict],
) -> CandidateOutcome:
    """Write ``candidate``'s ``fact`` alone: superseding (or beside) the active facts
    it replaces (``old``, ``why``: ``replaced_by``'s answer, and what ``candidate``
    corrects), then marking the held facts its message verifies (``corroborated``)."""
    base = _unwritten(candidate)
    for fact_id, reason in reversed(candidate.replaces):  # what it corrects goes first
        if fact_id in why:
            old = [o for o in old if o.id != fact_id]
        old.insert(0, store.get_fact(fact_id))
        why[fact_id] = reason
    try:
        if old and on_conflict == "supersede":
            stored = store.supersede(old[0].id, fact)
            for extra in old[1:]:
                store.retract(extra.id, f"superseded by {stored.id}: {why[extra.id]}")
            outcome: Outcome = "superseded"
        else:
            stored = store.add_fact(fact)
            outcome = "duplicate" if stored.deduplicated else ("conflict" if old else "stored")
    except ErrFactNotGrounded as refused:
        return base.model_copy(update={"rejection": refused.rejection})
    ids = [o.id for o in old]
    said = " ".join(turns[candidate.message].rendered().split())
    for held_id, verdict in corroborated.items():
        if held_id not in ids:
            short = said if len(said) <= 200 else said[:199] + "\u2026"
            store.corroborate(held_id, verdict, f'a later message says so: "{short}"')
    return base.model_copy(
        update={
            "outcome": outcome,
            "fact": stored,
            "replaced": ids if outcome == "superseded" else [],
            "conflicts": ids if outcome == "conflict" else [],
            "reasons": why,
        }
    )


def remember_as_configured(
    store: StoreLike,
    messages: Iterable[Message | Mapping[str, Any]],
    settings: ConversationSettings,
    *,
    on_conflict: OnConflict | None = None,
    context_turns: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    user_name: str | None = None,
    extractor: Extractor | None = None,
) -> ConversationReport:
    """``store.remember_conversation`` with the extractor and defaults the ``conversations``
    settings choose (what the REST API, the MCP server and the CLI call); a given
    ``on_conflict``, ``context_turns``, ``user_name`` or ``extractor`` (the caller's, left
    open) wins over the settings'."""
    own = extractor is None
    extractor = extractor_from(settings) if extractor is None else extractor
    try:
        return remember(
            store,
            messages,
            extractor,
            settings.on_conflict if on_conflict is None else on_conflict,
            frozenset(settings.single_valued),
            settings.context_turns if context_turns is None else context_turns,
            metadata,
            settings.user_name if user_name is None else user_name,
        )
    finally:
        close = getattr(extractor, "close", None)
        if own and callable(close):
            close()


def rehearse_as_configured(
    store: StoreLike,
    messages: Iterable[Message | Mapping[str, Any]],
    settings: ConversationSettings,
    extractor: Extractor,
    *,
    on_conflict: OnConflict | None = None,
    context_turns: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    user_name: str | None = None,
    gate: bool = True,
) -> list[Candidate]:
    """``rehearse`` what ``remember_as_configured`` would do with these options (checked
    first, as it checks them); ``gate``: ask the gate's questions too."""
    turns_around = settings.context_turns if context_turns is None else context_turns
    check_options(
        settings.on_conflict if on_conflict is None else on_conflict, turns_around, metadata
    )
    return rehearse(
        store,
        messages,
        extractor,
        frozenset(settings.single_valued),
        settings.context_turns if context_turns is None else context_turns,
        settings.user_name if user_name is None else user_name,
        gate,
    )


def extractor_from(settings: ConversationSettings) -> Extractor:
    """The extractor the ``conversations`` settings choose."""
    if settings.extractor == "llm":
        from memstore.conversations.llm import LLMExtractor

        llm = settings.llm
        assert llm.model and llm.base_url  # the settings check this
        return LLMExtractor(
            llm.model,
            base_url=llm.base_url,
            api_key_env=llm.api_key_env,
            timeout=llm.timeout,
            retries=llm.retries,
        )
    return EmbeddedExtractor()
