"""HTTP metrics (request counts and latency by method, route template and status) and the
gate's drift gauges, in Prometheus registries of the app's own (served by
``GET /metrics``)."""

from __future__ import annotations

import threading
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from memstore.audit.drift import DriftReport
from memstore.rest.asgi import ASGIApp, Message, Receive, Scope, Send

#: Route label of requests that matched no route (keeps the metrics' label set bounded).
UNMATCHED = "<unmatched>"


class HTTPMetrics:
    """Request counts and latency by method, route template and status (own registry)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "memstore_http_requests",
            "HTTP requests by method, route template and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "memstore_http_request_duration_seconds",
            "HTTP request latency by method and route template",
            ["method", "route"],
            registry=self.registry,
        )


class MetricsMiddleware:
    """Counts and times every HTTP request into ``metrics``."""

    def __init__(self, app: ASGIApp, metrics: HTTPMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        start = time.perf_counter()

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            template = getattr(route, "path_format", None) or UNMATCHED
            method = str(scope.get("method", ""))
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.latency.labels(method, template).observe(time.perf_counter() - start)


class DriftGauges:
    """How many namespaces the server last saw drifting, per backend and metric, and
    how many have spent an error budget, per kind; from each namespace's latest report
    (``GET /drift`` or the audit page). ``/metrics`` needs no key, so no namespace is
    named: ``GET /drift`` with a key says which."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.alarms = Gauge(
            "memstore_gate_drift_alarms",
            "Namespaces whose latest drift report has an alarm, by backend and metric",
            ["backend", "metric"],
            registry=self.registry,
        )
        self.spent = Gauge(
            "memstore_gate_error_budgets_spent",
            "Namespaces whose latest drift report has this error budget spent",
            ["kind"],
            registry=self.registry,
        )
        self._lock = threading.Lock()
        self._alarmed: dict[str, set[tuple[str, str]]] = {}
        self._spent: dict[str, set[str]] = {}

    def observe(self, report: DriftReport) -> None:
        """Replace ``report.namespace``'s part of the gauges with ``report``'s."""
        with self._lock:
            self._alarmed[report.namespace] = {(s.backend, s.metric) for s in report.alarms}
            self._spent[report.namespace] = {b.kind for b in report.spent}
            self.alarms.clear()
            self.spent.clear()
            for streams in self._alarmed.values():
                for backend, metric in streams:
                    self.alarms.labels(backend, metric).inc()
            for kinds in self._spent.values():
                for kind in kinds:
                    self.spent.labels(kind).inc()
