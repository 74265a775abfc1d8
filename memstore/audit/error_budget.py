"""The gate's error budget: of the latest gated writes, the share people marked wrong on
the audit page (``labels``: a refusal that was wrong, a fact that should not have been
stored), against the share the configuration allows. A burn of 1 spends the budget."""

from __future__ import annotations

from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, computed_field
from sqlmodel import Session, col, select

from memstore.storage.tables import Label, LabelKind, Rejection, Verification


class Budget(BaseModel):
    """One kind of gate error: how many decisions of that kind there were (refusals or
    admissions), how many people marked wrong, and the share allowed."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["false_rejection", "false_admission"]
    decided: int
    labelled: int
    allowed: float

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rate(self) -> float | None:
        """The share of decisions marked wrong; None before any decision."""
        return self.labelled / self.decided if self.decided else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def burn(self) -> float | None:
        """``rate / allowed``: 1.0 spends the budget."""
        return None if self.rate is None else self.rate / self.allowed

    @computed_field  # type: ignore[prop-decorator]
    @property
    def spent(self) -> bool:
        """Whether the burn reached 1."""
        return self.burn is not None and self.burn >= 1.0


def budgets(
    session: Session,
    namespace: str,
    since_seq: int,
    allowed: dict[LabelKind, float],
) -> list[Budget]:
    """Both budgets over the gated writes from audit position ``since_seq`` on: each
    decision counts once however many people labelled it."""
    refused = (
        select(Rejection.id)
        .where(Rejection.namespace == namespace, col(Rejection.chain_seq) >= since_seq)
        .subquery()
    )
    admitted = (
        select(Verification.fact_id)
        .where(Verification.namespace == namespace, Verification.kind == "write")
        .where(col(Verification.verdict) != "ungated", col(Verification.chain_seq) >= since_seq)
        .subquery()
    )
    found: list[Budget] = []
    for kind, decisions, key in (
        (LabelKind.FALSE_REJECTION, refused, refused.c.id),
        (LabelKind.FALSE_ADMISSION, admitted, admitted.c.fact_id),
    ):
        decided = session.exec(select(sa.func.count()).select_from(decisions)).one()
        labelled = session.exec(
            select(sa.func.count(sa.distinct(col(Label.target_id))))
            .where(Label.namespace == namespace, Label.kind == kind.value)
            .where(col(Label.target_id).in_(select(key)))
        ).one()
        found.append(
            Budget(kind=kind.value, decided=decided, labelled=labelled, allowed=allowed[kind])
        )
    return found
