"""Claim extraction: sentences, clauses, citations, hedges, non-evidence kinds, offsets."""

from __future__ import annotations

import pytest

from gate import Claim, ClaimKind, extract_claims
from gate.claims import HEDGE_CONFIDENCE, MILD_HEDGES, citation_ids, strip_citations
from gate.engine import DEFAULT_STATED_CONFIDENCE


def contents(text: str) -> list[str]:
    return [c.content for c in extract_claims(text)]


def source(text: str, claim: Claim) -> str:
    return text[claim.start : claim.end]


# -- sentences --------------------------------------------------------------------------


def test_each_sentence_is_a_claim_with_its_offsets() -> None:
    text = "Paris is in France. Berlin is in Germany! Rome is in Italy."
    claims = extract_claims(text)
    assert [c.content for c in claims] == [
        "Paris is in France.",
        "Berlin is in Germany!",
        "Rome is in Italy.",
    ]
    assert [source(text, c) for c in claims] == [
        "Paris is in France",
        "Berlin is in Germany",
        "Rome is in Italy",
    ]
    assert [text[c.sentence_start : c.sentence_end] for c in claims] == [
        "Paris is in France.",
        "Berlin is in Germany!",
        "Rome is in Italy.",
    ]
    assert [c.sentence for c in claims] == [0, 1, 2]


def test_abbreviations_initials_and_decimals_do_not_end_a_sentence() -> None:
    text = "Dr. Smith met J. K. Rowling in the U.S. in 2001. The fee was 3.5 dollars, e.g. cheap."
    assert contents(text) == [
        "Dr. Smith met J. K. Rowling in the U.S. in 2001.",
        "The fee was 3.5 dollars, e.g. cheap.",
    ]


def test_list_items_are_sentences_and_hard_wrapped_lines_are_joined() -> None:
    text = (
        "Facts I found:\n- Paris is in France\n- Berlin is\n  in Germany\nRome is old and\n"
        "it is in Italy."
    )
    claims = extract_claims(text)
    assert claims[0].kind is ClaimKind.HEADING
    assert [c.content for c in claims][1:] == [
        "Paris is in France.",
        "Berlin is in Germany.",
        "Rome is old.",
        "It is in Italy.",
    ]
    assert source(text, claims[1]) == "Paris is in France"  # without the list marker
    assert source(text, claims[2]) == "Berlin is\n  in Germany"


# -- clauses ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Paris is in France, and the tower was built in 1889.",
            ["Paris is in France.", "The tower was built in 1889."],
        ),
        ("Alice likes tea; Bob prefers coffee.", ["Alice likes tea.", "Bob prefers coffee."]),
        (
            "The tower is tall, but it was never painted green.",
            ["The tower is tall.", "It was never painted green."],
        ),
        (
            "Alice founded Acme in 2010 and the company was sold in 2020.",
            ["Alice founded Acme in 2010.", "The company was sold in 2020."],
        ),
        ("It's big and they're old.", ["It's big.", "They're old."]),
        (
            "Berlin hosts many events, and then the city empties.",
            ["Berlin hosts many events.", "Then the city empties."],
        ),
    ],
)
def test_independent_clauses_are_split(text: str, expected: list[str]) -> None:
    assert contents(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Alice and Bob founded Acme.",  # coordinated subjects
        "Rome, Paris, and Berlin are capitals.",  # a list
        "Paris is the capital and largest city of France.",  # coordinated nouns
        "He was born in 1950 and died in 2000.",  # shared subject: a documented limit
        'The memo says "sales rose and profits fell" today.',  # inside a quote
        "The team (Alice and Bob wrote it) shipped.",  # inside brackets
    ],
)
def test_phrases_that_are_not_independent_clauses_stay_whole(text: str) -> None:
    assert contents(text) == [text]


def test_a_half_invented_sentence_yields_each_half_with_its_own_offsets() -> None:
    text = "The tower is in Paris, and the tower is painted green every spring."
    first, second = extract_claims(text)
    assert source(text, first) == "The tower is in Paris"
    assert source(text, second) == "the tower is painted green every spring"
    assert first.sentence == second.sentence == 0
    assert (first.sentence_start, first.sentence_end) == (0, len(text))
    assert (second.sentence_start, second.sentence_end) == (0, len(text))


# -- citations ----------------------------------------------------------------------------


def test_citation_markers_of_each_form_are_parsed_and_removed_from_the_content() -> None:
    text = (
        "Paris is in France [1]. Berlin is in Germany [1, 3]. Rome is in Italy [source:2]. "
        "Oslo is in Norway [ev:doc-7][ev:note.2]. Bern is in Switzerland. [4]"
    )
    claims = extract_claims(text)
    assert [c.citations for c in claims] == [
        ("1",),
        ("1", "3"),
        ("2",),
        ("doc-7", "note.2"),
        ("4",),
    ]
    assert [c.content for c in claims] == [
        "Paris is in France.",
        "Berlin is in Germany.",
        "Rome is in Italy.",
        "Oslo is in Norway.",
        "Bern is in Switzerland.",
    ]


def test_brackets_that_are_not_markers_are_not_citations() -> None:
    text = "The quote [sic] stays. A link [here](http://x.org) stays too."
    assert [c.citations for c in extract_claims(text)] == [(), ()]
    assert citation_ids(text) == []


