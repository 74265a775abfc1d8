"""Memory from conversations: messages, the embedded extractor, gating, reconciliation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from scripted import Mishearing, supports_its_own_words

import memstore
from gate import REFUSE_UNGROUNDED, Gate, ScriptedBackend
from language import resolve_first_person, third_person
from memstore import InvalidInput, Store
from memstore.conversations import Candidate, EmbeddedExtractor, Message, parse_messages


def extract(*messages: dict[str, str]) -> list[Candidate]:
    return EmbeddedExtractor().extract(parse_messages(messages))


def statements(*messages: dict[str, str]) -> list[str]:
    return [c.statement for c in extract(*messages)]


# -- messages -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ("I like tea", "messages"),
        ({"role": "user", "content": "hi"}, "messages"),
        ([], "messages"),
        ([{"role": "user", "content": "ok"}, {"role": "robot", "content": "x"}], "messages.1.role"),
        ([{"role": "user", "content": "   "}], "messages.0.content"),
        ([{"role": "user"}], "messages.0.content"),
        ([{"role": "user", "content": "x", "name": ""}], "messages.0.name"),
        ([{"role": "user", "content": "x", "timestamp": "soon"}], "messages.0.timestamp"),
        (["I like tea"], "messages.0"),
    ],
)
def test_bad_messages_name_the_field(raw: object, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_messages(raw)
    assert err.value.field == field


def test_a_message_speaks_for_its_name_or_its_role() -> None:
    assert Message(role="user", content="x", name="Alice").speaker == "Alice"
    assert Message(role="user", content="x").speaker == "the user"
    assert Message(role="user", content="I like tea.", name="Alice").rendered() == (
        "Alice: I like tea."
    )
    assert Message(role="tool", content="{}").rendered() == "Tool: {}"


# -- the embedded extractor ------------------------------------------------------------


@pytest.mark.parametrize(
    ("verb", "third"),
    [("live", "lives"), ("go", "goes"), ("study", "studies"), ("watch", "watches"),
     ("have", "has"), ("moved", "moved"), ("can", "can"), ("play", "plays"), ("met", "met"),
     ("misspoke", "misspoke"), ("overslept", "overslept"), ("overlook", "overlooks"),
     ("reset", "resets")],
)  # fmt: skip
def test_third_person(verb: str, third: str) -> None:
    assert third_person(verb) == third


def test_first_person_statements_are_resolved_to_the_speaker() -> None:
    assert statements({"role": "user", "name": "Alice", "content": "I'm allergic to peanuts."}) == [
        "Alice is allergic to peanuts."
    ]
    assert statements({"role": "user", "content": "I've been vegetarian for ten years."}) == [
        "The user has been vegetarian for ten years."
    ]
    assert resolve_first_person("I don't eat meat", "Bob") == "Bob doesn't eat meat."
    assert resolve_first_person("I never drink coffee.", "Bob") == "Bob never drinks coffee."
    assert resolve_first_person("Tom is my manager.", "the user") == "Tom is the user's manager."
    assert resolve_first_person("Tom gave me a book.", "Ana") == "Tom gave Ana a book."


def test_what_bob_says_about_himself_is_not_about_alice() -> None:
    found = extract(
        {"role": "user", "name": "Alice", "content": "I live in Boston."},
        {"role": "user", "name": "Bob", "content": "I live in Denver."},
    )
    assert [(c.statement, c.members[0][0], c.message) for c in found] == [
        ("Alice lives in Boston.", "Alice", 0),
        ("Bob lives in Denver.", "Bob", 1),
    ]
    assert all(c.relation == "lives_in" for c in found)


@pytest.mark.parametrize(
    "content",
    [
        "Can you remind me to call my sister?",
        "Do I have anything on Friday?",
        "Remind me to buy milk tomorrow.",
        "Thanks, that helps a lot!",
        "Maybe I'll move to Berlin next year.",
        "If I get the job I will move to Oslo.",
        "I think I left my keys at work.",
        "Ok.",
    ],
)
def test_questions_requests_hedges_and_others_are_not_memories(content: str) -> None:
    assert statements({"role": "user", "name": "Alice", "content": content}) == []


@pytest.mark.parametrize(
    ("content", "statement"),
    [
        # "we": the speaker and others the extractor cannot name, kept as said
        ("We love hiking in the Alps.", "Alice says we love hiking in the Alps."),
        ("We're renting in Bath.", "Alice says we're renting in Bath."),
        ("Our dog is called Pip.", "Alice says our dog is called Pip."),
        ("I think we should go.", None),  # still hedged
        # "she", "them", "it" where no one was named: kept as said, never guessed at
        ("She is allergic to cats.", "Alice says she is allergic to cats."),
        ("We met them in Rome.", "Alice says we met them in Rome."),
        ("I fixed it on Monday.", "Alice fixed it on Monday."),
        ("You told me the meeting was at 3.", None),  # "you": the assistant's word
        # a thing said of the world: the speaker's statement
        ("The deadline is May 2.", "Alice says the deadline is May 2."),
        # a self-introduction says what follows the name
        ("Hi, I'm Alice from Finance.", "Alice is from Finance."),
        ("I'm Alice, the new tenant.", "Alice is the new tenant."),
    ],
)
def test_we_they_and_the_world_are_the_speakers_words(content: str, statement: str | None) -> None:
    found = statements({"role": "user", "name": "Alice", "content": content})
    assert found == ([] if statement is None else [statement])


@pytest.mark.parametrize(
    ("content", "statement", "quote"),
    [
        (
            "Sorry, I should have said: I moved to Lisbon in May.",
            "Alice moved to Lisbon in May.",
            None,
        ),
        (
            "Just so you know, I'm allergic to peanuts.",
            "Alice is allergic to peanuts.",
            "I'm allergic to peanuts.",
        ),
        ("Actually I work at Acme now.", "Alice works at Acme now.", None),
        ("Oh, and I hate cilantro.", "Alice hates cilantro.", None),
    ],
)
def test_an_opener_neither_names_the_subject_nor_hides_it(
    content: str, statement: str, quote: str | None
) -> None:
    """The cited quote keeps the opener, unless it is a clause of its own."""
    [c] = extract({"role": "user", "name": "Alice", "content": content})
    assert (c.statement, c.quote) == (statement, quote or content)


def test_assistant_and_system_turns_are_not_read_and_tool_turns_as_fields() -> None:
    said = [
        {"role": "assistant", "content": "I live in the cloud and I love JSON."},
        {"role": "system", "content": "I am a helpful assistant."},
        {"role": "tool", "content": '{"user": "Alice", "city": "Boston"}'},
    ]
    assert statements(*said) == ["User Alice city: Boston."]


def test_the_extractor_never_adds_a_word() -> None:
    """Every word of a statement is the speaker's name, a rewrite of a first-person word or
    a verb ending, or a word of the sentence it came from."""
    said = [
        {"role": "user", "name": "Alice", "content": "I'm allergic to peanuts. My boss Tom "
         "wants the report by Friday. I study chemistry at MIT, and I go running on Mondays."},
        {"role": "user", "content": "I have two cats, Miso and Tofu. I don't eat meat. I moved "
         "to Lisbon in May 2024. Tom is my manager."},
    ]  # fmt: skip
    found = extract(*said)
    assert len(found) == 8  # "I study chemistry at MIT, and I go running ..." is two
    for c in found:
        source = parse_messages(said)[c.message]
        assert c.quote in source.content
        allowed = {w.lower() for w in re.findall(r"[\w']+", c.quote)}
        speaker = source.speaker.lower()
        allowed |= {*speaker.split(), f"{speaker.split()[-1]}'s"}
        allowed |= {"is", "has", "does", "doesn't", "would", "will", "was", "s"}
        allowed |= {third_person(w) for w in allowed}
        for word in re.findall(r"[\w']+", c.statement.lower()):
            assert word in allowed, (word, c.statement)


def test_members_are_the_speaker_then_names_and_times() -> None:
    [c] = extract({"role": "user", "name": "Alice", "content": "My boss Tom moved to Oslo in May."})
    assert c.members == (
        ("Alice", "person", "subject"),
        ("Tom", "entity", "object"),
        ("Oslo", "entity", "object"),
        ("May", "time", "when"),
    )
    assert c.relation == "lives_in"


def test_a_name_ends_in_its_code_and_a_code_alone_names_nothing() -> None:
    [flat, gate, code] = extract(
        {"role": "user", "name": "Yuki", "content": "I'm in Flat 3B."},
        {"role": "user", "name": "Yuki", "content": "Gate A2 is closed, it's 3C now."},
    )
    assert flat.members == (("Yuki", "person", "subject"), ("Flat 3B", "entity", "object"))
    assert [m[0] for m in gate.members] == ["Yuki", "Gate A2"]
    assert code.statement == "Yuki says it's 3C now." and len(code.members) == 1  # no "C"
    [paid] = extract({"role": "user", "name": "Yuki", "content": "I paid Tom 20GBP at 2pm."})
    assert [m[0] for m in paid.members] == ["Yuki", "Tom"]  # an amount or a time is no code


@pytest.mark.parametrize(
    ("said", "names"),
    [
        ("Sorry everyone, we meet on the 15th.", []),
        ("About 120 guests are coming.", []),
        ("Two people need a table on Saturday.", ["Saturday"]),
        ("Grace finished the report.", ["Grace"]),
        ("Flight AY1652 leaves from Gate 22.", ["Flight AY1652", "Gate"]),
    ],
)
def test_a_word_capitalised_only_to_open_a_sentence_is_no_member(
    said: str, names: list[str]
) -> None:
    [c] = extract({"role": "user", "name": "Amelia", "content": said})
    assert [m[0] for m in c.members] == ["Amelia", *names], c.statement


# -- through the gate ------------------------------------------------------------------


@pytest.mark.both_databases
def test_each_candidate_is_written_with_its_turn_cited(words_store: Store) -> None:
    report = words_store.remember_conversation(
        [
            {"role": "user", "name": "Alice", "content": "Hi! I'm allergic to peanuts."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "name": "Alice", "content": "My sister Ines lives in Porto."},
        ],
    )
    assert report.extractor == "embedded" and report.messages == 3
    assert [(c.outcome, c.statement) for c in report.candidates] == [
        ("stored", "Alice is allergic to peanuts."),
        ("stored", "Alice's sister Ines lives in Porto."),
    ]
    fact = report.candidates[0].fact
    assert fact is not None and fact.status == "verified"
    [cited] = [c for c in fact.citations if c.cited]
    evidence = words_store.get_evidence(cited.evidence_id)
    assert evidence.text == "Alice: Hi! I'm allergic to peanuts."
    assert evidence.text[cited.start : cited.end] == "I'm allergic to peanuts."
    assert {m.name for m in fact.members} == {"Alice"}


def test_a_misheard_extraction_is_refused_into_the_audit_log(words_store: Store) -> None:
    report = words_store.remember_conversation(
        [{"role": "user", "name": "Alice", "content": "I'm allergic to peanuts."}],
        extractor=Mishearing(),
    )
    [outcome] = report.candidates
    assert outcome.outcome == "refused" and outcome.fact is None
    assert outcome.rejection is not None and outcome.rejection.verdict == "unsupported"
    assert [r.statement for r in words_store.rejections()] == ["Alice is allergic to shellfish."]
    assert words_store.stats().facts == {}


@pytest.mark.both_databases
def test_a_move_supersedes_where_the_user_lived(words_store: Store) -> None:
    first = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "I live in Boston."}]
    )
    old = first.candidates[0].fact
    assert old is not None
    later = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "I moved to Lisbon in May."}]
    )
    [moved] = later.candidates
    assert moved.outcome == "superseded" and moved.replaced == [old.id]
    assert "lives_in" in moved.reasons[old.id]
    assert [f.statement for f in words_store.facts_about("Maya")] == [
        "Maya moved to Lisbon in May."
    ]
    assert words_store.get_fact(old.id).status == "superseded"
    assert [f.statement for f in words_store.history(moved.fact.id)] == [  # type: ignore[union-attr]
        "Maya lives in Boston.",
        "Maya moved to Lisbon in May.",
    ]


def test_flag_keeps_both_and_names_the_conflict(words_store: Store) -> None:
    old = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "I work at Acme."}]
    ).candidates[0]
    new = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "I work for Globex."}],
        on_conflict="flag",
    ).candidates[0]
    assert old.fact is not None and new.outcome == "conflict"
    assert new.conflicts == [old.fact.id] and new.replaced == []
    assert len(words_store.facts_about("Maya")) == 2


def test_the_same_conversation_twice_stores_each_fact_once(words_store: Store) -> None:
    said = [{"role": "user", "name": "Alice", "content": "I'm allergic to peanuts."}]
    words_store.remember_conversation(said)
    again = words_store.remember_conversation(said)
    assert [c.outcome for c in again.candidates] == ["duplicate"]
    assert len(words_store.facts_about("Alice")) == 1


def test_a_contradiction_the_verifier_finds_supersedes(data_dir: Path) -> None:
    """No single-valued relation here: the verifier reads the old fact against the new turn."""

    def verifier(claim: str, context: str) -> float:
        if claim == "Maya loves cilantro." and "can't stand cilantro" in context:
            return 0.02
        return supports_its_own_words(claim, context)

    gate = Gate(ScriptedBackend(verifier), REFUSE_UNGROUNDED)  # type: ignore[arg-type]
    with memstore.open(data_dir, namespace="user:maya", gate=gate) as store:
        store.remember_conversation(
            [{"role": "user", "name": "Maya", "content": "I love cilantro."}]
        )
        [changed] = store.remember_conversation(
            [{"role": "user", "name": "Maya", "content": "I can't stand cilantro."}]
        ).candidates
        assert changed.outcome == "superseded"
        assert "contradicts" in next(iter(changed.reasons.values()))
        assert [f.statement for f in store.facts_about("Maya")] == ["Maya can't stand cilantro."]


def test_a_message_about_something_else_is_not_read_against_a_fact(data_dir: Path) -> None:
    """A verifier that finds every old fact contradicted by every new turn: a turn that
    shares no word with the fact is not asked about it."""

    def verifier(claim: str, context: str) -> float:
        said = "bikes to work" in context or "grows cilantro" in context  # read as said
        if claim == "Maya loves cilantro." and said:
            return 0.02  # with the turn scrubbed (p0), the rule below answers
        return supports_its_own_words(claim, context)

    gate = Gate(ScriptedBackend(verifier), REFUSE_UNGROUNDED)  # type: ignore[arg-type]
    with memstore.open(data_dir, namespace="user:maya", gate=gate) as store:
        store.remember_conversation(
            [{"role": "user", "name": "Maya", "content": "I love cilantro."}]
        )
        [other] = store.remember_conversation(
            [{"role": "user", "name": "Maya", "content": "I bike to work."}]
        ).candidates
        assert other.outcome == "stored" and other.replaced == []
        [again] = store.remember_conversation(
            [{"role": "user", "name": "Maya", "content": "I grow cilantro at home."}]
        ).candidates
        assert again.outcome == "superseded"  # this one speaks of cilantro: it is read


def test_bad_options_are_refused_before_anything_is_written(words_store: Store) -> None:
    said = [{"role": "user", "name": "Alice", "content": "I'm allergic to peanuts."}]
    with pytest.raises(InvalidInput, match="on_conflict"):
        words_store.remember_conversation(said, on_conflict="ignore")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="context_turns"):
        words_store.remember_conversation(said, context_turns=-1)
    assert words_store.stats().facts == {} and words_store.rejections() == []


def test_a_fact_holds_from_its_message_time(words_store: Store) -> None:
    said = [
        {
            "role": "user",
            "name": "Alice",
            "content": "I'm allergic to peanuts.",
            "timestamp": "2026-03-01T09:30:00+01:00",
        }
    ]
    [outcome] = words_store.remember_conversation(said).candidates
    assert outcome.fact is not None
    assert outcome.fact.valid_from is not None
    assert outcome.fact.valid_from.isoformat() == "2026-03-01T08:30:00+00:00"


@pytest.mark.both_databases
def test_a_move_leaves_where_a_relative_lives(words_store: Store) -> None:
    first = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "My sister Ines lives in Porto."}],
    )
    sister = first.candidates[0].fact
    assert sister is not None
    later = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "I moved to Lisbon in May."}]
    )
    [moved] = later.candidates
    assert moved.outcome == "stored" and moved.replaced == []
    assert words_store.get_fact(sister.id).status == "verified"


@pytest.mark.both_databases
def test_a_relative_moving_leaves_where_the_user_lives(words_store: Store) -> None:
    first = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "I live in Boston."}]
    )
    home = first.candidates[0].fact
    assert home is not None
    later = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "My sister Ines moved to Lyon."}],
    )
    [moved] = later.candidates
    assert moved.outcome == "stored" and moved.replaced == []
    assert words_store.get_fact(home.id).status == "verified"


# -- corrections -------------------------------------------------------------------------


@pytest.mark.both_databases
def test_a_correction_rewrites_the_fact_it_corrects(words_store: Store) -> None:
    first = words_store.remember_conversation(
        [{"role": "user", "name": "Omar", "content": "I live at 14 Mill Lane, Hull."}]
    )
    old = first.candidates[0].fact
    assert old is not None and old.statement == "Omar lives at 14 Mill Lane, Hull."
    later = words_store.remember_conversation(
        [{"role": "user", "name": "Omar", "content": "Thanks. Oops, it's 44 Mill Lane, not 14."}]
    )
    [fixed] = later.candidates  # the sentence's own reading ("it's ...") gives way to it
    assert fixed.statement == "Omar lives at 44 Mill Lane, Hull."
    assert fixed.outcome == "superseded" and fixed.replaced == [old.id]
    assert fixed.reasons[old.id] == 'Omar corrected it: "Oops, it\'s 44 Mill Lane, not 14."'
    assert fixed.quote == "Oops, it's 44 Mill Lane, not 14."
    assert [f.statement for f in words_store.facts_about("Omar")] == [fixed.statement]
    assert words_store.get_fact(old.id).status == "superseded"
    assert words_store.get_fact(old.id).valid_to is not None
    assert fixed.fact is not None
    texts = [words_store.get_evidence(e).text for e in fixed.fact.evidence_ids]
    assert texts == [  # the correction, cited, and what it corrects read with it
        "Omar: Thanks. Oops, it's 44 Mill Lane, not 14.",
        "Omar: I live at 14 Mill Lane, Hull.",
    ]


def test_a_correction_puts_the_new_value_in_the_members_that_held_the_old(
    words_store: Store,
) -> None:
    first = words_store.remember_conversation(
        [{"role": "user", "name": "Yuki", "content": "I'm in Flat 3B."}]
    )
    assert [m.name for m in first.candidates[0].members] == ["Yuki", "Flat 3B"]
    later = words_store.remember_conversation(
        [{"role": "user", "name": "Yuki", "content": "Sorry, it's 3C, not 3B."}]
    )
    [fixed] = later.candidates
    assert fixed.statement == "Yuki is in Flat 3C." and fixed.outcome == "superseded"
    assert [m.name for m in fixed.members] == ["Yuki", "Flat 3C"]
    assert words_store.facts_about("Flat 3C")[0].id == fixed.fact.id


def test_a_correction_that_says_more_than_the_rewrite_is_stored_in_its_words(
    words_store: Store,
) -> None:
    first = words_store.remember_conversation(
        [
            {
                "role": "user",
                "name": "Lena",
                "content": "I use Datadog, and my contract ends in June.",
            }
        ]
    )
    [old] = [c.fact for c in first.candidates if c.fact and "June" in c.statement]
    assert old.statement == "Lena's contract ends in June."
    said = "One correction: my Datadog contract ends in May, not June."
    [fixed] = words_store.remember_conversation(
        [{"role": "user", "name": "Lena", "content": said}]
    ).candidates
    # her words, all of them, rather than "Lena's contract ends in May."
    assert fixed.statement == "Lena's Datadog contract ends in May."
    assert fixed.outcome == "superseded" and fixed.replaced == [old.id]
    assert fixed.reasons[old.id] == f'Lena corrected it: "{said}"'


def test_a_value_said_again_in_a_message_that_takes_it_back_replaces_it(
    words_store: Store,
) -> None:
    report = words_store.remember_conversation(
        [
            {"role": "assistant", "content": "What's your notice period?"},
            {
                "role": "user",
                "name": "Ravi",
                "content": "Two months. Sorry, I checked my contract, it's three months.",
            },
        ]
    )
    by_statement = {c.statement: c for c in report.candidates}
    first = by_statement["Ravi's notice period is two months."]
    then = by_statement["Ravi's notice period is three months."]
    assert first.fact is not None and then.outcome == "superseded"
    assert then.replaced == [first.fact.id]
    assert then.reasons[first.fact.id].startswith("said again with another value: ")
    # A value said about ("About 12", "nearer to 15"), the new one saying a little more.
    hedged = words_store.remember_conversation(
        [
            {"role": "assistant", "content": "How many people do you manage?"},
            {
                "role": "user",
                "name": "Ines",
                "content": "About 12 people. Sorry, my mistake, it's nearer to 15 people since "
                "the reorg.",
            },
        ]
    )
    [about, nearer] = hedged.candidates
    assert about.statement == "Ines manages about 12 people."
    assert nearer.statement == "Ines manages nearer to 15 people since the reorg."
    assert about.fact is not None and nearer.replaced == [about.fact.id]
    # Without a word that takes it back, two values stand side by side.
    kept = words_store.remember_conversation(
        [{"role": "user", "name": "Omar", "content": "I have 2 cats. I have 3 dogs."}]
    )
    assert [c.outcome for c in kept.candidates] == ["stored", "stored"]


class ReadsTheCorrectionTwice:
    """An extractor that reads a correction's sentence both ways, as an LLM can: with the
    value it sets aside and with the value it gives."""

    name = "reads-twice"

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        quote = messages[0].content
        omar = (("Omar", "person", "subject"),)
        return [
            Candidate("Omar lives at 14 Mill Lane.", omar, 0, quote),
            Candidate("Omar lives at 44 Mill Lane.", omar, 0, quote),
        ]


def test_a_fact_stating_what_a_correction_set_aside_is_refused(data_dir: Path) -> None:
    gate = Gate(ScriptedBackend(supports_its_own_words))  # the default policy: checks on
    with memstore.open(data_dir, gate=gate) as store:
        store.remember_conversation(
            [{"role": "user", "name": "Omar", "content": "I live at 14 Mill Lane, Hull."}]
        )
        said = "Oops, it's 44 Mill Lane, not 14."
        report = store.remember_conversation(
            [{"role": "user", "name": "Omar", "content": said}], extractor=ReadsTheCorrectionTwice()
        )
    rewrite, stale = report.candidates  # the value given is the rewrite's, left out here
    assert (rewrite.statement, rewrite.outcome) == (
        "Omar lives at 44 Mill Lane, Hull.",
        "superseded",
    )
    assert (stale.statement, stale.outcome) == ("Omar lives at 14 Mill Lane.", "refused")
    assert stale.rejection is not None
    assert stale.rejection.reason == f'the evidence says "not 14": "{said}"'


class MishearsTheCorrection:
    """An extractor that reads a correction's sentence with a value it does not say."""

    name = "mishears"

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        omar = (("Omar", "person", "subject"),)
        return [Candidate("Omar lives at 41 Mill Lane.", omar, 0, messages[0].content)]


