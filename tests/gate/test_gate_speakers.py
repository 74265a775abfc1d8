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


def test_we_is_the_speakers_organisation_where_two_organisations_talk() -> None:
    backend = ScriptedBackend.fixed(0.1, 0.9)
    turns = [
        "Greg: Hi Lena. I'm Greg from CloudNine.",
        "Lena: Hi Greg. I'm the CTO at Brightwave.",
        "Lena: One correction: our Datadog contract ends in May.",
    ]
    cited = turns[2].index("our")
    Gate(backend).check(
        "Brightwave's Datadog contract ends in May.", turns, [Citation("3", cited, cited + 5)]
    )
    p1 = next(context for _, context in backend.batches[-1])
    assert "Lena: One correction: Brightwave's Datadog contract ends in May." in p1


def test_we_stays_as_said_without_two_organisations() -> None:
    backend = ScriptedBackend.fixed(0.1, 0.9)
    turns = ["Lena: I'm the CTO at Brightwave.", "Lena: We went hiking on Sunday."]
    cited = turns[1].index("We")
    Gate(backend).check("Lena went hiking on Sunday.", turns, [Citation("2", cited, cited + 2)])
    p1 = next(context for _, context in backend.batches[-1])
    assert "Lena: We went hiking on Sunday." in p1
