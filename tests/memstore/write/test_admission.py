"""A write hook's answer (memstore.write.hook.Admission): built by keyword, or by position
in the order it had as a dataclass, so hooks written against either keep working."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memstore.storage.tables import FactStatus
from memstore.write.hook import Admission


def test_positional_and_keyword_construction_agree():
    by_position = Admission(True, "grounded", FactStatus.VERIFIED, 0.9, 0.1, 0.95)
    by_keyword = Admission(
        accepted=True,
        verdict="grounded",
        status=FactStatus.VERIFIED,
        confidence=0.9,
        p0=0.1,
        p1=0.95,
    )
    assert by_position == by_keyword
    assert (by_position.p0, by_position.p1, by_position.backend) == (0.1, 0.95, None)


def test_mixed_construction_fills_the_rest_by_keyword():
    mixed = Admission(False, "unsupported", FactStatus.UNVERIFIED, 0.4, backend="rule")
    assert (mixed.accepted, mixed.backend, mixed.reason) == (False, "rule", None)


def test_a_field_given_twice_or_too_many_arguments_is_a_type_error():
    with pytest.raises(TypeError, match="'verdict' both by position and by keyword"):
        Admission(True, "grounded", verdict="grounded", status=FactStatus.VERIFIED, confidence=1.0)
    with pytest.raises(TypeError, match="at most"):
        Admission(*([None] * 20))


def test_unknown_keywords_and_bad_values_are_refused():
    with pytest.raises(ValidationError, match="colour"):
        Admission(True, "grounded", FactStatus.VERIFIED, 0.9, colour="red")
    with pytest.raises(ValidationError, match="confidence"):
        Admission(True, "grounded", FactStatus.VERIFIED, "very")