def test_a_misreading_of_a_correction_is_refused_not_dropped(data_dir: Path) -> None:
    gate = Gate(ScriptedBackend(supports_its_own_words))
    with memstore.open(data_dir, gate=gate) as store:
        store.remember_conversation(
            [{"role": "user", "name": "Omar", "content": "I live at 14 Mill Lane, Hull."}]
        )
        said = "Oops, it's 44 Mill Lane, not 14."
        report = store.remember_conversation(
            [{"role": "user", "name": "Omar", "content": said}], extractor=MishearsTheCorrection()
        )
        refused = store.rejections()
    rewrite, misread = report.candidates  # the rewrite takes the misreading's place
    assert (rewrite.statement, rewrite.outcome) == (
        "Omar lives at 44 Mill Lane, Hull.",
        "superseded",
    )
    assert (misread.statement, misread.outcome) == ("Omar lives at 41 Mill Lane.", "refused")
    assert [r.statement for r in refused] == ["Omar lives at 41 Mill Lane."]


def test_a_correction_in_the_same_conversation_replaces_the_earlier_turn(
    words_store: Store,
) -> None:
    report = words_store.remember_conversation(
        [
            {"role": "user", "name": "Ines", "content": "My piano lesson is on Thursday."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "name": "Ines", "content": "Sorry, it's on Friday, not Thursday."},
        ]
    )
    assert [(c.outcome, c.statement) for c in report.candidates] == [
        ("stored", "Ines's piano lesson is on Thursday."),
        ("superseded", "Ines's piano lesson is on Friday."),
    ]
    assert [f.statement for f in words_store.facts_about("Ines")] == [
        "Ines's piano lesson is on Friday."
    ]


