"""memstore: a memory-gated knowledge store for AI agents.

>>> import memstore
>>> with memstore.open("./memdata", namespace="user:alice") as store:
...     fact = store.add_fact(statement=..., members=[...], evidence=[...])
"""

from memstore.admission import Admission, Candidate, CitedSpan, EvidenceItem, Ungated, WriteHook
from memstore.aio import AsyncStore
from memstore.config import Settings, load_settings
from memstore.conversations import Message
from memstore.conversations.conversation import ConversationReport
from memstore.errors import (
    ErrFactNotGrounded,
    InvalidInput,
    MemstoreError,
    NotFound,
    StorageError,
    TooLarge,
)
from memstore.gating import GateHook
from memstore.limits import Limits
from memstore.models import FactStatus
from memstore.names import normalize_key
from memstore.open_store import open
from memstore.providers import register_source, unregister_source
from memstore.reverify import FactCheck, ReverifyPolicy, ReverifyReport
from memstore.schemas import (
    CitationCreate,
    CitationPublic,
    ClaimOutcome,
    EntityPublic,
    ErasurePublic,
    EvidenceCreate,
    EvidencePublic,
    FactCreate,
    FactPage,
    FactPublic,
    MemberCreate,
    MemberPublic,
    NeighborhoodPublic,
    RejectionFilter,
    RejectionPublic,
    RememberReport,
    StoreStats,
    VerificationPublic,
)
from memstore.store import Store

__version__ = "0.1.0"

__all__ = [
    "Admission",
    "AsyncStore",
    "Candidate",
    "CitationCreate",
    "CitationPublic",
    "CitedSpan",
    "ClaimOutcome",
    "ConversationReport",
    "EntityPublic",
    "ErasurePublic",
    "ErrFactNotGrounded",
    "EvidenceCreate",
    "EvidenceItem",
    "EvidencePublic",
    "FactCheck",
    "FactCreate",
    "FactPage",
    "FactPublic",
    "FactStatus",
    "GateHook",
    "InvalidInput",
    "Limits",
    "MemberCreate",
    "MemberPublic",
    "MemstoreError",
    "Message",
    "NeighborhoodPublic",
    "NotFound",
    "RejectionFilter",
    "RejectionPublic",
    "RememberReport",
    "ReverifyPolicy",
    "ReverifyReport",
    "Settings",
    "StorageError",
    "Store",
    "StoreStats",
    "TooLarge",
    "Ungated",
    "VerificationPublic",
    "WriteHook",
    "load_settings",
    "normalize_key",
    "open",
    "register_source",
    "unregister_source",
]
