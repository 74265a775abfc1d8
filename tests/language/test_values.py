"""Numbers, dates, times and weekdays read from text (language/values.py)."""

from __future__ import annotations

import pytest

from language.values import Value, codes, digits, same, spoken, values


def canon(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.canonical) for v in values(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ten years", [("number", "10")]),
        ("a decade", [("number", "10")]),
        ("thirty-four people", [("number", "34")]),
        ("eleven and a half days", [("number", "11.5")]),
        ("$2,350 a month", [("number", "2350")]),
        ("3.2k users", [("number", "3200")]),
        ("release 2.3.2", [("number", "2.3.2")]),
        ("2026-10-02", [("date", "2026-10-02")]),
        ("2 October 2026", [("date", "2026-10-02")]),
        ("Oct 2, 2026", [("date", "2026-10-02")]),
        ("in August", [("date", "*-08-*")]),
        ("Thu 15:00", [("weekday", "Thursday"), ("time", "15:00")]),
        ("Thursday at 3 pm", [("weekday", "Thursday"), ("time", "15:00")]),
        ("at noon", [("time", "12:00")]),
        ("invoice INV-2231", []),  # a number inside an identifier is a name
        ("you may go", []),  # "may" the verb, not the month
    ],
)
def test_values_are_read_and_normalised(text: str, expected: list[tuple[str, str]]) -> None:
    assert canon(text) == expected


def test_a_date_without_a_year_matches_that_day_in_any_year() -> None:
    [a], [b], [c] = values("2 October"), values("2026-10-02"), values("3 October")
    assert same(a, b) and not same(c, b)


def test_a_rate_differs_by_its_period() -> None:
    [minute], [second], [bare] = values("100 per minute"), values("100 per second"), values("100")
    assert minute.per == "minute" and second.per == "second"
    assert not same(minute, second) and same(minute, bare)
    assert spoken(minute) == "100 per minute"


def test_spoken_dates_and_digits() -> None:
    assert spoken(Value("date", "2026-10-02", "2026-10-02")) == "2 October 2026"
    assert spoken(Value("date", "*-08-*", "August")) == "August"
    assert digits("one of the kids") == "one of the kids"  # "one" alone stays a word


def test_an_iso_date_time_gives_its_date_and_its_time() -> None:
    assert canon("2025-07-21T06:00") == [("date", "2025-07-21"), ("time", "06:00")]
    assert canon("2026-10-02 15:00") == [("date", "2026-10-02"), ("time", "15:00")]


def test_a_number_too_long_for_a_quantity_is_kept_as_written() -> None:
    [long] = values("account 1" + "0" * 400)
    assert long.kind == "number" and long.canonical == "1" + "0" * 400


def test_codes_are_names_of_things_not_amounts_times_or_ordinals() -> None:
    said = "Flight IB6801, seat 34A, v2.14.0, INC-7731, main#4812 at 3PM on the 21st, 92G, 16GB, 2x"
    assert codes(said) == ["IB6801", "v2.14.0", "INC-7731", "main#4812"]
    assert codes("COVID-19, GPT-4o and H2O") == []  # words with a number in them
    assert codes("on 03.10.2026 at 39C with 2L of water") == []  # a date, amounts
