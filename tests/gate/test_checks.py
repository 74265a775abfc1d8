"""Checks that name the mistake (gate/checks/): each fires on its mistake and stays
quiet on a paraphrase of the same evidence."""

from __future__ import annotations

import json

import pytest

from gate.checks import Finding, check
from language.speakers import as_said


def found(claim: str, evidence: str) -> list[Finding]:
    """The findings for ``claim``, with the evidence read as said (as the gate does)."""
    return list(check(claim, as_said(evidence)))


def effects(claim: str, evidence: str, name: str) -> set[str]:
    return {f.effect for f in found(claim, evidence) if f.check == name}


VEGETARIAN = "Maya: I've been vegetarian for ten years."
FISH = "Maya: I still eat fish, just not meat."
TEA = "Maya: I like tea.\nTom: I prefer coffee."


def test_values_refuse_another_number_and_pass_the_same_in_words() -> None:
    [wrong] = found("Maya has been vegetarian for three years.", VEGETARIAN)
    assert (wrong.check, wrong.effect) == ("values", "refute")
    assert wrong.reason == "the evidence says 10, not 3"
    assert effects("Maya has been vegetarian for a decade.", VEGETARIAN, "values") == set()
    assert effects("Maya has been vegetarian for ten years.", VEGETARIAN, "values") == set()


@pytest.mark.parametrize(
    ("claim", "evidence", "refuted"),
    [
        (
            "The invoice was paid on 2 October 2026.",
            "invoice: INV-2231\npaid_on: 2026-10-02",
            False,
        ),
        ("The invoice was paid on 3 October 2026.", "invoice: INV-2231\npaid_on: 2026-10-02", True),
        ("The meeting was moved to Thursday at 3 pm.", "moved from Wed 10:00 to Thu 15:00", False),
        ("The meeting was moved to Thursday at 4 pm.", "moved from Wed 10:00 to Thu 15:00", True),
        ("The API allows 100 requests per second.", "rate limit: 100 per minute", True),
        ("The API allows 100 requests a minute.", "rate limit: 100 per minute", False),
        ("Ilona handled fewer than ten tickets.", "Ilona | 9", False),
    ],
)
def test_values_read_dates_times_and_rates_normalised(
    claim: str, evidence: str, refuted: bool
) -> None:
    assert ("refute" in effects(claim, evidence, "values")) is refuted


def test_polarity_refuses_an_added_not_and_reads_what_a_not_denies() -> None:
    [added] = [f for f in found("Maya does not eat fish.", FISH) if f.check == "polarity"]
    assert added.effect == "refute" and added.reason.startswith('the claim says "not"')
    assert effects("Maya does not eat meat.", FISH, "polarity") == set()  # "just not meat"
    # A "not" of another thing in the sentence denies nothing the claim says.
    peanuts = "Alice: I'm allergic to peanuts, so no satay for me."
    assert effects("Alice is allergic to peanuts.", peanuts, "polarity") == set()
    # Ceasing is a "not" of what ceased.
    coffee = "Maya: I gave up coffee last year."
    assert effects("Maya does not drink coffee.", coffee, "polarity") == set()
    assert effects("Maya drinks coffee.", coffee, "polarity") == {"doubt"}
    assert effects("Maya smokes.", "Maya: I quit smoking in May.", "polarity") == {"refute"}
    # "-free" is a "not" of what it follows.
    bread = "Aiko: I only buy gluten-free bread."
    assert effects("Aiko buys no gluten.", bread, "polarity") == set()
    assert effects("Aiko buys bread with gluten.", bread, "polarity") == {"doubt"}


def test_names_refuse_a_name_the_evidence_never_mentions() -> None:
    assert effects("Priya likes tea.", TEA, "names") == {"refute"}
    assert effects("Maya likes tea.", TEA, "names") == set()
    # Any word of a name, accents folded, names it.
    assert (
        effects("Francisco Vázquez was a conquistador.", "Vazquez was a conquistador.", "names")
        == set()
    )


def test_names_refuse_a_code_the_evidence_never_gives_and_pass_it_written_otherwise() -> None:
    booking = 'flights: {"flight": "AY1652", "seat": "34A", "version": "v2.13.2"}'
    assert reasons("Sofia is booked on flight IB6801.", booking, "names") == [
        "the evidence never mentions IB6801"
    ]
    assert effects("The app runs v2.14.0.", booking, "names") == {"refute"}
    assert effects("Sofia sits in seat 34A on AY 1652.", booking, "names") == set()
    assert effects("The app runs 2.13.2.", booking, "names") == set()
    # its number alone gives a ticket's code; a date with dots is a date
    assert effects("Maya's ticket is T-4471.", "Maya: My ticket number is #4471.", "names") == set()
    dentist = "Maya: My dentist appointment is on 3 October 2026."
    assert effects("The appointment is on 03.10.2026.", dentist, "names") == set()
    # a word with a number in it is read as a word: "covid" names "COVID-19"
    assert effects("Maya had COVID-19 in 2021.", "Maya: I had covid in 2021.", "names") == set()
    # an amount with its unit is a value, not a code: the values check reads it
    assert effects("The disk has 92G free.", "disk: /data\nfree: 92 GB", "names") == set()


def test_speaker_refuses_what_one_person_said_given_to_another() -> None:
    assert effects("Tom likes tea.", TEA, "speaker") == {"refute"}
    assert effects("Maya likes tea.", TEA, "speaker") == set()
    vegan = "Maya: By the way, Tom is a vegan."
    assert effects("Maya says Tom is a vegan.", vegan, "speaker") == set()
    assert [f.reason for f in found("Bob says Tom is a vegan.", vegan + "\nBob: Hi.")] == [
        "Maya said this, not Bob"
    ]


def reasons(claim: str, evidence: str, name: str) -> list[str]:
    return [f.reason for f in found(claim, evidence) if f.check == name]


def test_speaker_holds_what_the_user_said_of_themself_given_to_another() -> None:
    """Held, not refused: on the test split this reading refused a true claim as often as
    a false one (docs/verifier-decision-rule.md, fourth score)."""
    turn = "User: I'm allergic to penicillin. My brother Jonas lives in Graz."
    assert effects("Jonas is allergic to penicillin.", turn, "speaker") == {"doubt"}
    assert reasons("Jonas is allergic to penicillin.", turn, "speaker") == [
        "the evidence says this of the user, not of Jonas"
    ]
    assert effects("The user is allergic to penicillin.", turn, "speaker") == set()
    wife = "User: My wife Ilse loves opera."
    assert reasons("The user loves opera.", wife, "speaker") == [
        "the evidence says this of Ilse, not of the user"
    ]
    assert effects("The user's wife Ilse loves opera.", wife, "speaker") == set()
    # A thing of someone's is no one else: "the user's Dutch is fluent".
    dutch = "User: I'm from Ghent; my Dutch is fluent but my French is rusty."
    assert effects("The user speaks Dutch.", dutch, "speaker") == set()


