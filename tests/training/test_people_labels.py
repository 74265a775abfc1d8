"""Labels people give on the audit page as verifier training data (issue 28's note):
``training.labels`` reads a real store's labelled decisions, its command line writes
them, and ``training.mix``'s optional ``people`` component trains on them."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from grounding_files import write_fixture

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from gate.evidence import REMOVED
from memstore import FactPublic, RejectionPublic
from training import labels, verifier
from training import mix as mixing

ALICE, BOB = "user:alice", "user:bob"
SHIPPED_CARD = mixing.ROOT / "gate" / "backends" / "crossencoder" / "model_mix" / "verifier.json"


def admits_kept(claim: str, context: str) -> float:
    """Grounded when the claim's company is called Kept, else refused."""
    if REMOVED in context:
        return 0.05
    return 0.97 if "Kept" in claim else 0.1


def works_at(person: str, company: str, evidence: list[str]) -> dict[str, object]:
    return {
        "statement": f"{person} works at {company}.",
        "members": [(person, "person", "employee"), (company, "org", "employer")],
        "relation": "works_at",
        "evidence": evidence,
    }


@dataclass(frozen=True)
class Labelled:
    """The store and what was written and labelled in it."""

    root: Path
    refused: RejectionPublic  # labelled false_rejection by two people
    admitted: FactPublic  # labelled false_admission
    retracted: FactPublic  # labelled, then retracted: its evidence is no longer readable
    unlabelled: list[str]  # a rejection and a fact nobody labelled
    bobs: RejectionPublic  # in user:bob, labelled false_rejection


@pytest.fixture
def labelled(tmp_path: Path) -> Iterator[Labelled]:
    root = tmp_path / "memdata"
    gate = Gate(ScriptedBackend(admits_kept), REFUSE_UNGROUNDED)
    with memstore.open(root, ALICE, gate=gate, index=False) as store:
        refused, other_refusal, admitted, fine, retracted = store.add_facts(
            [
                works_at("Ann", "Refused", ["Ann: I have worked at Refused since March."]),
                works_at("Dan", "Refused", ["Dan: I was at Refused for a week."]),
                works_at("Bob", "Kept", ["Bob: I clean the windows at Kept.", "Bob is 40."]),
                works_at("Eve", "Kept", ["Eve: I work at Kept."]),
                works_at("Cy", "Kept", ["Cy: I joined Kept in May."]),
            ]
        )
        assert isinstance(refused, RejectionPublic) and isinstance(other_refusal, RejectionPublic)
        assert isinstance(admitted, FactPublic) and isinstance(retracted, FactPublic)
        store.add_label("false_rejection", refused.id, by="reviewer:lee")
        store.add_label("false_rejection", refused.id, by="reviewer:kim", note="it says so")
        store.add_label("false_admission", admitted.id, by="reviewer:kim")
        store.add_label("false_admission", retracted.id, by="reviewer:kim")
        store.retract(retracted.id, "a person said so")
    with memstore.open(root, BOB, gate=gate, index=False) as store:
        [bobs] = store.add_facts([works_at("Bo", "Refused", ["Bo: Refused hired me."])])
        assert isinstance(bobs, RejectionPublic)
        store.add_label("false_rejection", bobs.id, by="reviewer:lee")
    yield Labelled(root, refused, admitted, retracted, [other_refusal.id, fine.id], bobs)


def _expected(made: Labelled) -> list[labels.PeopleExample]:
    """What alice's labels must give, by target id."""
    wrong_refusal = labels.PeopleExample(
        claim="Ann works at Refused.",
        evidence=["Ann: I have worked at Refused since March."],
        label=1,
        kind="false_rejection",
        target_id=made.refused.id,
        namespace=ALICE,
        labelled_by=["reviewer:kim", "reviewer:lee"],
    )
    wrong_fact = labels.PeopleExample(
        claim="Bob works at Kept.",
        evidence=["Bob: I clean the windows at Kept.", "Bob is 40."],
        label=0,
        kind="false_admission",
        target_id=made.admitted.id,
        namespace=ALICE,
        labelled_by=["reviewer:kim"],
    )
    return sorted([wrong_refusal, wrong_fact], key=lambda e: e.target_id)


