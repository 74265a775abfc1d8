"""memstore: a memory-gated knowledge store for AI agents.

>>> import memstore
>>> with memstore.open("./memdata", namespace="user:alice") as store:
...     fact = store.add_fact(statement=..., members=[...], evidence=[...])
"""

import typing

from gate.exports import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
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
    from memstore.index.object_store import ObjectStore
    from memstore.limits import Limits
    from memstore.names import normalize_key
    from memstore.reverify.providers import register_source, unregister_source
    from memstore.reverify.run import FactCheck, ReverifyReport
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
    from memstore.storage.schedule import ReverifyPolicy
    from memstore.storage.tables import FactStatus
    from memstore.store import Store, open
    from memstore.write.hook import (
        Admission,
        Candidate,
        CitedSpan,
        EvidenceItem,
        GateHook,
        Ungated,
        WriteHook,
    )

#: Each public name and the module that defines it: imported on first use, so
#: ``import memstore`` (and the CLI's ``--help``) does not load the store, LanceDB or a model.
_EXPORTS: dict[str, str] = {
    "Admission": "memstore.write.hook",
    "AsyncStore": "memstore.aio",
    "Candidate": "memstore.write.hook",
    "CitationCreate": "memstore.schemas",
    "CitationPublic": "memstore.schemas",
    "CitedSpan": "memstore.write.hook",
    "ClaimOutcome": "memstore.schemas",
    "ConversationReport": "memstore.conversations.conversation",
    "EntityPublic": "memstore.schemas",
    "ErasurePublic": "memstore.schemas",
    "ErrFactNotGrounded": "memstore.errors",
    "EvidenceCreate": "memstore.schemas",
    "EvidenceItem": "memstore.write.hook",
    "EvidencePublic": "memstore.schemas",
    "FactCheck": "memstore.reverify.run",
    "FactCreate": "memstore.schemas",
    "FactList": "memstore.schemas",
    "FactPage": "memstore.schemas",
    "FactPublic": "memstore.schemas",
    "FactStatus": "memstore.storage.tables",
    "GateHook": "memstore.write.hook",
    "InvalidInput": "memstore.errors",
    "Limits": "memstore.limits",
    "MemberCreate": "memstore.schemas",
    "MemberPublic": "memstore.schemas",
    "MemstoreError": "memstore.errors",
    "Message": "memstore.conversations",
    "NeighborhoodPublic": "memstore.schemas",
    "NotFound": "memstore.errors",
    "ObjectStore": "memstore.index.object_store",
    "RejectionFilter": "memstore.schemas",
    "RejectionList": "memstore.schemas",
    "RejectionPublic": "memstore.schemas",
    "RememberReport": "memstore.schemas",
    "ReverifyPolicy": "memstore.storage.schedule",
    "ReverifyReport": "memstore.reverify.run",
    "Settings": "memstore.config",
    "SearchIndexError": "memstore.errors",
    "StorageError": "memstore.errors",
    "Store": "memstore.store",
    "StoreStats": "memstore.schemas",
    "TooLarge": "memstore.errors",
    "Ungated": "memstore.write.hook",
    "VerificationPublic": "memstore.schemas",
    "WriteHook": "memstore.write.hook",
    "load_settings": "memstore.config",
    "normalize_key": "memstore.names",
    "open": "memstore.store",
    "register_source": "memstore.reverify.providers",
    "unregister_source": "memstore.reverify.providers",
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
