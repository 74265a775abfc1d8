"""Naming entities: resolving a new fact's members to entity ids (creating entities
nobody named before) and letting an alias name an existing entity."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from memstore import db
from memstore.errors import InvalidInput
from memstore.models import Entity, EntityAlias
from memstore.names import normalize_key
from memstore.schemas import FactCreate
from memstore.scope import Scope


def add_alias(scope: Scope, entity: str, alias: str) -> None:
    """Let ``alias`` (checked) name the entity ``entity`` names; InvalidInput when it
    already names another one."""

    def work(session: Session) -> None:
        target = scope.resolve(session, entity)
        key = normalize_key(alias)
        owner = session.exec(
            select(EntityAlias.entity_id).where(
                EntityAlias.namespace == scope.namespace, EntityAlias.key == key
            )
        ).first()
        if owner is None:
            session.add(
                EntityAlias(namespace=scope.namespace, entity_id=target.id, alias=alias, key=key)
            )
        elif owner != target.id:
            raise InvalidInput("alias", f"{alias!r} already names another entity")

    scope.transaction(work)


def resolve_members(
    session: Session,
    namespace: str,
    new: FactCreate,
    *,
    create: bool = True,
    known: dict[str, str] | None = None,
    plain: dict[Any, list[dict[str, Any]]] | None = None,
) -> list[str]:
    """Entity ids for the members, creating unknown entities (with their name as alias).

    With ``create=False`` nothing is written (unknown entities get a placeholder
    id): that checks, before a write, that no two members name one entity in
    one role through aliases. ``known`` (alias key to entity id: every stored alias
    of these keys, as ``WriteCache`` reads them) answers in place of queries; the
    entities created are added to it and left for the transaction's flush, or, with
    ``plain``, added to it as plain rows (``db.insert_plain``) for the caller to insert.
    """
    if plain is not None and known is None:
        raise ValueError("plain rows need known: without it a name is looked up in SQL")
    ids: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    for i, member in enumerate(new.members):
        key = normalize_key(member.name)
        if known is not None:
            entity_id = known.get(key)
        else:
            entity_id = session.exec(
                select(EntityAlias.entity_id).where(
                    EntityAlias.namespace == namespace, EntityAlias.key == key
                )
            ).first()
        if entity_id is None and not create:
            entity_id = f"new:{key}"
        elif entity_id is None:
            entity_id = _create(session, namespace, member.name, key, member.kind, plain)
            if known is None:
                session.flush()
            else:
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
    session: Session,
    namespace: str,
    name: str,
    key: str,
    kind: str,
    plain: dict[Any, list[dict[str, Any]]] | None,
) -> str:
    """Add a new entity named ``name`` (its alias too) to the session, or as plain rows to
    ``plain``; its id."""
    if plain is None:
        entity = Entity(namespace=namespace, name=name, key=key, kind=kind)
        session.add(entity)
        session.add(EntityAlias(namespace=namespace, entity_id=entity.id, alias=name, key=key))
        return entity.id
    row = db.plain_row(Entity, namespace=namespace, name=name, key=key, kind=kind)
    alias = {"namespace": namespace, "entity_id": row["id"], "alias": name, "key": key}
    plain.setdefault(Entity, []).append(row)
    plain.setdefault(EntityAlias, []).append(alias)
    return str(row["id"])