def test_speaker_reads_who_each_clause_is_said_of() -> None:
    """The subject of the clause that holds the claim's words is who it is said of: a
    speaker's own "I", a name beside a noun, "my husband", "he"; a claim said of
    someone else is held."""
    turn = (
        "Tom\u00e1s: I'm allergic to sulfa drugs. My wife Elena is allergic to penicillin, not me."
    )
    assert reasons("Elena is allergic to sulfa drugs.", turn, "speaker") == [
        "the evidence says this of Tom\u00e1s, not of Elena"
    ]
    assert effects("Tom\u00e1s is allergic to penicillin.", turn, "speaker") == {"doubt"}
    assert effects("Tom\u00e1s is allergic to sulfa drugs.", turn, "speaker") == set()
    assert effects("Elena is allergic to penicillin.", turn, "speaker") == set()
    husband = "Priya: My husband Dev ordered a monitor arm last week."
    assert effects("Priya ordered a monitor arm.", husband, "speaker") == {"doubt"}
    assert effects("Dev ordered a monitor arm.", husband, "speaker") == set()
    dad = "Priya: My dad ordered a monitor arm."
    assert reasons("Priya ordered a monitor arm.", dad, "speaker") == [
        "the evidence says this of Priya's dad, not of Priya"
    ]
    reported = "Carlos: He said he is insured with AXA."
    assert effects("Carlos is insured with AXA.", reported, "speaker") == {"doubt"}
    # In the user's own turn a name is someone else; in a tool's, it may be the user.
    claire = "User: Wonderful. Claire can't eat shellfish, by the way."
    assert effects("The user cannot eat shellfish.", claire, "speaker") == {"doubt"}
    assert effects("Claire cannot eat shellfish.", claire, "speaker") == set()
    record = "Crm: Maya Lopez prefers email."
    assert effects("The user prefers email.", record, "speaker") == set()


def test_speaker_refuses_a_claim_whose_own_quote_says_it_of_someone_else() -> None:
    """Held where the evidence around the quote names the claim's person (it may be
    about them), refused where the words the claim cites say it of someone else."""
    turns = (
        "Assistant: Does your brother Arjun eat shellfish?\n\n"
        "Ravi: I'm allergic to shellfish, so I never touch it. Arjun loves it."
    )
    said = as_said(turns)
    quote = "Ravi is allergic to shellfish, so Ravi never touches it."
    claim = "Arjun is allergic to shellfish."
    assert {f.effect for f in check(claim, said) if f.check == "speaker"} == {"doubt"}
    [refused] = [f for f in check(claim, said, [quote]) if f.check == "speaker"]
    assert refused.effect == "refute"
    assert refused.reason == "the evidence says this of Ravi, not of Arjun, in the words it cites"
    # The quote's own person, and a quote that names the claim's person as its subject.
    assert not [
        f for f in check("Ravi is allergic to shellfish.", said, [quote]) if f.check == "speaker"
    ]
    family = as_said("Noor: My son Idris is allergic to peanuts.\n\nAssistant: Noted.")
    son = ["Noor's son Idris is allergic to peanuts."]
    assert not [
        f for f in check("Idris is allergic to peanuts.", family, son) if f.check == "speaker"
    ]
    assert {f.effect for f in check("Noor is allergic to peanuts.", family, son)} >= {"refute"}


def test_values_refuse_another_value_in_the_words_a_claim_cites() -> None:
    """Held where another sentence than the one the claim is about gives the other
    value; refused where the claim cites those words."""
    turns = as_said("Tom: My flight to Lisbon is on Friday.\n\nTom: It lands at 16:45, gate B.")
    quote = ["It lands at 16:45"]
    claim = "Tom's flight lands at 14:30."
    assert {f.effect for f in check(claim, turns) if f.check == "values"} == {"doubt"}
    [refused] = [f for f in check(claim, turns, quote) if f.check == "values"]
    assert (refused.effect, refused.reason) == ("refute", "the words it cites say 16:45, not 14:30")
    assert check("Tom's flight lands at 16:45.", turns, quote) == ()


def test_hedged_refuses_a_plain_claim_from_words_that_only_suppose_it() -> None:
    """Refused where the part of the quote holding the claim hedges it; quiet where the
    claim keeps the hedge, where another part of the quote is hedged, or with no quote."""
    turn = as_said("Lina: I think the outage was caused by the DNS change.")
    quote = ["Lina thinks the outage was caused by the DNS change."]
    claim = "The outage was caused by the DNS change."
    [refused] = [f for f in check(claim, turn, quote) if f.check == "hedged"]
    assert refused.effect == "refute"
    assert refused.reason == (
        'the words it cites only suppose it ("Lina thinks"); the claim states it as known'
    )
    assert not [f for f in check(claim, turn) if f.check == "hedged"]
    kept = "Lina thinks the outage was caused by the DNS change."
    assert not [f for f in check(kept, turn, quote) if f.check == "hedged"]
    both = as_said("Lina: Maybe the DNS change did it, but I live in Oslo.")
    said = ["Maybe the DNS change did it, but Lina lives in Oslo."]
    assert not [f for f in check("Lina lives in Oslo.", both, said) if f.check == "hedged"]
    assert [f.check for f in check("The DNS change did it.", both, said)] == ["hedged"]


def cites(claim: str, turn: str, quote: str) -> list[Finding]:
    """The findings for ``claim`` citing the last ``quote`` of the evidence ``turn``."""
    from gate.evidence import Citation, ContextItem, quoted

    at = turn.rindex(quote)
    cited = quoted([ContextItem("1", turn)], [Citation("1", at, at + len(quote))], speakers=True)
    return list(check(claim, as_said(turn), cited))


@pytest.mark.parametrize(
    ("claim", "turn", "quote"),
    [
        # a hedge after the claim's words, in another clause or sentence
        (
            "Maya's flight lands at 14:30.",
            "Maya: My flight lands at 14:30 though I might eat.",
            None,
        ),
        (
            "Maya's flight lands at 14:30.",
            "Maya: My flight lands at 14:30 which I think is early.",
            None,
        ),
        ("Maya is a nurse.", "Maya: I'm a nurse. Perhaps you knew.", None),
        # a claim that keeps the hedge, or says whose word it is
        ("Omar reckons his tag is IT-2305.", "Omar: I think it's IT-2305, but I'm not sure.", None),
        ("Maya said the project is late.", "Maya: I think the project is late.", None),
        ("Omar estimates the trip costs $400.", "Omar: I guess the trip costs $400.", None),
        # the claim's person is the one the deed was done to
        ("Maya got a promotion.", "Maya: My boss gave me a promotion.", None),
        ("Maya got a new bike.", "Maya: My parents got me a new bike.", None),
        # a value in a quote about another thing
        (
            "Maya's train leaves on Friday.",
            "Maya: It leaves the day before. The party is Saturday.",
            "The party is Saturday.",
        ),
    ],
)
def test_a_quote_does_not_refuse_a_true_claim_it_words_otherwise(
    claim: str, turn: str, quote: str | None
) -> None:
    said = quote or turn.split(": ", 1)[1]
    assert not [f for f in cites(claim, turn, said) if f.effect == "refute"]


def test_a_short_quote_does_not_stand_for_the_sentence_around_it() -> None:
    turns = "Tom: I'm allergic to penicillin, it gives me a rash.\nElena: Me, it's penicillin too."
    for quote in ("it", "penicillin"):
        found = cites("Elena is allergic to penicillin.", turns, quote)
        assert "refute" not in {f.effect for f in found if f.check == "speaker"}


