"""A short answer read with the question it answers."""

from __future__ import annotations

import pytest

from language.answers import answered


@pytest.mark.parametrize(
    ("question", "answer", "statement"),
    [
        ("What's your notice period?", "Two months.", "Ravi's notice period is two months."),
        ("When is your test again?", "It's on Monday.", "Ravi's test is on Monday."),
        ("What is your date of birth?", "March 3, 1988.", "Ravi's date of birth is March 3, 1988."),
        ("Which flat are you in?", "Flat 3B.", "Ravi is in Flat 3B."),
        ("How far do you run?", "About 20 km a week.", "Ravi runs about 20 km a week."),
        ("How many hosts do you monitor?", "Around 400.", "Ravi monitors around 400."),
        ("How many cats do you own?", "It's three now.", "Ravi owns three now."),
        ("Where do you work?", "At Acme in Leeds.", "Ravi works at Acme in Leeds."),
        # a value put to the one who answers: said yes to, or corrected
        ("Your salary expectation is 95k, correct?", "Yes.", "Ravi's salary expectation is 95k."),
        (
            "Your salary expectation is 95k, correct?",
            "it's 105k now",
            "Ravi's salary expectation is 105k now.",
        ),
        ("Your flight is on Friday, right?", "That's right.", "Ravi's flight is on Friday."),
    ],
)
def test_a_short_answer_says_what_was_asked(question: str, answer: str, statement: str) -> None:
    assert answered(question, answer, "Ravi") == statement


@pytest.mark.parametrize(
    ("question", "answer", "statement"),
    [
        # words between "you" and its verb are not the verb
        ("How many hosts do you currently monitor?", "About 400.", "Ravi monitors about 400."),
        ("How many hosts do you guys monitor?", "About 400.", "Ravi monitors about 400."),
        ("How many hosts do you monitor yourself?", "About 40.", "Ravi monitors about 40."),
        # "your" after the verb is the one who answers
        (
            "How often do you renew your passport?",
            "Every ten years.",
            "Ravi renews Ravi's passport every ten years.",
        ),
        # a word of time opens the answer in capitals only because it opens it
        ("How often do you deploy?", "Daily.", "Ravi deploys daily."),
        ("When do you fly?", "Tomorrow.", "Ravi flies tomorrow."),
    ],
)
def test_a_do_you_answer_reads_the_words_around_the_verb(
    question: str, answer: str, statement: str
) -> None:
    assert answered(question, answer, "Ravi") == statement


@pytest.mark.parametrize(
    ("question", "answer", "statement"),
    [
        ("How many hosts do you monitor?", "Around 400.", "Brightwave monitors around 400."),
        # "you guys" is the organisation for whatever it does
        ("How many servers do you guys run?", "About 300.", "Brightwave runs about 300."),
        ("How many hosts do you personally monitor?", "About 40.", "Ravi monitors about 40."),
        ("How many engineers do you employ?", "About 40.", "Brightwave employs about 40."),
        # what a person does, has or is, asked of one who speaks for an organisation
        ("How far do you run?", "About 20 km a week.", "Ravi runs about 20 km a week."),
        ("How often do you run?", "Three times a week.", "Ravi runs three times a week."),
        ("How many people do you manage?", "Six.", "Ravi manages six."),
        ("How many cars do you own?", "Two.", "Ravi owns two."),
        ("How much salary do you expect?", "120k.", "Ravi expects 120k."),
        ("Where do you work?", "At Acme in Leeds.", "Ravi works at Acme in Leeds."),
        ("What's your notice period?", "Two months.", "Ravi's notice period is two months."),
        ("Which flat are you in?", "Flat 3B.", "Ravi is in Flat 3B."),
    ],
)
def test_do_you_asks_what_the_organisation_does_where_the_speaker_speaks_for_one(
    question: str, answer: str, statement: str
) -> None:
    assert answered(question, answer, "Ravi", organisation="Brightwave") == statement


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where do you work?", "I work at Acme."),  # a statement of its own
        ("What do you do?", "Nursing."),  # too vague to say what it means
        ("Is that right?", "Yes."),  # not a question read
        ("What is her name?", "Ana."),  # not put to the one who answers
        ("How far do you run?", "It's far."),  # "it" is no amount: the thing only after "your"
        ("Where do you work?", "It's in Leeds."),  # nor is "it" where
        ("What's your budget?", "Well, it depends on a lot of things we have not decided."),
        ("What's your notice period?", "Yes."),  # a yes answers no "what" question
        ("Your salary expectation is 95k, correct?", "No."),  # no says nothing of the new value
        ("Your salary expectation is 95k, correct?", "Two months."),  # no "it's": unread
    ],
)
def test_other_answers_are_not_read(question: str, answer: str) -> None:
    assert answered(question, answer, "Ravi") is None


def test_past_the_first_sentence_only_it_answers() -> None:
    question = "What's your notice period?"
    assert answered(question, "Two months.", "Ravi", first=False) is None
    assert answered(question, "it's three months.", "Ravi", first=False) == (
        "Ravi's notice period is three months."
    )


def test_an_answer_opens_with_a_capital_whoever_answers() -> None:
    said = answered("What's your level?", "Around A2.", "the user")
    assert said == "The user's level is around A2."


def test_past_the_first_sentence_it_answers_how_many_with_a_number() -> None:
    question = "How many people do you manage?"
    assert answered(question, "it's nearer to 15 since the reorg", "Ravi", first=False) == (
        "Ravi manages nearer to 15 since the reorg."
    )
    assert answered(question, "it's a lot of work", "Ravi", first=False) is None