def test_labels_become_one_example_per_target_with_the_verdict_turned_over(
    labelled: Labelled,
) -> None:
    with memstore.open(labelled.root, ALICE, hook=memstore.Ungated(), index=False) as store:
        harvest = labels.read_store(store)
    assert sorted(harvest.examples, key=lambda e: e.target_id) == _expected(labelled)
    assert not {e.target_id for e in harvest.examples} & set(labelled.unlabelled)
    [left] = harvest.skipped
    assert (left.kind, left.target_id) == ("false_admission", labelled.retracted.id)
    assert "no evidence" in left.reason
    assert harvest.counts() == {
        "examples": {"false_admission": 1, "false_rejection": 1},
        "skipped": {"false_admission": 1},
    }


def test_the_command_line_writes_every_namespace(
    labelled: Labelled, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "people.jsonl"
    args = ["--store", str(labelled.root), "--namespace", ALICE, "--namespace", BOB]
    assert labels.main([*args, "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    bobs = {
        "claim": "Bo works at Refused.",
        "evidence": ["Bo: Refused hired me."],
        "label": 1,
        "kind": "false_rejection",
        "target_id": labelled.bobs.id,
        "namespace": BOB,
        "labelled_by": ["reviewer:lee"],
    }
    assert rows[-1] == bobs  # namespaces in the order given
    assert sorted(rows[:-1], key=lambda r: r["target_id"]) == [
        e.model_dump() for e in _expected(labelled)
    ]
    assert labels.load(out) == [labels.PeopleExample(**r) for r in rows]
    printed = capsys.readouterr()
    assert f"{ALICE}: examples {{'false_admission': 1, 'false_rejection': 1}}" in printed.out
    assert f"wrote 3 examples to {out} (labels {{0: 1, 1: 2}})" in printed.out
    assert f"skipped false_admission {labelled.retracted.id}" in printed.err

    assert labels.main(["--store", str(tmp_path / "none"), "--namespace", ALICE, "--out", str(out)])
    assert "no store directory" in capsys.readouterr().err
    assert labels.main(["--store", str(labelled.root), "--namespace", "a b", "--out", str(out)])
    assert "namespace:" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"label": 1}, "a false_admission label makes label 0"),
        ({"evidence": []}, "evidence"),
        ({"claim": ""}, "claim"),
        ({"kind": "wrong"}, "kind"),
    ],
)
def test_a_bad_line_names_its_line_and_field(
    tmp_path: Path, change: dict[str, object], named: str
) -> None:
    good = {
        "claim": "Bob works at Kept.",
        "evidence": ["Bob: I clean the windows at Kept."],
        "label": 0,
        "kind": "false_admission",
        "target_id": "f1",
        "namespace": ALICE,
        "labelled_by": ["kim"],
    }
    path = tmp_path / "people.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, **change}) + "\n")
    with pytest.raises(ValueError, match=f"people.jsonl:3: .*{named}"):
        labels.load(path)


# --------------------------------------------------------------------------- mix


def _people_file(made: Labelled, path: Path) -> Path:
    assert labels.main(["--store", str(made.root), "--namespace", ALICE, "--out", str(path)]) == 0
    return path


def _tiny_data(root: Path) -> mixing.DataPaths:
    """A miniature copy of the three sources the mix always reads."""
    said = "User: I moved to Porto in 2019 and I work at Globex as a nurse."
    root.mkdir()
    nli = root / "pairs.jsonl"
    rows = [
        {"source": s, "evidence": said, "claim": c, "label": label}
        for s in ("snli_like", "fever_like")
        for c, label in (("The user is a nurse.", "supported"), ("A cat sleeps.", "refuted"))
    ]
    nli.write_text("".join(json.dumps(r) + "\n" for r in rows))
    am = root / "agent_memory"
    am.mkdir()
    for split, claims in (("train", ("lives in Porto", "is a pilot")), ("dev", ("is a nurse",))):
        with (am / f"{split}.jsonl").open("w") as fh:
            for i, claim in enumerate(claims):
                row = {"id": f"{split}-{i}", "claim": f"The user {claim}.", "evidence": [said]}
                fh.write(json.dumps({**row, "label": int(i == 0)}) + "\n")
    return mixing.DataPaths(nli=nli, grounding=write_fixture(root / "grounding"), agent_memory=am)