def test_a_correction_that_says_the_fact_again_replaces_it(words_store: Store) -> None:
    # "the day before yesterday" cannot stand in for "yesterday" word by word: the
    # correcting clause, said again in full, replaces the fact instead
    report = words_store.remember_conversation(
        [
            {"role": "user", "name": "Ahmed", "content": "I last used it at a cafe yesterday."},
            {
                "role": "user",
                "name": "Ahmed",
                "content": "Actually, I last used it the day before yesterday, not yesterday.",
            },
        ]
    )
    [old, new] = report.candidates
    assert new.statement == "Ahmed last used it the day before yesterday."
    assert new.outcome == "superseded" and old.fact is not None
    assert new.replaced == [old.fact.id]
    assert [f.statement for f in words_store.facts_about("Ahmed")] == [new.statement]


def test_a_fact_whose_it_is_unknown_is_not_contradicted(store: Store) -> None:
    # "his arrived fine" would contradict "it never arrived" were "it" his parcel; whether
    # it is, nothing says: the older fact is not read against the new message
    from memstore.conversations.reconcile import replaced_by

    old = store.add_fact(
        {
            "statement": "Priya says it never arrived.",
            "members": [{"name": "Priya", "kind": "person", "role": "speaker"}],
            "evidence": ["Priya: It never arrived."],
        }
    )
    said = "My husband Dev ordered a monitor arm and his arrived fine."
    new = Candidate(
        "Priya's husband Dev ordered a monitor arm.", (("Priya", "person", "subject"),), 0, said
    )
    assert store.verify_claim(old.statement, f"Priya: {said}").outcome == "refused"
    assert replaced_by(store, new, f"Priya: {said}") == ([], {})


