"""API models: what callers hand to the store (``*Create``) and get back (``*Public``)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from gate import ClaimKind, VerdictStatus
from gate.budget import DEFAULT_STATED_CONFIDENCE
from memstore.defaults import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT
from memstore.defaults import DEFAULT_NEIGHBORHOOD_FACTS as DEFAULT_NEIGHBORHOOD_FACTS
from memstore.defaults import DEFAULT_READ_LIMIT as DEFAULT_READ_LIMIT
from memstore.defaults import MAX_NEIGHBORHOOD_FACTS as MAX_NEIGHBORHOOD_FACTS
from memstore.metadata import Metadata
from memstore.metadata import check as check_metadata
from memstore.names import check_text, normalize_key
from memstore.storage.tables import (
    MAX_EVIDENCE_CHARS,
    MAX_NAME_CHARS,
    MAX_SOURCE_CHARS,
    MAX_STATEMENT_CHARS,
    ErasureBase,
    FactBase,
    LabelBase,
    LabelKind,
    RejectionBase,
    VerificationBase,
)

MAX_MEMBERS = 64
MAX_EVIDENCE_ITEMS = 64


#: Why a time is refused when it leaves datetime's range (years 1 to 9999) in UTC.
OUT_OF_RANGE = "is out of range: in UTC it falls outside the years 1 to 9999"


def to_utc(value: datetime | None) -> datetime | None:
    """Naive datetimes are taken as UTC; aware ones are converted to UTC.

    Raises ValueError (not OverflowError) for a time that in UTC falls outside the
    years 1 to 9999, e.g. ``9999-12-31T23:59:59-14:00``.
    """
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(OUT_OF_RANGE) from None


def _stripped_nonempty(value: str) -> str:
    value = check_text(value).strip()
    if not value:
        raise ValueError("must not be empty")
    return value


def _name(value: str) -> str:
    value = _stripped_nonempty(value)
    if not normalize_key(value):
        raise ValueError("must contain a visible character")
    return value


Name = Annotated[str, Field(max_length=MAX_NAME_CHARS), AfterValidator(_name)]
UTCDatetime = Annotated[datetime | None, AfterValidator(to_utc)]
#: The caller's keys and values (``memstore.metadata``); None or leaving it out: none.
MetadataInput = Annotated[Metadata, BeforeValidator(check_metadata)]
METADATA_DOC = (
    "The caller's data about the fact: keys (letters, digits, _ - .) to a string, number, "
    "true/false or null. Not evidence: the gate never reads it."
)
# SQLModel keeps its class attribute ``metadata`` (the tables' MetaData) on the public
# models; their ``metadata`` field lives on instances, which pydantic warns shadows it.
warnings.filterwarnings(
    "ignore", r'Field name "metadata" in "(FactPublic|RejectionPublic)"', UserWarning
)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MemberCreate(_Input):
    """One member of a fact: an entity (by name) in a role.

    Also accepted: a plain name (kind ``entity``, role ``member``) or a
    ``(name, kind, role)`` tuple.
    """

    name: Name
    kind: Name = "entity"
    role: Name = "member"

    @model_validator(mode="before")
    @classmethod
    def _from_shorthand(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data}
        if isinstance(data, list | tuple):
            if len(data) != 3:
                raise ValueError("a member tuple is (name, kind, role)")
            return dict(zip(("name", "kind", "role"), data, strict=True))
        return data


class EvidenceCreate(_Input):
    """Evidence text handed in with a fact; a plain string means ``source="inline"``."""

    text: Annotated[str, Field(min_length=1, max_length=MAX_EVIDENCE_CHARS)]
    source: Annotated[str, Field(max_length=MAX_SOURCE_CHARS)] = "inline"

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        return {"text": data} if isinstance(data, str) else data

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        # ``inline`` is a word, not a URL scheme: "inline:file:///etc/passwd" would be
        # taken for inline text that re-verification can never check.
        if value != "inline" and value.strip().lower().startswith("inline:"):
            raise ValueError(
                "must be exactly 'inline' for text handed in with the fact, or a source to "
                "fetch (file://, http(s)://, callable:) without 'inline:' before it"
            )
        return value

    @model_validator(mode="after")
    def _check(self) -> EvidenceCreate:
        check_text(self.text)
        if not self.text.strip():
            raise ValueError("text must not be blank")
        if not self.source.strip():
            raise ValueError("source must not be blank")
        return self


class CitationCreate(_Input):
    """What a fact cites: evidence (an index into ``evidence`` or an evidence id),
    optionally narrowed to a character span ``[start, end)`` or to a quoted passage."""

    evidence: int | str
    start: Annotated[int, Field(ge=0)] | None = None
    end: Annotated[int, Field(ge=0)] | None = None
    quote: Annotated[str, Field(min_length=1, max_length=MAX_EVIDENCE_CHARS)] | None = None

    @model_validator(mode="after")
    def _check(self) -> CitationCreate:
        if (self.start is None) != (self.end is None):
            raise ValueError("give both start and end, or neither")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("end must be greater than start")
        if self.quote is not None and self.start is not None:
            raise ValueError("give a span (start, end) or a quote, not both")
        return self


class FactCreate(_Input):
    """A fact to remember: a statement about its members, with the evidence for it."""

    statement: Annotated[
        str, Field(max_length=MAX_STATEMENT_CHARS), AfterValidator(_stripped_nonempty)
    ]
    members: Annotated[list[MemberCreate], Field(min_length=1, max_length=MAX_MEMBERS)]
    relation: Name | None = None
    evidence: Annotated[list[EvidenceCreate], Field(max_length=MAX_EVIDENCE_ITEMS)] = []
    evidence_ids: Annotated[list[str], Field(max_length=MAX_EVIDENCE_ITEMS)] = []
    citations: Annotated[list[CitationCreate], Field(max_length=MAX_EVIDENCE_ITEMS)] = []
    confidence: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = (
        DEFAULT_STATED_CONFIDENCE
    )
    valid_from: UTCDatetime = None
    valid_to: UTCDatetime = None
    #: Left out of a correction (``supersede``), or null: the old version's metadata
    #: carries over; ``{}`` clears it.
    metadata: MetadataInput = Field(default_factory=dict, description=METADATA_DOC)

    @model_validator(mode="before")
    @classmethod
    def _null_metadata_is_not_given(cls, data: Any) -> Any:
        """``metadata: null`` means what leaving it out means, on every front."""
        if isinstance(data, dict) and "metadata" in data and data["metadata"] is None:
            return {k: v for k, v in data.items() if k != "metadata"}
        return data

    @field_validator("members")
    @classmethod
    def _distinct_members(cls, members: list[MemberCreate]) -> list[MemberCreate]:
        seen: dict[tuple[str, str], int] = {}
        for i, member in enumerate(members):
            key = (normalize_key(member.name), normalize_key(member.role))
            if key in seen:
                raise ValueError(f"item {i} repeats item {seen[key]} (same entity and role)")
            seen[key] = i
        return members

    @field_validator("citations")
    @classmethod
    def _indexes_in_range(
        cls, citations: list[CitationCreate], info: ValidationInfo
    ) -> list[CitationCreate]:
        count = len(info.data.get("evidence", []))
        for i, cite in enumerate(citations):
            if isinstance(cite.evidence, int) and not 0 <= cite.evidence < count:
                raise ValueError(
                    f"item {i} cites evidence[{cite.evidence}] but evidence has {count} items"
                )
        return citations

    @field_validator("valid_to")
    @classmethod
    def _after_valid_from(cls, valid_to: datetime | None, info: ValidationInfo) -> datetime | None:
        valid_from = info.data.get("valid_from")
        if valid_to is not None and valid_from is not None and valid_to <= valid_from:
            raise ValueError("must be after valid_from")
        return valid_to


class ClaimCheck(_Input):
    """A claim to check against evidence without storing anything (``Store.verify_claim``)."""

    claim: Annotated[str, Field(max_length=MAX_STATEMENT_CHARS), AfterValidator(_stripped_nonempty)]
    evidence: Annotated[list[EvidenceCreate], Field(min_length=1, max_length=MAX_EVIDENCE_ITEMS)]
    confidence: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = (
        DEFAULT_STATED_CONFIDENCE
    )

    @field_validator("evidence", mode="before")
    @classmethod
    def _one_text(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class MemberPublic(BaseModel):
    entity_id: str
    name: str
    kind: str
    role: str


class CitationPublic(BaseModel):
    evidence_id: str
    cited: bool
    start: int | None = None
    end: int | None = None
    #: When a refreshed source stopped holding the cited text (None: it is there).
    lost_at: datetime | None = None


class NearDuplicate(BaseModel):
    """A live fact with the same members whose statement embeds close to a new one's."""

    fact_id: str
    statement: str
    similarity: float


