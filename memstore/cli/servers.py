"""The servers: ``serve`` (the REST API) and ``mcp`` (MCP tools over stdio or http)."""

from __future__ import annotations

from typing import Annotated

import typer

from memstore.cli.console import Exit, fail
from memstore.cli.context import settings
from memstore.cli.parsing import NamespaceOption, StoreOption
from memstore.cli.program import command
from memstore.errors import InvalidInput
from memstore.mcp.host import (
    DEFAULT_SAMPLES,
    REQUESTS_HELP,
    SECONDS_HELP,
    TOKENS_HELP,
    HostBudget,
    HostOptions,
)


@command()
def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="Address to listen on (server.host).")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="Port (server.port).")] = None,
    store: StoreOption = None,
) -> None:
    """Serve the REST API (FastAPI; OpenAPI docs at /docs) for the namespaces API keys allow."""
    chosen = settings(ctx, store)
    try:
        from memstore import rest
    except ImportError as exc:
        fail(f"{exc}", Exit.INTERNAL, "install the server extra: pip install 'memstore[server]'")
    rest.run(chosen, host=host, port=port)


@command()
def mcp(
    ctx: typer.Context,
    transport: Annotated[
        str, typer.Option(help="stdio (for an agent that starts memstore) or http.")
    ] = "stdio",
    host: Annotated[str | None, typer.Option(help="With http: address (server.host).")] = None,
    port: Annotated[
        int | None, typer.Option(min=1, max=65535, help="With http: port (server.port + 1).")
    ] = None,
    allow_unauthenticated: Annotated[
        bool,
        typer.Option(
            "--allow-unauthenticated",
            help="With http: serve without API keys when none are configured (loopback only).",
        ),
    ] = False,
    allow_erase: Annotated[
        bool,
        typer.Option(
            "--allow-erase",
            help="Offer the erase tool over stdio (or http without keys); over http with "
            "keys only the keys of server.erase_keys may erase.",
        ),
    ] = False,
    verifier: Annotated[
        str,
        typer.Option(help="host: check each write with the client's own model (MCP sampling)."),
    ] = "configured",
    extractor: Annotated[
        str,
        typer.Option(help="host: extract conversations' facts with the client's own model."),
    ] = "configured",
    samples: Annotated[
        int, typer.Option(min=1, max=64, help="Host: answers per question.")
    ] = DEFAULT_SAMPLES,
    host_fallback: Annotated[
        bool,
        typer.Option(
            "--host-fallback",
            help="Host: a client that cannot sample gets the configured verifier and "
            "extractor instead of an error.",
        ),
    ] = False,
    host_requests: Annotated[int, typer.Option(min=1, help=REQUESTS_HELP)] = HostBudget.requests,
    host_tokens: Annotated[int, typer.Option(min=1, help=TOKENS_HELP)] = HostBudget.tokens,
    host_timeout: Annotated[float, typer.Option(min=0.1, help=SECONDS_HELP)] = HostBudget.seconds,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
) -> None:
    """Serve one namespace as MCP tools: remember, recall, verify_claim, audit_rejections
    (and erase: with --allow-erase over stdio, for server.erase_keys over http).

    Over http clients send Authorization: Bearer KEY or X-API-Key: KEY, a key of
    server.api_keys that may use the namespace (the REST API's keys and check).
    With --verifier host (and/or --extractor host) the client's own model checks each
    write, over MCP sampling: no key, no second server."""
    if transport not in ("stdio", "http"):
        raise InvalidInput("transport", f"{transport!r} is not stdio or http")
    for name, value in (("verifier", verifier), ("extractor", extractor)):
        if value not in ("configured", "host"):
            raise InvalidInput(name, f"{value!r} is not configured or host")
    budget = HostBudget(host_requests, host_tokens, host_timeout)
    host_options = HostOptions(verifier, extractor, samples, host_fallback, budget)  # type: ignore[arg-type]
    chosen = settings(ctx, store, namespace)
    from memstore.mcp import server

    try:
        server.run(
            chosen,
            transport="http" if transport == "http" else "stdio",
            host=host,
            port=port,
            allow_unauthenticated=allow_unauthenticated,
            allow_erase=allow_erase,
            host_options=host_options,
        )
    except ImportError as exc:
        fail(str(exc), Exit.INTERNAL, "install the server extra: pip install 'memstore[server]'")