def test_the_people_component_holds_the_labelled_decisions(
    labelled: Labelled, tmp_path: Path
) -> None:
    rows = mixing.load_people(_people_file(labelled, tmp_path / "people.jsonl"))
    config = mixing.MixConfig(people_repeat=3)
    pairs = mixing.people_component(rows, config)
    refused = f"people/{ALICE}/{labelled.refused.id}"
    admitted = f"people/{ALICE}/{labelled.admitted.id}"
    assert {(p.row, p.label) for p in pairs} == {(refused, 1), (admitted, 0)}
    assert Counter(p.row for p in pairs) == {refused: 3, admitted: 3}  # one sentence each
    assert {p.source for p in pairs} == {"people"}
    by_row = {p.row: p for p in pairs}
    assert by_row[refused].sentence == "Ann works at Refused."
    assert "Ann: I have worked at Refused since March." in by_row[refused].evidence
    assert "Bob: I clean the windows at Kept." in by_row[admitted].evidence
    # Read exactly as the am component reads a row.
    row = next(r for r in rows if r.id == admitted)
    assert by_row[admitted] == mixing.claim_pairs(row, "people")[0]

    tiny = _tiny_data(tmp_path / "data")
    plain = mixing.build(config, tiny, quiet=True)
    people = tmp_path / "people.jsonl"
    with_people = mixing.build(config, dataclasses.replace(tiny, people=people), quiet=True)
    assert "people" not in plain.summary()["components"]
    assert with_people.summary()["components"]["people"] == {
        "pairs": 6,
        "supported": 3,
        "not_supported": 3,
    }
    others = [p for p in with_people.pairs if p.source != "people"]
    assert Counter(others) == Counter(plain.pairs)  # the other components unchanged
    assert Counter(p for p in with_people.pairs if p.source == "people") == Counter(pairs)


@pytest.mark.skipif(not SHIPPED_CARD.is_file(), reason="no shipped mix model")
@pytest.mark.skipif(not mixing.NLI_PAIRS.is_file(), reason="../shared/data is not here")
def test_without_a_labels_file_the_default_mix_is_the_shipped_one() -> None:
    shipped = json.loads(SHIPPED_CARD.read_text())["training"]["mix"]
    built = mixing.build(mixing.MixConfig(), quiet=True).summary()
    assert (built["digest"], built["pairs"]) == (shipped["digest"], shipped["pairs"])
    assert "people" not in built["components"]


def test_the_verifier_takes_people_when_a_run_starts_only(
    labelled: Labelled, tmp_path: Path
) -> None:
    people = _people_file(labelled, tmp_path / "people.jsonl")
    tiny = _tiny_data(tmp_path / "data")
    data = [
        *("--nli", str(tiny.nli), "--grounding", str(tiny.grounding)),
        *("--agent-memory", str(tiny.agent_memory), "--am-repeat", "1", "--nli-hard", "1"),
        *("--steps", "0", "--skip-eval", "--people-repeat", "2"),
    ]
    run = tmp_path / "run"
    assert verifier.main(["--out", str(run), *data, "--people", str(people)]) == 0
    stored = json.loads((run / verifier.RUN).read_text())
    assert stored["paths"]["people"] == str(people)
    assert stored["mix"]["components"]["people"] == {
        "pairs": 4,
        "supported": 2,
        "not_supported": 2,
    }
    assert verifier.main(["--out", str(run), *data, "--people", str(people)]) == 0  # resumes
    plain = tmp_path / "plain"
    assert verifier.main(["--out", str(plain), *data]) == 0
    assert "people" not in json.loads((plain / verifier.RUN).read_text())["paths"]
    with pytest.raises(SystemExit, match="other settings"):
        verifier.main(["--out", str(plain), *data, "--people", str(people)])
    with pytest.raises(SystemExit, match=r"--people: .* is not a file"):
        verifier.main(["--out", str(tmp_path / "new"), *data, "--people", str(tmp_path / "x")])