class FactPublic(FactBase):
    """A stored fact as callers see it: its row plus members and citations.

    On a write, ``deduplicated`` says the fact was already remembered (same normalized
    statement and members; nothing new was stored) and ``near_duplicates`` lists live
    facts with the same members and a statement above the store's similarity threshold.
    """

    id: str
    namespace: str
    members: list[MemberPublic] = Field(default_factory=list)
    citations: list[CitationPublic] = Field(default_factory=list)
    deduplicated: bool = False
    near_duplicates: list[NearDuplicate] = Field(default_factory=list)
    metadata: Metadata = Field(  # type: ignore[assignment, misc]  # SQLModel's is the class's
        default_factory=dict, description=METADATA_DOC
    )

    @property
    def evidence_ids(self) -> list[str]:
        return list(dict.fromkeys(c.evidence_id for c in self.citations))


class EntityPublic(BaseModel):
    id: str
    namespace: str
    name: str
    key: str
    kind: str
    aliases: list[str] = []
    created_at: datetime


class VerificationPublic(VerificationBase):
    id: str
    namespace: str


class NeighborhoodPublic(BaseModel):
    """One page of the facts around some seed entities, nearest first and newest first
    within a hop, with the seeds and the members of those facts; ``distance`` is in
    entity hops. ``next_cursor`` asks for the next page (None: this is the last).
    ``complete`` is False when the walk stopped at ``max_facts`` facts, leaving out
    farther or older ones within ``hops``, True when it kept them all, and None when
    this page did not walk far enough to tell (the walk reads only what a page needs;
    the last page always tells)."""

    entities: list[EntityPublic]
    facts: list[FactPublic]
    distance: dict[str, int]
    next_cursor: str | None = None
    complete: bool | None = True