def test_a_correction_leaves_other_peoples_facts_and_unmatched_ones(words_store: Store) -> None:
    words_store.remember_conversation(
        [{"role": "user", "name": "Tom", "content": "I live in Leeds and I work at Acme."}]
    )
    report = words_store.remember_conversation(
        [
            {"role": "user", "name": "Maya", "content": "I live in York, not Leeds."},
            {"role": "user", "name": "Maya", "content": "It's 6 pm, not 5 pm."},
        ]
    )
    assert all(c.outcome != "superseded" for c in report.candidates)
    assert sorted(f.statement for f in words_store.facts_about("Tom")) == [
        "Tom lives in Leeds.",
        "Tom works at Acme.",
    ]


def test_a_speaker_corrects_only_what_they_said(words_store: Store) -> None:
    words_store.remember_conversation(
        [{"role": "user", "name": "Ivy", "content": "My recital is on Sunday."}]
    )
    [said] = words_store.facts_about("Ivy")
    report = words_store.remember_conversation(
        [
            {"role": "user", "name": "Ana", "content": "Ivy's recital is on Saturday, not Sunday."},
            {"role": "user", "name": "Ivy", "content": "Oh, it's on Saturday, not Sunday."},
        ]
    )
    anas, ivys = report.candidates
    assert anas.statement == "Ana says Ivy's recital is on Saturday, not Sunday."  # her word
    assert anas.replaced == []
    assert (ivys.outcome, ivys.statement) == ("superseded", "Ivy's recital is on Saturday.")
    assert ivys.replaced == [said.id]