def test_the_gate_reads_a_cited_quote_as_its_turns_speaker_said_it() -> None:
    from gate import Citation, Gate, ScriptedBackend
    from gate.evidence import ContextItem, quoted

    turn = "Ravi: I'm allergic to shellfish, so I never touch it. Arjun loves it."
    items = [
        ContextItem("1", "Assistant: Does your brother Arjun eat shellfish?"),
        ContextItem("2", turn),
    ]
    cite = Citation("2", turn.index("I'm"), turn.index(" Arjun"))
    assert quoted(items, [cite], speakers=True) == (
        "Ravi is allergic to shellfish, so Ravi never touches it.",
    )
    assert quoted(items, [cite], speakers=False) == (
        "I'm allergic to shellfish, so I never touch it.",
    )
    assert quoted(items, [Citation("2")], speakers=True) == ()  # a whole item narrows nothing
    whole = Citation("2", 0, turn.index(" Arjun"))  # a span that holds its label
    assert quoted(items, [whole], speakers=True) == quoted(items, [cite], speakers=True)
    gate = Gate(ScriptedBackend.fixed(p0=0.2, p1=0.95))
    claim, evidence = "Arjun is allergic to shellfish.", [i.text for i in items]
    assert gate.check(claim, evidence, [Citation("2", cite.start, cite.end)]).outcome == "refused"
    assert gate.check(claim, evidence).outcome == "held"


def test_speaker_refuses_what_a_turn_says_of_the_one_its_she_means() -> None:
    """A sentence that opens with "she" is said of the one person its turn named before
    it, as the extractor reads it; refused for anyone that turn never names."""
    nina = "Nina: Count me in. I went vegan last month.\n\n"
    ivy = "Tom: Sure. My daughter Ivy is coming too, she's lactose intolerant."
    assert reasons("Nina is lactose intolerant.", nina + ivy, "speaker") == [
        'the evidence says this of Ivy ("she"), not of Nina'
    ]
    assert effects("Ivy is lactose intolerant.", nina + ivy, "speaker") == set()
    # Who "she" is, is not guessed: no one named before it, two people, or a turn that
    # names the claim's subject too.
    alone = "Tom: Sure. She's lactose intolerant."
    assert "refute" not in effects("Nina is lactose intolerant.", nina + alone, "speaker")
    two = "Tom: My daughter Ivy and my niece Ana are coming, she's lactose intolerant."
    assert "refute" not in effects("Nina is lactose intolerant.", nina + two, "speaker")
    named = "Tom: Nina asked, and my daughter Ivy is coming too, she's lactose intolerant."
    assert "refute" not in effects("Nina is lactose intolerant.", nina + named, "speaker")
    friend = "Amelia: And my best friend Chloe is the maid of honour. She lives in Edinburgh."
    assert effects("Noah lives in Edinburgh.", nina + friend, "speaker") == {"refute"}
    # "she" is not the husband, not a company, and not the one "her" already meant
    clinic = (
        "Raj: How is Ana doing?\nMaya: My husband Tom took her to the clinic. She has strep throat."
    )
    assert "refute" not in effects("Ana has strep throat.", clinic, "speaker")
    offer = "Raj: Did Priya get the offer?\nMaya: Yes! Google called on Monday. She starts in June."
    assert "refute" not in effects("Priya starts in June.", offer, "speaker")


def test_a_thing_of_one_persons_claimed_as_anothers_is_refused() -> None:
    leo = (
        "Karen: I'm a maths teacher myself.\n\n"
        "Leo: Mum, I've got this. My favourite subject is physics anyway."
    )
    assert reasons("Karen's favourite subject is physics.", leo, "speaker") == [
        "the evidence says Leo's subject, not Karen's"
    ]
    assert effects("Leo's favourite subject is physics.", leo, "speaker") == set()
    # A sentence that names both may say how their things differ; an acronym may be
    # the other's short name.
    both = "Maya: Tom's flight leaves at 9, and Maya's flight leaves at 9 too."
    assert "refute" not in effects("Maya's flight leaves at 9.", both, "speaker")
    mum = "Leo: My mum Karen turns 50 this year. Mum's birthday is on 3 May."
    assert "refute" not in effects("Karen's birthday is on 3 May.", mum, "speaker")
    sec = "The Securities and Exchange Commission's new rule was adopted in May."
    assert "refute" not in effects("The SEC's new rule was adopted in May.", sec, "speaker")


def test_a_verb_given_the_object_of_another_clause_is_held() -> None:
    turn = "Leo: I find factoring easy but I struggle with the quadratic formula."
    assert reasons("Leo struggles with factoring.", turn, "mixed") == [
        'the evidence has factoring in another clause than "struggle": '
        '"Leo struggles with the quadratic formula."'
    ]
    assert effects("Leo struggles with the quadratic formula.", turn, "mixed") == set()
    assert effects("Leo finds factoring easy.", turn, "mixed") == set()
    # A clause of the verb that has the claim's object says it, wherever else it stands.
    both = turn + " I struggle with factoring at times too."
    assert effects("Leo struggles with factoring.", both, "mixed") == set()


def test_a_field_of_a_record_another_result_named_is_stated_by_that_name() -> None:
    update = 'jira: {"epic": "ONB-42", "due": "2027-01-29", "updated": true}'
    first = 'jira: {"epic": "ONB-42", "title": "Onboarding redesign", "due": "2027-01-15"}'
    evidence = f"{update}\n\n{first}"
    assert effects("Onboarding redesign due: 2027-01-29.", evidence, "fields") == {"support"}
    assert effects("Onboarding redesign due: 2027-01-29.", update, "fields") == set()
    assert effects("Onboarding redesign due: 2027-01-30.", evidence, "fields") == set()


def test_speaker_holds_what_a_speaker_says_of_a_she_as_not_their_own() -> None:
    """A speaker's "she" is not themself ("my wife loves birds. She's a keen
    birdwatcher"), however the parser reads "she's been": held. Said of someone else in
    the third person, "he" may well be them."""
    wife = as_said("User: For gifts, my wife loves birds. She's been a keen birdwatcher.")
    assert reasons("The user is a keen birdwatcher.", wife, "speaker") == [
        'the evidence says this of someone its speaker calls "she", not of the user'
    ]
    assert effects("The user's wife is a keen birdwatcher.", wife, "speaker") == set()
    doctor = "Tom's doctor told him to cut down on salt. He has high blood pressure."
    assert effects("Tom has high blood pressure.", doctor, "speaker") == set()
    kids = "Ana's kids moved out last year. She lives alone now."
    assert effects("Ana lives alone.", kids, "speaker") == set()


def test_speaker_reads_a_relative_clause_as_said_of_the_one_it_follows() -> None:
    trip = "My cousin Sigrid, who planned the route, is a guide. Amal came too."
    assert reasons("Amal planned the route.", trip, "speaker") == [
        "the evidence says this of Sigrid, not of Amal"
    ]
    assert effects("Sigrid planned the route.", trip, "speaker") == set()
    # after "Priya from Acme", "who" may be either: not read
    coffee = as_said("Maya: I had coffee with Priya from Acme, who is leaving in May.")
    assert effects("Priya is leaving in May.", coffee, "speaker") == set()


def test_a_verb_of_saying_in_its_other_sense_is_no_report() -> None:
    """ "writes every morning" is journaling, not saying: not checked against who spoke."""
    ravi = "Ravi: Lena's therapist suggested journaling. She now writes every morning."
    assert effects("Lena writes every morning.", ravi, "speaker") == set()
    assert effects("Maya says the flat is damp.", "Tom: The flat is damp.", "speaker") == {"refute"}


