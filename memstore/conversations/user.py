"""The namespace's user: "the user" and the user's name as one entity.

User turns without a name are the call's ``user_name``'s; where none is given they are
"the user"'s. Once a name is given, the two name one entity (an alias of whichever the
store knew first), so ``facts_about``, ``search`` and ``recall`` (``search.as_named``)
find the user's facts by either.
"""

from __future__ import annotations

import logging

from memstore.conversations.storelike import StoreLike
from memstore.errors import InvalidInput, NotFound
from memstore.names import THE_USER

log = logging.getLogger(__name__)


def link_user(store: StoreLike, user_name: str) -> None:
    """Let "the user" and ``user_name`` name one entity of ``store``'s namespace: the
    name becomes an alias of "the user" where facts about "the user" came first, and
    the reverse otherwise; nothing when the store knows neither. Two entities already
    (facts about both) cannot be merged: logged, left apart."""
    named, generic = _entity_id(store, user_name), _entity_id(store, THE_USER)
    if named is not None and generic is not None:
        if named != generic:
            log.info(
                "%r and %r name two entities in namespace %s; their facts stay apart",
                user_name,
                THE_USER,
                store.namespace,
            )
        return
    try:
        if named is not None:
            store.add_alias(user_name, THE_USER)
        elif generic is not None:
            store.add_alias(THE_USER, user_name)
    except InvalidInput:  # another writer named it meanwhile
        log.info("could not link %r and %r in %s", user_name, THE_USER, store.namespace)


def _entity_id(store: StoreLike, name: str) -> str | None:
    try:
        return store.entity(name).id
    except NotFound:
        return None
