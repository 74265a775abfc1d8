"""How the cross-encoder reads evidence, the rule-made training claims, and the training script."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from grounding_files import write_fixture

from gate.backends.crossencoder import CrossEncoderBackend
from gate.backends.crossencoder.reading import claim_sentences, gather, hypotheses, read
from gate.evidence import REMOVED
from training import datasets, perturb
from training.crossencoder import labelled_pairs
from training.crossencoder import main as train_main

pytestmark = pytest.mark.slow  # real processes and minutes of work: -m 'not slow' skips it

DOC = (
    "Maria Lopez founded Globex in 1998 in Porto. The company makes bicycle parts. "
    "In March, Globex opened a second factory near Lyon. It employs 240 people there. "
    "Maria's brother Tom runs the sales team."
)


def test_each_claim_sentence_reads_the_evidence_most_about_it() -> None:
    evidence = claim_sentences(DOC)
    # The Lyon sentence (rare words), then another naming Globex, in document order;
    # "It employs 240 people there." shares no word with the claim.
    got = gather("Globex opened a factory near Lyon.", evidence, words=30)
    assert got == (
        "Maria Lopez founded Globex in 1998 in Porto. "
        "In March, Globex opened a second factory near Lyon."
    )
    assert gather("Globex opened a factory near Lyon.", evidence, words=12) == (
        "In March, Globex opened a second factory near Lyon."
    )
    # Sentences sharing nothing with the claim are left out; document order is kept.
    assert gather("Tom runs sales.", evidence) == "Maria's brother Tom runs the sales team."
    assert gather("Who founded Globex?", evidence, words=12).startswith("Maria Lopez founded")
    assert gather("Anything.", []) == ""


def test_a_reading_drops_tags_and_scrubbed_spans() -> None:
    context = f"[m1] {DOC}\n\n[m2] {REMOVED}"
    reading = read("Globex employs 240 people near Lyon. Tom runs sales.", context)
    assert reading.sentences == ("Globex employs 240 people near Lyon.", "Tom runs sales.")
    assert all("[m1]" not in e and REMOVED not in e for e in reading.evidence)
    assert "240" in reading.evidence[0] and "Tom" in reading.evidence[1]
    assert read("Anything.", f"[1] {REMOVED}").pairs() == [("", "Anything.")]


def test_a_sentence_opening_with_a_pronoun_keeps_its_referent() -> None:
    assert hypotheses(["Tom moved to Oslo.", "He teaches.", "Ann sings."]) == [
        "Tom moved to Oslo.",
        "Tom moved to Oslo. He teaches.",
        "Ann sings.",
    ]
    assert hypotheses(["Hector sings."]) == ["Hector sings."]


@pytest.mark.parametrize(
    ("rule", "sentence", "expected"),
    [
        ("negation", "The factory was built in 1998.", "The factory was not built in 1998."),
        ("negation", "Tom didn't run the team.", "Tom did run the team."),
        ("antonym", "Sales rose in March.", "Sales fell in March."),
        ("role", "Maria hired Tom last year.", "Tom hired Maria last year."),
    ],
)
def test_edit_rules(rule: str, sentence: str, expected: str) -> None:
    assert perturb.EDITS[rule](sentence, [DOC], random.Random(0)) == expected


def test_number_name_date_and_addition_edits_change_the_fact() -> None:
    rng = random.Random(3)
    sentence = "In March, Globex opened a second factory near Lyon with 240 staff."
    document = claim_sentences(DOC)
    number = perturb.numbers(sentence, document, rng)
    assert number and "240" not in number
    name = perturb.names(sentence, document, rng)
    assert name and name != sentence and ("Globex" not in name or "Lyon" not in name)
    date = perturb.dates(sentence, document, rng)
    assert date and "March" not in date
    added = perturb.addition(sentence, document, rng)
    assert added and added.startswith(sentence[:-1]) and len(added) > len(sentence)
    assert perturb.numbers("No digits here.", document, rng) is None


def test_shortened_sentences_keep_their_meaning() -> None:
    rng = random.Random(0)
    out = perturb.shortened("However, the plant (opened in 2001) employs 240 people.", rng)
    assert out in {
        "The plant (opened in 2001) employs 240 people.",
        "However, the plant employs 240 people.",
    }
    assert perturb.shortened("Short.", rng) is None


def test_first_person_facts_are_seeded_and_labelled() -> None:
    first = perturb.first_person_facts(random.Random(5), 200)
    assert first == perturb.first_person_facts(random.Random(5), 200)
    assert {label for _, _, label in first} == {0, 1}
    untagged = 0
    for evidence, claim, label in first:
        name = claim.split()[0].removesuffix("'s")
        if label and claim.startswith("The user"):  # the user's own message, untagged
            untagged += 1
            assert ":" not in evidence
        elif label:
            assert f"{name}: " in evidence  # the person said it
    assert untagged


def test_summedits_labels_mark_only_the_edited_sentence() -> None:
    row = datasets.Example(
        dataset="summedits_news",
        key="1",
        claim="Globex opened a factory near Lyon. It employs 300 people.",
        evidence=(DOC,),
        label=0,
        original="Globex opened a factory near Lyon. It employs 240 people.",
    )
    pairs = labelled_pairs([row])
    # "It" is read with the sentence before it, which says what "it" is.
    assert [(p.sentence, p.label) for p in pairs] == [
        ("Globex opened a factory near Lyon.", 1),
        ("Globex opened a factory near Lyon. It employs 300 people.", 0),
    ]
    assert "Lyon" in pairs[0].evidence


def test_the_training_script_writes_a_loadable_verifier(tmp_path: Path) -> None:
    root = write_fixture(tmp_path / "grounding")
    out = tmp_path / "model"
    args = ["--data", str(root), "--out", str(out), "--pairs", "40", "--batch", "8"]
    assert train_main(args) == 0
    card = json.loads((out / "verifier.json").read_text())
    assert card["training"]["seed"] and card["training"]["pairs"] > 0
    assert set(card["calibration"]) == {"scale", "shift"}
    with CrossEncoderBackend(out) as backend:
        p = backend.estimate_many([("Tom moved to Berlin.", "[1] Tom moved to Berlin in May.")])
    assert 0.0 < p[0] < 1.0
