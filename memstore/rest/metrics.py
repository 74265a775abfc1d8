"""HTTP metrics: request counts and latency by method, route template and status, in
a Prometheus registry of the app's own (served by ``GET /metrics``)."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Histogram

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
