"""A worker host for the scale-out tests: run in its own working directory, it shares
nothing with the other workers but PostgreSQL and the object store, and reads where
they are from the environment (``MEMSTORE_STORE__*``, through ``memstore.load_settings``).

``python tests/support/scale_out_worker.py FIRST COUNT ACKED [GATE]`` writes the facts
``workers.fact(n)`` for n in FIRST .. FIRST + COUNT - 1, one call each; searches for
each right after writing it (a worker must find its own write at once); re-verifies
due facts after every ``REVERIFY_EVERY`` facts; appends each acknowledged fact to
ACKED (on disk before the next call) and prints its counts as JSON.

GATE ``scripted`` (the default) grounds every claim (``workers.scripted_gate``);
``settings`` takes the gate from the settings' ``hallucination`` block
(``MEMSTORE_HALLUCINATION__*``), e.g. the ``openai`` backend on a shared verifier
server. Then a fact the gate rejects is appended as ``rejected N`` and counted, and so
is a stored fact the verifier gave no verdict on (timeout or error: stored ``pending``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from workers import NS, Acks, HashedWords, fact, scripted_gate

import memstore
from memstore import ErrFactNotGrounded
from memstore.write.hook import UNVERIFIED_VERDICTS

#: Facts asked for between two re-verification runs of a worker.
REVERIFY_EVERY = 5
#: Where a worker's gate comes from (its GATE argument).
GATES = ("scripted", "settings")


def main(first: int, count: int, acked: Path, gate: str = "scripted") -> dict[str, int]:
    if gate not in GATES:
        raise SystemExit(f"GATE must be one of {', '.join(GATES)}, not {gate!r}")
    acks = Acks(acked)
    done = {"stored": 0, "found at once": 0, "re-verified": 0}
    if gate == "settings":
        done |= {"rejected": 0, "not verified": 0}
    options = {"gate": scripted_gate()} if gate == "scripted" else {}
    settings = memstore.load_settings()
    with settings.open(NS, embedder=HashedWords(), **options) as store:
        for n in range(first, first + count):
            try:
                stored = store.add_fact(fact(n))
            except ErrFactNotGrounded:
                if gate == "scripted":
                    raise
                acks.write(f"rejected {n}")
                done["rejected"] += 1
            else:
                acks.write(f"fact {n} {stored.id}")
                done["stored"] += 1
                if stored.verdict in UNVERIFIED_VERDICTS:
                    done["not verified"] += 1
                hits = store.search(stored.statement, 10, statuses=[stored.status])
                done["found at once"] += stored.id in {h.fact.id for h in hits}
            if (n - first + 1) % REVERIFY_EVERY == 0:
                store.mark_due()
                done["re-verified"] += store.reverify(limit=10, batch=5).checked
    return done


if __name__ == "__main__":
    arguments = sys.argv[1:]
    done = main(int(arguments[0]), int(arguments[1]), Path(arguments[2]), *arguments[3:4])
    print(json.dumps(done), flush=True)
