"""The CUSUM drift detector over the gate's verdict streams (gate/drift.py)."""

from __future__ import annotations

import math
import random

import pytest
from pydantic import ValidationError

from gate.drift import CusumSettings, cusum


def coin(rate: float, n: int, seed: int) -> list[float]:
    """``n`` seeded Bernoulli(rate) observations: 1.0 admitted, 0.0 refused."""
    draw = random.Random(seed)
    return [1.0 if draw.random() < rate else 0.0 for _ in range(n)]


@pytest.mark.parametrize("rate", [0.3, 0.6, 0.9])
def test_unchanged_streams_rarely_alarm(rate):
    runs = [cusum(coin(rate, 500, seed) + coin(rate, 2000, seed + 1000)) for seed in range(50)]
    assert all(found.ready and found.observations == 2500 for found in runs)
    # a false alarm now and then is the price of catching real drift; seeded, so exact
    assert sum(found.alarm for found in runs) <= 3


@pytest.mark.parametrize(
    ("after", "direction", "within"),
    [(0.45, "down", 1000), (0.2, "down", 100), (0.75, "up", 1000)],
    ids=["refuses a little more", "refuses far more", "admits more"],
)
def test_a_changed_acceptance_rate_is_caught_after_the_change(after, direction, within):
    caught = 0
    for seed in range(50):
        changed = coin(after, 1500, seed + 1000)
        found = cusum(coin(0.6, 500, seed) + changed)
        if found.alarm and found.direction == direction and 500 <= found.alarm_at < 500 + within:
            caught += 1
        assert found.recent_mean == pytest.approx(sum(changed) / len(changed))
    assert caught >= 48


def test_a_constant_baseline_still_notices_a_change():
    found = cusum([1.0] * 50 + [0.0] * 5, CusumSettings(baseline=50, batch=5))
    assert found.baseline_sd == 0.0
    assert found.alarm and found.direction == "down"
    assert found.alarm_at == 54


def test_a_partial_last_batch_waits():
    found = cusum([1.0] * 50 + [0.0] * 4, CusumSettings(baseline=50, batch=5))
    assert not found.alarm
    assert found.upper == found.lower == 0.0


def test_p1_drift_is_seen_on_continuous_values():
    draw = random.Random(5)
    before = [min(1.0, max(0.0, draw.gauss(0.8, 0.1))) for _ in range(500)]
    after = [min(1.0, max(0.0, draw.gauss(0.75, 0.1))) for _ in range(200)]
    found = cusum(before + after)
    assert found.alarm and found.direction == "down"
    assert found.baseline_mean == pytest.approx(0.8, abs=0.02)


def test_a_stream_shorter_than_the_baseline_is_not_judged():
    found = cusum(coin(0.1, 499, seed=6))
    assert not found.ready
    assert not found.alarm
    assert found.baseline_mean is None and found.observations == 499


def test_a_stricter_threshold_alarms_later():
    stream = coin(0.6, 500, seed=7) + coin(0.45, 1000, seed=8)
    loose = cusum(stream, CusumSettings(h=3.0))
    strict = cusum(stream, CusumSettings(h=8.0))
    assert loose.alarm_at is not None and strict.alarm_at is not None
    assert loose.alarm_at < strict.alarm_at


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_value_that_is_not_finite_is_refused_with_its_place(bad):
    with pytest.raises(ValueError, match=r"values\[3\]"):
        cusum([1.0, 0.0, 1.0, bad])


@pytest.mark.parametrize(
    ("field", "value"), [("baseline", 5), ("batch", 0), ("k", 0.0), ("h", -1.0)], ids=str
)
def test_settings_out_of_range_name_the_field(field, value):
    with pytest.raises(ValidationError, match=field):
        CusumSettings(**{field: value})
