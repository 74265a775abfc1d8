"""What the routes share, kept on ``app.state.memstore``: the settings, the pool of
stores and a probe of the database; and the drift report every front of the server
reads the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import Request

from memstore.audit.drift import DriftReport
from memstore.config import Settings
from memstore.rest.pool import NamespaceStores
from memstore.storage.probes import DatabaseProbe

if TYPE_CHECKING:
    from memstore.store import Store


class ServerState:
    """The settings, the namespaces' stores and the database's health probe."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.stores = NamespaceStores(settings)
        self._database = DatabaseProbe(settings.store.url)

    def ping_database(self) -> None:
        """Raise if the database does not answer ``SELECT 1``."""
        self._database.ping()

    def close(self) -> None:
        """Close every store, then the probe's engine."""
        self.stores.close()
        self._database.close()


def server_state(request: Request) -> ServerState:
    """The state of the app serving ``request``."""
    state: ServerState = request.app.state.memstore
    return state


def drift_report(request: Request, store: Store) -> DriftReport:
    """``store``'s drift report under the server's ``drift`` settings; it also sets the
    drift gauges ``GET /metrics`` serves."""
    report = store.drift(server_state(request).settings.drift)
    request.app.state.drift_gauges.observe(report)
    return report
