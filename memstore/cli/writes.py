"""Commands that write or check: ``add``, ``verify``, ``retract`` and ``erase``."""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from gate.budget import DEFAULT_STATED_CONFIDENCE
from memstore.cli.console import Exit, err, fail, out
from memstore.cli.context import open_store, settings
from memstore.cli.parsing import (
    FactIdArgument,
    JsonOption,
    MetadataOption,
    NamespaceOption,
    StoreOption,
    fact_from_options,
    read_facts,
    when,
)
from memstore.cli.program import command
from memstore.cli.render import fitted, num, to_json
from memstore.errors import ErrFactNotGrounded, InvalidInput

if TYPE_CHECKING:  # imported when a command runs: ``--help`` loads no store or gate
    from gate.verdict import Verdict
    from memstore.config import Settings
    from memstore.schemas import FactPublic


@command()
def add(
    ctx: typer.Context,
    statement: Annotated[
        str | None, typer.Argument(help="The fact, in one sentence.", show_default=False)
    ] = None,
    member: Annotated[
        list[str] | None,
        typer.Option(
            "--member", "-m", help="An entity the fact is about: NAME[:KIND[:ROLE]] (repeat)."
        ),
    ] = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option("--evidence", "-e", help="Evidence text ('-' reads stdin) (repeat)."),
    ] = None,
    evidence_file: Annotated[
        list[Path] | None,
        typer.Option(
            "--evidence-file",
            help="Evidence from a file, kept as its source so re-verification re-reads it.",
        ),
    ] = None,
    evidence_ids: Annotated[
        list[str] | None,
        typer.Option(
            "--evidence-id",
            help="The id of stored evidence that states it, in this namespace (repeat); "
            "`memstore get FACT_ID` shows the evidence a fact cites.",
            show_default=False,
        ),
    ] = None,
    quote: Annotated[
        list[str] | None,
        typer.Option("--quote", "-q", help="The words in the evidence that state it (repeat)."),
    ] = None,
    relation: Annotated[
        str | None, typer.Option("--relation", "-r", help="What kind of fact (works_at, ...).")
    ] = None,
    valid_from: Annotated[
        str | None,
        typer.Option(
            help="When it began to hold in the world: ISO 8601, or a span back like 7d "
            "[default: unknown].",
            show_default=False,
        ),
    ] = None,
    valid_to: Annotated[
        str | None,
        typer.Option(
            help="When it stopped holding (ISO 8601 or 7d) [default: it still holds].",
            show_default=False,
        ),
    ] = None,
    confidence: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="How sure the writer is.")
    ] = DEFAULT_STATED_CONFIDENCE,
    file: Annotated[
        str | None,
        typer.Option(
            "--file", "-f", help="JSON or YAML: one fact or a list of facts ('-': stdin)."
        ),
    ] = None,
    ungated: Annotated[
        bool, typer.Option("--ungated", help="Store without the gate (recorded as ungated).")
    ] = False,
    metadata: MetadataOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remember a fact if its evidence grounds it; exit 3 if the gate rejects it.
    Its evidence: texts (-e), files (--evidence-file) or stored evidence (--evidence-id).
    --metadata adds the caller's metadata (not evidence: the gate never reads it).

    Example: memstore add "Alice is allergic to peanuts." -m Alice:person:patient
    -m peanuts:food:allergen -e "Alice: I'm allergic to peanuts."
    """
    from memstore.fronts import metadata_items
    from memstore.schemas import FactPublic, RejectionPublic

    given = (member, evidence, evidence_file, evidence_ids, quote, relation, metadata)
    if file is not None:
        if statement or any(given) or valid_from or valid_to:
            raise InvalidInput("file", "give a --file or a statement with options, not both")
        items = read_facts(file)
    else:
        if statement is None:
            raise InvalidInput("statement", "missing; give it as an argument, or use --file")
        items = [fact_from_options(statement, member, evidence, evidence_file, quote)]
        items[0].update(
            relation=relation,
            confidence=confidence,
            metadata=metadata_items(metadata) or {},
            evidence_ids=evidence_ids or [],
            valid_from=when("valid_from", valid_from),
            valid_to=when("valid_to", valid_to),
        )
    with open_store(ctx, store, namespace, create=True) as opened:
        if file is None:
            try:
                stored = opened.add_fact(items[0], ungated=ungated)
            except ErrFactNotGrounded as exc:
                if as_json:
                    typer.echo(to_json({"stored": False, "rejection": exc.rejection}))
                    raise typer.Exit(Exit.REJECTED) from None
                raise
            if as_json:
                typer.echo(to_json({"stored": True, "fact": stored}))
            else:
                print_stored(stored)
            return
        with err.status(f"checking {len(items)} facts against their evidence..."):
            results = opened.add_facts(items, ungated=ungated)
    if as_json:
        typer.echo(
            to_json(
                [
                    {"stored": True, "fact": r}
                    if isinstance(r, FactPublic)
                    else {"stored": False, "rejection": r}
                    for r in results
                ]
            )
        )
    else:
        table = Table("#", "result", "id", "statement", "verdict", "confidence")
        for n, r in enumerate(results, 1):
            kept = isinstance(r, FactPublic)
            table.add_row(
                str(n),
                "stored" if kept else "[red]rejected[/red]",
                r.id,
                r.statement,
                r.verdict,
                f"{r.confidence:.2f}" if isinstance(r, FactPublic) else "",
            )
        out.print(fitted(table))
    rejected = sum(1 for r in results if isinstance(r, RejectionPublic))
    if rejected:
        err.print(f"{rejected} of {len(results)} rejected; see why: memstore audit")
        raise typer.Exit(Exit.REJECTED)


@command()
def verify(
    ctx: typer.Context,
    claim: Annotated[str, typer.Argument(help="The claim to check.", show_default=False)],
    evidence: Annotated[
        list[str], typer.Option("--evidence", "-e", help="Evidence text ('-': stdin) (repeat).")
    ],
    confidence: Annotated[float, typer.Option(min=0.0, max=1.0)] = DEFAULT_STATED_CONFIDENCE,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check a claim against evidence with the gate, storing nothing; exit 3 if not grounded,
    4 if the verifier could not check it (timed out or failed)."""
    from memstore.write.hook import UNVERIFIED_VERDICTS  # the verifier did not answer

    texts = [sys.stdin.read() if text == "-" else text for text in evidence]
    verdict = check_claim(settings(ctx, store, namespace), claim, texts, confidence)
    unchecked = verdict.status in UNVERIFIED_VERDICTS
    if as_json:
        typer.echo(to_json(verdict))
    elif unchecked:
        out.print(f"not checked ({verdict.status.value}): {verdict.reason or 'no verdict'}")
        err.print("The verifier gave no verdict, so nothing was decided; try again later.")
    else:
        print_verdict(verdict)
    if unchecked:
        raise typer.Exit(Exit.UNCHECKED)
    if not verdict.accepted:
        raise typer.Exit(Exit.REJECTED)


