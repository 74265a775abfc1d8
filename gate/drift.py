"""Drift in the gate's verdicts: a two-sided tabular CUSUM (Page, 1954) over a stream of
per-write numbers (1/0 for admitted/refused, or p1), against a baseline window.

The first ``baseline`` observations set the reference mean and spread. The rest are
taken in consecutive batches of ``batch`` (a single admitted/refused bit is far from
normal; a batch mean is close to it), each batch mean standardized with the baseline,
z = (batch mean - mean) / (sd / sqrt(batch)), and two sums are kept:
``upper = max(0, upper + z - k)`` and ``lower = max(0, lower - z - k)``. An alarm is
raised when either passes ``h``. The defaults (500, 25, k = 1, h = 5) leave room for
the baseline's own estimation error: ``tests/gate/test_cusum.py`` checks that seeded
unchanged streams stay quiet and that a drop in the acceptance rate from 0.6 to 0.45
is caught within a few hundred writes.
No storage here: ``memstore.audit.drift`` reads the streams from SQL.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

#: The smallest spread a baseline is given: a constant baseline (every write admitted,
#: say) has none, and dividing by it would make any change infinite.
MIN_SD = 0.05


class CusumSettings(BaseModel):
    """How the detector judges a stream: ``baseline`` first observations set the mean and
    spread; later ones are judged ``batch`` at a time; ``k`` (slack per batch) and ``h``
    (threshold) are in standard deviations of a batch mean."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    baseline: int = Field(default=500, ge=10, description="Observations in the baseline.")
    batch: int = Field(default=25, ge=1, description="Observations per judged batch.")
    k: float = Field(default=1.0, gt=0, description="Slack per batch, in batch-mean sds.")
    h: float = Field(default=5.0, gt=0, description="Alarm threshold, in batch-mean sds.")


class Cusum(BaseModel):
    """The detector's state after a stream: the baseline, both sums, and the first alarm."""

    model_config = ConfigDict(frozen=True)

    observations: int
    baseline_mean: float | None = None
    baseline_sd: float | None = None
    #: The mean of every value after the baseline (a late change shows in it diluted).
    recent_mean: float | None = None
    upper: float = 0.0
    lower: float = 0.0
    alarm_at: int | None = None
    direction: Literal["up", "down"] | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ready(self) -> bool:
        """Whether the stream was long enough to set a baseline."""
        return self.baseline_mean is not None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def alarm(self) -> bool:
        """Whether either sum passed the threshold somewhere after the baseline."""
        return self.alarm_at is not None


def cusum(values: Sequence[float], settings: CusumSettings | None = None) -> Cusum:
    """Run the CUSUM over ``values`` (oldest first): the first ``settings.baseline`` set
    the reference, the rest are watched in whole batches (a last, partial batch waits).
    The first alarm is kept, at the index of its batch's last value; the sums run on."""
    settings = settings or CusumSettings()
    for at, value in enumerate(values):
        if not math.isfinite(value):
            raise ValueError(f"values[{at}] is {value}: every observation must be finite")
    if len(values) < settings.baseline:
        return Cusum(observations=len(values))
    reference = values[: settings.baseline]
    mean = math.fsum(reference) / len(reference)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in reference) / len(reference))
    scale = max(sd, MIN_SD) / math.sqrt(settings.batch)
    upper = lower = 0.0
    alarm_at: int | None = None
    direction: Literal["up", "down"] | None = None
    watched = values[settings.baseline :]
    whole = len(watched) - len(watched) % settings.batch
    for start in range(0, whole, settings.batch):
        chunk = watched[start : start + settings.batch]
        z = (math.fsum(chunk) / len(chunk) - mean) / scale
        upper = max(0.0, upper + z - settings.k)
        lower = max(0.0, lower - z - settings.k)
        if alarm_at is None and (upper > settings.h or lower > settings.h):
            alarm_at = settings.baseline + start + settings.batch - 1
            direction = "up" if upper > settings.h else "down"
    recent = math.fsum(watched) / len(watched) if watched else None
    return Cusum(
        observations=len(values),
        baseline_mean=mean,
        baseline_sd=sd,
        recent_mean=recent,
        upper=upper,
        lower=lower,
        alarm_at=alarm_at,
        direction=direction,
    )
