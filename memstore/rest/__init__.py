"""memstore's REST API (``memstore serve``): FastAPI over one Store per namespace.

Every memory route lives under ``/v1/namespaces/{namespace}/`` and needs an API key
(``Authorization: Bearer <key>`` or ``X-API-Key: <key>``) whose patterns in
``server.api_keys`` match the namespace: a key never reads or writes another
namespace. ``/health`` and ``/metrics`` need no key; ``/docs`` shows the API.

Errors are JSON with an ``error`` code: ``invalid_input`` (400, naming the
``field``), ``unauthorized`` (401), ``forbidden`` (403), ``not_found`` (404),
``not_grounded`` (422: the grounding gate rejected the fact; the body carries the
verdict and the audit log's rejection), ``extractor_failed`` (502: the endpoint
that extracts facts from a conversation failed; nothing was stored), ``unavailable``
(503) and ``internal_error`` (500). 422 means only "rejected by the gate"; malformed
requests are 400.

A front: it may import the Store, its settings and the layers below them; the MCP
server shares its key check; only the CLI and the MCP server import it.

The package: ``models`` (request and response bodies), ``pool`` (the stores of the
namespaces in use), ``state`` (what the routes share), ``auth`` (API keys and the
namespace's store), ``errors`` (errors as JSON), ``routes`` (one module per area),
``metrics`` and ``body_limit`` (middleware), ``docs`` (the schema and the docs
pages), ``page`` (the audit page at ``/audit/{namespace}``: HTML, outside the schema)
and ``app`` (``create_app`` and ``run``).
"""

from __future__ import annotations

from memstore.rest.app import create_app, run
from memstore.rest.auth import ERASE_FORBIDDEN
from memstore.rest.body_limit import BodyLimit
from memstore.rest.docs import DOCS_ASSETS
from memstore.rest.metrics import UNMATCHED
from memstore.rest.pool import NamespaceStores
from memstore.rest.routes import PREFIX

__all__ = [
    "DOCS_ASSETS",
    "ERASE_FORBIDDEN",
    "PREFIX",
    "UNMATCHED",
    "BodyLimit",
    "NamespaceStores",
    "create_app",
    "run",
]
