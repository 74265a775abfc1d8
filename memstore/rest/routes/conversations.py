"""The conversations route: extract facts from messages, gate each against its turn,
and reconcile them with what the namespace remembers."""

from __future__ import annotations

from fastapi import Request

from memstore.conversations.conversation import ConversationReport, remember_as_configured
from memstore.rest.auth import NamespaceStore
from memstore.rest.models import ConversationRequest, ErrorPublic
from memstore.rest.routes.common import namespace_router
from memstore.rest.state import server_state

router = namespace_router()


@router.post(
    "/conversations",
    tags=["conversations"],
    summary="Remember a conversation",
    responses={502: {"model": ErrorPublic, "description": "The fact extractor failed"}},
)
def remember_conversation(
    body: ConversationRequest, request: Request, store: NamespaceStore
) -> ConversationReport:
    """Extract candidate facts from the messages with the server's extractor
    (``conversations`` settings), write each through the grounding gate with its
    message cited, and supersede (or flag) what it replaces. Answers, per candidate,
    what was stored, refused (and why) or replaced; refusals are in the audit log.
    502 ``extractor_failed`` when the extractor's endpoint fails: nothing is written."""
    settings = server_state(request).settings.conversations
    return remember_as_configured(
        store,
        body.messages,
        settings,
        on_conflict=body.on_conflict,
        context_turns=body.context_turns,
        metadata=body.metadata,
        user_name=body.user_name,
    )
