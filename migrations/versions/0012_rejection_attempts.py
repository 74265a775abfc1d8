"""repeated refused writes: counted on their rejection, each attempt a chain link

An identical write refused the same way again (same statement, members, evidence,
citations, verdict and verifier) no longer adds a rejection: ``rejections.fingerprint``
finds the first one, and ``rejection_attempts`` keeps each later attempt (its time and
gate numbers) as a link of the namespace's audit chain. Rows written before keep no
fingerprint; their repeats start counting from the next refusal.

A downgrade drops both: rows written since hash their fingerprint, and attempts are
links, so an older release's ``verify_audit_chain`` reports those rejections as edited
and the attempts' positions as deleted (as 0007's downgrade does for metadata).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 08:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("rejections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("fingerprint", sa.String(length=64), nullable=True))
        batch_op.create_index(
            "ix_rejections_namespace_fingerprint", ["namespace", "fingerprint"], unique=False
        )
    op.create_table(
        "rejection_attempts",
        sa.Column("chain_seq", sa.Integer(), nullable=True),
        sa.Column("chain_prev", sa.String(length=64), nullable=True),
        sa.Column("chain_hash", sa.String(length=64), nullable=True),
        sa.Column("rejection_id", sa.String(length=32), nullable=False),
        sa.Column("p1", sa.Float(), nullable=True),
        sa.Column("p0", sa.Float(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("namespace", sa.String(length=128), nullable=False),
        sa.ForeignKeyConstraint(["rejection_id"], ["rejections.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("rejection_attempts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_rejection_attempts_namespace_chain_seq", ["namespace", "chain_seq"], unique=True
        )
        batch_op.create_index(
            "ix_rejection_attempts_namespace_rejection_id",
            ["namespace", "rejection_id", "created_at"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("rejection_attempts", schema=None) as batch_op:
        batch_op.drop_index("ix_rejection_attempts_namespace_rejection_id")
        batch_op.drop_index("ix_rejection_attempts_namespace_chain_seq")
    op.drop_table("rejection_attempts")
    # Dropped in place (SQLite >= 3.35 has DROP COLUMN): a batch copy of ``rejections``
    # would drop the table that rows of other tables still reference.
    with op.batch_alter_table("rejections", schema=None, recreate="never") as batch_op:
        batch_op.drop_index("ix_rejections_namespace_fingerprint")
        batch_op.drop_column("fingerprint")
