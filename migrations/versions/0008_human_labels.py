"""human labels: people's verdicts on the gate's decisions

``labels`` keeps what a person said of one decision on the audit page: a refusal that
was wrong (``false_rejection``, on a rejection) or a fact that should not have been
stored (``false_admission``, on a fact), with who (an API key's fingerprint), when and
an optional note. One row per (namespace, kind, target, person).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "labels",
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("target_id", sa.String(length=32), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("labelled_by", sa.String(length=256), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("namespace", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "namespace", "kind", "target_id", "labelled_by", name="uq_labels_target_by"
        ),
    )
    with op.batch_alter_table("labels", schema=None) as batch_op:
        batch_op.create_index(
            "ix_labels_namespace_created_at", ["namespace", "created_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("labels", schema=None) as batch_op:
        batch_op.drop_index("ix_labels_namespace_created_at")
    op.drop_table("labels")
