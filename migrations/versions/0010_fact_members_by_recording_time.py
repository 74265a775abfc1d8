"""fact members by recording time: an entity's facts newest first from one index

``facts_about`` reads an entity's facts a page at a time, newest first. Each member row
gets a copy of its fact's ``recorded_at`` (set once, like the fact's), and the index
``(namespace, entity_id, recorded_at, fact_id)`` gives that order and the keyset of
the next page without reading the rest of a popular entity's facts. It replaces
``(namespace, entity_id)``, its prefix. Existing rows copy their fact's time.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NEW = (
    "ix_fact_members_namespace_entity_recorded",
    ["namespace", "entity_id", "recorded_at", "fact_id"],
)
_OLD = ("ix_fact_members_namespace_entity_id", ["namespace", "entity_id"])


def upgrade() -> None:
    op.add_column("fact_members", sa.Column("recorded_at", sa.DateTime(), nullable=True))
    op.execute(
        "UPDATE fact_members SET recorded_at = "
        "(SELECT facts.recorded_at FROM facts WHERE facts.id = fact_members.fact_id)"
    )
    # Nothing references fact_members: SQLite may copy the table to make the column NOT NULL.
    with op.batch_alter_table("fact_members", schema=None) as batch_op:
        batch_op.alter_column("recorded_at", existing_type=sa.DateTime(), nullable=False)
        batch_op.create_index(_NEW[0], _NEW[1], unique=False)
        batch_op.drop_index(_OLD[0])


def downgrade() -> None:
    with op.batch_alter_table("fact_members", schema=None) as batch_op:
        batch_op.create_index(_OLD[0], _OLD[1], unique=False)
        batch_op.drop_index(_NEW[0])
        batch_op.drop_column("recorded_at")
