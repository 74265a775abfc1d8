"""Alembic environment for memstore.

``memstore.open()`` runs migrations programmatically on its own connection
(``config.attributes["connection"]``). From a checkout you can also run
``alembic -x url=sqlite:///memdata/memstore.db upgrade head``.
"""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa
from alembic import context
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString

from memstore.storage.tables import UTCDateTime  # importing the models registers the tables

target_metadata = SQLModel.metadata


def _render_item(type_: str, obj: Any, autogen_context: Any) -> str | Literal[False]:
    """Render memstore/SQLModel column types as plain SQLAlchemy types, so a revision
    never imports model code that may change later."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime()"
    if type_ == "type" and isinstance(obj, AutoString):
        return f"sa.String(length={obj.length})" if obj.length else "sa.String()"
    return False


#: Tables other libraries keep in memstore's database (the re-verification worker's
#: APScheduler job store); autogenerate must neither create nor drop them.
FOREIGN_TABLES = frozenset({"apscheduler_jobs"})


def _include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    return not (type_ == "table" and name in FOREIGN_TABLES)


def _configure_and_run(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=_render_item,
        include_object=_include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _configure_and_run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or context.config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise SystemExit("give a database URL: alembic -x url=sqlite:///path/memstore.db ...")
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        _configure_and_run(conn)


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; connect to a database")
run_migrations_online()
