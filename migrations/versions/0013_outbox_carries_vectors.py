"""index outbox rows carry the writer's vectors

A writer whose facts another thread or process indexes (``index_writes`` background or
queued) embeds their statements and evidence chunks before its transaction and queues
the vectors with them (``index_outbox.vectors``, what made them in ``vector_key``): the
elected applier then only commits, instead of embedding every writer's facts in one
process. Rows without vectors are embedded by the applier, as before.

A downgrade drops both columns; rows still queued are then embedded by the applier.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 17:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("index_outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("vectors", sa.LargeBinary(), nullable=True))
        batch_op.add_column(sa.Column("vector_key", sa.String(length=128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("index_outbox", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("vector_key")
        batch_op.drop_column("vectors")