def test_a_correction_rewrites_what_the_speaker_said_not_what_was_said_of_them(
    words_store: Store,
) -> None:
    words_store.remember_conversation(
        [
            {"role": "user", "name": "Maya", "content": "I work at Acme."},
            {"role": "user", "name": "Tom", "content": "My sister Maya swims at Acme."},
        ]
    )
    said_of_her = [f for f in words_store.facts_about("Maya") if f.statement.startswith("Tom")]
    report = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "Sorry, I work at Globex, not Acme."}]
    )
    [fixed] = report.candidates
    assert fixed.statement == "Maya works at Globex."
    assert fixed.fact is not None
    assert [m.name for m in fixed.fact.members] == ["Maya", "Globex"]  # not Acme
    assert [words_store.get_fact(f.id).status for f in said_of_her] == ["verified"]  # Tom's


def test_a_correction_keeps_the_other_clauses_of_its_sentence(words_store: Store) -> None:
    words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "My flat is number 12."}]
    )
    report = words_store.remember_conversation(
        [
            {
                "role": "user",
                "name": "Maya",
                "content": "I moved to Leeds last week and my flat is number 21, not 12.",
            }
        ]
    )
    assert sorted(c.statement for c in report.candidates) == [
        "Maya moved to Leeds last week.",
        "Maya's flat is number 21.",
    ]


