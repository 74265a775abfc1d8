"""A calibrated head over the cross-encoder: its logit and cheap lexical checks.

A cross-encoder reads fluency well and misses what is simply absent: a name, a
number or a content word of the claim that the evidence never mentions. The head
is a logistic regression over the claim logit and ``LEXICAL_CHECKS`` (standardised),
fitted off the training rows (``python -m training.head``) and stored in the
model card as plain numbers, so loading it needs nothing beyond this module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gate.backends.embedded.features import LEXICAL_CHECKS, lexical_checks

#: The head's inputs, in order: the claim logit, then the lexical checks.
HEAD_FEATURES: tuple[str, ...] = ("ce_logit", *LEXICAL_CHECKS)


@dataclass(frozen=True, slots=True)
class Head:
    """P(claim | context) = sigmoid(intercept + sum coef * (feature - mean) / scale)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float

    @classmethod
    def from_card(cls, head: Mapping[str, Any]) -> Head:
        """The head stored under the card's ``head`` key; its features must be ours."""
        names = tuple(head["features"])
        if names != HEAD_FEATURES:
            raise ValueError(f"the card's head reads {names}, this code computes {HEAD_FEATURES}")
        mean, scale, coef = (tuple(float(v) for v in head[k]) for k in ("mean", "scale", "coef"))
        if any(len(v) != len(names) for v in (mean, scale, coef)) or min(scale) <= 0:
            raise ValueError("the card's head has the wrong number of values or a scale <= 0")
        return cls(mean, scale, coef, float(head["intercept"]))

    def to_card(self) -> dict[str, Any]:
        return {
            "features": list(HEAD_FEATURES),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
        }

    def probability(self, features: Sequence[float]) -> float:
        z = self.intercept + sum(
            c * (f - m) / s
            for c, f, m, s in zip(self.coef, features, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-700.0, min(700.0, z))))


def head_features(logit: float, claim: str, context: str) -> list[float]:
    """The head's inputs (``HEAD_FEATURES``) for one claim and the context it is read in."""
    return [logit, *lexical_checks(claim, context)]
