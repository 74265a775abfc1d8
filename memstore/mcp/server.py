"""memstore over the Model Context Protocol: one namespace of one store as an agent's memory.

Tools: ``remember`` (a write through the grounding gate), ``remember_conversation``
(facts extracted from messages, each gated against its turn), ``recall`` (the memories
relevant to a query as lines for the agent's context, within a token budget: what an
agent calls every turn), ``search`` (matching facts, filtered), ``supersede`` (correct
a fact, gated like ``remember``), ``retract`` (forget a fact, keeping its history),
``list_memories`` (what memory holds, a page at a time, filtered by entity, time or
metadata), ``verify_claim`` (the gate's verdict, nothing stored), ``audit_rejections``
(what the gate refused) and, where allowed, ``erase`` (forget a fact or a refusal for
good; a right of its own: over stdio only with ``--allow-erase``, over HTTP only
for the keys of ``server.erase_keys``). A refused write is a normal result
(``stored: false`` with the verdict and why), so the agent learns from it; bad
input is a tool error naming the field. Built on the official MCP SDK 2.x
(``pip install 'memstore[server]'``)::

    python -m memstore.mcp --store ./memdata --namespace user:alice
    python -m memstore.mcp --store ./memdata --transport http --port 8766

Over HTTP every request needs an API key, ``Authorization: Bearer <key>`` or
``X-API-Key: <key>``, of ``server.api_keys`` that may use the served namespace (401
without a known key, 403 for a key of other namespaces): the REST API's keys, checked
by the REST API's check (``memstore.mcp.auth``). With no keys configured the server
refuses to start, unless it listens on a loopback address and
``--allow-unauthenticated`` says that anyone on this machine may use it. Request
bodies over ``server.max_body_bytes`` are answered 413, as by the REST API.

This module wires the server (``build_server``), its transports (``run``, ``http_app``)
and the command line (``main``); the tools are in ``memstore.mcp.tools``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext, redirect_stdout
from typing import TYPE_CHECKING, Literal

from gate import ConfigError
from memstore.config import ConversationSettings, ServerSettings, Settings, load_settings
from memstore.errors import InvalidInput, MemstoreError
from memstore.mcp.host import (
    DEFAULT_SAMPLES,
    REQUESTS_HELP,
    SECONDS_HELP,
    TOKENS_HELP,
    HostBudget,
    HostOptions,
)
from memstore.names import check_namespace

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from memstore.mcp.host import HostModel
    from memstore.rest.asgi import ASGIApp
    from memstore.store import Store

__all__ = ["build_server", "main", "run"]

SERVER_NAME = "memstore"
#: Where the streamable HTTP transport answers.
HTTP_PATH = "/mcp"
INSTALL_HINT = "the MCP server needs the MCP SDK: pip install 'memstore[server]'"

log = logging.getLogger("memstore.mcp")

INSTRUCTIONS = """\
memstore is your long-term memory for namespace {namespace!r}: facts you remember here
persist across conversations, and only this namespace is visible.

Every write is gated. `remember` stores a fact only when the evidence you pass (verbatim
source text: what the user said, a passage of a document) actually supports it; if not,
it returns stored=false with the verdict and the reason, and nothing is remembered.
Quote the source instead of paraphrasing it, and never invent evidence to get a fact in.

`remember_conversation` takes the conversation itself: facts are extracted from the
messages and each one is gated against the message it came from, like `remember`.