def test_direction_refuses_a_comparison_made_the_other_way_round() -> None:
    quit = "User: Day 40 without a cigarette! The patches helped more than the gum did."
    assert effects("The gum helped the user more than the patches did.", quit, "direction") == {
        "refute"
    }
    assert effects("The patches helped more than the gum.", quit, "direction") == set()
    tea = as_said("Maya: I like coffee more than tea.")
    assert effects("Maya likes tea more than coffee.", tea, "direction") == {"refute"}
    # "less" the other way round says the same; a sentence that compares them as the
    # claim does (the speaker changed) leaves it to the other checks
    assert (
        effects("Tea costs less than coffee.", "Coffee costs more than tea.", "direction") == set()
    )
    changed = as_said("Maya: I used to like coffee more than tea. Now I like tea more than coffee.")
    assert effects("Maya likes tea more than coffee.", changed, "direction") == set()


def test_speaker_leaves_relations_and_the_other_voice_alone() -> None:
    # "Kofi is the user's roommate" is a relation between two people, not a deed of Kofi's.
    roommate = "User: I share a flat with my roommate Kofi."
    assert effects("Kofi is the user's roommate.", roommate, "speaker") == set()
    # A passive claim's subject is the active sentence's object, not its subject.
    ranked = "The American Film Institute ranked Bogart the greatest male star."
    assert effects("Bogart was ranked the greatest male star.", ranked, "speaker") == set()


def test_polarity_refuses_what_a_clause_denies_of_its_own_verb() -> None:
    intake = "Tom\u00e1s: No fever. I take lisinopril every morning."
    assert effects("Tom\u00e1s has a fever.", intake, "polarity") == {"refute"}
    assert effects("Tom\u00e1s takes lisinopril.", intake, "polarity") == set()
    noah = "Noah: I'm not vegetarian, but I'm fine with it."
    [denied] = [f for f in found("Noah is vegetarian.", noah) if f.check == "polarity"]
    assert (denied.effect, denied.reason) == (
        "refute",
        'the evidence says "not": "Noah is not vegetarian"',
    )
    assert effects("Noah is fine with it.", noah, "polarity") == set()
    assert effects("Maya eats meat.", "Maya: I no longer eat meat.", "polarity") == {"refute"}
    # A "not" of another verb of the sentence denies nothing the claim says.
    widow = "John Lennon's widow, Yoko Ono, did not approve the musical."
    assert "refute" not in effects("Yoko Ono is John Lennon's widow.", widow, "polarity")
    # "Oh no" is no denial.
    oh = "User: Oh no, I forgot the anniversary dinner."
    assert effects("The user forgot the anniversary dinner.", oh, "polarity") == set()


def test_polarity_reads_a_contrast_as_a_not_of_the_thing_set_aside() -> None:
    flat = "Priya: Sorry, my mistake, it's 21 Elm Street, not 12."
    [wrong] = [f for f in found("Priya lives at 12 Elm Street.", flat) if f.check == "polarity"]
    assert (wrong.effect, wrong.reason) == (
        "refute",
        'the evidence says "not 12": "Sorry, Priya\'s mistake, it\'s 21 Elm Street, not 12."',
    )
    assert effects("Priya lives at 21 Elm Street.", flat, "polarity") == set()
    date = "Amelia: It's June 27, not June 20."
    assert effects("The wedding is on June 20.", date, "polarity") == {"refute"}
    assert effects("The wedding is on June 27.", date, "polarity") == set()
    budget = "User: My manager Oleksandr signed off on the budget, but only for me, not for Ruth."
    assert (
        effects("Oleksandr did not sign off on the budget for Ruth.", budget, "polarity") == set()
    )
    assert effects("Oleksandr signed off on the budget for Ruth.", budget, "polarity") == {"refute"}


def test_direction_refuses_a_relation_turned_round() -> None:
    evidence = "Finally, Camila Reyes replaces Jon Barker as release manager from 1 July."
    turned = found("Jon Barker replaces Camila Reyes as release manager from 1 July.", evidence)
    assert [(f.check, f.effect) for f in turned] == [("direction", "refute")]
    right = "Camila Reyes replaces Jon Barker as release manager from 1 July."
    assert not [f for f in found(right, evidence) if f.effect == "refute"]


def test_things_name_the_thing_put_in_anothers_place() -> None:
    allergy = "User: just so you know, I'm allergic to peanuts."
    [swapped] = found("The user is allergic to shellfish.", allergy)
    assert (swapped.check, swapped.effect) == ("things", "doubt")
    assert swapped.reason == "the evidence says peanuts, not shellfish"
    [said] = found("The user is allergic to peanuts.", allergy)
    assert (said.check, said.effect) == ("words", "support")


def test_fields_of_a_record_are_read_as_words_with_their_values() -> None:
    record = "billing.invoice: " + json.dumps(
        {"invoice": "INV-2231", "status": "paid", "paid_on": "2026-10-02", "amount": "€86.50"}
    )
    assert not [
        f
        for f in found("Invoice INV-2231 was paid on 2 October 2026.", record)
        if f.effect == "refute"
    ]
    assert effects("Invoice INV-2231 was paid on 12 October 2026.", record, "values") == {"refute"}


def test_a_field_said_as_the_record_writes_it_is_supported_and_verified() -> None:
    from gate import GatePolicy
    from gate.policy import decide

    record = "Orders: " + json.dumps({"order_id": "88213", "status": "shipped"})
    assert effects("Order 88213 status: shipped.", record, "fields") == {"support"}
    assert effects("Order 88213 status: lost.", record, "fields") == set()
    assert effects("Order 88214 status: shipped.", record, "fields") == set()
    assert effects("Order 88213 shipped.", record, "fields") == set()  # not a field's words
    # a tool's turn as a conversation renders it, named in lower case, after another turn
    turns = "Priya: Where is it?\n\norders: " + json.dumps(
        {"order_id": "88213", "status": "shipped"}
    )
    assert effects("Order 88213 status: shipped.", turns, "fields") == {"support"}
    policy = GatePolicy()
    below = policy.verify_p1 - 0.2  # the verifier unsure, the record plain
    stated = found("Order 88213 status: shipped.", record)
    assert decide(0.1, below, 0.5, policy, stated).outcome == "verified"
    assert decide(0.1, below, 0.5, policy).outcome == "held"


def test_a_value_a_tools_record_gives_otherwise_is_refused() -> None:
    said = "Ines: What is my deductible?\n\npolicy: " + json.dumps(
        {"holder": "Ines Vidal", "plan": "Silver", "deductible_usd": 750}
    )
    [refuted] = [
        f for f in found("Ines's deductible is 900 dollars.", said) if f.effect == "refute"
    ]
    assert (refuted.check, refuted.reason) == ("values", "the evidence says 750, not 900")
    assert not [f for f in found("Ines's deductible is 750 dollars.", said) if f.effect == "refute"]


def test_a_sentence_with_its_speakers_correction_put_in_is_supported_and_verified() -> None:
    from gate import GatePolicy
    from gate.policy import decide

    said = "Yuki: I'm in Flat 3B.\n\nYuki: Sorry, wrong flat. It's 3C, not 3B."
    [corrected] = [f for f in found("Yuki is in Flat 3C.", said) if f.check == "corrected"]
    assert (corrected.effect, corrected.reason) == (
        "support",
        'the evidence corrects "3B" to "3C": "It\'s 3C, not 3B."',
    )
    assert effects("Yuki is in Flat 3D.", said, "corrected") == set()
    assert effects("Yuki is in Flat 3B.", said, "corrected") == set()
    assert effects("Yuki lives in 3C.", said, "corrected") == set()  # not the sentence's words
    policy = GatePolicy()
    below = policy.verify_p1 - 0.2
    assert decide(0.1, below, 0.5, policy, found("Yuki is in Flat 3C.", said)).outcome == (
        "verified"
    )
    assert decide(0.1, below, 0.5, policy).outcome == "held"


