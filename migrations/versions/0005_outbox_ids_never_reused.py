"""index outbox ids are never reused on SQLite

A syncing process deletes the outbox rows it applied by id. SQLite hands the id of a
deleted last row to the next insert unless the key is AUTOINCREMENT, so a slow syncer
could delete a row queued after it read its batch (a change that then never reached
the index). PostgreSQL sequences never reuse ids.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21 16:20:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table(
            "index_outbox", recreate="always", table_kwargs={"sqlite_autoincrement": True}
        ):
            pass


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table("index_outbox", recreate="always"):
            pass
