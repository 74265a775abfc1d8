"""Corrections: the pair a sentence sets against each other, and the statement it rewrites."""

from __future__ import annotations

import pytest

from language.corrections import Correction, corrections, restatements, restates, without_old
from language.corrections import rewrite as rewritten_by


def rewrite(said: str, statement: str) -> str | None:
    [found] = corrections(said)
    return substitute(statement, found)


def substitute(statement: str, correction: Correction) -> str | None:
    """The statement ``correction`` rewrites ``statement`` into, or None."""
    found = rewritten_by(statement, correction)
    return None if found is None else found.statement


@pytest.mark.parametrize(
    ("said", "statement", "rewritten"),
    [
        # a number, and the words after it shared with the statement
        (
            "Oops, it's 44 Mill Lane, not 14.",
            "Omar lives at 14 Mill Lane, Hull.",
            "Omar lives at 44 Mill Lane, Hull.",
        ),
        # a weekday, a month, a date with its ordinal
        (
            "The review is on Friday, not Thursday.",
            "Team review happens on Thursday.",
            "Team review happens on Friday.",
        ),
        (
            "Our lease ends in August, not July.",
            "Lee says the lease ends in July.",
            "Lee says the lease ends in August.",
        ),
        (
            "Sorry, it was March 3, not the 4th.",
            "The parcel arrived on March 4.",
            "The parcel arrived on March 3.",
        ),
        (
            "We meet on the 9th, not the 8th.",
            "The choir meets on the 8th at 6 pm.",
            "The choir meets on the 9th at 6 pm.",
        ),
        # number words, ordinals in words, thousands said short
        ("It took five days, not two.", "The repair took two days.", "The repair took five days."),
        (
            "It's our fifth trip, not fourth.",
            "Ana and Joe are on their fourth trip.",
            "Ana and Joe are on their fifth trip.",
        ),
        (
            "The quote is 9,500 euros, not 8.",
            "The roof quote is 8,000 euros.",
            "The roof quote is 9,500 euros.",
        ),
        # a code, a version, a plural weekday
        ("I'm in room 4B, not 4A.", "Kim is in room 4A.", "Kim is in room 4B."),
        ("We run 3.2.1, not 3.1.9.", "Prod runs 3.1.9.", "Prod runs 3.2.1."),
        (
            "Lessons are on Mondays now, not Fridays.",
            "Zoe has lessons on Friday mornings.",
            "Zoe has lessons on Monday mornings.",
        ),
        # a word, where its neighbours say which word stands for it
        (
            "The cast is on my left wrist, not the right.",
            "Sam has a cast on Sam's right wrist.",
            "Sam has a cast on Sam's left wrist.",
        ),
        (
            "Let's do oak instead of pine.",
            "The user wants pine flooring.",
            "The user wants oak flooring.",
        ),
        ("It's not Hull but York.", "Dana lives in Hull.", "Dana lives in York."),
    ],
)
def test_a_correction_rewrites_the_value_it_names(
    said: str, statement: str, rewritten: str
) -> None:
    assert rewrite(said, statement) == rewritten


@pytest.mark.parametrize(
    "said",
    [
        "I still eat fish, just not meat.",
        "Maya is not vegan.",
        "I'm not only a nurse but also a teacher.",
        "I like cats, but not dogs.",
        "Is it Tuesday or not?",
    ],
)
def test_a_denial_is_not_a_correction(said: str) -> None:
    assert corrections(said) == []


@pytest.mark.parametrize(
    ("said", "statement"),
    [
        # a bare number or day, nothing around it alike, no word in common: not this fact
        ("The meeting is at 3, not 2.", "Priya has 2 kids."),
        ("The dentist is on Tuesday, not Monday.", "Priya goes to yoga on Monday evenings."),
        ("We went in May, not June.", "Priya was born in June."),
        ("I have two cats, not one.", "Priya has one brother."),
        ("I have 2 kids, not 1.", "Priya earns 1,000 a month."),  # not its thousands
        # "not ... but" between clauses says something else
        ("It's not cheap but it's worth it.", "Priya says the gym is cheap."),
        ("I'm not a morning person but I run at 6.", "Priya is a morning person."),
    ],
)
def test_a_correction_leaves_a_statement_it_is_not_tied_to(said: str, statement: str) -> None:
    assert rewrite(said, statement) is None


@pytest.mark.parametrize(
    ("said", "statement", "rewritten"),
    [
        # of two places that hold the value, the one whose neighbours agree
        (
            "It's 21 Elm Street, not 12.",
            "Priya lives at 12 Elm Street, flat 12.",
            "Priya lives at 21 Elm Street, flat 12.",
        ),
        # the value the old one's neighbours point at, however far back in the clause
        (
            "I moved to Berlin in 2019 with my partner and our two dogs, not 2018.",
            "Priya moved to Berlin in 2018.",
            "Priya moved to Berlin in 2019.",
        ),
        ("I like tea, not coffee.", "Maya likes coffee.", "Maya likes tea."),
        # the whole value, not its first word ("tree" would leave "nuts" behind)
        (
            "I'm allergic to tree nuts, not peanuts.",
            "Maya is allergic to peanuts.",
            "Maya is allergic to tree nuts.",
        ),
    ],
)
def test_a_correction_finds_its_place(said: str, statement: str, rewritten: str) -> None:
    assert rewrite(said, statement) == rewritten