def test_a_correction_put_in_reads_it_and_the_speakers_says_as_the_extractor_does() -> None:
    """The conversation's rewrite of "Ana says the search reindex migration should land
    on Thursday." ("It should land on Thursday" read with the thing the sentence before
    named) is the corrected sentence, said by the one who corrected it."""
    said = (
        "Ana: Sorry, correction: the reindex migration lands on Wednesday, not Thursday."
        "\n\nAna: I'm on the search reindex migration. It should land on Thursday."
    )
    rewritten = "Ana says the search reindex migration should land on Wednesday."
    assert effects(rewritten, said, "corrected") == {"support"}
    assert effects("The search reindex migration should land on Wednesday.", said, "corrected") == {
        "support"
    }
    greeted = (
        "User: Hi, my dog Biscuit has been limping since Sunday.\n\n"
        "User: Sorry, the limping started on Saturday, not Sunday."
    )
    limping = "The user's dog Biscuit has been limping since Saturday."
    assert effects(limping, greeted, "corrected") == {"support"}  # "Hi," said nothing
    # Tom did not correct it; and the value it set aside is no support
    assert effects(rewritten.replace("Ana", "Tom", 1), said, "corrected") == set()
    assert effects(rewritten.replace("Wednesday", "Friday"), said, "corrected") == set()


def test_a_claim_holding_a_value_its_evidence_later_corrects_is_refused() -> None:
    from gate import GatePolicy
    from gate.policy import decide

    said = (
        "Ines: The quarterly review is on the 9th.\n\n"
        "Ines: Apologies, the quarterly review is on the 11th, not the 9th."
    )
    [set_aside] = [
        f for f in found("The quarterly review is on the 9th.", said) if f.effect == "refute"
    ]
    assert (set_aside.check, set_aside.reason) == (
        "corrected",
        'the evidence sets "the 9th" aside: '
        '"Ines: Apologies, the quarterly review is on the 11th, not the 9th."',
    )
    policy = GatePolicy()
    grounded = decide(0.9, 0.95, 0.5, policy, found("The quarterly review is on the 9th.", said))
    assert grounded.outcome == "refused"  # the verifier reads the first sentence: support
    assert effects("The quarterly review is on the 11th.", said, "corrected") == {"support"}


def test_a_claim_done_where_its_evidence_only_wants_or_needs_it_is_held() -> None:
    from gate import GatePolicy
    from gate.policy import decide

    said = "Omar: The bank still needs to approve the loan."
    [doubt] = [f for f in found("The bank approved the loan.", said) if f.check == "modality"]
    assert doubt.effect == "doubt"
    assert doubt.reason.startswith('the evidence says "approve" as wanted, needed or possible')
    policy = GatePolicy()
    assert decide(0.1, 0.96, 0.5, policy, found("The bank approved the loan.", said)).outcome == (
        "held"
    )
    assert decide(0.1, 0.96, 0.5, policy).outcome == "verified"  # without the finding
    assert (
        effects("The bank approved the loan.", "Omar: The bank approved the loan.", "modality")
        == set()
    )
    assert effects("The bank will approve the loan.", said, "modality") == set()  # said as said
    assert effects("The bank did not approve the loan.", said, "modality") == set()  # polarity's
    asked = "Omar: Did the bank approve the loan?\n\nIda: Yes, the loan went through."
    assert effects("The bank approved the loan.", asked, "modality") == set()  # a question


def test_a_value_its_speaker_takes_back_is_refused() -> None:
    said = (
        "Ida: How many staff does the firm have?\n\n"
        "Omar: Roughly 30 staff. Sorry, I misspoke, it's nearer 45 staff after the merger."
    )
    [taken_back] = [
        f for f in found("Omar's firm has roughly 30 staff.", said) if f.effect == "refute"
    ]
    assert (taken_back.check, taken_back.reason) == (
        "corrected",
        'the evidence sets "30 staff" aside: '
        '"Sorry, Omar misspoke, it\'s nearer 45 staff after the merger."',  # read as said
    )
    assert effects("Omar's firm has nearer 45 staff.", said, "corrected") == set()


def test_a_contrast_said_the_other_way_round_is_refused() -> None:
    said = "Ines: Apologies, the quarterly review is on the 11th, not the 9th."
    assert effects("The quarterly review is on the 11th, not the 9th.", said, "polarity") == set()
    # contrasts that differ without crossing refute nothing
    nuts = "Maya: I'm allergic to peanuts, not cashews or other tree nuts."
    assert effects("Maya is allergic to peanuts, not tree nuts.", nuts, "polarity") == set()
    bus = "Omar: I take the train to work, not the bus, and I sold the car last year."
    assert effects("Omar takes the train to work, not the car.", bus, "polarity") == {"doubt"}
    [reversed_] = found("The quarterly review is on the 9th, not the 11th.", said)
    assert (reversed_.check, reversed_.effect) == ("polarity", "refute")
    assert reversed_.reason.startswith('the evidence sets "9th" aside, not "11th"')


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # what else is said of the day set aside: the correcting sentence shares no word
        (
            "Ines's brother arrives on the 9th.",
            "Ines: We meet on the 11th, not the 9th. My brother arrives on the 9th.",
        ),
        # a correction of who says nothing else of the one set aside
        (
            "Ravi is allergic to latex.",
            "Ravi: I'm allergic to latex.\n\nRavi: Ravi's son Arjun is allergic to nuts, not Ravi.",
        ),
        # a claim with a "not" of its own is left to the polarity check
        (
            "The fix is in 4.1 but not in 4.0.",
            "Ops: It ships in 4.1, not in 4.0.",
        ),
    ],
)
def test_a_correction_refutes_only_the_claims_it_ties_to(claim: str, evidence: str) -> None:
    assert effects(claim, evidence, "corrected") <= {"support"}


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # the speaker's name in both is no word the correction shares with the claim
        (
            "Omar's brother arrives on the 9th.",
            "Omar: My meeting is on the 11th, not the 9th. My brother arrives on the 9th.",
        ),
        # a value's own words ("9:30") are no shared word either
        (
            "Omar's flight lands at 9:30.",
            "Omar: The standup starts at 10:30, not 9:30. My flight lands at 9:30.",
        ),
        # Ines correcting her flight says nothing of Tom's
        (
            "Tom's flight is on the 9th.",
            "Ines: My flight is on the 11th, not the 9th.\n\nTom: My flight is on the 9th.",
        ),
        # "sorry" that takes nothing back
        (
            "Omar's team has 12 engineers.",
            "Omar: My team has 12 engineers. Sorry to hear Ida's team is down to 8 engineers.",
        ),
    ],
)
def test_a_correction_of_something_else_refutes_nothing(claim: str, evidence: str) -> None:
    assert effects(claim, evidence, "corrected") <= {"support"}


def test_a_claim_the_evidence_states_is_supported_in_one_sentence() -> None:
    [support] = found("Maya likes tea.", TEA)
    assert (support.check, support.effect) == ("words", "support")
    assert support.reason == 'the evidence states it: "Maya likes tea."'