@command()
def retract(
    ctx: typer.Context,
    fact_id: FactIdArgument,
    reason: Annotated[str, typer.Option("--reason", help="Why it is no longer memory.")],
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Retract a fact (a soft delete with a reason; its history stays)."""
    with open_store(ctx, store, namespace) as opened:
        fact = opened.retract(fact_id, reason)
    if as_json:
        typer.echo(to_json(fact))
    else:
        out.print(f"retracted {fact.id}: {fact.statement}")


@command()
def review(
    ctx: typer.Context,
    fact_id: FactIdArgument,
    decision: Annotated[
        str,
        typer.Argument(
            metavar="confirm|refuse",
            help="confirm: the fact becomes verified; refuse: it is retracted.",
            show_default=False,
        ),
    ],
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in the audit chain).")],
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Confirm or refuse a fact the gate held (stored unverified or pending); who decided
    (cli:<login>) and why go in the audit chain. List held facts with
    `memstore list --statuses unverified`."""
    with open_store(ctx, store, namespace) as opened:
        fact = opened.review(fact_id, decision, reason, by=who())
    if as_json:
        typer.echo(to_json(fact))
    else:
        out.print(f"{fact.status} {fact.id}: {fact.statement}")


@command()
def erase(
    ctx: typer.Context,
    target_id: Annotated[str, typer.Argument(metavar="ID", show_default=False)],
    reason: Annotated[
        str, typer.Option("--reason", help="Why it is erased (kept in the tombstone).")
    ],
    rejection: Annotated[
        bool, typer.Option("--rejection", help="ID is a rejection in the audit log.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Erase without asking.")] = False,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Erase a fact for good (every version, its history, the evidence nothing else
    cites, its search-index rows), or with --rejection a rejection of the audit log.
    Leaves a tombstone (ids and hashes, no content); cannot be undone."""
    with open_store(ctx, store, namespace) as opened:
        what = "rejection" if rejection else "fact"
        found = opened.get_rejection(target_id) if rejection else opened.get_fact(target_id)
        question = f"Erase {what} {found.id} ({found.statement!r}) for good? It cannot be undone"
        if not yes and not typer.confirm(question, default=False, err=True):
            fail("nothing was erased", Exit.INTERNAL, "pass --yes to erase without asking")
        if rejection:
            tombstone = opened.erase_rejection(target_id, reason, by=who())
        else:
            tombstone = opened.erase(target_id, reason, by=who())
    if as_json:
        typer.echo(to_json(tombstone))
        return
    versions = len(tombstone.fact_ids) or len(tombstone.rejection_ids)
    out.print(
        f"erased {what} {tombstone.target_id} ({versions} version(s), "
        f"{len(tombstone.evidence)} evidence row(s)); tombstone {tombstone.id}"
    )
    for kept in tombstone.kept_evidence_ids:
        out.print(f"kept evidence {kept}: another fact or rejection still cites it")


def check_claim(chosen: Settings, claim: str, texts: list[str], confidence: float) -> Verdict:
    """The gate's verdict on ``claim``, as a store of these settings would give it,
    without opening a store (``Store.verify_claim`` less the store)."""
    from gate import default_gate
    from memstore.limits import Limits
    from memstore.schemas import ClaimCheck

    try:
        check = ClaimCheck.model_validate(
            {"claim": claim, "evidence": texts, "confidence": confidence}
        )
    except ValidationError as exc:
        raise InvalidInput.from_validation(exc) from None
    evidence = [item.text for item in check.evidence]
    limits = Limits(chosen.store.max_claims, chosen.store.max_evidence_chars)
    limits.check_texts(evidence, "evidence")
    gate = chosen.gate() or default_gate()
    policy = chosen.hallucination.policy() if chosen.hallucination.enabled else None
    return gate.check(check.claim, evidence, confidence=check.confidence, policy=policy)


def who() -> str:
    """Who runs an erase or a review, for the audit log: ``cli:<login name>``."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no name for this uid (a container, say)
        return "cli"


def print_stored(fact: FactPublic) -> None:
    """What ``add`` stored (or found already remembered), and its near duplicates."""
    if fact.deduplicated:
        out.print(f"already remembered as {fact.id} (same statement and members); nothing added")
    else:
        out.print(
            f"stored {fact.id}: {fact.status}, confidence {fact.confidence:.2f} ({fact.verdict})"
        )
    for dup in fact.near_duplicates:
        out.print(f"  near duplicate of {dup.fact_id} ({dup.similarity:.2f}): {dup.statement}")


def print_verdict(verdict: Verdict) -> None:
    """The gate's outcome on a claim and why, in words, then its numbers."""
    out.print(f"{verdict.outcome}: {verdict.reason or 'the evidence states it'}")
    table = Table("verdict", "accepted", "p1", "p0", "gap (bits)", box=None)
    table.add_row(
        verdict.status.value,
        str(verdict.accepted),
        num(verdict.p1),
        num(verdict.p0),
        num(verdict.budget_gap),
    )
    out.print(table)
