"""``python -m memstore.mcp``: the MCP server (``memstore mcp`` is the same)."""

from memstore.mcp.server import main

main()