@pytest.mark.parametrize(
    "sentence",
    [
        "Maya's doctor thinks Tom is allergic to nuts.",
        "Sam's friend knows that Tom likes Maya.",
        "Camila Reyes replaces Jon Barker as release manager from 1 July.",
        "Maya has not eaten meat since 2019, and Tom never has.",
        "The invoice INV-2231 for €86.50 was paid on 2 October 2026 at 15:00.",
    ],
)
def test_no_check_refuses_a_claim_its_evidence_states_word_for_word(sentence: str) -> None:
    assert not [f for f in found(sentence, sentence) if f.effect == "refute"]


def test_a_speaker_named_by_a_handle_is_that_person() -> None:
    assert effects("Maya says she likes tea.", "@maya: I like tea.", "speaker") == set()


def test_a_refuting_check_refuses_even_when_the_verifier_fails() -> None:
    from gate import Gate, ScriptedBackend, VerdictStatus

    def broken(claim: str, context: str) -> float:
        raise RuntimeError("model server is down")

    gate = Gate(ScriptedBackend(broken))
    refused = gate.check("Maya has been vegetarian for three years.", [VEGETARIAN])
    assert refused.outcome == "refused" and refused.status == VerdictStatus.CONTRADICTED
    assert refused.reason == "the evidence says 10, not 3" and refused.p1 is None
    pending = gate.check("Maya has been vegetarian for ten years.", [VEGETARIAN])
    assert pending.status == VerdictStatus.VERIFIER_ERROR and pending.accepted


def test_findings_of_recent_pairs_are_kept_and_the_keep_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gate.checks as checks

    monkeypatch.setattr(checks, "FOUND_KEPT", 2)
    monkeypatch.setattr(checks, "_found", checks.OrderedDict())
    pairs = [
        ("Maya lives in Leeds.", "Maya: I live in York."),
        ("Maya lives in York.", "Maya: I live in York."),
        ("Maya lives in Leeds.", "Maya: I live in York."),  # the same pair twice
    ]
    first = checks.check_many(pairs)
    assert first[0] == first[2] and first[0] != first[1]
    kept = [checks._key(p) for p in (pairs[1], pairs[0])]
    assert list(checks._found) == kept  # newest last, each once, by digest
    tom = ("Tom is 30.", "Tom: I'm 31.")
    checks.check_many([tom])
    assert list(checks._found) == [kept[1], checks._key(tom)]
    assert checks.check_many(pairs[:2]) == first[:2]  # the same findings, kept or not


def test_speaker_refuses_a_claim_whose_cited_words_say_it_of_someone_else() -> None:
    """The words a claim cites say its verb of another person: refused, though the
    claim's other words ("Pachinko") are not in them; quiet for the one who said it."""
    turns = as_said("Harriet: Next month's book is Pachinko.\n\nRafa: I've already read it twice.")
    quote = ["Rafa has already read it twice."]
    [refused] = [
        f
        for f in check("Mina has read the novel Pachinko twice.", turns, quote)
        if f.check == "speaker"
    ]
    assert (refused.effect, refused.reason) == (
        "refute",
        "the evidence says this of Rafa, not of Mina, in the words it cites",
    )
    assert not [
        f
        for f in check("Rafa has read the novel Pachinko twice.", turns, quote)
        if f.check == "speaker"
    ]


def test_speaker_reads_a_name_called_out_as_no_one_the_clause_is_about() -> None:
    """ "so Paul, bring a helmet": Paul is spoken to, the motorbike is Luis's."""
    turns = as_said("Ines: My brother Luis rides a motorbike now, so Paul, bring a helmet.")
    quote = ["Luis rides a motorbike now, so Paul, bring a helmet."]
    found_for = {
        who: {
            f.effect
            for f in check(f"{who} rides a motorbike.", turns, quote)
            if f.check == "speaker"
        }
        for who in ("Paul", "Luis")
    }
    assert found_for == {"Paul": {"refute"}, "Luis": set()}


def test_speaker_refuses_the_users_own_words_cited_for_someone_they_name() -> None:
    """The user's turn speaks of Jo as someone else (Jo is a subject there); the user's
    "I" cited for Jo is refused."""
    turns = as_said("User: I can't stand olives.\n\nUser: Jo loves them, though.")
    [refused] = [
        f
        for f in check("Jo can't stand olives.", turns, ["The user can't stand olives."])
        if f.check == "speaker"
    ]
    assert refused.effect == "refute"


def test_polarity_refuses_what_the_cited_words_deny() -> None:
    """The words a claim cites deny its predicate: refused, though they leave out words
    of the claim ("in the crash"), or name its thing as "this building"; quiet where the
    denied clause is narrower ("in the rain", "on Thursday") or has another object."""
    crash = as_said("Nora: Nobody was injured. The car is a write-off, though.")
    [refused] = [
        f
        for f in check("Nora was injured in the crash.", crash, ["Nobody was injured."])
        if f.check == "polarity"
    ]
    assert (refused.effect, refused.reason) == (
        "refute",
        'the words it cites say "not": "Nobody was injured."',
    )
    permit = as_said("Omar: I don't have a parking permit for this building.")
    quote = ["Omar doesn't have a parking permit for this building."]
    assert {
        f.effect
        for f in check("Omar has a parking permit for the office.", permit, quote)
        if f.check == "polarity"
    } == {"refute"}
    for claim, said in [  # a "not" of a narrower statement says nothing of the claim
        ("Maya has time on Friday.", "Maya: I don't have time on Thursday; Friday works."),
        ("Maya likes hiking.", "Maya: I just don't like hiking in the rain."),
    ]:
        turn = as_said(said)
        quote = [turn.split(": ", 1)[1]]
        assert not [f for f in check(claim, turn, quote) if f.effect == "refute"], claim
    fish = as_said("Omar: I don't eat fish, and I cook at home.")
    assert not [
        f for f in check("Omar eats meat.", fish, ["Omar doesn't eat fish"]) if f.effect == "refute"
    ]


def test_modality_refuses_a_deed_the_cited_words_only_offer() -> None:
    """ "I can book the venue" cited for "Jun booked the venue": refused; for "Jun books
    venues" (not said as done) only held."""
    turns = as_said("Jun: I can book the venue by Monday.")
    quote = ["Jun can book the venue by Monday."]
    assert {
        f.effect for f in check("Jun booked the venue.", turns, quote) if f.check == "modality"
    } == {"refute"}
    assert {
        f.effect for f in check("Jun books the venue.", turns, quote) if f.check == "modality"
    } == {"doubt"}
    assert {f.effect for f in check("Jun booked the venue.", turns) if f.check == "modality"} == {
        "doubt"
    }


def test_values_refuse_a_value_the_cited_field_gives_otherwise() -> None:
    """A field cited alone (``"start": "10:30"``) gives the claim's place another value:
    refused, though an older record in the evidence has the claim's; a range in the
    words cited ("Monday to Wednesday") and a number inside an identifier are kept."""
    old = '{"event": "Board meeting", "start": "09:30"}'
    new = '{"event": "Board meeting", "start": "10:30", "moved": true}'
    turns = f"calendar: {new}\n\ncalendar: {old}"
    [refused] = [
        f
        for f in check("The board meeting starts at 09:30.", turns, ['"start": "10:30"'])
        if f.check == "values"
    ]
    assert (refused.effect, refused.reason) == ("refute", "the words it cites say 10:30, not 09:30")
    trip = as_said("Ahmad: I'll be in Rotterdam Monday to Wednesday.\n\nJo: So no Tuesday standup?")
    quote = ["Ahmad will be in Rotterdam Monday to Wednesday."]
    assert not [
        f
        for f in check("Ahmad will be in Rotterdam on Tuesday.", trip, quote)
        if f.effect == "refute"
    ]
    log = '"DELETE /api/orders/771 HTTP/1.1" 403'
    assert not [
        f for f in check("Deleting order 771 was forbidden.", log, [log]) if f.effect == "refute"
    ]


