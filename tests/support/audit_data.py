"""A namespace for the audit page's tests, and the server that shows it: rejections of
four verdicts, facts re-verification made stale and contradicted (real files as their
sources), all on real SQLite, decided by a rule standing in for the verifier."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rest_server import KEYS

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED
from memstore import FactPublic, RejectionPublic, Store
from memstore.config import Settings, load_settings

NS = "user:alice"
PARIS = "# Alice\n\nAlice lives in Paris. Alice works at Acme.\n"
BERLIN = "# Alice\n\nAlice works at Initech in Berlin.\n"
DENIAL = "# Alice\n\nAlice denies she works at Acme; that was never true.\n"


def reads(claim: str, context: str) -> float:
    """The verifier's rule: low without the cited spans, very low where the context
    denies, high where it states the claim ("maybe": only somewhat), else lowish."""
    said = " ".join(context.lower().split())
    if REMOVED in context:
        return 0.05
    if "denies" in said:
        return 0.02
    if claim.lower().rstrip(".") in said:
        return 0.6 if "maybe" in said else 0.97
    return 0.3


def page_settings(data: Path) -> Settings:
    """The test server's settings: the shared API keys, no search index, no model."""
    return load_settings(
        store={"url": str(data), "index": False},
        server={"api_keys": KEYS},
        hallucination={"enabled": False},
    )


def open_store(data: Path) -> Store:
    """The namespace's store, gated by ``reads``."""
    gate = Gate(ScriptedBackend(reads, deterministic=False), REFUSE_UNGROUNDED, deadline=30)
    return memstore.open(data, NS, gate=gate, index=False)


@dataclass
class Audited:
    """What ``fill`` wrote: the rejections by name, the moved facts, and a time between
    the older and the newer rejections."""

    rejections: dict[str, RejectionPublic]
    stale: FactPublic
    contradicted: FactPublic
    middle: datetime


MEMBERS = [("Alice", "person", "subject"), ("Acme", "company", "employer")]


def refuse(store: Store, statement: str, evidence: list[str], **fields: object) -> RejectionPublic:
    """Write a fact the rule refuses; its rejection."""
    with_evidence = [{"text": t} for t in evidence]
    try:
        store.add_fact(statement=statement, members=MEMBERS, evidence=with_evidence, **fields)
    except memstore.ErrFactNotGrounded as refused:
        return refused.rejection
    raise AssertionError(f"the gate stored {statement!r}")


def fill(data: Path, files: Path) -> Audited:
    """Write the namespace's rejections and make two facts move on re-verification."""
    files.mkdir(parents=True, exist_ok=True)
    with open_store(data) as store:
        made = {
            "unsupported": refuse(store, "Alice works at Globex.", [PARIS]),
            "contradicted": refuse(store, "Alice works at Acme.", [DENIAL]),
        }
        middle = datetime.now().astimezone()
        made["insufficient"] = refuse(
            store,
            "Alice is a data engineer.",
            ["Maybe: Alice is a data engineer, or so she said."],
            citations=[{"evidence": 0, "quote": "Alice is a data engineer"}],
            confidence=0.99,
        )
        # Cites evidence that exists nowhere: refused before the gate, with no evidence.
        report = store.remember(
            "Alice likes =HYPERLINK(tea) [ev:5f2b0c1d9e8a7b6c].", [], members=MEMBERS
        )
        made["unknown_citation"] = report.claims[0].rejection
        moved = {}
        for name, claim, later in (
            ("stale", "Alice lives in Paris.", BERLIN),
            ("contradicted", "Alice works at Acme.", DENIAL),
        ):
            path = files / f"{name}.md"
            path.write_text(PARIS, encoding="utf-8")
            moved[name] = store.add_fact(
                statement=claim,
                members=[("Alice", "person", "subject")],
                evidence=[{"text": PARIS, "source": path.as_uri()}],
                citations=[{"evidence": 0, "quote": PARIS.split("\n")[2]}],
            )
            path.write_text(later, encoding="utf-8")
        store.mark_due()
        store.reverify()
        stale, contradicted = (store.get_fact(moved[n].id) for n in ("stale", "contradicted"))
    return Audited(made, stale, contradicted, middle)
