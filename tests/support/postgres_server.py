"""A real PostgreSQL server for the tests: initdb in a temporary directory, 127.0.0.1 only.

Uses the installed server binaries (Debian's ``postgresql`` package, which
``make test`` installs when missing). PostgreSQL refuses to run as root, so under
root the server runs as ``nobody`` (via ``runuser``).
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg


def find_bindir() -> Path | None:
    """The newest installed server's bin directory, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version)
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).resolve().parent if pg_ctl else None


def _version(path: str) -> int:
    digits = Path(path).parent.parent.name
    return int(digits) if digits.isdigit() else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """Start with ``start()``, stop with ``stop()``; ``new_database()`` gives a fresh URL."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="memstore-pg-"))
        self.data = self.root / "data"
        self._as_root = os.geteuid() == 0
        self._names = itertools.count()

    def _run(self, *args: str) -> None:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self._as_root:
            command = ["runuser", "-u", "nobody", "--", *command]
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> PostgresServer:
        if self._as_root:
            shutil.chown(self.root, "nobody")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"),
                  "-w", "start")  # fmt: skip
        return self

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """An empty database of its own, as a SQLAlchemy URL."""
        name = f"t{next(self._names)}"
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)