def test_values_refuse_another_code_in_the_cited_field() -> None:
    """A train number against a cited ``"train": "ICE578"``: refused; a record's own
    name before a field ("Booking BK-1182 train: ...") is not in the field's place."""
    record = '{"booking": "BK-1182", "train": "ICE578", "seat": "41"}'
    turns = f"rail: {record}\n\nAssistant: ICE574 or ICE578?"
    [refused] = [
        f
        for f in check("Ola is booked on train ICE574.", turns, ['"train": "ICE578"'])
        if f.check == "values"
    ]
    assert (refused.effect, refused.reason) == (
        "refute",
        "the words it cites say ICE578, not ICE574",
    )
    kept = check("Booking BK-1182 train: ICE578.", turns, ['"train": "ICE578"'])
    assert not [f for f in kept if f.effect == "refute"]


def test_mixed_holds_where_the_cited_words_are_the_other_clause() -> None:
    """The clause a claim cites may say the same in other words ("at home it's
    Portuguese"), so a claim citing the other clause is held, never refused."""
    turns = as_said("Ana: I speak English at work, but at home it's Portuguese.")
    kept = check("Ana speaks Portuguese at home.", turns, ["at home it's Portuguese"])
    assert not [f for f in kept if f.effect == "refute"]


#: True claims a review wrote against the readings of cited words (claim, turns, quote):
#: each refused by a first version of them.
TRUE_CITED = [
    (
        "The hotel was inexpensive.",
        "Maya: The hotel was cheap but the flights were expensive.",
        "The hotel was cheap but the flights were expensive.",
    ),
    (
        "Maya is Tom's older sister.",
        "Tom: Maya is my sister, I'm her younger brother.",
        "Maya is Tom's sister, Tom is her younger brother.",
    ),
    (
        "The unit tests succeeded.",
        'ci: {"unit": "passed", "e2e": "failed"}',
        '"unit": "passed", "e2e": "failed"',
    ),
    (
        "The Blue team won the match.",
        "coach: The Red team lost to the Blue team on Saturday.",
        "The Red team lost to the Blue team on Saturday.",
    ),
    (
        "Maya sold her car to her brother.",
        "Maya: My brother bought my car.",
        "Maya's brother bought Maya's car.",
    ),
    (
        "The user is meeting Ana at the café at 6.",
        "User: Where should we meet?\n\nAna: I'll meet you at the café at 6.",
        "Ana will meet you at the café at 6.",
    ),
    (
        "The user is allergic to cedar dust.",
        "User: Mike and I are both allergic to cedar dust.\n\n"
        "Mike: Yep, I'm allergic to cedar dust too.",
        "Mike is allergic to cedar dust too.",
    ),
    (
        "Maya submitted the report on Thursday.",
        "Maya: The report was due Friday, but I turned it in on Thursday.",
        "The report was due Friday, but Maya turned it in on Thursday.",
    ),
    (
        "Maya visited Kyoto.",
        "Maya: I always wanted to visit Kyoto and this spring I finally did!",
        "I always wanted to visit Kyoto and this spring I finally did!",
    ),
    (
        "Tom paid the rent.",
        "Tom: Don't worry, I didn't forget to pay the rent.",
        "Tom didn't forget to pay the rent.",
    ),
    (
        "Tom replaced the car battery.",
        "Tom: The car wouldn't start so I needed to replace the battery. Runs fine now.",
        "Tom needed to replace the battery.",
    ),
    (
        "The workshop is in room 2.",
        "Maya: The meeting is in room 4, not room 2. Room 2 is for the workshop.",
        "The meeting is in room 4, not room 2. Room 2 is for the workshop.",
    ),
    (
        "Maya declined the invitation to drinks.",
        "Tom: Want to join us for drinks tonight?\n\nMaya: Maybe next time!",
        "Maybe next time!",
    ),
    (
        "The user won second place.",
        "User: I didn't win, but I took second place.",
        "The user didn't win, but the user took second place.",
    ),
]


#: And a second review's, against the version mended after the first.
TRUE_CITED += [
    (
        "The user moved to Berlin in May.",
        "User: I moved to Berlin in May. You got my new address, right?",
        "The user moved to Berlin in May. You got my new address, right?",
    ),
    (
        "The user is allergic to penicillin.",
        "User: I'm allergic to penicillin, so I can't take amoxicillin, right?",
        "I'm allergic to penicillin, so I can't take amoxicillin, right?",
    ),
    (
        "Maya is vegan.",
        "Maya: I told you I'm vegan now, didn't I?",
        "I told you I'm vegan now, didn't I?",
    ),
    (
        "Tom is the youngest of three brothers.",
        "Tom: I'm the baby of the family. I have two older brothers.",
        "Tom has two older brothers.",
    ),
    (
        "The user accepted Acme's offer.",
        "User: I refused Globex's counteroffer in favour of Acme's offer.",
        "The user refused Globex's counteroffer in favour of Acme's offer.",
    ),
    ("All unit tests passed.", 'ci: {"suite": "unit", "passed": 120, "failed": 0}', '"failed": 0'),
    (
        "The user borrowed a laptop from IT.",
        "User: I was lent a laptop by IT while mine is being repaired.",
        "The user was lent a laptop by IT",
    ),
    (
        "The user moved into a new flat.",
        "User: I moved into a flat in the Old Town.",
        "The user moved into a flat in the Old Town.",
    ),
    ("The pharmacy is open now.", 'maps: {"name": "Boots", "closed": false}', '"closed": false'),
    (
        "The new office is closer to the user's home.",
        "User: The old office was much farther from my home.",
        "The old office was much farther from the user's home.",
    ),
    (
        "Maya called her mom.",
        "Maya: I've been meaning to call my mom for weeks and finally did last night.",
        "Maya has been meaning to call Maya's mom for weeks and finally did last night.",
    ),
    (
        "Maya paid the rent.",
        "Maya: The rent was due on the 1st and it's already in the landlord's account.",
        "The rent was due on the 1st and it's already in the landlord's account.",
    ),
    (
        "Maya feels welcome at the new job.",
        "Maya: I've never felt so welcome at a job.",
        "Maya has never felt so welcome at a job.",
    ),
    (
        "The user's knee has not fully healed.",
        "Mike: How's the knee?\n\nUser: Could be better.",
        "Could be better.",
    ),
    (
        "The pharmacy is open until 22:00.",
        "maps: The pharmacy is closed after 22:00.",
        "The pharmacy is closed after 22:00.",
    ),
]


@pytest.mark.parametrize(("claim", "turns", "quote"), TRUE_CITED)
def test_true_claims_citing_their_words_are_not_refused(claim: str, turns: str, quote: str) -> None:
    said = as_said(turns)
    assert quote in said
    assert not [f for f in check(claim, said, [quote]) if f.effect == "refute"]


