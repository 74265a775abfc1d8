"""Memory from conversations: messages in, candidate facts out, each checked by the gate.

``messages`` validates what an agent hands over (``role``/``name``/``content``);
``extractors`` turns messages into candidate facts (the embedded rule-based
extractor needs no network and no LLM; ``llm`` asks an OpenAI-compatible chat
endpoint for schema-checked JSON).
"""

from memstore.conversations.extractors import Candidate, EmbeddedExtractor, Extractor
from memstore.conversations.llm import ExtractorError, LLMExtractor
from memstore.conversations.messages import Message, parse_messages

__all__ = [
    "Candidate",
    "EmbeddedExtractor",
    "Extractor",
    "ExtractorError",
    "LLMExtractor",
    "Message",
    "parse_messages",
]
