"""A worker host for the scale-out tests: run in its own working directory, it shares
nothing with the other workers but PostgreSQL and the object store, and reads where
they are from the environment (``MEMSTORE_STORE__*``, through ``memstore.load_settings``).

``python tests/support/scale_out_worker.py FIRST COUNT ACKED`` writes the facts
``workers.fact(n)`` for n in FIRST .. FIRST + COUNT - 1, one call each; searches for
each right after writing it (a worker must find its own write at once); re-verifies
due facts after every ``REVERIFY_EVERY`` writes; appends each acknowledged fact to
ACKED (on disk before the next call) and prints its counts as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from workers import NS, Acks, HashedWords, fact, scripted_gate

import memstore

#: Writes between two re-verification runs of a worker.
REVERIFY_EVERY = 5


def main(first: int, count: int, acked: Path) -> dict[str, int]:
    acks = Acks(acked)
    done = {"stored": 0, "found at once": 0, "re-verified": 0}
    settings = memstore.load_settings()
    with settings.open(NS, gate=scripted_gate(), embedder=HashedWords()) as store:
        for n in range(first, first + count):
            stored = store.add_fact(fact(n))
            acks.write(f"fact {n} {stored.id}")
            done["stored"] += 1
            hits = store.search(stored.statement, 10)
            done["found at once"] += stored.id in {h.fact.id for h in hits}
            if done["stored"] % REVERIFY_EVERY == 0:
                store.mark_due()
                done["re-verified"] += store.reverify(limit=10, batch=5).checked
    return done


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))), flush=True)
