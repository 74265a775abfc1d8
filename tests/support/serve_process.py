"""``memstore serve`` as a real process on a free port of 127.0.0.1, for the tests that
need one (a limit on its file descriptors, clients slow at the socket level)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

#: How long the server may take to start answering.
STARTUP_S = 180


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Served:
    """The running server: its port, its process and the file it logs to."""

    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def memstore_serve(
    where: Path, settings: dict[str, str], preexec_fn: Callable[[], object] | None = None
) -> Iterator[Served]:
    """Run ``memstore serve`` with only ``settings`` of the ``MEMSTORE_*`` variables,
    logging to ``where/server.log`` (``preexec_fn`` runs in the child before it starts);
    yield it once ``/health`` answers 200, and stop it afterwards."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env.update(settings)
    port = free_port()
    command = [sys.executable, "-m", "memstore.cli", "serve", "--port", str(port)]
    log = where / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=preexec_fn
        )
    served = Served(port, proc, log)
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            try:
                if httpx.get(served.base_url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        yield served
    finally:
        proc.terminate()
        proc.wait(timeout=60)
