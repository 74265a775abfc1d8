"""Held facts earn or lose trust (memstore/reverify/reviews.py): a person's review, corroboration
by a later message, a stronger verifier for rechecks; and held facts rank below
verified ones. The embedded gate, real SQLite, real LanceDB."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import memstore
from gate import Gate, ScriptedBackend
from memstore import InvalidInput, Store
from memstore.write.hook import GateHook, reverify_hook

PEANUTS = "Maya: just so you know, I'm allergic to peanuts."
NS = "user:maya"


def held(store: Store, thing: str = "shellfish") -> memstore.FactPublic:
    """A fact the default gate holds: the evidence names another allergen."""
    fact = store.add_fact(
        statement=f"Maya is allergic to {thing}.",
        members=[("Maya", "person", "patient"), (thing, "food", "allergen")],
        evidence=[PEANUTS],
    )
    assert fact.status == "unverified", fact
    assert fact.status_reason == f"the evidence says peanuts, not {thing}"
    return fact


def test_a_person_confirms_or_refuses_a_held_fact_and_the_audit_chain_keeps_who(
    data_dir: Path,
) -> None:
    with memstore.open(data_dir, namespace=NS) as store:
        shellfish, milk = held(store), held(store, "milk")
        confirmed = store.review(shellfish.id[:8], "confirm", "Maya told me by phone", by="nurse")
        assert (confirmed.status, confirmed.status_reason) == ("verified", None)
        assert confirmed.confidence == confirmed.stated_confidence
        refused = store.review(milk.id, "refuse", "not what she said", by="nurse")
        assert refused.status == "retracted"
        assert refused.retraction_reason == "refused on review: not what she said"
        [write, review] = store.verifications(shellfish.id)
        assert (write.kind, review.kind, review.verdict, review.backend) == (
            "write",
            "review",
            "confirmed",
            "person:nurse",
        )
        assert (review.status_before, review.status_after) == ("unverified", "verified")
        assert store.verify_audit_chain().ok
        assert [f.id for f in store.facts_about("Maya")] == [shellfish.id]  # milk left reads


def test_a_review_names_what_is_wrong_before_writing(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace=NS) as store:
        fact = held(store)
        for decision, reason, field in [
            ("maybe", "why", "decision"),
            ("confirm", "  ", "reason"),
            ("confirm", "x" * 2001, "reason"),
        ]:
            with pytest.raises(InvalidInput) as err:
                store.review(fact.id, decision, reason)
            assert err.value.field == field
        verified = store.add_fact(
            statement="Maya is allergic to peanuts.",
            members=[("Maya", "person", "patient"), ("peanuts", "food", "allergen")],
            evidence=[PEANUTS],
        )
        with pytest.raises(InvalidInput) as err:  # only held facts are reviewed
            store.review(verified.id, "refuse", "no")
        assert err.value.field == "fact_id" and "supersede" in err.value.reason
        with pytest.raises(memstore.NotFound):
            store.review("0" * 32, "confirm", "why")
        assert [v.kind for v in store.verifications(fact.id)] == ["write"]


def test_memstore_review_on_the_command_line(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace=NS) as store:
        fact = held(store)
    command = [sys.executable, "-m", "memstore", "--store", str(data_dir), "-n", NS]
    done = subprocess.run(
        [*command, "review", fact.id, "confirm", "--reason", "checked", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "verified"
    again = subprocess.run(
        [*command, "review", fact.id, "refuse", "--reason", "checked"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 2 and "only held facts" in again.stderr
    with memstore.open(data_dir, namespace=NS) as store:
        assert store.verifications(fact.id)[-1].backend.startswith("person:cli")


def test_a_later_message_that_verifies_a_held_fact_corroborates_it(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace=NS) as store:
        fact = held(store)
        store.remember_conversation(
            [
                {
                    "role": "user",
                    "name": "Maya",
                    "content": "Oh, and I'm allergic to shellfish too, since last year.",
                }
            ]
        )
        now = store.get_fact(fact.id)
        assert now.status == "verified" and now.status_reason is None
        last = store.verifications(fact.id)[-1]
        assert (last.kind, last.verdict, last.status_before) == (
            "corroborate",
            "grounded",
            "unverified",
        )
        assert last.p1 is not None and last.backend and last.backend.startswith("embedded:")
        assert store.verify_audit_chain().ok


def test_the_same_message_again_does_not_corroborate_what_it_wrote(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace=NS) as store:
        fact = held(store)
        store.remember_conversation([{"role": "user", "name": "Maya", "content": PEANUTS[6:]}])
        assert store.get_fact(fact.id).status == "unverified"


def test_held_facts_rank_below_verified_ones_in_search(data_dir: Path) -> None:
    with memstore.open(data_dir, namespace=NS) as store:
        shellfish = held(store)
        peanuts = store.add_fact(
            statement="Maya has a peanut allergy and carries an EpiPen.",
            members=[("Maya", "person", "patient"), ("peanuts", "food", "allergen")],
            evidence=["Maya: I have a peanut allergy, so I carry an EpiPen."],
        )
        assert peanuts.status == "verified"
        hits = store.search("Maya allergic to shellfish", 5)
        assert [h.fact.id for h in hits] == [peanuts.id, shellfish.id]
        assert [h.fact.status for h in hits] == ["verified", "unverified"]
        verified_only = store.search("Maya allergic to shellfish", 5, statuses=["verified"])
        assert [h.fact.id for h in verified_only] == [peanuts.id]


def test_a_recheck_gate_is_what_re_verification_uses() -> None:
    own = Gate(ScriptedBackend.fixed(0.1, 0.6))
    stronger = Gate(ScriptedBackend.fixed(0.01, 0.99))
    hook = GateHook(own, recheck=lambda: stronger)
    assert reverify_hook(hook, None, None).gate is stronger
    assert reverify_hook(hook, own, None).gate is own  # a run's own gate wins
    assert reverify_hook(GateHook(own), None, None).gate is own


def test_the_recheck_backend_is_a_setting(tmp_path: Path) -> None:
    from gate import ConfigError, load_config

    config = load_config(recheck_backend="embedded-ce")
    assert config.recheck_gate() is not None and config.recheck_gate().backend.name
    assert load_config().recheck_gate() is None
    with pytest.raises(ConfigError) as err:
        load_config(recheck_backend="oracle")
    assert "recheck_backend" in str(err.value)
