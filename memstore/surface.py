"""The contract across the fronts: for every public ``Store`` method, its name on each
front (the CLI command, the REST route, the MCP tool) or why that front does not expose
it, and every parameter with its name, default and bound.

The Store's signature is the reference (``store_parameters``: its parameters, the
fields of the model a ``**`` collects, and ``BOUNDS``). An exposed front offers each of
them under the same name, with the same default and bound, unless its entry says
otherwise and why: ``renamed`` (another name), ``omits`` (not offered), ``defaults``
(another default), ``bounds`` (another range). What a front takes beyond the Store's
parameters is listed too: ``adds`` per entry, ``CONTEXT`` per front (which store,
which namespace, how to print), ``ALIASES`` (old spellings still accepted).
``tests/memstore/test_api_surface.py`` compares each front's full parameter set, defaults and
bounds with this table, and fails on any difference it does not list.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from memstore.defaults import (
    IN_LIST_CHUNK,
    MAX_HOPS,
    MAX_LIST_LIMIT,
    MAX_NEIGHBORHOOD_FACTS,
    MAX_RECALL_TOKENS,
    MAX_REVERIFY_LIMIT,
    REJECTIONS_MAX_PAGE,
)
from memstore.fronts import (
    EVIDENCE_FILTERS,
    LIST_FILTERS,
    RECALL_FILTERS,
    REJECTION_FILTERS,
    SEARCH_FILTERS,
)
from memstore.schemas import MAX_LABEL_PAGE, MAX_SEARCH_K

__all__ = [
    "ALIASES",
    "BOUNDS",
    "CONTEXT",
    "FILTERS",
    "PYTHON_ONLY",
    "SURFACE",
    "Exposed",
    "Front",
    "Hidden",
    "Surface",
    "store_parameters",
]


@dataclass(frozen=True)
class Exposed:
    """A front's name for a Store method: a CLI command, an MCP tool, or a REST route
    (``"GET /search"``, the path under ``/v1/namespaces/{namespace}``)."""

    name: str
    #: Store parameter -> the front's name for it, where they differ.
    renamed: Mapping[str, str] = field(default_factory=dict)
    #: Store parameter -> why this front does not offer it.
    omits: Mapping[str, str] = field(default_factory=dict)
    #: Store parameter -> why this front's default differs from the Store's.
    defaults: Mapping[str, str] = field(default_factory=dict)
    #: Store parameter -> (low, high, why) where this front's range differs.
    bounds: Mapping[str, tuple[float | None, float | None, str]] = field(default_factory=dict)
    #: The front's own parameters (beyond the Store's and ``CONTEXT``) -> what they are.
    adds: Mapping[str, str] = field(default_factory=dict)
    #: Parameters of ``PYTHON_ONLY`` this front does take, after all.
    takes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Hidden:
    """A front does not expose the method, and why."""

    reason: str


Front = Exposed | Hidden


@dataclass(frozen=True)
class Surface:
    cli: Front
    rest: Front
    mcp: Front


_CORROBORATE = "done by remember_conversation, when a later message verifies a held fact"

#: The filters of the Store methods that take them (one definition: ``memstore.fronts``).
FILTERS: dict[str, tuple[str, ...]] = {
    "rejections": REJECTION_FILTERS,
    "count_rejections": REJECTION_FILTERS,
    "export_rejections": REJECTION_FILTERS,
    "search": SEARCH_FILTERS,
    "search_evidence": EVIDENCE_FILTERS,
    "recall": RECALL_FILTERS,
    "list_facts": LIST_FILTERS,
}

_PYTHON = "a library call of the process that holds the store"
_WHO = "the front names who acts: the API key's fingerprint, or the CLI's user"
_SETTINGS = "null: the server's conversations settings decide (their defaults are the Store's)"
_SCHEDULE = "unset: the scheduler settings decide (their defaults are the Store's)"
_QUERY = "one of query or its old name q is required; OpenAPI cannot say 'one of'"
_AGENT_PAGE = "an agent reads one page into its context: 20 refusals, at most 100"
_AGENT_K = "an agent reads the facts into its context: at most 50"
_AGENT_CITES = (
    "an agent cites what it was told as evidence text; ids of stored evidence, quoted "
    "spans and world time: the REST API, the CLI or Python"
)
_AGENT_EVIDENCE = "an agent's memory always says what it was told (evidence is required)"
_CONVERSATION = {"on_conflict": _SETTINGS, "context_turns": _SETTINGS}
_CLI_FACT = "optional: --file gives the facts instead"
_DRIFT = "the drift settings come from the config file (drift:)"
_ONE_OF = "one of fact_id and rejection_id names what to erase"
_SERVER_RUNS_IT = "the servers run re-verification themselves (scheduler settings)"
_AGENT_TOOLS = (
    "agents get a small set of tools: remember, recall, search, verify, audit, "
    "supersede (correct), retract (forget), erase"
)
_CLI_SEARCH = (
    "the CLI's search takes words, relevance and recording time; the other filters: "
    "memstore list, the REST API or Python"
)
_AGENT_SEARCH = "agents search active memory, by meaning and keywords together"
_CLI_SEARCH_TAKES = ("mode", "min_score", "recorded_after", "recorded_before")
_AGENT_AUDIT = "agents filter the audit log by verdict, words and time only"
_NOT_YET = "no correction over this front yet (issue 27, goal 6)"
_DRY_RUN = (
    "a dry run of a whole batch, for Python callers (the MCP server's rounds with a "
    "client's model); the fronts check one claim with verify / verify_claim"
)
_AUDIT_PAGE = (
    "people give and read labels on the audit page (GET /audit/{namespace}, served by "
    "memstore serve); rejection exports carry them"
)

SURFACE: dict[str, Surface] = {
    # lifecycle
    "close": Surface(Hidden(_PYTHON), Hidden(_PYTHON), Hidden(_PYTHON)),
    # writes
    "add_fact": Surface(
        Exposed(
            "add",
            renamed={"members": "member", "citations": "quote", "evidence_ids": "evidence_id"},
            defaults={"statement": _CLI_FACT, "members": _CLI_FACT},
            adds={"evidence_file": "evidence text read from a file"},
            takes=frozenset({"ungated"}),
        ),
        Exposed("POST /facts"),
        Exposed(
            "remember",
            omits={
                p: _AGENT_CITES for p in ("citations", "evidence_ids", "valid_from", "valid_to")
            },
            defaults={"evidence": _AGENT_EVIDENCE},
        ),
    ),
    "add_facts": Surface(
        Exposed("add", renamed={"facts": "file"}, defaults={"facts": _CLI_FACT}),
        Exposed("POST /facts/batch"),
        Hidden("an agent remembers one fact a call"),
    ),
    "remember": Surface(
        Hidden("add takes a statement with its members"),
        Hidden("POST /facts takes a statement with its members"),
        Hidden("remember takes a statement with its members; or remember_conversation"),
    ),
    "remember_conversation": Surface(
        Exposed(
            "remember-conversation",
            renamed={"messages": "file"},
            defaults={**_CONVERSATION, "messages": "'-': the messages come on standard input"},
        ),
        Exposed("POST /conversations", defaults=_CONVERSATION),
        Exposed("remember_conversation", defaults=_CONVERSATION),
    ),
    "supersede": Surface(
        Hidden(_NOT_YET),
        Exposed("POST /facts/{fact_id}/supersede", renamed={"old_id": "fact_id"}),
        Exposed(
            "supersede",
            renamed={"old_id": "fact_id"},
            omits={
                p: _AGENT_CITES for p in ("citations", "evidence_ids", "valid_from", "valid_to")
            },
            defaults={"evidence": _AGENT_EVIDENCE},
        ),
    ),
    "retract": Surface(
        Exposed("retract"), Exposed("POST /facts/{fact_id}/retract"), Exposed("retract")
    ),
    "review": Surface(
        Exposed("review", omits={"by": _WHO}),
        Exposed("POST /facts/{fact_id}/review", omits={"by": _WHO}),
        Hidden(
            "a person's decision on a held fact: the CLI, REST and the audit page, not an agent"
        ),
    ),
    "corroborate": Surface(Hidden(_CORROBORATE), Hidden(_CORROBORATE), Hidden(_CORROBORATE)),
    "erase": Surface(
        Exposed(
            "erase",
            renamed={"fact_id": "target_id"},
            omits={"by": _WHO},
            adds={"rejection": "the id names a rejection", "yes": "erase without asking"},
        ),
        Exposed("POST /facts/{fact_id}/erase", omits={"by": _WHO}),
        Exposed("erase", omits={"by": _WHO}, defaults={"fact_id": _ONE_OF}),
    ),
    "erase_rejection": Surface(
        Exposed("erase", renamed={"rejection_id": "target_id"}, omits={"by": _WHO}),
        Exposed("POST /rejections/{rejection_id}/erase", omits={"by": _WHO}),
        Exposed("erase", omits={"by": _WHO}, defaults={"rejection_id": _ONE_OF}),
    ),
    "add_alias": Surface(Hidden(_PYTHON), Hidden(_PYTHON), Hidden(_PYTHON)),
    # reads
    "get_fact": Surface(
        Exposed("get"), Exposed("GET /facts/{fact_id}"), Hidden("recall answers facts whole")
    ),
    "facts_about": Surface(
        Hidden("neighbors --hops 1 lists the entity's active facts, newest first"),
        Hidden("the neighborhood with hops=1 lists the entity's active facts, newest first"),
        Hidden(_AGENT_TOOLS),
    ),
    "list_facts": Surface(
        Exposed("list"),
        Exposed("GET /facts"),
        Exposed("list_memories"),
    ),
    "neighborhood": Surface(
        Exposed("neighbors", renamed={"entities": "entity"}),
        Exposed("GET /entities/{name}/neighborhood", renamed={"entities": "name"}),
        Hidden(_AGENT_TOOLS),
    ),
    "history": Surface(
        Exposed("history"), Exposed("GET /facts/{fact_id}/history"), Hidden(_AGENT_TOOLS)
    ),
    "verifications": Surface(
        Exposed("history"), Exposed("GET /facts/{fact_id}/history"), Hidden(_AGENT_TOOLS)
    ),
    "rejections": Surface(
        Exposed(
            "audit",
            omits={"descending": "the CLI lists the newest first"},
            defaults={"limit": "20 rows fit a terminal"},
        ),
        Exposed("GET /rejections"),
        Exposed(
            "audit_rejections",
            omits={
                **{
                    name: _AGENT_AUDIT
                    for name in ("until", "min_gap", "max_gap", "source", "entity", "relation")
                },
                **{
                    name: "an agent reads the newest first, a page after another (cursor)"
                    for name in ("order_by", "descending", "offset")
                },
            },
            defaults={"limit": _AGENT_PAGE},
            bounds={"limit": (1, 100, _AGENT_PAGE)},
        ),
    ),
    "get_rejection": Surface(
        Hidden("audit --format json shows rejections whole"),
        Exposed("GET /rejections/{rejection_id}"),
        Hidden("audit_rejections answers refusals whole"),
    ),
    "count_rejections": Surface(
        Exposed("audit", renamed={"by": "counts"}, defaults={"by": "unset: list, do not count"}),
        Exposed("GET /rejections/counts"),
        Hidden(_AGENT_TOOLS),
    ),
    "export_rejections": Surface(
        Exposed(
            "audit",
            omits={"dest": "the CLI writes to standard output; redirect it to a file"},
            defaults={"format": "table: a table unless told json, jsonl or csv"},
        ),
        Hidden("a remote caller pages through GET /rejections"),
        Hidden(_AGENT_TOOLS),
    ),
    "verify_audit_chain": Surface(Hidden(_PYTHON), Hidden(_PYTHON), Hidden(_PYTHON)),
    "drift": Surface(
        Exposed("drift", omits={"settings": _DRIFT}, adds={"format": "table or json"}),
        Exposed("GET /drift", omits={"settings": _DRIFT}),
        Hidden(_AGENT_TOOLS),
    ),
    # human labels
    "add_label": Surface(Hidden(_AUDIT_PAGE), Hidden(_AUDIT_PAGE), Hidden(_AGENT_TOOLS)),
    "labels": Surface(Hidden(_AUDIT_PAGE), Hidden(_AUDIT_PAGE), Hidden(_AGENT_TOOLS)),
    "verify_claim": Surface(
        Exposed("verify"), Exposed("POST /verify_claim"), Exposed("verify_claim")
    ),
    "check_facts": Surface(Hidden(_DRY_RUN), Hidden(_DRY_RUN), Hidden(_DRY_RUN)),
    "entity": Surface(
        Hidden("neighbors shows entities"),
        Hidden("the neighborhood answers entities"),
        Hidden(_AGENT_TOOLS),
    ),
    # re-verification
    "reverify": Surface(
        Exposed(
            "reverify",
            defaults={p: _SCHEDULE for p in ("limit", "batch", "lease", "fetch_timeout")},
            bounds={"fetch_timeout": (0.1, 600, "seconds, as the scheduler settings bound it")},
            adds={
                "all_namespaces": "every namespace of the store",
                "every": "run again every this long (with --watch)",
                "all": "mark every fact due first",
                "once": "run once, then exit",
                "watch": "keep running on a schedule kept in the database",
            },
            takes=frozenset({"gate"}),
        ),
        Hidden(_SERVER_RUNS_IT),
        Hidden(_SERVER_RUNS_IT),
    ),
    "mark_due": Surface(
        Exposed("reverify", omits={"fact_ids": "--everything marks every fact due; ids: Python"}),
        Hidden(_SERVER_RUNS_IT),
        Hidden(_SERVER_RUNS_IT),
    ),
    "reverify_policy": Surface(Exposed("policy"), Hidden(_SERVER_RUNS_IT), Hidden(_SERVER_RUNS_IT)),
    "set_reverify_policy": Surface(
        Exposed("policy", renamed={"recheck_after": "every", "retry_after": "retry"}),
        Hidden(_SERVER_RUNS_IT),
        Hidden(_SERVER_RUNS_IT),
    ),
    "count_due": Surface(Exposed("policy"), Hidden(_SERVER_RUNS_IT), Hidden(_SERVER_RUNS_IT)),
    "start_reverifier": Surface(Hidden(_PYTHON), Hidden(_SERVER_RUNS_IT), Hidden(_PYTHON)),
    "stop_reverifier": Surface(Hidden(_PYTHON), Hidden(_SERVER_RUNS_IT), Hidden(_PYTHON)),
    "get_evidence": Surface(
        Hidden("history shows the evidence of every version"),
        Hidden("facts and their history answer their citations"),
        Hidden(_AGENT_TOOLS),
    ),
    # search
    "search": Surface(
        Exposed(
            "search",
            omits={name: _CLI_SEARCH for name in SEARCH_FILTERS if name not in _CLI_SEARCH_TAKES},
            adds={"evidence": "search evidence chunks (search_evidence) instead of facts"},
        ),
        Exposed("GET /search", defaults={"query": _QUERY}),
        Exposed(
            "search",
            omits={
                **{name: _AGENT_SEARCH for name in ("mode", "statuses", "expand")},
                "offset": "an agent asks for more with a larger k",
            },
            bounds={"k": (1, 50, _AGENT_K)},
        ),
    ),
    "recall": Surface(
        Exposed("recall"),
        Exposed("GET /recall", defaults={"query": _QUERY}),
        Exposed(
            "recall",
            omits={"statuses": "an agent recalls active memory"},
            bounds={"k": (1, 50, _AGENT_K)},
        ),
    ),
    "search_evidence": Surface(
        Exposed(
            "search",
            omits={name: _CLI_SEARCH for name in EVIDENCE_FILTERS if name not in _CLI_SEARCH_TAKES},
        ),
        Exposed("GET /search/evidence", defaults={"query": _QUERY}),
        Hidden(_AGENT_TOOLS),
    ),
    "reindex": Surface(Exposed("reindex"), Hidden(_PYTHON), Hidden(_PYTHON)),
    "sync_index": Surface(
        Hidden("opening a store syncs the index"),
        Hidden("opening a store syncs the index"),
        Hidden("opening a store syncs the index"),
    ),
    "index_backlog": Surface(Exposed("stats"), Hidden(_PYTHON), Hidden(_PYTHON)),
    "index_batch": Surface(Hidden(_PYTHON), Hidden(_PYTHON), Hidden(_PYTHON)),
    "index_status": Surface(
        Exposed(
            "index-worker",
            adds={
                "once": "apply what is queued, then exit",
                "report": "time between two status lines while it runs",
            },
        ),
        Hidden("an operator's reading; the index worker prints it"),
        Hidden("an operator's reading, not an agent's"),
    ),
    "stats": Surface(Exposed("stats"), Hidden(_PYTHON), Hidden(_AGENT_TOOLS)),
}

#: Parameters no front takes, and why (each front omits them for this reason).
PYTHON_ONLY: dict[str, str] = {
    "gate": "the server's settings choose the gate (hallucination.memory_gate)",
    "policy": "the server's settings choose the gate's thresholds",
    "ungated": "only the process that holds the store may write past the gate",
    "progress": "a Python callback; the CLI draws a progress bar",
    "extractor": "the conversations settings choose the extractor",
    "single_valued": "the conversations settings list the single-valued relations",
}

#: What each front takes that no Store method does: where the store is, which
#: namespace, how to print. The REST API and MCP serve one namespace per path or server.
CONTEXT: dict[str, dict[str, str]] = {
    "cli": {
        "store": "the data directory or database URL (--store, $MEMSTORE_URL)",
        "namespace": "the namespace (--namespace, $MEMSTORE_NAMESPACE)",
        "json": "print JSON instead of a table (--json)",
        "index": "where the search index is, when not beside the store (--index)",
    },
    "rest": {"namespace": "the namespace, in the path"},
    "mcp": {},
}

#: Old spellings a front still accepts -> the parameter they name (kept so callers of
#: earlier releases keep working; the help shows the new name first).
ALIASES: dict[str, dict[str, str]] = {
    "cli": {"status": "statuses", "meta": "metadata", "budget": "budget_tokens"},
    "rest": {"q": "query", "status": "statuses", "meta": "metadata"},
    "mcp": {},
}

#: The range of each bounded Store parameter: (lowest, highest); None: unbounded.
BOUNDS: dict[str, dict[str, tuple[float | None, float | None]]] = {
    "search": {
        "k": (1, MAX_SEARCH_K),
        "offset": (0, MAX_SEARCH_K - 1),
        "min_score": (0.0, 1.0),
    },
    "search_evidence": {"k": (1, MAX_SEARCH_K), "min_score": (0.0, 1.0)},
    "recall": {
        "budget_tokens": (1, MAX_RECALL_TOKENS),
        "k": (1, MAX_SEARCH_K),
        "min_score": (0.0, 1.0),
    },
    "list_facts": {"limit": (1, MAX_LIST_LIMIT)},
    "facts_about": {"limit": (1, MAX_LIST_LIMIT)},
    "history": {"limit": (1, MAX_LIST_LIMIT)},
    "neighborhood": {
        "hops": (0, MAX_HOPS),
        "limit": (1, MAX_LIST_LIMIT),
        "max_facts": (1, MAX_NEIGHBORHOOD_FACTS),
    },
    "rejections": {"limit": (1, REJECTIONS_MAX_PAGE), "offset": (0, 2**63 - 1)},
    "labels": {"limit": (1, MAX_LABEL_PAGE), "offset": (0, None)},
    "reverify": {"limit": (1, MAX_REVERIFY_LIMIT), "batch": (1, IN_LIST_CHUNK)},
    "remember_conversation": {"context_turns": (0, None)},
    "add_fact": {"confidence": (0.0, 1.0)},
    "supersede": {"confidence": (0.0, 1.0)},
    "verify_claim": {"confidence": (0.0, 1.0)},
}


def store_parameters(method: str) -> dict[str, Any]:
    """``Store.<method>``'s parameters and their defaults (``inspect.Parameter.empty``:
    required): its named ones, the fields of the model a positional-only argument or a
    ``**`` stands for (a ``FactCreate``'s fields for ``add_fact``), its filters."""
    from memstore.schemas import FactCreate
    from memstore.store import Store

    given: dict[str, Any] = {}
    for name, p in inspect.signature(getattr(Store, method)).parameters.items():
        if name == "self":
            continue
        if p.kind is p.VAR_KEYWORD or name in _FACT_ARGUMENTS:
            model: type[BaseModel] | None = FactCreate if method in _FACT_FIELDS else None
            if model is not None:
                for field_name, info in model.model_fields.items():
                    required = info.is_required()
                    default = None if required else info.get_default(call_default_factory=True)
                    given[field_name] = inspect.Parameter.empty if required else default
            for name_ in FILTERS.get(method, ()):
                given.setdefault(name_, None)
            continue
        given[name] = p.default
    return given


#: Methods whose ``**fields`` (or their fact argument) are a ``FactCreate``'s fields.
_FACT_FIELDS = frozenset({"add_fact", "supersede"})
_FACT_ARGUMENTS = frozenset({"fact", "new_fact"})
