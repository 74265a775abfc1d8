"""Where the CLI writes: stdout and stderr consoles, the exit codes, and ``fail``.

Messages (errors, notes, one-line results) are never wrapped at the terminal's
width, so scripts and tests see them whole; tables still fit the terminal.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, NoReturn

import typer
from rich.console import Console


class Exit(IntEnum):
    """What the process's exit status means."""

    OK = 0
    INTERNAL = 1
    BAD_INPUT = 2
    REJECTED = 3
    UNCHECKED = 4
    DRIFT = 5


class MessageConsole(Console):
    """A rich Console that never wraps a message (a plain string) at the terminal's
    width; other renderables (tables) still fit the terminal."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if "width" not in options:
            # Rich reads COLUMNS once, when the console is made: a console made at
            # import would keep the width of whatever imported it first for every later
            # command in the process (tests, a host running commands in process). Read
            # at each print instead, from COLUMNS or the terminal.
            self._width = None

    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        if soft_wrap is None and objects and all(isinstance(o, str) for o in objects):
            soft_wrap = True
        super().print(*objects, soft_wrap=soft_wrap, **options)


out = MessageConsole()
err = MessageConsole(stderr=True)


def fail(message: str, code: Exit = Exit.INTERNAL, then: str | None = None) -> NoReturn:
    """Print ``error: message`` (and what to do ``next``) to stderr and exit with ``code``."""
    err.print(f"[red]error:[/red] {message}")
    if then:
        err.print(f"  next: {then}")
    raise typer.Exit(int(code))
