"""Memory from conversations: messages in, candidate facts out, each checked by the gate.

``messages`` validates what an agent hands over (``role``/``name``/``content``);
``extractors`` turns messages into candidate facts (the embedded rule-based
extractor needs no network and no LLM; ``llm`` asks an OpenAI-compatible chat
endpoint for schema-checked JSON); ``conversation`` gates each candidate against its
turn, ``reconcile`` finds what it replaces and ``together`` writes those that replace
nothing in one call; ``settings`` is the ``conversations``
section of the settings. It may import the base modules, the gate and ``language``,
never a layer of the store: what it needs of a store is ``storelike.StoreLike``.
"""

import typing

from gate.exports import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from memstore.conversations.extractors import Candidate, EmbeddedExtractor, Extractor
    from memstore.conversations.llm import ExtractorError, LLMExtractor
    from memstore.conversations.messages import Message, parse_messages

#: Each public name and its module, imported on first use (the settings import this package).
_EXPORTS: dict[str, str] = {
    "Candidate": "memstore.conversations.extractors",
    "EmbeddedExtractor": "memstore.conversations.extractors",
    "Extractor": "memstore.conversations.extractors",
    "ExtractorError": "memstore.conversations.llm",
    "LLMExtractor": "memstore.conversations.llm",
    "Message": "memstore.conversations.messages",
    "parse_messages": "memstore.conversations.messages",
}

__getattr__, __dir__ = _lazy_exports("memstore.conversations", _EXPORTS, globals())

__all__ = [
    "Candidate",
    "EmbeddedExtractor",
    "Extractor",
    "ExtractorError",
    "LLMExtractor",
    "Message",
    "parse_messages",
]