Call `recall` every turn with the user's message: it answers what memory holds about
it as lines to put in your context (each with when it held, confidence and source).
`search` finds facts with filters (entity, time, relevance). When a remembered fact is
wrong or out of date, `supersede` it with the corrected statement and its evidence
(gated like `remember`; the old version stays in the history); `retract` forgets a
fact with a reason. `verify_claim` checks a claim against evidence without storing
it, and `audit_rejections` shows what the gate refused. When the user asks you to
forget something for good, `erase` removes it (where the server allows it).
`list_memories` pages through what memory holds. Writes take `metadata`, your own keys
and values (a session, a topic), which `search` and `list_memories` filter by.
"""


def build_server(
    store: Store,
    *,
    allow_erase: bool = False,
    keys: ServerSettings | None = None,
    conversations: ConversationSettings | None = None,
    host: HostModel | None = None,
) -> MCPServer:
    """An MCP server named ``memstore`` whose tools read and write ``store``.

    ``remember_conversation`` extracts facts as ``conversations`` (the settings'
    section; default: the embedded extractor) says. With ``host`` (``memstore.mcp.host``),
    the tools that check or extract reach the client's model through it, as it was
    asked to (the store's gate asks it, and the extractor with ``--extractor host``).

    ``erase`` is a right of its own. With ``keys`` holding API keys (HTTP behind
    KeyAuth) the tool is listed and refuses unless the request's key is in
    ``keys.erase_keys``; it records the key's fingerprint as who erased. Otherwise
    (stdio, or HTTP without keys) it is listed only with ``allow_erase``
    (``--allow-erase``), and records ``mcp``.

    Tools are plain functions: the SDK runs them on worker threads, so blocking
    store calls never stall the event loop.
    """
    _require_sdk()
    from mcp.server.mcpserver import MCPServer

    from memstore.mcp.tools import MemoryTools, register

    server: MCPServer = MCPServer(
        SERVER_NAME,
        title="memstore: grounded long-term memory",
        instructions=INSTRUCTIONS.format(namespace=store.namespace),
    )
    tools = MemoryTools(store, conversations, keys, host)
    register(server, tools, erase=tools.keys is not None or allow_erase)
    return server


def _require_sdk() -> None:
    """Raise ImportError with the install line if the MCP SDK is missing."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise ImportError(INSTALL_HINT) from None


# -- running it -------------------------------------------------------------------


def run(
    settings: Settings,
    namespace: str | None = None,
    transport: Literal["stdio", "http"] = "stdio",
    host: str | None = None,
    port: int | None = None,
    *,
    allow_unauthenticated: bool = False,
    allow_erase: bool = False,
    host_options: HostOptions | None = None,
) -> None:
    """Serve ``settings.open(namespace)`` until the client leaves (stdio), Ctrl-C or SIGTERM.

    HTTP (streamable, at ``/mcp``) listens on ``host``/``port``, by default
    ``settings.server.host`` and the port after ``settings.server.port``, and needs a
    key of ``settings.server.api_keys`` that allows the namespace. Without keys
    it raises ConfigError, unless ``allow_unauthenticated`` and ``host`` is loopback.
    Over stdio, stdout carries only the protocol; logs go to stderr. The store is
    closed at the end. ``erase`` is offered over stdio (and HTTP without keys) only
    with ``allow_erase``; over HTTP with keys, to the keys of ``server.erase_keys``.
    ``host_options``: what the client's model is asked (``memstore.mcp.host``).
    """
    if transport not in ("stdio", "http"):
        raise InvalidInput("transport", f"{transport!r} is not 'stdio' or 'http'")
    host = host or settings.server.host
    http_port = settings.server.port + 1 if port is None else port
    if transport == "http" and (
        isinstance(http_port, bool) or not isinstance(http_port, int) or not 0 < http_port < 65536
    ):
        raise InvalidInput("port", f"{http_port!r} is not a TCP port (1 to 65535)")
    if namespace is not None:
        try:
            check_namespace(namespace)  # before the models load, not after
        except ValueError as exc:
            raise InvalidInput("namespace", str(exc)) from None
    _require_sdk()
    if transport == "http":
        from memstore.mcp.auth import check_http_access

        check_http_access(settings.server, host, allow_unauthenticated)
    from memstore.mcp.host import host_parts

    quiet = _stdout_to_stderr() if transport == "stdio" else nullcontext()
    with quiet:  # a stray print while the store and models load must not corrupt the protocol
        client_model, hook = host_parts(host_options or HostOptions(), settings)
        store = settings.open(namespace) if hook is None else settings.open(namespace, hook=hook)
    try:
        keys = settings.server if transport == "http" else None
        server = build_server(
            store,
            allow_erase=allow_erase,
            keys=keys,
            conversations=settings.conversations,
            host=client_model,
        )
        log.info("memstore MCP server for %r on %s", store.namespace, transport)
        with _sigterm_interrupts():
            if transport == "stdio":
                server.run("stdio")
            else:
                _serve_http(server, settings.server, store.namespace, host, http_port)
    except KeyboardInterrupt:
        log.info("memstore MCP server stopped")
    finally:
        store.close()


def http_app(server: MCPServer, settings: ServerSettings, namespace: str, host: str) -> ASGIApp:
    """The streamable HTTP app at ``HTTP_PATH``: behind KeyAuth (the REST API's key
    check) when keys are set, and behind the REST API's body limit
    (``server.max_body_bytes``, 413 naming ``body``)."""
    from memstore.mcp.auth import KeyAuth
    from memstore.rest import BodyLimit

    app: ASGIApp = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
    if settings.api_keys:
        app = KeyAuth(app, settings, namespace)
    return BodyLimit(app, settings.max_body_bytes, settings.body_timeout.total_seconds())


def _serve_http(
    server: MCPServer, settings: ServerSettings, namespace: str, host: str, port: int
) -> None:
    """Serve streamable HTTP at ``HTTP_PATH`` with uvicorn, behind KeyAuth when keys are set."""
    import uvicorn

    from memstore.rest.connections import uvicorn_config

    app = http_app(server, settings, namespace, host)
    level = server.settings.log_level.lower()
    config = uvicorn_config(app, settings, host, port, log_level=level)
    uvicorn.Server(config).run()


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C, so a terminated server still closes its store.

    (Uvicorn re-raises the signal after its graceful shutdown; by default that kills
    the process before ``finally`` blocks run.)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what is written to stdout (``sys.stdout`` and file descriptor 1) to stderr."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m memstore.mcp``: serve one namespace over stdio or HTTP."""
    parser = argparse.ArgumentParser(
        prog="python -m memstore.mcp",
        description="Serve one namespace of a memstore store to MCP clients.",
    )
    parser.add_argument(
        "--store", help="Data directory (SQLite) or database URL (default: from the settings)."
    )
    parser.add_argument(
        "--namespace", help="Namespace to serve (default: store.namespace of the settings)."
    )
    parser.add_argument("--config", help="Settings YAML file (default: $MEMSTORE_CONFIG).")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", help="HTTP: address to listen on (default: server.host).")
    parser.add_argument("--port", type=int, help="HTTP: port (default: server.port + 1).")
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="HTTP: serve without API keys when none are configured (loopback hosts only).",
    )
    parser.add_argument(
        "--allow-erase",
        action="store_true",
        help="Offer the erase tool over stdio (or HTTP without keys); over HTTP with keys "
        "only the keys of server.erase_keys may erase.",
    )
    parser.add_argument(
        "--verifier",
        choices=("configured", "host"),
        default="configured",
        help="host: check each write with the client's own model, over MCP sampling "
        "(default: the verifier of the settings).",
    )
    parser.add_argument(
        "--extractor",
        choices=("configured", "host"),
        default="configured",
        help="host: extract facts from conversations with the client's own model.",
    )
    parser.add_argument(
        "--samples", type=int, default=DEFAULT_SAMPLES, help="Host: answers per question."
    )
    parser.add_argument(
        "--host-fallback",
        action="store_true",
        help="Host: a client that cannot sample gets the configured verifier and "
        "extractor (its verdicts name them) instead of an error.",
    )
    parser.add_argument(
        "--host-requests", type=int, default=HostBudget.requests, help=REQUESTS_HELP
    )
    parser.add_argument("--host-tokens", type=int, default=HostBudget.tokens, help=TOKENS_HELP)
    parser.add_argument("--host-timeout", type=float, default=HostBudget.seconds, help=SECONDS_HELP)
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="Also log each schema migration a new or older store goes through.",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    if not args.verbose:  # a new store's first start would print some 20 Alembic lines
        logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        overrides = {} if args.store is None else {"store": {"url": args.store}}
        settings = load_settings(args.config, **overrides)
    except ConfigError as exc:
        parser.exit(2, f"Error: {exc}\n")
    try:
        host_options = HostOptions(
            args.verifier,
            args.extractor,
            args.samples,
            args.host_fallback,
            HostBudget(args.host_requests, args.host_tokens, args.host_timeout),
        )
    except ValueError as exc:
        parser.exit(2, f"Error: {exc}\n")
    try:
        run(
            settings,
            args.namespace,
            args.transport,
            args.host,
            args.port,
            allow_unauthenticated=args.allow_unauthenticated,
            allow_erase=args.allow_erase,
            host_options=host_options,
        )
    except ConfigError as exc:
        parser.exit(2, f"Error: {exc}\n")
    except ImportError as exc:
        if exc.msg != INSTALL_HINT:
            raise
        parser.exit(1, f"Error: {exc}\n")
    except MemstoreError as exc:
        parser.exit(1, f"Error: {exc}\n")
    except KeyboardInterrupt:  # while the store was opening
        parser.exit(130)


if __name__ == "__main__":
    main()
