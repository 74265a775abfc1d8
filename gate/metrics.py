"""Gate metrics (docs/design.md, Metrics): claims, verdicts by status, latency, cache hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from gate.verdict import Verdict

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)


class GateMetrics:
    """Counters for one Gate, in their own Prometheus registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._claims = Counter(
            "gate_claims_verified", "Claims checked by the gate", registry=self.registry
        )
        self._verdicts = Counter(
            "gate_verdicts", "Verdicts by status", ["status"], registry=self.registry
        )
        self._latency = Histogram(
            "gate_backend_latency_seconds",
            "Wall time of one check_many call's backend work",
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self._cache = Counter(
            "gate_cache_lookups", "Cache lookups by result", ["result"], registry=self.registry
        )

    def observe(
        self, verdicts: Sequence[Verdict], latency_s: float, hits: int, misses: int
    ) -> None:
        self._claims.inc(len(verdicts))
        for verdict in verdicts:
            self._verdicts.labels(status=verdict.status.value).inc()
        self._latency.observe(latency_s)
        if hits:
            self._cache.labels(result="hit").inc(hits)
        if misses:
            self._cache.labels(result="miss").inc(misses)

    def as_dict(self) -> dict[str, Any]:
        """``claims``, ``verdicts`` by status, ``cache_hit_rate``, ``latency_count``/``_sum``."""
        values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        for family in self.registry.collect():
            for sample in family.samples:
                values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        verdicts = {
            dict(labels)["status"]: int(v)
            for (name, labels), v in values.items()
            if name == "gate_verdicts_total"
        }
        hits = values.get(("gate_cache_lookups_total", (("result", "hit"),)), 0.0)
        misses = values.get(("gate_cache_lookups_total", (("result", "miss"),)), 0.0)
        return {
            "claims": int(values.get(("gate_claims_verified_total", ()), 0)),
            "verdicts": verdicts,
            "cache_hit_rate": hits / (hits + misses) if hits + misses else 0.0,
            "latency_count": int(values.get(("gate_backend_latency_seconds_count", ()), 0)),
            "latency_sum_s": values.get(("gate_backend_latency_seconds_sum", ()), 0.0),
        }

    def prometheus(self) -> str:
        """The Prometheus text exposition of these metrics."""
        return generate_latest(self.registry).decode("utf-8")
