"""fact metadata: the caller's keys and values on facts and rejections

``facts.metadata`` and ``rejections.metadata`` hold a flat JSON object of the caller's
data about a fact (``memstore.metadata``): JSON on SQLite, JSONB on PostgreSQL, whose
``@>`` compares JSON values for metadata filters. Existing rows have none (NULL). The
search index gains a column of its own for them when a store opens it.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("facts", "rejections")


def _json() -> sa.types.TypeEngine[object]:
    return sa.JSON(none_as_null=True).with_variant(
        postgresql.JSONB(none_as_null=True), "postgresql"
    )


# In place on both backends (SQLite 3.35+ drops a plain column): a batch copy of the
# table would have to drop it while rows of other tables still reference it.


def upgrade() -> None:
    for table in _TABLES:
        op.add_column(table, sa.Column("metadata", _json(), nullable=True))


def downgrade() -> None:
    for table in _TABLES:
        op.drop_column(table, "metadata")