@pytest.mark.parametrize(
    ("said", "statement"),
    [
        ("It's 44 Mill Lane, not 14.", "Omar lives in Hull."),  # no old value there
        ("It's Friday, not Thursday.", "The party is on Thursday."[:0] + "Rent is 14 euros."),
        ("It's 44 Mill Lane, not 14.", "Omar lives at 44 Mill Lane."),  # already right
        ("It's a dog, not 14.", "Omar has 14 cats."),  # no number to stand for a number
    ],
)
def test_no_rewrite_without_the_old_value_and_a_new_one_in_its_place(
    said: str, statement: str
) -> None:
    assert rewrite(said, statement) is None


def test_one_correction_a_sentence_with_where_it_is_said() -> None:
    text = "Thanks! Sorry, the vet is on Monday, not Sunday. It's 5 pm, not 4 pm."
    found = corrections(text)
    assert [(c.new, c.old) for c in found] == [
        ("Sorry, the vet is on Monday", "Sunday"),
        ("It's 5 pm", "4 pm"),
    ]
    assert [text[c.start : c.end] for c in found] == [
        "Sorry, the vet is on Monday, not Sunday.",
        "It's 5 pm, not 4 pm.",
    ]
    assert substitute("The vet visit is at 4 pm.", found[1]) == "The vet visit is at 5 pm."
    assert substitute("The vet visit is at 4 pm.", Correction("It's", "4 pm", 0, 0)) is None


def test_a_long_sentence_is_not_read_for_a_correction() -> None:
    from language.corrections import MAX_SENTENCE_CHARS

    filler = "and then " * (MAX_SENTENCE_CHARS // 9)
    assert corrections(f"It's 21 Elm Street {filler}, not 12.") == []
    assert corrections("It's 21 Elm Street, not 12.") != []


@pytest.mark.parametrize(
    ("said", "statement", "again"),
    [
        (
            "Actually, I last used it the day before yesterday, not yesterday.",
            "Ahmed last used it at a petrol station yesterday.",
            True,
        ),
        ("It was two weeks ago, not last week.", "Omar sold the car last week.", False),
        ("I sold the car two weeks ago, not last week.", "Omar sold the car last week.", True),
        ("I sold the car two weeks ago, not last week.", "Omar met Ines last week.", False),
        ("I sold the car two weeks ago, not last week.", "Omar sold the car in May.", False),
    ],
)
def test_a_correction_may_say_a_statement_again(said: str, statement: str, again: bool) -> None:
    # again: the old value is in the statement, and a word besides is in both
    [correction] = corrections(said)
    assert restates(statement, correction) is again


def test_the_part_naming_the_old_value_is_left_out() -> None:
    [correction] = corrections("I sold the car two weeks ago, not last week.")
    assert without_old("Omar sold the car two weeks ago, not last week.", correction) == (
        "Omar sold the car two weeks ago."
    )
    assert without_old("Omar sold the car.", correction) == "Omar sold the car."


def test_a_value_taken_back_in_the_same_turn_is_restated() -> None:
    said = "Omar: Roughly 30 staff. Sorry, I misspoke, it's nearer 45 staff after the merger."
    [fix] = restatements(said)
    assert (fix.old, fix.how) == ("30 staff", "restated")
    assert said[fix.start : fix.end].startswith("Sorry, I misspoke")
    # "Correction:" in the middle of a turn is no turn's label
    [labelled] = restatements("Ida: Hi.\nOmar: 30 staff. Correction: it's 45 staff.")
    assert labelled.old == "30 staff"
    redone = rewritten_by("Omar's firm has roughly 30 staff.", fix)
    assert redone is not None and redone.removed == "30 staff"


@pytest.mark.parametrize(
    "said",
    [
        "Omar: We have 3 vans. Sorry, and 2 trucks.",  # another unit: an addition
        "Omar: We ran 5 miles on Monday. Actually we ran 10 miles on Tuesday.",  # adds
        "Omar: My team has 12 engineers. Sorry to hear Ida's team is down to 8 engineers.",
        "Omar: We have 2 dogs. I mean, my sister has 5 dogs.",
        "Omar: We have 3 vans.\nIda: Sorry, we have 4 vans.",  # another speaker's turn
        "Omar: Sorry, we have 4 vans.",  # nothing said before it
    ],
)
def test_no_restatement_without_the_same_unit_taken_back_in_one_turn(said: str) -> None:
    assert restatements(said) == []
