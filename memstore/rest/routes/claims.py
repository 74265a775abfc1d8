"""The gate's route: check a claim against evidence, storing nothing."""

from __future__ import annotations

from gate import Verdict
from memstore.rest.auth import NamespaceStore
from memstore.rest.models import ClaimRequest
from memstore.rest.routes.common import namespace_router

router = namespace_router()


@router.post("/verify_claim", tags=["gate"], summary="Check a claim against evidence")
def verify_claim(body: ClaimRequest, store: NamespaceStore) -> Verdict:
    """The gate's verdict on the claim (p0, p1, bits, budget gap); nothing is stored."""
    return store.verify_claim(body.claim, body.evidence, body.confidence)
