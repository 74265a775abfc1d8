"""Child processes for the crash and soak tests, and what they share with the parent.

``python tests/support/workers.py OPERATION STORE INDEX ACKED START [SECONDS [THREADS]]`` opens
the store, prints ``ready`` and runs OPERATION until it is killed (or SECONDS pass; a
``soak`` then prints the calls it completed as JSON; ``add_one`` opens the store at
the wall-clock time SECONDS and adds one fact). Every write the store returns
from is appended to ACKED as one line, flushed and fsynced before the next call: what
the store acknowledged, for the parent to find after a SIGKILL.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED
from memstore import ErrFactNotGrounded, NotFound, Store

NS = "agents"
SHARED = "Shared context: every worker writes into one store."
BATCH = 10


class HashedWords:
    """A real (if crude) embedder: hashed bag of words. Stands for a user's own model."""

    name = "hashed-words-64"
    dimensions = 64

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                out[row, hashlib.sha256(word.encode()).digest()[0] % self.dimensions] += 1
        return out


def fact(n: int) -> dict[str, Any]:
    """The n-th fact: two members (shared by many facts) and two evidence texts, one of
    them shared by every fact."""
    return {
        "statement": f"Worker fact {n} links entity {n % 17} with topic {n % 5}.",
        "members": [f"entity {n % 17}", f"topic {n % 5}"],
        "evidence": [f"Log line {n}: entity {n % 17} met topic {n % 5}.", SHARED],
    }


def scripted_gate(seed: int | None = None) -> Gate:
    """A verifier that grounds every claim (seed None), or grounds each at random (a
    seed): re-verification then moves facts between verified and contradicted."""
    chance = random.Random(seed)
    lock = threading.Lock()

    def answer(claim: str, context: str) -> float:
        if REMOVED in context:
            return 0.02
        if seed is None:
            return 0.98
        with lock:
            return 0.98 if chance.random() < 0.5 else 0.01

    return Gate(ScriptedBackend(answer, deterministic=seed is None), REFUSE_UNGROUNDED)


def open_store(target: str | Path, index: str | Path, seed: int | None = None) -> Store:
    return memstore.open(target, NS, gate=scripted_gate(seed), index=index, embedder=HashedWords())


class Acks:
    """Lines appended to a file, each on disk before the call returns."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def write(self, *lines: str) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as file:
            file.write("".join(f"{line}\n" for line in lines))
            file.flush()
            os.fsync(file.fileno())


def read_acks(path: Path) -> list[str]:
    """Whole lines only: a line cut by a kill was never acknowledged."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return text.split("\n")[:-1]


def run(operation: str, store: Store, acks: Acks, start: int, until: float) -> None:
    n = start
    while time.monotonic() < until:
        if operation == "add_fact":
            try:
                acks.write(f"fact {n} {store.add_fact(fact(n)).id}")
            except ErrFactNotGrounded:
                acks.write(f"rejected {n}")
            n += 1
        elif operation == "add_facts":
            results = store.add_facts([fact(i) for i in range(n, n + BATCH)])
            acks.write(*(f"fact {n + i} {r.id}" for i, r in enumerate(results)))
            n += BATCH
        elif operation == "reindex":
            rebuilt = store.reindex()
            acks.write(f"reindex {rebuilt.facts}")
        elif operation == "reverify":
            store.mark_due()
            report = store.reverify(limit=100, batch=BATCH)
            acks.write(f"reverify {report.checked}")
        else:
            raise SystemExit(f"unknown operation {operation!r}")


def soak(store: Store, acks: Acks, start: int, until: float, threads: int) -> dict[str, int]:
    """``threads`` threads on one store until ``until``: one re-verifies, one reads, the
    rest write. Returns the calls each role completed; a thread's error is raised."""
    done: Counter[str] = Counter()
    lock = threading.Lock()

    def count(role: str, n: int = 1) -> None:
        with lock:
            done[role] += n

    def reverifier() -> None:
        while time.monotonic() < until:
            store.mark_due()
            count("facts re-verified", store.reverify(limit=20, batch=BATCH).checked)

    def reader() -> None:
        n = 0
        while time.monotonic() < until:
            store.search(f"Worker fact links entity {n % 17}", 5)
            with contextlib.suppress(NotFound):  # until a writer has created it
                store.facts_about(f"entity {n % 17}")
            store.stats()
            count("reads", 3)
            n += 1

    def writer(first: int) -> None:
        n = first
        while time.monotonic() < until:
            try:
                acks.write(f"fact {n} {store.add_fact(fact(n)).id}")
                count("facts stored")
            except ErrFactNotGrounded:
                acks.write(f"rejected {n}")
                count("facts rejected")
            n += 1

    roles = [reverifier, reader] + [
        partial(writer, start + i * 1_000_000) for i in range(max(threads - 2, 1))
    ]
    with ThreadPoolExecutor(len(roles)) as pool:
        for future in [pool.submit(role) for role in roles]:
            future.result()
    return dict(done)


def main(argv: list[str]) -> None:
    operation, target, index, acked, start = argv[:5]
    if operation == "add_one":  # at wall-clock time argv[5], open the store and add one fact
        time.sleep(max(0.0, float(argv[5]) - time.time()))
        with open_store(target, index) as store:
            Acks(acked).write(f"fact {start} {store.add_fact(fact(int(start))).id}")
        return
    seconds = float(argv[5]) if len(argv) > 5 else 3600.0
    seed = int(start) if operation in ("reverify", "soak") else None
    with open_store(target, index, seed) as store:
        print("ready", flush=True)
        until = time.monotonic() + seconds
        if operation == "soak":
            done = soak(store, Acks(acked), int(start), until, int(argv[6]))
            print(json.dumps(done), flush=True)
        else:
            run(operation, store, Acks(acked), int(start), until)


if __name__ == "__main__":
    main(sys.argv[1:])
