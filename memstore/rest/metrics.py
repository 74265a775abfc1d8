"""HTTP metrics (request counts and latency by method, route template and status) and the
gate's drift gauges, in Prometheus registries of the app's own (served by
``GET /metrics``)."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from memstore.drift import DriftReport
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
    """The last drift report of each namespace the server was asked about (``GET /drift``
    or the audit page): the CUSUM sums, the alarms and the error budgets' burn."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.sums = Gauge(
            "memstore_gate_drift_cusum",
            "CUSUM sum of a gated-write stream (in batch-mean sds) by direction",
            ["namespace", "backend", "metric", "direction"],
            registry=self.registry,
        )
        self.alarms = Gauge(
            "memstore_gate_drift_alarm",
            "1 while a stream's CUSUM has passed its threshold",
            ["namespace", "backend", "metric"],
            registry=self.registry,
        )
        self.burn = Gauge(
            "memstore_gate_error_budget_burn",
            "Share of decisions people marked wrong over the share allowed (1: spent)",
            ["namespace", "kind"],
            registry=self.registry,
        )

    def observe(self, report: DriftReport) -> None:
        """Set the gauges from ``report``."""
        for stream in report.streams:
            names = (report.namespace, stream.backend, stream.metric)
            self.sums.labels(*names, "up").set(stream.result.upper)
            self.sums.labels(*names, "down").set(stream.result.lower)
            self.alarms.labels(*names).set(1.0 if stream.alarm else 0.0)
        for budget in report.budgets:
            if budget.burn is not None:
                self.burn.labels(report.namespace, budget.kind).set(budget.burn)
