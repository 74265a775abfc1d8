"""The packaged MiniLM's embedding rate in float32 and int8, and how close their vectors are.

    python bench/results/experiments/int8-2026-11-29/embedding_rate.py

800 distinct statements and evidence texts of ``synthetic.World(facts=1200, seed=5)``,
embedded in turns of 16 (as the index writer and the verifier hand them over) and 100
of them one at a time, twice for each precision, the recent-vector cache off.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from synthetic import World

from gate.backends.embedded.backend import Encoder

items = list(World(facts=1200, seed=5).items())
statements = [item["statement"] for item in items]
evidence = [text for item in items for text in item["evidence"]]
texts = list(dict.fromkeys(statements + evidence))[:800]
encoders = {precision: Encoder(recent=0, precision=precision) for precision in ("float32", "int8")}
vectors = {}
for _round in range(2):
    for precision, encoder in encoders.items():
        encoder.encode(texts[:16])
        began = time.perf_counter()
        found = {}
        for start in range(0, len(texts), 16):
            found.update(encoder.encode(texts[start : start + 16]))
        rate = len(texts) / (time.perf_counter() - began)
        began = time.perf_counter()
        for text in texts[:100]:
            encoder.encode([text])
        one = (time.perf_counter() - began) / 100 * 1000
        vectors[precision] = found
        print(f"{precision}: {rate:.0f} texts/s in turns of 16; one text {one:.2f} ms")
cosine = np.array([float(vectors["int8"][t] @ vectors["float32"][t]) for t in texts])
print(f"cosine of int8 and float32 vectors: min {cosine.min():.4f} mean {cosine.mean():.4f}")
