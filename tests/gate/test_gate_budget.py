"""Budget math: Bernoulli KL properties, checked against a direct numeric reference."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gate import bernoulli_kl, budget
from gate.budget import DEFAULT_EPS, clip

probs = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def reference_kl(p: float, q: float) -> float:
    """KL(Ber(p)||Ber(q)) summed term by term over the two outcomes, with 0 log 0 = 0."""
    total = 0.0
    for a, b in ((p, q), (1 - p, 1 - q)):
        if a > 0:
            total += a * (math.log(a) - math.log(b))
    return total


@given(probs, probs)
def test_kl_is_non_negative(p: float, q: float) -> None:
    assert bernoulli_kl(p, q) >= 0.0


@given(probs, probs)
def test_kl_is_zero_only_when_equal_after_clipping(p: float, q: float) -> None:
    kl = bernoulli_kl(p, q)
    if clip(p) == clip(q):
        assert kl == 0.0
    else:
        assert kl > 0.0


@given(probs, probs)
def test_kl_agrees_with_the_reference(p: float, q: float) -> None:
    cp, cq = clip(p), clip(q)
    assert bernoulli_kl(p, q) == pytest.approx(reference_kl(cp, cq), rel=1e-9, abs=1e-12)


def test_clipping_keeps_extremes_finite() -> None:
    assert math.isfinite(bernoulli_kl(1.0, 0.0))
    assert bernoulli_kl(1.0, 0.0) == pytest.approx(reference_kl(1 - DEFAULT_EPS, DEFAULT_EPS))
    assert bernoulli_kl(1.0, 0.0, eps=1e-3) < bernoulli_kl(1.0, 0.0, eps=1e-6)
    with pytest.raises(ValueError):
        clip(0.5, eps=0.0)


def test_budget_in_bits() -> None:
    b = budget(p0=0.5, p1=1.0, tau=1.0, eps=1e-12)
    assert b.required_bits == pytest.approx(1.0, abs=1e-9)  # one bit from a fair coin
    assert b.observed_bits == pytest.approx(1.0, abs=1e-9)
    assert b.budget_gap == pytest.approx(0.0, abs=1e-9)
    weak = budget(p0=0.5, p1=0.6, tau=0.95)
    assert weak.budget_gap == pytest.approx(weak.required_bits - weak.observed_bits)
    assert weak.budget_gap > 0


def test_kl_is_blind_to_direction() -> None:
    """The flaw the decision table fixes: contradicting evidence also yields many bits."""
    contradicted = budget(p0=0.5, p1=0.001, tau=0.95)
    assert contradicted.observed_bits > contradicted.required_bits
