"""memstore over the Model Context Protocol (``python -m memstore.mcp``, ``memstore
mcp``): one namespace of one store as an agent's memory, over stdio or HTTP. A front,
beside ``memstore.rest`` and ``memstore.cli``: it may import anything below it and the
REST API (whose key check and body limit guard MCP over HTTP too), and is imported by
nothing but the CLI (and the ``memstore.mcp_server`` shim).

The package, as ``memstore.rest`` is laid out: ``models`` (the tools' parameters and
results), ``answers`` (the Store's records as those results), ``tools`` (one method per
tool, and their registration; the only module that needs the MCP SDK at import),
``auth`` (the REST API's key check, ``Authorization: Bearer`` or ``X-API-Key``, as ASGI
middleware; the right to erase) and ``server`` (``build_server``, the transports and
``main``)."""
