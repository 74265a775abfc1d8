"""The prompts memstore sends to language models, in one place, and the readers of
their answers.

Every route to a model asks the same words: the verifier's YES/NO question
(``VERIFY_PROMPT``) whether the answer is read from log-probabilities (``openai``,
``hf-causal``), from sampled text (``sampling``) or from the agent host's model over MCP
sampling; the extractor's instructions (``EXTRACT_PROMPT``, with ``facts_schema``)
whether they go to an OpenAI-compatible server or to the host. ``yes_or_no`` reads a
sampled answer defensively: anything but the bare word is no answer.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

VERIFY_PROMPT = (
    "Evidence:\n{context}\n\n"
    "Claim: {claim}\n\n"
    "Using only the evidence above, is the claim true? Answer YES or NO."
)
#: Tokens a verifier's question may take to answer ("YES", "No.", ...).
VERIFY_MAX_TOKENS = 4

_BARE = re.compile(r"[\s\"'*_`.!]*(yes|no)[\s\"'*_`.!]*", re.IGNORECASE)


def yes_or_no(text: str | None) -> Literal["YES", "NO"] | None:
    """ "YES" or "NO" when the answer's first line is that word alone (any case; spaces,
    quotes, asterisks, backticks and end punctuation around it ignored), else None: an
    empty answer, a refusal, a sentence or extra words on that line ("Yes, but ...")
    are no answer. What follows a line break after the word is not read."""
    if not isinstance(text, str):
        return None
    lines = [line for line in text.strip().splitlines() if line.strip()]
    match = _BARE.fullmatch(lines[0]) if lines else None
    return None if match is None else "YES" if match.group(1).lower() == "yes" else "NO"


# -- the extractor --------------------------------------------------------------------

#: Bounds the schema puts on the answer (a grammar enforces them on llama.cpp servers,
#: so a small model cannot ramble until max_tokens).
MAX_STATEMENT = 300
MAX_QUOTE = 300
MAX_NAME = 80
MAX_FACT_MEMBERS = 6
MAX_FACT_MESSAGES = 4


def facts_schema(max_facts: int = 20) -> dict[str, Any]:
    """The JSON Schema of an answer: ``{"facts": [...]}``, at most ``max_facts`` facts.

    Every property is required and optional ones are nullable, the form OpenAI's strict
    structured outputs want; llama.cpp turns the same schema into a grammar.
    """
    text = {"type": "string", "minLength": 1, "maxLength": MAX_NAME}
    member = {
        "type": "object",
        "properties": {"name": text, "kind": text, "role": text},
        "required": ["name", "kind", "role"],
        "additionalProperties": False,
    }
    fact = {
        "type": "object",
        "properties": {
            "statement": {"type": "string", "minLength": 1, "maxLength": MAX_STATEMENT},
            "members": {
                "type": "array",
                "items": member,
                "minItems": 1,
                "maxItems": MAX_FACT_MEMBERS,
            },
            "relation": {"type": ["string", "null"], "maxLength": MAX_NAME},
            "valid_from": {"type": ["string", "null"], "maxLength": 40},
            "messages": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0},
                "minItems": 1,
                "maxItems": MAX_FACT_MESSAGES,
            },
            "quote": {"type": "string", "minLength": 1, "maxLength": MAX_QUOTE},
        },
        "required": ["statement", "members", "relation", "valid_from", "messages", "quote"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": fact, "maxItems": max_facts}},
        "required": ["facts"],
        "additionalProperties": False,
    }


FACTS_SCHEMA = facts_schema()

EXTRACT_PROMPT = """\
You extract the facts worth remembering from a conversation.
Each message is shown as [index] speaker: text.
Rules:
- Keep only what a speaker states as true. Skip questions, requests, greetings, guesses, \
plans and hypotheticals.
- Write each fact as one standalone sentence in the third person. Replace "I", "me" and \
"my" with the speaker's name, or "the user" / "the assistant" when the speaker has no name: \
"I'm allergic to peanuts" from Alice becomes "Alice is allergic to peanuts." What a speaker \
says about themselves is about that speaker, nobody else.
- members: the entities the fact is about, the subject first with role "subject", e.g. \
[{"name": "Alice", "kind": "person", "role": "subject"}, \
{"name": "peanuts", "kind": "food", "role": "object"}].
- relation: a short snake_case name such as lives_in, works_at or allergic_to, or null.
- valid_from: the ISO 8601 date or time from which the fact holds when the conversation \
says so, else null.
- messages: the index of the message the fact comes from, then any other messages it \
relies on.
- quote: the words of that first message that state the fact, copied exactly.
Answer with JSON only: {"facts": [...]}, with an empty list when there is nothing to \
remember."""


def extract_instructions(schema: dict[str, Any], system_prompt: str = EXTRACT_PROMPT) -> str:
    """The extractor's instructions for a route that cannot constrain the answer to the
    schema (MCP sampling): the same prompt, with the schema the other routes send as
    ``response_format`` written out."""
    return f"{system_prompt}\n\nThe JSON must follow this JSON Schema:\n{json.dumps(schema)}"
