"""Budget math: Bernoulli KL divergences, in nats internally, reported in bits.

See docs/design.md, Budget in bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_EPS = 1e-6
#: The confidence a writer is taken to state when it states none: the budget's target.
DEFAULT_STATED_CONFIDENCE = 0.95
LN2 = math.log(2.0)


def clip(p: float, eps: float = DEFAULT_EPS) -> float:
    """Clip a probability to [eps, 1 - eps] so every log is finite."""
    if not 0.0 < eps < 0.5:
        raise ValueError("eps must be in (0, 0.5)")
    return min(max(p, eps), 1.0 - eps)


def bernoulli_kl(p: float, q: float, eps: float = DEFAULT_EPS) -> float:
    """KL(Ber(p) || Ber(q)) in nats, both clipped to [eps, 1 - eps]."""
    p, q = clip(p, eps), clip(q, eps)
    return p * math.log(p / q) + (1.0 - p) * math.log((1.0 - p) / (1.0 - q))


def bits(nats: float) -> float:
    return nats / LN2


@dataclass(frozen=True, slots=True)
class Budget:
    """How much information the claim needs (required) and the evidence gives (observed)."""

    required_bits: float
    observed_bits: float

    @property
    def budget_gap(self) -> float:
        return self.required_bits - self.observed_bits


def budget(p0: float, p1: float, tau: float, eps: float = DEFAULT_EPS) -> Budget:
    """RequiredBits = KL(Ber(tau) || Ber(p0)); ObservedBits = KL(Ber(p1) || Ber(p0))."""
    return Budget(
        required_bits=bits(max(bernoulli_kl(tau, p0, eps), 0.0)),
        observed_bits=bits(max(bernoulli_kl(p1, p0, eps), 0.0)),
    )
