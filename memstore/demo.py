"""A short, readable memstore session: `python -m memstore.demo [DATA_DIR]`.

Writes a batch of facts through the grounding gate (the embedded verifier; one
ungrounded fact is rejected into the audit log), asks for a neighbourhood,
corrects a fact by supersession and shows the history, then changes a source
file and re-verifies. Uses a temporary directory unless given one (``make demo``
keeps it in ./demo-data for the CLI, REST and MCP walkthrough in README.md).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import memstore
from memstore import FactPublic, RejectionPublic, Store

FACTS: list[dict[str, Any]] = [
    {
        "statement": "Alice works at Acme as a data engineer.",
        "members": [("Alice", "person", "employee"), ("Acme", "org", "employer")],
        "relation": "works_at",
        "evidence": ["Alice: I work at Acme as a data engineer, since March."],
        "citations": [{"evidence": 0, "quote": "I work at Acme as a data engineer"}],
    },
    {
        "statement": "Alice is allergic to peanuts.",
        "members": [("Alice", "person", "patient"), ("peanuts", "food", "allergen")],
        "relation": "allergic_to",
        "evidence": ["Alice: just so you know, I'm allergic to peanuts."],
    },
    {
        "statement": "Bob, Alice and Carol planned the Q3 launch.",
        "members": [
            ("Bob", "person", "organizer"),
            ("alice", "person", "participant"),
            ("Carol", "person", "participant"),
            ("Q3 launch", "project", "topic"),
        ],
        "relation": "planned",
        "evidence": ["Meeting notes: Bob, Alice and Carol planned the Q3 launch together."],
    },
    {
        "statement": "Acme is headquartered in Berlin.",
        "members": [("ACME", "org", "company"), ("Berlin", "place", "city")],
        "relation": "headquartered_in",
        "evidence": ["Company register, 2023: Acme GmbH is headquartered in Berlin, Torstrasse 1."],
    },
    {
        # Not what Alice said, and the checks cannot prove it false: the gate holds it
        # (stored unverified, never shown as verified) and says why.
        "statement": "Alice is allergic to shellfish.",
        "members": [("Alice", "person", "patient"), ("shellfish", "food", "allergen")],
        "relation": "allergic_to",
        "evidence": ["Alice: just so you know, I'm allergic to peanuts."],
    },
    {
        # The evidence says otherwise: the gate refuses it and the audit log keeps it.
        "statement": "Alice has worked at Acme since June.",
        "members": [("Alice", "person", "employee"), ("Acme", "org", "employer")],
        "relation": "works_at",
        "evidence": ["Alice: I work at Acme as a data engineer, since March."],
    },
]

CORRECTION: dict[str, Any] = {
    "statement": "Acme is headquartered in Munich.",
    "members": [("Acme", "org", "company"), ("Munich", "place", "city")],
    "relation": "headquartered_in",
    "evidence": ["Press release, 2025: Acme has moved its headquarters to Munich."],
}


NAMESPACE = "user:alice"

PROFILE_V1 = "# Alice\n\nAlice lives in Paris and works as a data engineer at Acme.\n"
PROFILE_V2 = "# Alice\n\nAlice moved to Berlin in May; she rents a flat in Kreuzberg.\n"


def _members(fact: FactPublic) -> str:
    return ", ".join(f"{m.name} ({m.role})" for m in fact.members)


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _facts_table(title: str, facts: Sequence[FactPublic]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("id", style="dim")
    table.add_column("statement")
    table.add_column("members")
    table.add_column("status")
    table.add_column("verdict")
    table.add_column("confidence", justify="right")
    for f in facts:
        table.add_row(
            f.id[:8], f.statement, _members(f), f.status, f.verdict, _number(f.confidence)
        )
    return table


def _reasons_table(
    title: str, rows: Sequence[FactPublic] | Sequence[RejectionPublic], style: str
) -> Table:
    """Held facts or rejections: the statement, the reason in words, then the numbers."""
    table = Table(title=title, title_justify="left")
    table.add_column("id", style="dim")
    table.add_column("statement")
    table.add_column("why", style=style)
    for column in ("p1", "p0"):
        table.add_column(column, justify="right")
    for r in rows:
        why = r.status_reason if isinstance(r, FactPublic) else r.reason
        table.add_row(r.id[:8], r.statement, why or r.verdict, _number(r.p1), _number(r.p0))
    return table


def run(store: Store, console: Console) -> None:
    console.print(f"[bold]memstore demo[/] — {store.url}, namespace [cyan]{store.namespace}[/]\n")
    with console.status("Checking the facts against their evidence (embedded verifier)..."):
        results = store.add_facts(FACTS)
    written = [r for r in results if isinstance(r, FactPublic)]
    verified = [f for f in written if f.status == "verified"]
    held = [f for f in written if f.status != "verified"]
    rejected = [r for r in results if isinstance(r, RejectionPublic)]
    console.print(_facts_table("1. Facts the gate verified (hyperedges over entities)", verified))
    graph = store.graph  # built from SQL on each access
    console.print(
        "   'Alice', 'alice' and 'ACME'/'Acme' resolved to one entity each: "
        f"{len(list(graph.entities()))} entities, {len(graph)} facts in the graph.\n"
    )
    console.print(_reasons_table("   Held: stored unverified, read as such", held, "yellow"))
    console.print(_reasons_table("   Refused, kept in the audit log only", rejected, "red"))
    console.print(
        f"   store.rejections() lists them; the audit chain verifies: "
        f"{store.verify_audit_chain().ok}\n"
    )

    hood = store.neighborhood("Alice", hops=2)
    table = Table(title="2. Around Alice (2 hops)", title_justify="left")
    table.add_column("entity")
    table.add_column("kind")
    table.add_column("hops", justify="right")
    for entity in hood.entities:
        table.add_row(entity.name, entity.kind, str(hood.distance[entity.id]))
    console.print(table)
    console.print(f"   reached through {len(hood.facts)} facts\n")

    old = next(f for f in written if f.relation == "headquartered_in")
    new = store.supersede(old.id, **CORRECTION)
    console.print(f"3. Correction: [red]{old.statement}[/] -> [green]{new.statement}[/]\n")
    table = Table(title="4. History of the headquarters fact", title_justify="left")
    for column in ("id", "statement", "status", "recorded", "superseded"):
        table.add_column(column)
    for version in store.history(old.id):
        superseded = (
            version.superseded_at.isoformat(timespec="seconds") if version.superseded_at else ""
        )
        table.add_row(
            version.id[:8],
            version.statement,
            version.status,
            version.recorded_at.isoformat(timespec="seconds"),
            superseded,
        )
    console.print(table)
    console.print()
    console.print(_facts_table("5. What memory says about Acme now", store.facts_about("Acme")))
    console.print()
    _reverify(store, console)
    _search(store, console)
    next_steps(store.data_dir or store.url, console)


def next_steps(where: object, console: Console) -> None:
    """What to run next, each command on one line whatever the terminal's width (a
    terminal may fold a long line on screen, but a copy of it stays one command)."""
    console.print(
        f"\nThe store stays in {where}. Next, from a shell (README.md, 'After make demo'):\n"
        f"  . .venv/bin/activate && export MEMSTORE_URL={where} MEMSTORE_NAMESPACE={NAMESPACE}\n"
        '  memstore stats; memstore audit; memstore search "what is Alice allergic to?"',
        soft_wrap=True,
    )


def _search(store: Store, console: Console) -> None:
    """Recall by meaning and by keyword over what the gate admitted."""
    table = Table(title="7. Search (meaning + keywords, fused)", title_justify="left")
    for column in ("query", "best hit", "meaning rank", "keyword rank"):
        table.add_column(column)
    for query in ("Where does Alice work?", "headquarters"):
        hits = store.search(query, 3)
        best = hits[0] if hits else None
        table.add_row(
            query,
            best.fact.statement if best else "(nothing)",
            str(best.vector_rank or "-") if best else "",
            str(best.text_rank or "-") if best else "",
        )
    console.print(table)


def _reverify(store: Store, console: Console) -> None:
    """A fact grounded in a file; the file changes; re-verification makes the fact stale."""
    profile = Path(store.data_dir or ".") / "sources" / "alice-profile.md"
    profile.parent.mkdir(parents=True, exist_ok=True)
    profile.write_text(PROFILE_V1, encoding="utf-8")
    fact = store.add_fact(
        statement="Alice lives in Paris.",
        members=[("Alice", "person", "resident"), ("Paris", "place", "home")],
        relation="lives_in",
        evidence=[{"text": PROFILE_V1, "source": profile.resolve().as_uri()}],
        citations=[{"evidence": 0, "quote": "Alice lives in Paris"}],
    )
    profile.write_text(PROFILE_V2, encoding="utf-8")
    store.mark_due()  # normally 24 hours pass first
    report = store.reverify()
    table = Table(title="6. Re-verification after a source changed", title_justify="left")
    for column in ("statement", "status", "confidence", "why"):
        table.add_column(column)
    for check in report.checks:
        table.add_row(
            check.statement,
            check.status_before
            if not check.changed
            else f"{check.status_before} -> {check.status_after}",
            f"{check.confidence_before:.2f} -> {check.confidence:.2f}",
            check.reason or "still grounded",
        )
    console.print(table)
    still = [f.statement for f in store.facts_about("Alice")]
    console.print(
        f"   {report.checked} facts checked in {report.duration_s:.1f} s; "
        f"'{fact.statement}' left default reads: {fact.statement not in still}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    with (
        tempfile.TemporaryDirectory(prefix="memstore-demo-") as tmp,
        memstore.open(Path(args[0]) if args else Path(tmp), namespace=NAMESPACE) as store,
    ):
        run(store, Console())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
