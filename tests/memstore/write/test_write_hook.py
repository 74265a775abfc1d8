"""The write hook: every write passes it; rejected facts become audit rows, never memory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
import sqlalchemy as sa
from db_rows import row_counts
from hooks import ScriptedHook, admit, refuse
from samples import ALLERGY, works_at
from samples import allergy as cited_allergy

import memstore
from memstore import Admission, Candidate, ErrFactNotGrounded, MemstoreError


def reject_shellfish(c: Candidate) -> Admission:
    if "shellfish" in c.statement:
        return refuse(p0=0.30, p1=0.10, backend="scripted", reason="evidence speaks of peanuts")
    return admit(
        confidence=0.8,
        p0=0.2,
        p1=0.9,
        required_bits=2.9,
        observed_bits=1.2,
        budget_gap=1.7,
        backend="scripted",
        latency_ms=3.0,
    )


def allergy(food: str) -> dict[str, object]:
    return cited_allergy(food, citations=[{"evidence": 0, "quote": "allergic to peanuts"}])


def test_the_hook_sees_statement_evidence_and_citations(data_dir: Path) -> None:
    hook = ScriptedHook(reject_shellfish)
    with memstore.open(data_dir, hook=hook) as store:
        fact = store.add_fact(**allergy("peanuts"))
    [candidate] = hook.seen
    assert candidate.statement == "The user is allergic to peanuts."
    assert candidate.stated_confidence == 0.95
    assert [e.text for e in candidate.evidence] == [ALLERGY]
    [span] = candidate.citations
    assert ALLERGY[span.start : span.end] == "allergic to peanuts"
    assert span.evidence_id == fact.evidence_ids[0]


def test_admitted_fact_carries_the_decision(data_dir: Path) -> None:
    with memstore.open(data_dir, hook=ScriptedHook(reject_shellfish)) as store:
        fact = store.add_fact(**allergy("peanuts"))
        assert (fact.status, fact.verdict, fact.confidence) == ("verified", "grounded", 0.8)
        assert (fact.p0, fact.p1, fact.budget_gap, fact.backend) == (0.2, 0.9, 1.7, "scripted")
        assert fact.verified_at == fact.recorded_at
        [check] = store.verifications(fact.id)
        assert (check.verdict, check.required_bits, check.latency_ms) == ("grounded", 2.9, 3.0)


def test_rejected_fact_is_audited_and_never_memory(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace="user:alice", hook=ScriptedHook(reject_shellfish)) as s:
        kept = s.add_fact(**allergy("peanuts"))
        before = row_counts(s.url)
        with pytest.raises(ErrFactNotGrounded) as err:
            s.add_fact(**allergy("shellfish"))
        rejection = err.value
        assert rejection.verdict == "unsupported" and rejection.rejection.p1 == 0.1
        assert "shellfish" in str(rejection) and rejection.rejection_id in str(rejection)
        after = row_counts(s.url)
        assert after["facts"] == before["facts"]
        assert after["fact_members"] == before["fact_members"]
        assert after["entities"] == before["entities"]  # "shellfish" never became an entity
        assert after["rejections"] == before["rejections"] + 1
        with pytest.raises(memstore.NotFound):
            s.entity("shellfish")
        assert [f.id for f in s.facts_about("user")] == [kept.id]
        assert set(s.graph.facts()) == {kept.id}
        url = s.url
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT * FROM rejections")).mappings().one()
    engine.dispose()
    assert row["id"] == rejection.rejection_id
    assert row["namespace"] == "user:alice"
    assert row["statement"] == "The user is allergic to shellfish."
    assert (row["verdict"], row["p0"], row["p1"]) == ("unsupported", 0.3, 0.1)
    assert row["reason"] == "evidence speaks of peanuts"
    assert row["evidence_ids"] == f'["{kept.evidence_ids[0]}"]'
    assert "shellfish" in row["members"]


def test_a_rejected_supersession_leaves_the_old_fact_alone(data_dir: Path) -> None:
    with memstore.open(data_dir, hook=ScriptedHook(reject_shellfish)) as store:
        old = store.add_fact(**allergy("peanuts"))
        with pytest.raises(ErrFactNotGrounded):
            store.supersede(old.id, **allergy("shellfish"))
        assert store.get_fact(old.id).status == "verified"
        assert store.history(old.id) == [store.get_fact(old.id)]


def test_a_hook_answering_the_wrong_number_of_times_is_an_error(data_dir: Path) -> None:
    class Broken:
        name = "broken"

        def admit_many(self, candidates: Sequence[Candidate]) -> list[Admission]:
            return []

    with memstore.open(data_dir, hook=Broken()) as store:
        with pytest.raises(MemstoreError, match="returned 0 answers"):
            store.add_fact(**works_at())
        assert row_counts(store.url)["facts"] == 0
