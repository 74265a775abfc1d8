"""Clauses: joined statements come apart; one statement stays whole."""

from __future__ import annotations

import pytest

from language.clauses import agrees_to_a_time, clause_spans, without_pleasantry


def clauses(text: str) -> list[str]:
    return [text[s:e] for s, e in clause_spans(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Split: two statements, each with its subject and verb.
        ("I'm Dana, I work as a nurse in Leeds.", ["I'm Dana", "I work as a nurse in Leeds."]),
        (
            "I moved to York; I work at York Hospital.",
            ["I moved to York", "I work at York Hospital."],
        ),
        (
            "Tom lives in Oslo, and he works at Equinor.",
            ["Tom lives in Oslo", "he works at Equinor."],
        ),
        ("I moved to Seattle and I love it.", ["I moved to Seattle", "I love it."]),
        (
            "I ran a race last Saturday - it was really rewarding.",
            ["I ran a race last Saturday", "it was really rewarding."],
        ),
        ("We land on the 3rd\u2014Kenji booked it.", ["We land on the 3rd", "Kenji booked it."]),
        # Whole: one statement, whatever its commas.
        ("When I moved, I sold my car.", ["When I moved, I sold my car."]),
        ("Paris, the capital, is big.", ["Paris, the capital, is big."]),
        (
            "Alice, who lives in Paris, works at Acme.",
            ["Alice, who lives in Paris, works at Acme."],
        ),
        ("In 2010, Acme moved to Berlin.", ["In 2010, Acme moved to Berlin."]),
        ("I like tea, coffee and cake.", ["I like tea, coffee and cake."]),
        ("Pages 3 - 5 are missing.", ["Pages 3 - 5 are missing."]),
        ("I read it - twice - last week.", ["I read it - twice - last week."]),
        ("I was born in 1990 and grew up in Leeds.", ["I was born in 1990 and grew up in Leeds."]),
        ('She said "I left, I quit" twice.', ['She said "I left, I quit" twice.']),
    ],
)
def test_clauses(text: str, expected: list[str]) -> None:
    assert clauses(text) == expected


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("Hi, my dog has been limping.", "my dog has been limping."),
        ("Thanks! Hi Mr Brennan, I moved in last September.", "I moved in last September."),
        ("Grace here: I live at 4 Birch Lane.", "I live at 4 Birch Lane."),
        ("Thanks so much.", "Thanks so much."),  # nothing else: kept whole
        ("Himalayan salt is pink.", "Himalayan salt is pink."),
        ("Great-aunt Ana turns 90.", "Great-aunt Ana turns 90."),  # a dash in a word
        ("Thanks - I moved to Oslo.", "I moved to Oslo."),
    ],
)
def test_a_pleasantry_that_opens_a_sentence_is_left_out(text: str, left: str) -> None:
    assert without_pleasantry(text) == left


@pytest.mark.parametrize(
    ("clause", "proposal"),
    [
        ("Thursday works.", "Next step is a technical interview with Marek on Thursday."),
        ("Fine, 7 pm it is.", "Wait, sorry, can we make it 7 pm?"),
        ("The 15th works for me.", '{"event": "Book club", "date": "2026-12-15"}'),
        ("Thursday is fine.", "Can you bring her in on Thursday at 10?"),
        ("Thursday's fine then.", "Shall we meet on Thursday?"),
        ("Saturday morning works for us too.", "How about Saturday morning?"),
    ],
)
def test_a_reply_that_only_takes_a_proposed_time(clause: str, proposal: str) -> None:
    assert agrees_to_a_time(clause, proposal)


@pytest.mark.parametrize(
    ("clause", "proposal"),
    [
        ("Hybrid is fine too.", "Your profile says you want remote."),  # what they accept
        ("Granite works.", "Granite or quartz for the worktop?"),
        ("That works.", "Shall we meet on Thursday?"),
        ("Thursday works for Marek but not for me.", "Does Thursday work?"),
        ("Thursday works for me.", "When are you free this week?"),  # says when, itself
        ("Thursday works.", "Tuesday or Thursday?"),  # a choice: the answer decides
        ("Monday is fine.", "We can deliver on Tuesday."),  # another day: not the proposal's
        ("10 works.", "Shall we say 10?"),  # a number, not a time
        ("Thursday works. Thank you!", "Shall we meet on Thursday?"),
    ],
)
def test_what_is_accepted_beyond_a_proposed_time_is_said(clause: str, proposal: str) -> None:
    assert not agrees_to_a_time(clause, proposal)