class EvidencePublic(BaseModel):
    """A stored evidence text (one version of its source)."""

    id: str
    source: str
    version: int
    text: str
    created_at: datetime


class RejectionPublic(RejectionBase):
    """A rejected fact as the audit log keeps it, with the evidence it was checked against."""

    id: str
    namespace: str
    evidence: list[EvidencePublic] = Field(default_factory=list)
    metadata: Metadata = Field(  # type: ignore[assignment, misc]  # SQLModel's is the class's
        default_factory=dict, description=METADATA_DOC
    )
    attempts: int = Field(
        default=1,
        description="How often this write was refused: the same fact, evidence and verdict "
        "again counts here (each attempt is a link of the audit chain), not as a new row.",
    )
    last_attempt_at: datetime | None = Field(
        default=None,
        description="When the latest of those attempts was refused (``created_at`` for one).",
    )


class ErasurePublic(ErasureBase):
    """The tombstone of an erase: ids and sha256 hashes of what was removed for good
    (no content), why, who and when. ``kept_evidence_ids``: evidence that stayed
    because another fact or rejection still cites it. ``log_pending`` (SQLite): the
    write-ahead log could not be emptied because another connection was reading, so
    copies of the erased text may stay in the ``-wal`` file until the next checkpoint
    (the next erase, or when the store closes)."""

    id: str
    namespace: str
    log_pending: bool = Field(
        default=False,
        description="SQLite only: a reader kept the write-ahead log from being emptied; "
        "copies of the erased text may stay in the -wal file until the next erase or "
        "until the store closes.",
    )


class ClaimOutcome(BaseModel):
    """What ``Store.remember`` did with one claim of a text.

    ``content`` is the claim as stored (a sentence of its own); ``start``/``end`` its
    character offsets in the text. Exactly one of ``fact`` (stored, or already
    remembered) and ``rejection`` (in the audit log) is set for a ``fact`` claim;
    neither for a claim that is not evidence (``kind``: question, hedge, ...).
    """

    content: str
    kind: ClaimKind
    start: int
    end: int
    citations: list[str] = Field(default_factory=list)
    confidence: float
    fact: FactPublic | None = None
    rejection: RejectionPublic | None = None

    @property
    def stored(self) -> bool:
        return self.fact is not None

    @property
    def skipped(self) -> bool:
        """Not evidence, so not checked and not written."""
        return self.fact is None and self.rejection is None


class RememberReport(BaseModel):
    """What ``Store.remember`` did with a text: one outcome per claim, in text order."""

    claims: list[ClaimOutcome]

    @property
    def stored(self) -> list[FactPublic]:
        return [c.fact for c in self.claims if c.fact is not None]

    @property
    def rejected(self) -> list[RejectionPublic]:
        return [c.rejection for c in self.claims if c.rejection is not None]

    @property
    def skipped(self) -> list[ClaimOutcome]:
        return [c for c in self.claims if c.skipped]


