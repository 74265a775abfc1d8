"""The API surface: for every public ``Store`` method, its name on each front (the CLI
command, the REST route, the MCP tool), or why that front does not expose it.

Fronts keep their own names (users depend on them); this table maps the Store's name
to each. Where a method takes filters (``memstore.fronts``), an exposed front offers
each of them, under the Store's name unless ``renamed``, or lists it in ``omits``
with the reason. ``tests/memstore/test_api_surface.py`` fails when a public Store method is
missing here, when a named command, route or tool does not exist, and when a front's
filters differ from what this table says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from memstore.fronts import (
    EVIDENCE_FILTERS,
    FILTER_PARAMS,
    LIST_FILTERS,
    RECALL_FILTERS,
    REJECTION_FILTERS,
    SEARCH_FILTERS,
)

__all__ = ["FILTERS", "SURFACE", "Exposed", "Front", "Hidden", "Surface"]


@dataclass(frozen=True)
class Exposed:
    """A front's name for a Store method: a CLI command, an MCP tool, or a REST route
    (``"GET /search"``, the path under ``/v1/namespaces/{namespace}``)."""

    name: str
    #: Store filter -> the front's parameter name, where they differ.
    renamed: Mapping[str, str] = field(default_factory=dict)
    #: Store filter -> why this front does not offer it.
    omits: Mapping[str, str] = field(default_factory=dict)


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
_AUDIT_PAGE = (
    "people give and read labels on the audit page (GET /audit/{namespace}, served by "
    "memstore serve); rejection exports carry them"
)

SURFACE: dict[str, Surface] = {
    # lifecycle
    "close": Surface(Hidden(_PYTHON), Hidden(_PYTHON), Hidden(_PYTHON)),
    # writes
    "add_fact": Surface(Exposed("add"), Exposed("POST /facts"), Exposed("remember")),
    "add_facts": Surface(
        Exposed("add"), Exposed("POST /facts/batch"), Hidden("an agent remembers one fact a call")
    ),
    "remember": Surface(
        Hidden("add takes a statement with its members"),
        Hidden("POST /facts takes a statement with its members"),
        Hidden("remember takes a statement with its members; or remember_conversation"),
    ),
    "remember_conversation": Surface(
        Exposed("remember-conversation"),
        Exposed("POST /conversations"),
        Exposed("remember_conversation"),
    ),
    "supersede": Surface(
        Hidden(_NOT_YET), Exposed("POST /facts/{fact_id}/supersede"), Exposed("supersede")
    ),
    "retract": Surface(
        Exposed("retract"), Exposed("POST /facts/{fact_id}/retract"), Exposed("retract")
    ),
    "review": Surface(
        Exposed("review"),
        Exposed("POST /facts/{fact_id}/review"),
        Hidden(
            "a person's decision on a held fact: the CLI, REST and the audit page, not an agent"
        ),
    ),
    "corroborate": Surface(Hidden(_CORROBORATE), Hidden(_CORROBORATE), Hidden(_CORROBORATE)),
    "erase": Surface(Exposed("erase"), Exposed("POST /facts/{fact_id}/erase"), Exposed("erase")),
    "erase_rejection": Surface(
        Exposed("erase"), Exposed("POST /rejections/{rejection_id}/erase"), Exposed("erase")
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
        Exposed("list", renamed=FILTER_PARAMS),
        Exposed("GET /facts", renamed=FILTER_PARAMS),
        Exposed("list_memories"),
    ),
    "neighborhood": Surface(
        Exposed("neighbors"), Exposed("GET /entities/{name}/neighborhood"), Hidden(_AGENT_TOOLS)
    ),
    "history": Surface(
        Exposed("history"), Exposed("GET /facts/{fact_id}/history"), Hidden(_AGENT_TOOLS)
    ),
    "verifications": Surface(
        Exposed("history"), Exposed("GET /facts/{fact_id}/history"), Hidden(_AGENT_TOOLS)
    ),
    "rejections": Surface(
        Exposed("audit"),
        Exposed("GET /rejections"),
        Exposed(
            "audit_rejections",
            omits={
                name: _AGENT_AUDIT
                for name in ("until", "min_gap", "max_gap", "source", "entity", "relation")
            },
        ),
    ),
    "get_rejection": Surface(
        Hidden("audit --format json shows rejections whole"),
        Exposed("GET /rejections/{rejection_id}"),
        Hidden("audit_rejections answers refusals whole"),
    ),
    "count_rejections": Surface(
        Exposed("audit"), Exposed("GET /rejections/counts"), Hidden(_AGENT_TOOLS)
    ),
    "export_rejections": Surface(
        Exposed("audit"),
        Hidden("a remote caller pages through GET /rejections"),
        Hidden(_AGENT_TOOLS),
    ),
    "verify_audit_chain": Surface(Hidden(_PYTHON), Hidden(_PYTHON), Hidden(_PYTHON)),
    "drift": Surface(Exposed("drift"), Exposed("GET /drift"), Hidden(_AGENT_TOOLS)),
    # human labels
    "add_label": Surface(Hidden(_AUDIT_PAGE), Hidden(_AUDIT_PAGE), Hidden(_AGENT_TOOLS)),
    "labels": Surface(Hidden(_AUDIT_PAGE), Hidden(_AUDIT_PAGE), Hidden(_AGENT_TOOLS)),
    "verify_claim": Surface(
        Exposed("verify"), Exposed("POST /verify_claim"), Exposed("verify_claim")
    ),
    "entity": Surface(
        Hidden("neighbors shows entities"),
        Hidden("the neighborhood answers entities"),
        Hidden(_AGENT_TOOLS),
    ),
    # re-verification
    "reverify": Surface(Exposed("reverify"), Hidden(_SERVER_RUNS_IT), Hidden(_SERVER_RUNS_IT)),
    "mark_due": Surface(Exposed("reverify"), Hidden(_SERVER_RUNS_IT), Hidden(_SERVER_RUNS_IT)),
    "reverify_policy": Surface(Exposed("policy"), Hidden(_SERVER_RUNS_IT), Hidden(_SERVER_RUNS_IT)),
    "set_reverify_policy": Surface(
        Exposed("policy"), Hidden(_SERVER_RUNS_IT), Hidden(_SERVER_RUNS_IT)
    ),
    "count_due": Surface(Exposed("policy"), Hidden(_SERVER_RUNS_IT), Hidden(_SERVER_RUNS_IT)),
    "start_reverifier": Surface(Hidden(_PYTHON), Hidden(_SERVER_RUNS_IT), Hidden(_PYTHON)),
    "stop_reverifier": Surface(Hidden(_PYTHON), Hidden(_SERVER_RUNS_IT), Hidden(_PYTHON)),
    "get_evidence": Surface(
        Exposed("history"),
        Hidden("facts and their history answer their citations"),
        Hidden(_AGENT_TOOLS),
    ),
    # search
    "search": Surface(
        Exposed(
            "search",
            omits={name: _CLI_SEARCH for name in SEARCH_FILTERS if name not in _CLI_SEARCH_TAKES},
        ),
        Exposed("GET /search", renamed=FILTER_PARAMS),
        Exposed("search", omits={name: _AGENT_SEARCH for name in ("mode", "statuses", "expand")}),
    ),
    "recall": Surface(
        Exposed("recall", renamed={"statuses": "status"}),
        Exposed("GET /recall", renamed={"statuses": "status"}),
        Exposed("recall", omits={"statuses": "an agent recalls active memory"}),
    ),
    "search_evidence": Surface(
        Exposed(
            "search",
            omits={name: _CLI_SEARCH for name in EVIDENCE_FILTERS if name not in _CLI_SEARCH_TAKES},
        ),
        Exposed("GET /search/evidence"),
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
    "stats": Surface(Exposed("stats"), Hidden(_PYTHON), Hidden(_AGENT_TOOLS)),
}
