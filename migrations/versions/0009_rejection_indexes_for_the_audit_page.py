"""rejection indexes that answer the audit page from the index alone

The audit page lists a namespace's rejections newest first (created_at, then chain
position) and counts them per verdict and per day. Two indexes replace the ones these
reads used: ``(namespace, created_at, chain_seq)`` gives the listing's whole order, and
``(namespace, verdict, created_at)`` counts by verdict and day without reading rows.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 09:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NEW = {
    "ix_rejections_namespace_created_at_seq": ["namespace", "created_at", "chain_seq"],
    "ix_rejections_namespace_verdict_created_at": ["namespace", "verdict", "created_at"],
}
_OLD = {
    "ix_rejections_namespace_created_at": ["namespace", "created_at"],
    "ix_rejections_namespace_verdict": ["namespace", "verdict"],
}


def upgrade() -> None:
    with op.batch_alter_table("rejections", schema=None) as batch_op:
        for name, columns in _NEW.items():
            batch_op.create_index(name, columns, unique=False)
        for name in _OLD:
            batch_op.drop_index(name)


def downgrade() -> None:
    with op.batch_alter_table("rejections", schema=None) as batch_op:
        for name, columns in _OLD.items():
            batch_op.create_index(name, columns, unique=False)
        for name in _NEW:
            batch_op.drop_index(name)