def _verdict_names(value: Any) -> Any:
    names = [value] if isinstance(value, str) else value
    known = {v.value for v in VerdictStatus}
    if isinstance(names, list | tuple | set | frozenset):
        for name in names:
            if name not in known:
                raise ValueError(f"{name!r} is not one of {sorted(known)}")
        return list(names)
    return value


Gap = Annotated[float, Field(allow_inf_nan=False)] | None


class RejectionFilter(_Input):
    """Which rejections an audit query selects; every given condition must hold.

    ``since``/``until``: creation time range [since, until). ``verdict``: one name or
    several. ``min_gap``/``max_gap``: budget gap in bits, inclusive. ``text``: case-
    insensitive substring of the statement. ``source``: evidence source (``inline``
    or a URI). ``entity``: a member's name, or any alias of a stored entity.
    """

    since: UTCDatetime = None
    until: UTCDatetime = None
    verdict: Annotated[list[str] | None, BeforeValidator(_verdict_names)] = None
    min_gap: Gap = None
    max_gap: Gap = None
    text: Annotated[str, Field(min_length=1, max_length=MAX_STATEMENT_CHARS)] | None = None
    source: Annotated[str, Field(min_length=1, max_length=MAX_SOURCE_CHARS)] | None = None
    entity: Name | None = None
    relation: Name | None = None

    @field_validator("until")
    @classmethod
    def _after_since(cls, until: datetime | None, info: ValidationInfo) -> datetime | None:
        since = info.data.get("since")
        if until is not None and since is not None and until <= since:
            raise ValueError("must be after since")
        return until

    @field_validator("max_gap")
    @classmethod
    def _not_below_min_gap(cls, max_gap: float | None, info: ValidationInfo) -> float | None:
        min_gap = info.data.get("min_gap")
        if max_gap is not None and min_gap is not None and max_gap < min_gap:
            raise ValueError("must not be below min_gap")
        return max_gap


SearchMode = Literal["hybrid", "vector", "text"]
MAX_SEARCH_K = 1_000
MAX_QUERY_CHARS = 4_000


def _names(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class _Recorded(_Input):
    """When a row was recorded: from ``recorded_after`` (included) to ``recorded_before``."""

    recorded_after: UTCDatetime = None
    recorded_before: UTCDatetime = None

    @field_validator("recorded_before")
    @classmethod
    def _after_start(cls, before: datetime | None, info: ValidationInfo) -> datetime | None:
        after = info.data.get("recorded_after")
        if before is not None and after is not None and before <= after:
            raise ValueError("must be after recorded_after")
        return before


class FactFilters(_Recorded):
    """Which facts a read selects; every given condition holds. ``entity``: one name or
    several, all members of each fact. ``metadata``: every given key holds an equal value
    (``memstore.metadata``)."""

    relation: Name | None = None
    entity: Annotated[list[Name], BeforeValidator(_names)] = Field(default_factory=list)
    statuses: Annotated[list[str] | None, BeforeValidator(_names)] = None
    metadata: MetadataInput = Field(default_factory=dict)
    as_of: UTCDatetime = None


#: A relevance threshold: hits whose ``relevance`` is below it are left out (None: none).
MinScore = Annotated[float | None, Field(ge=0.0, le=1.0, allow_inf_nan=False, strict=True)]


class _SearchInput(_Recorded):
    query: Annotated[str, Field(max_length=MAX_QUERY_CHARS), AfterValidator(_stripped_nonempty)]
    k: Annotated[int, Field(ge=1, le=MAX_SEARCH_K, strict=True)] = 10
    mode: SearchMode = "hybrid"
    min_score: MinScore = None


class SearchQuery(_SearchInput, FactFilters):
    """A fact search (``Store.search``), filtered as ``FactFilters`` says. ``expand``:
    add facts one hop away through a hit's entities; ``offset``: skip that many of the
    best hits (a later page)."""

    expand: Annotated[bool, Field(strict=True)] = False
    offset: Annotated[int, Field(ge=0, le=MAX_SEARCH_K - 1, strict=True)] = 0


MAX_CURSOR_CHARS = 512


class FactListQuery(FactFilters):
    """One page of the facts a listing selects (``Store.list_facts``), oldest first.
    ``cursor``: where the previous page ended (its ``next_cursor``)."""

    limit: Annotated[int, Field(ge=1, le=MAX_LIST_LIMIT, strict=True)] = DEFAULT_LIST_LIMIT
    cursor: Annotated[str, Field(min_length=1, max_length=MAX_CURSOR_CHARS)] | None = None


class FactPage(BaseModel):
    """One page of ``Store.list_facts``: facts by the time they were recorded (oldest
    first, ties by id). ``next_cursor`` asks for the next page; None: this is the last."""

    items: list[FactPublic]
    next_cursor: str | None = None


class FactList(list[FactPublic]):
    """One page of ``Store.facts_about`` or ``Store.history``: a list of facts (it
    compares, iterates and indexes as one) that knows where the read stopped.
    ``next_cursor``, passed back as ``cursor``, asks for the next page; None: the last."""

    def __init__(self, facts: Iterable[FactPublic] = (), next_cursor: str | None = None) -> None:
        super().__init__(facts)
        self.next_cursor = next_cursor

    def __repr__(self) -> str:
        return f"FactList({list.__repr__(self)}, next_cursor={self.next_cursor!r})"


class RejectionList(list[RejectionPublic]):
    """One page of ``Store.rejections``: a list of rejections that knows where the read
    stopped. ``next_cursor``, passed back as ``cursor`` with the same filters and order,
    asks for the next page (after this page's last row, however it was read); None: the
    last."""

    def __init__(
        self, rows: Iterable[RejectionPublic] = (), next_cursor: str | None = None
    ) -> None:
        super().__init__(rows)
        self.next_cursor = next_cursor

    def __repr__(self) -> str:
        return f"RejectionList({list.__repr__(self)}, next_cursor={self.next_cursor!r})"


class EvidenceQuery(_SearchInput):
    """An evidence search (``Store.search_evidence``). ``source``: one or several
    sources; ``current_only``: skip versions a refreshed source has replaced."""

    source: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_SOURCE_CHARS)]],
        BeforeValidator(_names),
    ] = Field(default_factory=list)
    current_only: Annotated[bool, Field(strict=True)] = True