def test_a_conversation_asks_the_verifier_about_its_candidates_together(tmp_path: Path) -> None:
    # One call for all candidates first, then each write finds its answers kept: half of
    # the verifier's lookups are hits (one by one, none would be).
    gate = Gate("embedded")
    turns = [
        {"role": "user", "name": "Dana", "content": "I work as a nurse in Leeds."},
        {"role": "user", "name": "Dana", "content": "My sister Noor plays cello."},
        {"role": "user", "name": "Dana", "content": "I drive a blue Volvo."},
    ]
    with memstore.open(tmp_path / "m", gate=gate) as store:
        report = store.remember_conversation(turns)
    assert len(report.candidates) == 3
    assert gate.metrics.as_dict()["cache_hit_rate"] == pytest.approx(0.5)


def test_each_turn_is_evidence_of_its_own_not_a_version_of_the_last(words_store: Store) -> None:
    # Turns are no versions of one text: a later conversation leaves the earlier turns
    # current (found by evidence search as it is by default), and queues none of them.
    first = words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "I keep bees in Hexham."}]
    )
    words_store.remember_conversation(
        [
            {"role": "user", "name": "Maya", "content": "I play the oboe."},
            {"role": "user", "name": "Maya", "content": "I grow leeks."},
        ]
    )
    assert words_store.index_backlog() == 0
    cited = [
        words_store.get_evidence(e) for c in first.candidates if c.fact for e in c.fact.evidence_ids
    ]
    assert cited and all(e.source == "conversation" and e.version == 1 for e in cited)
    hits = words_store.search_evidence("bees in Hexham", 3)  # current versions only
    assert hits and hits[0].evidence_id == cited[0].id


