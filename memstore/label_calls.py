"""The Store's human-label calls: give a label, list them. A part of the ``Store`` facade
(``memstore.store``); the work is in ``memstore.labels``."""

from __future__ import annotations

from typing import Any

from memstore import checks, labels
from memstore.models import LabelKind
from memstore.schemas import LabelCreate, LabelPublic, LabelQuery
from memstore.scope import Scope


class LabelCalls:
    """Label methods of ``Store``; they use the attribute declared here."""

    _scope: Scope

    def add_label(
        self, kind: str, target_id: str, *, by: str, note: str | None = None
    ) -> LabelPublic:
        """Record a person's verdict on a gate decision: ``false_rejection`` on a rejection
        ("this refusal was wrong") or ``false_admission`` on a fact ("this fact should not
        have been stored"). ``by`` names who (never an API key itself); ``note`` is
        optional. The same person labelling the same target again changes nothing (the
        first label is returned); NotFound when the target is not in this namespace.
        ``target_id`` may be a unique prefix of 8 or more characters."""
        targets = {
            LabelKind.FALSE_REJECTION.value: "rejection",
            LabelKind.FALSE_ADMISSION.value: "fact",
        }
        target = targets.get(kind) if isinstance(kind, str) else None
        if target is not None:
            target_id = self._scope.full_id(target, target_id, "target_id")
        given: dict[str, Any] = {"kind": kind, "target_id": target_id, "by": by, "note": note}
        return labels.add(self._scope, checks.parse(LabelCreate, None, given))

    def labels(
        self,
        *,
        kind: str | None = None,
        target_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[LabelPublic]:
        """This namespace's human labels, newest first, of one ``kind`` or on one target."""
        given = {"kind": kind, "target_id": target_id, "limit": limit, "offset": offset}
        return labels.query(self._scope, checks.parse(LabelQuery, None, given))
