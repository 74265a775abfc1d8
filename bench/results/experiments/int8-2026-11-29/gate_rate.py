"""The embedded gate's own rate on the store bench's gated workload, float32 and int8.

    python bench/results/experiments/int8-2026-11-29/gate_rate.py

300 facts of ``synthetic.World(facts=300, seed=8)``, a fifth given another fact's
evidence (as ``bench/store_scale.py``'s gated ingest does), checked by a ``Gate`` over
the embedded backend in batches of 100 with its result cache off and the encoder's
recent vectors forgotten first: the verifier alone, no store. Twice per precision.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from measure import forget_embeddings
from synthetic import World

from gate import Gate, create_backend
from gate.engine import Check

items = list(World(facts=300, seed=8).items())
rng = random.Random(8)
for i in range(len(items)):
    if rng.random() < 0.2:
        items[i] = {**items[i], "evidence": items[(i + 50) % len(items)]["evidence"]}
checks = [Check.of(item["statement"], list(item["evidence"])) for item in items]
gates = {
    p: Gate(create_backend("embedded", precision=p), cache_size=0) for p in ("float32", "int8")
}
for gate in gates.values():
    gate.check("Lena lives in Northhaven.", ["Lena: I live in Northhaven."])  # loaded
for _round in range(2):
    for precision, gate in gates.items():
        forget_embeddings()
        began = time.perf_counter()
        for start in range(0, len(checks), 100):
            gate.check_many(checks[start : start + 100])
        took = time.perf_counter() - began
        print(
            f"{precision}: {len(checks)} claims in {took:.2f} s, {len(checks) / took:.0f} claims/s"
        )
