"""llama-cpp-python's OpenAI-compatible server on 127.0.0.1, serving the SmolLM2 GGUF.

Shared by the tests that need a real server (``tests/`` modules import each other as
top-level modules): ``with llama_server(log_dir) as url: ...`` yields the ``/v1`` URL.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from gate.backends.hf_causal import smollm2_gguf

#: The alias the server answers to as ``model``.
MODEL = "smollm2"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_server(
    log_dir: Path, *, n_ctx: int = 2048, threads: int = 2, start_timeout: float = 120.0
) -> Iterator[str]:
    """Start the server, wait until ``/v1/models`` answers, yield its URL, stop it."""
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--model_alias", MODEL, "--n_threads", str(threads),
    ]  # fmt: skip
    log = log_dir / "server.log"
    url = f"http://127.0.0.1:{port}/v1"
    # a file, not a pipe: the server logs a lot while loading
    with log.open("wb") as log_file:
        proc = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + start_timeout
            while True:
                try:
                    if httpx.get(f"{url}/models", timeout=1.0).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"llama_cpp.server did not start: {tail}")
                time.sleep(0.25)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