class SearchHit(BaseModel):
    """A fact found by ``Store.search``, best first by ``score`` (reciprocal rank fusion).

    ``vector_rank`` / ``text_rank``: its rank by meaning and by keywords (None where
    that side did not find it); ``similarity``: cosine similarity to the query as the
    vector side measured it. ``relevance``: the cosine similarity of the query and the
    statement clipped to [0, 1], for every hit (what ``min_score`` compares; the score
    only orders). ``via``: for a fact added by expansion, the hit whose entity it shares.
    """

    fact: FactPublic
    score: float
    relevance: float
    vector_rank: int | None = None
    text_rank: int | None = None
    similarity: float | None = None
    via: str | None = None


class EvidenceHit(BaseModel):
    """A chunk ``[start, end)`` of an evidence version found by ``Store.search_evidence``;
    its fields as ``SearchHit``'s."""

    evidence_id: str
    source: str
    version: int
    current: bool
    start: int
    end: int
    text: str
    score: float
    relevance: float
    vector_rank: int | None = None
    text_rank: int | None = None
    similarity: float | None = None


class StoreStats(BaseModel):
    """What one namespace holds (``Store.stats``)."""

    namespace: str
    facts: dict[str, int]
    entities: int
    evidence: int
    rejections: dict[str, int]
    due_for_reverification: int
    index_backlog: int


MAX_NOTE_CHARS = 2_000
MAX_LABEL_PAGE = 1_000


def _note(value: str) -> str | None:
    return check_text(value).strip() or None


class LabelCreate(_Input):
    """A person's verdict on one decision (``Store.add_label``): ``kind``, the rejection
    or fact it is about, who gives it (``by``) and an optional ``note`` (blank: none)."""

    kind: LabelKind
    target_id: Annotated[str, Field(min_length=1, max_length=32)]
    by: Name
    note: Annotated[str, Field(max_length=MAX_NOTE_CHARS), AfterValidator(_note)] | None = None


class LabelQuery(_Input):
    """Which labels ``Store.labels`` lists (every given condition holds), and the page."""

    kind: LabelKind | None = None
    target_id: Annotated[str, Field(min_length=1, max_length=32)] | None = None
    limit: Annotated[int, Field(ge=1, le=MAX_LABEL_PAGE, strict=True)] = 100
    offset: Annotated[int, Field(ge=0, strict=True)] = 0


class LabelPublic(LabelBase):
    """A human label as stored: who gave it (``labelled_by``), when, on what."""

    id: str
    namespace: str
