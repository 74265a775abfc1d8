"""Naming entities: resolving a new fact's members to entity ids (creating entities
nobody named before) and letting an alias name an existing entity."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from memstore.errors import InvalidInput
from memstore.names import normalize_key
from memstore.schemas import FactCreate, MemberCreate
from memstore.storage import db
from memstore.storage.scope import Scope
from memstore.storage.tables import Entity, EntityAlias


def add_alias(scope: Scope, entity: str, alias: str) -> None:
    """Let ``alias`` (checked) name the entity ``entity`` names; InvalidInput when it
    already names another one."""

    def work(session: Session) -> None:
        target = scope.entity_id(session, entity)
        key = normalize_key(alias)
        owner = session.exec(
            select(EntityAlias.entity_id).where(
                EntityAlias.namespace == scope.namespace, EntityAlias.key == key
            )
        ).first()
        if owner is None:
            session.add(
                EntityAlias(namespace=scope.namespace, entity_id=target, alias=alias, key=key)
            )
        elif owner != target:
            raise InvalidInput("alias", f"{alias!r} already names another entity")

    scope.transaction(work)


def resolve_members(
    namespace: str,
    new: FactCreate,
    known: dict[str, str],
    plain: dict[Any, list[dict[str, Any]]] | None = None,
) -> list[str]:
    """Entity ids for the members. ``known`` maps alias keys to entity ids: every stored
    alias of these keys, as ``WriteCache`` reads them, and the entities created since.

    With ``plain`` (``db.insert_plain``'s rows, for the caller to insert) an unknown
    entity is created there, its name its first alias, and added to ``known``. Without
    it nothing is created (an unknown entity gets a placeholder id): that checks,
    before a write, that no two members name one entity in one role through aliases.
    """
    ids: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for i, member in enumerate(new.members):
        key = normalize_key(member.name)
        entity_id = known.get(key)
        if entity_id is None:
            entity_id = f"new:{key}" if plain is None else _create(namespace, member, key, plain)
            if plain is not None:
                known[key] = entity_id
        slot = (entity_id, normalize_key(member.role))
        if slot in seen:
            raise InvalidInput(
                f"members.{i}",
                f"names the same entity as members.{seen[slot]} in the same role",
            )
        seen[slot] = i
        ids.append(entity_id)
    return ids


def _create(
    namespace: str, member: MemberCreate, key: str, plain: dict[Any, list[dict[str, Any]]]
) -> str:
    """A new entity for ``member`` (its name its first alias) as plain rows; its id."""
    row = db.plain_row(Entity, namespace=namespace, name=member.name, key=key, kind=member.kind)
    plain.setdefault(Entity, []).append(row)
    plain.setdefault(EntityAlias, []).append(
        {"namespace": namespace, "entity_id": row["id"], "alias": member.name, "key": key}
    )
    return str(row["id"])
