"""memstore: a memory-gated knowledge store for AI agents.

>>> import memstore
>>> with memstore.open("./memdata", namespace="user:alice") as store:
...     fact = store.add_fact(statement=..., members=[...], evidence=[...])
"""

import typing

from gate.exports import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
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
        SearchIndexError,
        StorageError,
        TooLarge,
    )
    from memstore.gating import GateHook
    from memstore.limits import Limits
    from memstore.models import FactStatus
    from memstore.names import normalize_key
    from memstore.object_store import ObjectStore
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
        FactList,
        FactPage,
        FactPublic,
        MemberCreate,
        MemberPublic,
        NeighborhoodPublic,
        RejectionFilter,
        RejectionList,
        RejectionPublic,
        RememberReport,
        StoreStats,
        VerificationPublic,
    )
    from memstore.store import Store

#: Each public name and the module that defines it: imported on first use, so
#: ``import memstore`` (and the CLI's ``--help``) does not load the store, LanceDB or a model.
_EXPORTS: dict[str, str] = {
    "Admission": "memstore.admission",
    "AsyncStore": "memstore.aio",
    "Candidate": "memstore.admission",
    "CitationCreate": "memstore.schemas",
    "CitationPublic": "memstore.schemas",
    "CitedSpan": "memstore.admission",
    "ClaimOutcome": "memstore.schemas",
    "ConversationReport": "memstore.conversations.conversation",
    "EntityPublic": "memstore.schemas",
    "ErasurePublic": "memstore.schemas",
    "ErrFactNotGrounded": "memstore.errors",
    "EvidenceCreate": "memstore.schemas",
    "EvidenceItem": "memstore.admission",
    "EvidencePublic": "memstore.schemas",
    "FactCheck": "memstore.reverify",
    "FactCreate": "memstore.schemas",
    "FactList": "memstore.schemas",
    "FactPage": "memstore.schemas",
    "FactPublic": "memstore.schemas",
    "FactStatus": "memstore.models",
    "GateHook": "memstore.gating",
    "InvalidInput": "memstore.errors",
    "Limits": "memstore.limits",
    "MemberCreate": "memstore.schemas",
    "MemberPublic": "memstore.schemas",
    "MemstoreError": "memstore.errors",
    "Message": "memstore.conversations",
    "NeighborhoodPublic": "memstore.schemas",
    "NotFound": "memstore.errors",
    "ObjectStore": "memstore.object_store",
    "RejectionFilter": "memstore.schemas",
    "RejectionList": "memstore.schemas",
    "RejectionPublic": "memstore.schemas",
    "RememberReport": "memstore.schemas",
    "ReverifyPolicy": "memstore.reverify",
    "ReverifyReport": "memstore.reverify",
    "Settings": "memstore.config",
    "SearchIndexError": "memstore.errors",
    "StorageError": "memstore.errors",
    "Store": "memstore.store",
    "StoreStats": "memstore.schemas",
    "TooLarge": "memstore.errors",
    "Ungated": "memstore.admission",
    "VerificationPublic": "memstore.schemas",
    "WriteHook": "memstore.admission",
    "load_settings": "memstore.config",
    "normalize_key": "memstore.names",
    "open": "memstore.open_store",
    "register_source": "memstore.providers",
    "unregister_source": "memstore.providers",
}


__getattr__, __dir__ = _lazy_exports("memstore", _EXPORTS, globals())

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
    "FactList",
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
    "ObjectStore",
    "RejectionFilter",
    "RejectionList",
    "RejectionPublic",
    "RememberReport",
    "ReverifyPolicy",
    "ReverifyReport",
    "SearchIndexError",
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
