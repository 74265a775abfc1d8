"""Re-verification throughput on the embedded verifier, SQLite, facts grounded in files.

    python bench/reverify.py [--files 100] [--per-file 10] [--batch 64]

Writes ``files x per-file`` facts (one cited line each) through the gate, then
times runs over all of them: nothing changed (with the gate's result cache cold,
as for a daily worker, and warm); half the files reformatted (every citation
re-anchored) and a quarter with one line rewritten (those facts go stale); and
every file deleted. Results go to ``bench/results/reverify.json``
with the machine, the date, the commit and the command.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import RESULTS, forget_embeddings, provenance, save

import memstore
from gate import Gate

PEOPLE = "Alice Bob Carol Dmitri Emeka Farah Goran Hana Ivan Julia Kenji Lena".split()
CITIES = "Paris Berlin Lagos Osaka Lima Oslo Quito Rome Seoul Tunis Vienna Warsaw".split()


def line(rng: random.Random) -> str:
    return f"{rng.choice(PEOPLE)} moved to {rng.choice(CITIES)} in {rng.randint(1990, 2025)}."


def run(store: memstore.Store, batch: int, gate: Gate | None = None) -> dict[str, Any]:
    store.mark_due()
    report = store.reverify(batch=batch, limit=100_000, gate=gate)
    return {
        **{k: v for k, v in report.summary().items() if k != "duration_s"},
        "seconds": round(report.duration_s, 2),
        "facts_per_second": round(report.checked / report.duration_s, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--per-file", type=int, default=10)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    rng = random.Random(7)
    result: dict[str, Any] = {
        **provenance("reverify"),
        "facts": args.files * args.per_file,
        "batch": args.batch,
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = []
        for i in range(args.files):
            lines = [line(rng) for _ in range(args.per_file)]
            path = root / "sources" / f"note-{i:04d}.md"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"# Note {i}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
            files.append((path, lines))
        with memstore.open(root / "data", "bench") as store:
            started = time.perf_counter()
            facts = [
                {
                    "statement": text,
                    "members": [text.split()[0], text.split()[3].rstrip(".")],
                    "evidence": [{"text": path.read_text(), "source": path.as_uri()}],
                    "citations": [{"evidence": 0, "quote": text}],
                }
                for path, lines in files
                for text in lines
            ]
            written = []
            for i in range(0, len(facts), 500):
                written.extend(store.add_facts(facts[i : i + 500]))
            result["write_seconds_incl_model_load"] = round(time.perf_counter() - started, 2)
            result["stored_verified"] = sum(1 for w in written if w.status == "verified")

            # A worker re-checks a day later: the gate's 1-hour result cache is cold, and
            # the encoder no longer holds the texts it embedded.
            assert isinstance(store.hook, memstore.GateHook)
            cold = Gate(store.hook.gate.backend, cache_size=0)
            forget_embeddings()
            result["unchanged_cold_cache"] = run(store, args.batch, cold)
            result["unchanged_warm_cache"] = run(store, args.batch)
            for k, (path, lines) in enumerate(files):
                if k % 2 == 0:  # reformatted: same words, new layout
                    body = "\n\n".join("  " + t.replace(" ", "  ") for t in lines)
                    path.write_text(f"Note {k}\n=====\n\n{body}\n", encoding="utf-8")
                elif k % 4 == 1:  # one line now says something else
                    changed = [*lines[:-1], "The meeting moved to Thursday."]
                    path.write_text(f"# Note {k}\n\n" + "\n".join(changed) + "\n")
            forget_embeddings()
            result["changed"] = run(store, args.batch, cold)
            for path, _ in files:
                path.unlink()
            forget_embeddings()
            result["deleted"] = run(store, args.batch, cold)
    save(result, RESULTS / "reverify.json")


if __name__ == "__main__":
    main()
