"""``python -m memstore.mcp_server``: the name agent hosts were configured with before the
MCP server moved to ``memstore.mcp``; it runs the same server. Use ``python -m memstore.mcp``
(or ``memstore mcp``)."""

if __name__ == "__main__":
    from memstore.mcp.server import main

    main()