def test_a_code_another_quote_gives_is_not_refused() -> None:
    """Two quotes, one per leg: each code is in one of them."""
    turns = "airline: Outbound: flight BA117 on 3 May.\nReturn: flight BA118 on 10 May."
    quotes = ["Outbound: flight BA117 on 3 May.", "Return: flight BA118 on 10 May."]
    claim = "The outbound is flight BA117 and the return is flight BA118."
    assert not [f for f in check(claim, turns, quotes) if f.effect == "refute"]


def test_hedged_refuses_a_claim_from_a_question_asking_it_confirmed() -> None:
    """ "..., right?" asks; the claim states. A statement with "you know?" is no tag."""
    turns = as_said("Ines: I start on the 4th, right?\n\nHR: Right.")
    [refused] = [
        f
        for f in check("Ines starts on the 4th.", turns, ["Ines starts on the 4th, right?"])
        if f.check == "hedged"
    ]
    assert (refused.effect, refused.reason) == (
        "refute",
        'the words it cites ask it ("right?"); the claim states it as known',
    )
    plan = as_said("Tom: I'll pick you up at 7, ok?")  # "ok?" asks to agree to a plan
    assert not check("Tom will pick the user up at 7.", plan, ["Tom will pick you up at 7, ok?"])
    cork = as_said("Yuki: I live in Cork, you know? I love it.")
    assert not check("Yuki lives in Cork.", cork, ["Yuki lives in Cork, you know?"])


def test_a_quote_longer_than_the_checks_read_is_cut_like_the_evidence() -> None:
    """A quote past ``MAX_CHECKED_CHARS`` is read up to it, as claim and evidence are,
    never handed whole to the parser (which refuses a million characters)."""
    quote = "Tom likes tea. " * 70_000
    assert len(quote) > 1_000_000
    found = check("Tom likes tea.", quote, [quote])
    assert all(f.effect != "refute" for f in found)


def test_set_aside_refuses_a_claim_citing_the_correction_itself() -> None:
    """A claim that cites the correcting words but keeps the value they set aside is
    refused, though those words share no other word with it; without the quote the
    older statement holds it up."""
    turns = as_said(
        "User: I'd like a navy sofa and a wool rug.\n\n"
        "User: Actually, make it green instead of navy."
    )
    claim = "The user wants a navy sofa."
    quote = ["Actually, make it green instead of navy."]
    [refused] = [f for f in check(claim, turns, quote) if f.effect == "refute"]
    assert (refused.check, refused.reason) == (
        "corrected",
        'the evidence sets "navy" aside: "User: Actually, make it green instead of navy."',
    )
    assert not [f for f in check(claim, turns) if f.effect == "refute"]


def test_speaker_refuses_a_named_speakers_words_cited_for_the_user() -> None:
    """Where the user speaks as "User", what Mike says of himself is not the user's."""
    turns = as_said("User: Can you start Monday?\n\nMike: Sure. I'm afraid of heights, though.")
    quote = ["Mike is afraid of heights, though."]
    [refused] = [
        f for f in check("The user is afraid of heights.", turns, quote) if f.check == "speaker"
    ]
    assert (refused.effect, refused.reason) == (
        "refute",
        "the evidence says this of Mike, not of the user, in the words it cites",
    )
    alone = as_said("Mike: Sure. I'm afraid of heights, though.")  # Mike may be the user
    assert not [
        f for f in check("The user is afraid of heights.", alone, quote) if f.check == "speaker"
    ]


def test_hedged_refuses_a_claim_citing_only_a_guess() -> None:
    """ "Might be the cache." alone says nothing of the claim but a guess: refused."""
    turns = as_said("Ana: The API slowed down at noon.\n\nLi: Might be the cache.")
    [refused] = [
        f
        for f in check("The cache change slowed the API down.", turns, ["Could be related."])
        if f.check == "hedged"
    ]
    assert refused.effect == "refute"
    assert not [
        f
        for f in check("The API slowed down at noon.", turns, ["The API slowed down at noon."])
        if f.check == "hedged"
    ]


def test_modality_refuses_a_deed_the_cited_words_say_was_only_due() -> None:
    """ "was due on 3 May" cited for "was paid on 3 May": refused."""
    turns = as_said("billing: Invoice 4471 was due on 3 May.")
    quote = ["Invoice 4471 was due on 3 May."]
    [refused] = [
        f for f in check("Invoice 4471 was paid on 3 May.", turns, quote) if f.check == "modality"
    ]
    assert (refused.effect, refused.reason) == (
        "refute",
        'the words it cites say it was "due", not that it was done',
    )
    assert not [
        f for f in check("Invoice 4471 is due on 3 May.", turns, quote) if f.effect == "refute"
    ]


def test_polarity_refuses_the_opposite_word_in_the_cited_words() -> None:
    """WordNet's opposite of the claim's adjective or verb in the short quote it cites:
    refused; quiet where the quote says "not", compares, gives the opposite deed to
    someone else ("sells ... to Ana"), or is a long sentence."""
    turns = as_said("Ola: The exam was the easiest one this term.")
    quote = ["The exam was the easiest one this term."]
    [refused] = [
        f for f in check("Ola found the exam difficult.", turns, quote) if f.effect == "refute"
    ]
    assert (refused.check, refused.reason) == (
        "polarity",
        'the words it cites say "easy", the opposite of "difficult"',
    )
    build = 'ci: {"build": "4410", "result": "failed"}'
    assert {f.effect for f in check("Build 4410 passed.", build, ['"result": "failed"'])} == {
        "refute"
    }

    def refuted(claim: str, evidence: str) -> bool:
        said = as_said(evidence)
        quote = said.split(": ", 1)[1]
        return any(f.effect == "refute" for f in check(claim, said, [quote]))

    assert not refuted("Ola found the exam difficult.", "Ola: The exam wasn't easy at all.")
    assert not refuted("The exam was harder than the quiz.", "Ola: The quiz was easy.")
    assert not refuted("Ana buys eggs.", "Ola: A farmer sells eggs to Ana every week.")
    long = (
        "Ola: The exam was easy for the others in my class, who had studied the whole "
        "term with the old papers and their tutors, but not for me."
    )
    assert not refuted("Ola found the exam difficult.", long)


def test_speaker_leaves_a_denied_claim_to_the_polarity_check() -> None:
    """ "Ana did not win the race" citing "Bo won the race": whoever won, it says nothing
    of Ana's not winning."""
    turns = as_said("Kim: Bo won the race on Sunday.")
    quote = ["Bo won the race on Sunday."]
    assert not [f for f in check("Ana did not win the race.", turns, quote) if f.check == "speaker"]
    assert {f.effect for f in check("Ana won the race.", turns, quote) if f.check == "speaker"} == {
        "refute"
    }


def test_polarity_refuses_a_field_that_is_the_opposite_and_a_copula_of_it() -> None:
    """The false claims a review wrote against the opposite reading, still refused."""
    shop = as_said("maps: The pharmacy is closed on Sundays.")
    quote = ["The pharmacy is closed on Sundays."]
    assert {f.effect for f in check("The pharmacy is open on Sundays.", shop, quote)} == {"refute"}
    laptop = as_said("User: My new laptop is heavier than I hoped.")
    claim = "The user's new laptop is lighter."
    assert not [
        f
        for f in check(claim, laptop, ["The user's new laptop is heavier than the user hoped."])
        if f.check == "polarity"
    ]  # compares: left alone