def test_a_marker_belongs_to_its_clause_and_clauses_without_one_take_the_sentence_end() -> None:
    own = extract_claims("Paris is in France [1], and Berlin is in Germany [2].")
    assert [c.citations for c in own] == [("1",), ("2",)]
    shared = extract_claims("Paris is in France and Berlin is in Germany [2].")
    assert [c.citations for c in shared] == [("2",), ("2",)]
    leading = extract_claims("Paris is in France [1] and Berlin is in Germany.")
    assert [c.citations for c in leading] == [("1",), ()]


def test_helpers_list_ids_once_and_strip_markers() -> None:
    text = "A is B [1]. C is D [2, 1]. E is F [ev:x]."
    assert citation_ids(text) == ["1", "2", "x"]
    assert strip_citations(text) == "A is B. C is D. E is F."


def test_quoted_passages_are_collected_straight_or_curly() -> None:
    text = 'The memo says "sales rose sharply" [1]. He wrote \u201cwe are done\u201d [2].'
    assert [c.quotes for c in extract_claims(text)] == [("sales rose sharply",), ("we are done",)]


# -- kinds, hedges and confidence -------------------------------------------------------------


#: Sentences of each kind.
KINDS = {
    ClaimKind.QUESTION: ["Is the tower open on Mondays?"],
    ClaimKind.INSTRUCTION: [
        "Please check the opening hours.",
        "Make sure you book ahead.",
        "You should visit in spring.",
    ],
    ClaimKind.PLEASANTRY: ["Thanks for asking!", "Hope this helps.", "Here is what I found."],
    ClaimKind.HEDGE: [
        "I think the tower is closed on Mondays.",
        "The tower might be closed on Mondays.",
        "Perhaps it reopens in May.",
    ],
    ClaimKind.HEADING: ["The opening hours are as follows:", "## Opening hours"],
    ClaimKind.FACT: ["The tower is closed on Mondays."],
}


@pytest.mark.parametrize(
    ("text", "kind"), [(text, kind) for kind, texts in KINDS.items() for text in texts]
)
def test_sentence_kinds(text: str, kind: ClaimKind) -> None:
    [claim] = extract_claims(text)
    assert claim.kind is kind
    assert claim.is_evidence is (kind is ClaimKind.FACT)


def test_strong_hedges_are_not_evidence_and_carry_the_hedge_confidence() -> None:
    [claim] = extract_claims("The museum may have moved in 2019.")
    assert claim.kind is ClaimKind.HEDGE
    assert claim.hedge == "may have"
    assert claim.confidence == HEDGE_CONFIDENCE


def test_a_leading_hedge_covers_every_clause_and_a_later_one_only_its_own() -> None:
    lead = extract_claims("I think Paris is in France and Berlin is in Germany.")
    assert [c.kind for c in lead] == [ClaimKind.HEDGE, ClaimKind.HEDGE]
    later = extract_claims("Paris is in France, but Berlin might be in Austria.")
    assert [c.kind for c in later] == [ClaimKind.FACT, ClaimKind.HEDGE]


def test_mild_hedges_keep_the_claim_but_lower_its_confidence() -> None:
    plain, probably, two = extract_claims(
        "Acme grew in 2020. Acme probably grew in 2021. Acme reportedly and probably grew in 2022."
    )
    assert plain.confidence == DEFAULT_STATED_CONFIDENCE and plain.hedge is None
    assert probably.is_evidence and probably.hedge == "probably"
    assert probably.confidence == MILD_HEDGES["probably"] < DEFAULT_STATED_CONFIDENCE
    assert two.hedge == "reportedly"  # the lower of the two
    assert two.confidence == min(MILD_HEDGES["reportedly"], MILD_HEDGES["probably"])


def test_a_question_made_of_clauses_is_a_question_throughout() -> None:
    claims = extract_claims("Is Paris in France, and is Berlin in Germany?")
    assert claims and all(c.kind is ClaimKind.QUESTION for c in claims)


# -- offsets hold on a mixed text ---------------------------------------------------------------


def test_every_claim_offset_points_at_its_own_words() -> None:
    text = (
        "Hello! The Louvre is in Paris [1], and it opened in 1793 [2]. Is it big?\n"
        "- The museum probably holds 35,000 works [1]\n"
        "I think it is closed on Tuesdays. Please book ahead."
    )
    claims = extract_claims(text)
    assert [c.kind.value for c in claims] == [
        "pleasantry",
        "fact",
        "fact",
        "question",
        "fact",
        "hedge",
        "instruction",
    ]
    for claim in claims:
        words = strip_citations(source(text, claim)).rstrip(".!?")
        assert claim.content.rstrip(".!?").lower() == " ".join(words.split()).lower()
        assert claim.sentence_start <= claim.start < claim.end <= claim.sentence_end


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, 3, b"Paris is in France.", ["Paris is in France."]])
def test_a_non_string_text_is_a_type_error_naming_the_field(value: object) -> None:
    with pytest.raises(TypeError, match=r"^text: must be a string"):
        extract_claims(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["", "   \n\t "])
def test_an_empty_text_is_a_value_error_naming_the_field(value: str) -> None:
    with pytest.raises(ValueError, match=r"^text: must not be empty"):
        extract_claims(value)
