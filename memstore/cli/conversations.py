"""``remember-conversation``: facts extracted from a conversation, each gated against
its turn, and what became of every one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from memstore.cli.console import Exit, err, fail, out
from memstore.cli.context import open_store, settings
from memstore.cli.parsing import (
    JsonOption,
    MetadataOption,
    NamespaceOption,
    StoreOption,
    read_messages,
)
from memstore.cli.program import command
from memstore.cli.render import fitted, num, to_json
from memstore.errors import InvalidInput

if TYPE_CHECKING:
    from memstore.conversations.conversation import ConversationReport

#: How each outcome is shown in the table.
_SHOWN = {
    "stored": "stored",
    "duplicate": "already remembered",
    "superseded": "stored, superseded",
    "conflict": "stored, conflicts",
    "refused": "[red]refused[/red]",
}


@command("remember-conversation")
def remember_conversation(
    ctx: typer.Context,
    file: Annotated[
        str,
        typer.Argument(
            metavar="[FILE|-]",
            help="A JSON list of messages, or JSON lines (one message a line); '-': stdin.",
        ),
    ] = "-",
    on_conflict: Annotated[
        str | None,
        typer.Option(
            "--on-conflict",
            help="supersede or flag a remembered fact a new one contradicts "
            "[default: conversations.on_conflict].",
            show_default=False,
        ),
    ] = None,
    context_turns: Annotated[
        int | None,
        typer.Option(
            "--context-turns",
            min=0,
            help="Earlier messages the gate reads with each fact's own "
            "[default: conversations.context_turns].",
            show_default=False,
        ),
    ] = None,
    metadata: MetadataOption = None,
    user_name: Annotated[
        str | None,
        typer.Option(
            "--user-name",
            help="Who the user turns without a name are "
            "[default: conversations.user_name, else 'the user'].",
            show_default=False,
        ),
    ] = None,
    store: StoreOption = None,
    namespace: NamespaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remember what a conversation states: extract facts from its messages (the
    extractor of the conversations settings), gate each against the message it came
    from, and supersede what they replace; --metadata goes on every fact written. Exit 0
    once every fact was decided, even if some were refused (see them: memstore audit);
    2 for bad input.

    A message: {"role": "user", "name": "Alice", "content": "I'm allergic to peanuts."}
    """
    from memstore.conversations.conversation import remember_as_configured
    from memstore.conversations.llm import ExtractorError
    from memstore.fronts import metadata_items

    messages = read_messages(file)
    items = metadata_items(metadata)
    if on_conflict not in (None, "supersede", "flag"):
        raise InvalidInput("on_conflict", f"{on_conflict!r} is not supersede or flag")
    chosen = settings(ctx, store, namespace).conversations
    with open_store(ctx, store, namespace, create=True) as opened:
        try:
            with err.status(f"extracting and checking facts from {len(messages)} messages..."):
                report = remember_as_configured(
                    opened,
                    messages,
                    chosen,
                    on_conflict=on_conflict,  # type: ignore[arg-type]
                    context_turns=context_turns,
                    metadata=items,
                    user_name=user_name,
                )
        except ExtractorError as exc:
            fail(
                f"the fact extractor failed; nothing was stored: {exc}",
                Exit.INTERNAL,
                "check conversations.llm (memstore config show) and that its endpoint answers",
            )
    if as_json:
        typer.echo(to_json(report))
    else:
        print_report(report)


def print_report(report: ConversationReport) -> None:
    """A table of what became of each extracted fact, and a one-line summary."""
    table = Table("#", "outcome", "statement", "verdict", "p1", "replaced", "id")
    for n, c in enumerate(report.candidates, 1):
        found = c.fact or c.rejection
        table.add_row(
            str(n),
            _SHOWN.get(c.outcome, c.outcome),
            c.statement,
            "" if found is None else found.verdict,
            "" if found is None else num(found.p1),
            ", ".join(c.replaced or c.conflicts),
            "" if found is None else found.id,
        )
    if report.candidates:
        out.print(fitted(table))
    refused = len(report.refused)
    out.print(
        f"{len(report.candidates)} fact(s) found in {report.messages} message(s) by the "
        f"{report.extractor} extractor: {len(report.candidates) - refused} remembered, "
        f"{refused} refused" + ("; see why: memstore audit" if refused else "")
    )