def test_erasing_a_fact_from_a_conversation_erases_its_turn(words_store: Store) -> None:
    # A turn is no version of the others: erasing the one fact citing it erases it, while
    # the turns other facts cite stay.
    report = words_store.remember_conversation(
        [
            {"role": "user", "name": "Maya", "content": "I play the oboe."},
            {"role": "user", "name": "Maya", "content": "I keep bees in Hexham."},
        ]
    )
    oboe, bees = (c.fact for c in report.candidates)  # bees cites the oboe turn too
    assert bees is not None and oboe is not None
    words_store.erase(bees.id, "asked to forget it")
    with pytest.raises(memstore.NotFound):
        words_store.get_evidence(bees.evidence_ids[0])
    assert words_store.get_evidence(oboe.evidence_ids[0]).text == "Maya: I play the oboe."


def test_facts_from_a_conversation_are_re_verified_against_their_turns(words_store: Store) -> None:
    words_store.remember_conversation(
        [{"role": "user", "name": "Maya", "content": "I keep bees in Hexham."}]
    )
    assert words_store.mark_due() == 1
    [checked] = words_store.reverify().checks
    assert (checked.outcome, checked.verdict) == ("verified", "grounded")  # no source to fetch


def test_a_correction_leaves_a_statement_that_already_says_it(data_dir: Path) -> None:
    # Karen's "Tuesday, not Monday" is stored as said; her correction read again must not
    # "correct" it into "Tuesday, not Tuesday" (with Tuesday twice a member, it once
    # failed the whole call).
    with memstore.open(data_dir, hook=memstore.Ungated()) as store:
        said = store.add_fact(
            {
                "statement": "Karen says Leo's test is on Tuesday, not Monday.",
                "members": [
                    {"name": "Karen", "kind": "person", "role": "speaker"},
                    {"name": "Leo", "kind": "person", "role": "subject"},
                    {"name": "Tuesday", "kind": "time", "role": "when"},
                    {"name": "Monday", "kind": "time", "role": "when"},
                ],
                "evidence": ["Karen: Sorry, his test is on Tuesday, not Monday."],
            }
        )
        report = store.remember_conversation(
            [
                {
                    "role": "user",
                    "name": "Karen",
                    "content": "Sorry, Leo's test is on Tuesday, not Monday.",
                }
            ]
        )
        assert not any("not Tuesday" in c.statement for c in report.candidates)
        assert store.get_fact(said.id).status == "unverified"  # nothing to put right
