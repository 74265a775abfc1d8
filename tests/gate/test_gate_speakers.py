"""The gate reads each turn's first person as its speaker, for p1 and p0 alike."""

from __future__ import annotations

from gate import Citation, Gate, ScriptedBackend
from gate.evidence import REMOVED

SAID = "Maya: I've been vegetarian for ten years. Tom: ok."


def contexts(gate: Gate, backend: ScriptedBackend) -> list[str]:
    cited = SAID.index("I've")
    gate.check("Maya has been vegetarian for a decade.", [SAID], [Citation("1", cited, cited + 4)])
    return [context for _, context in backend.batches[-1]]


def test_the_verifier_reads_the_speaker_not_i() -> None:
    backend = ScriptedBackend.fixed(0.1, 0.9)
    p1, p0 = contexts(Gate(backend), backend)
    assert "Maya: Maya has been vegetarian for ten years." in p1
    assert f"Maya: {REMOVED}" in p0 and "I've" not in p0  # scrubbed where it was written


def test_speakers_false_reads_the_evidence_as_written() -> None:
    backend = ScriptedBackend.fixed(0.1, 0.9)
    p1, _ = contexts(Gate(backend, speakers=False), backend)
    assert "Maya: I've been vegetarian for ten years." in p1
