"""Structured text read as fields: JSON records and key: value lines."""

from __future__ import annotations

import pytest

from language.fields import fields, identities, key_words


def read(text: str) -> list[tuple[str, str, str, str]]:
    return [(f.record, f.key, f.value, text[f.start : f.end]) for f in fields(text)]


def test_a_json_record_is_named_by_its_id_and_each_field_cites_its_pair() -> None:
    text = '{"order_id": "A-17", "status": "shipped", "eta": "2026-10-02", "paid": true}'
    assert read(text) == [
        ("Order A-17", "order id", "A-17", '"order_id": "A-17"'),
        ("Order A-17", "status", "shipped", '"status": "shipped"'),
        ("Order A-17", "eta", "2026-10-02", '"eta": "2026-10-02"'),
        ("Order A-17", "paid", "yes", '"paid": true'),
    ]


def test_key_value_lines_and_lists_of_records() -> None:
    assert read("invoice: INV-2231\npaid_on: 2026-10-02") == [
        ("Invoice INV-2231", "invoice", "INV-2231", "invoice: INV-2231"),
        ("Invoice INV-2231", "paid on", "2026-10-02", "paid_on: 2026-10-02"),
    ]
    team = '[{"name": "Lena Park", "role": "tech lead"}, {"name": "Omar", "role": "dev"}]'
    assert [(r, k, v) for r, k, v, _ in read(team)] == [
        ("Lena Park", "name", "Lena Park"),
        ("Lena Park", "role", "tech lead"),
        ("Omar", "name", "Omar"),
        ("Omar", "role", "dev"),
    ]


def test_a_record_named_by_its_kind_says_the_kind_once() -> None:
    guest = '{"policyholder": "Carlos Mendes", "vehicle": "Renault Clio"}'
    assert {r for r, _, _, _ in read(guest)} == {"Policyholder Carlos Mendes"}
    hotel = '{"hotel": "Hotel Granvia Kyoto", "nights": 4}'
    assert {r for r, _, _, _ in read(hotel)} == {"Hotel Granvia Kyoto"}


def test_a_number_written_as_text_names_a_record_and_a_state_does_not() -> None:
    card = '{"status": "blocked", "card": "4410", "replacement_eta": "5 business days"}'
    assert {r for r, _, _, _ in read(card)} == {"Card 4410"}
    account = '{"stage": "discovery", "employees": 120, "account": "Brightwave"}'
    assert {r for r, _, _, _ in read(account)} == {"Account Brightwave"}
    # a number as text is an amount, unless its key names a thing by its number
    order = '{"quantity": "2", "amount": "349", "product": "Standing desk"}'
    assert {r for r, _, _, _ in read(order)} == {"Product Standing desk"}


@pytest.mark.parametrize(
    "text",
    [
        "I live in Boston.",
        "Note: I like tea.",
        '{"temp_c": 3}',
        '{"status": "ok", "temp_c": 3}',
        "{not json",
        "[1, 2, 3]",
    ],
)
def test_prose_and_unnamed_records_hold_no_fields(text: str) -> None:
    assert fields(text) == []


@pytest.mark.parametrize(
    ("key", "words"),
    [("failed_job", "failed job"), ("dueDate", "due date"), ("x-request-id", "x request id")],
)
def test_keys_read_as_words(key: str, words: str) -> None:
    assert key_words(key) == words


def test_each_record_of_a_list_cites_its_own_pairs() -> None:
    text = '[{"name": "Order A", "status": "shipped"}, {"name": "Order B", "status": "pending"}]'
    assert [(r, v, cited) for r, _, v, cited in read(text)][1::2] == [
        ("Order A", "shipped", '"status": "shipped"'),
        ("Order B", "pending", '"status": "pending"'),
    ]


def test_json_nested_past_the_stack_is_not_fields() -> None:
    assert fields("[" * 100_000) == []


def test_identities_name_a_record_by_its_identifier() -> None:
    named = fields('{"epic": "ONB-42", "title": "Onboarding redesign", "due": "2027-01-15"}')
    assert identities(named) == {"Epic ONB-42": "Onboarding redesign"}
    assert identities(fields('{"epic": "ONB-42", "due": "2027-01-29"}')) == {}
