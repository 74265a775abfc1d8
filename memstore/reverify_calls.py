"""The Store's re-verification calls: run it now, mark facts due, the schedule, and the
background re-verifier. A part of the ``Store`` facade (``memstore.store``); the work is in
``memstore.reverifying`` and ``memstore.background``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from gate import Gate, GatePolicy
from memstore import checks, hooks
from memstore import reverify as reverification
from memstore.admission import WriteHook
from memstore.background import BackgroundReverifier
from memstore.errors import MemstoreError
from memstore.providers import DEFAULT_HTTP_TIMEOUT_S
from memstore.reverifying import Reverification

#: How often ``start_reverifier()`` looks for due facts.
DEFAULT_REVERIFY_EVERY = timedelta(minutes=5)


class ReverifyCalls:
    """Re-verification methods of ``Store``; they use the attributes declared here."""

    namespace: str
    hook: WriteHook
    _reverification: Reverification
    _reverifier: BackgroundReverifier | None

    def reverify(
        self,
        *,
        limit: int = reverification.DEFAULT_LIMIT,
        batch: int = reverification.DEFAULT_BATCH,
        lease: timedelta = reverification.DEFAULT_LEASE,
        gate: Gate | str | None = None,
        policy: GatePolicy | None = None,
        fetch_timeout: float = DEFAULT_HTTP_TIMEOUT_S,
        progress: Callable[[int, int], None] | None = None,
    ) -> reverification.ReverifyReport:
        """Re-verify up to ``limit`` due facts against their refetched sources, ``batch`` per
        call of the store's gate (or ``gate``/``policy``), each leased for ``lease``."""
        checks.reverify_options(limit, batch, lease, fetch_timeout)
        hook = hooks.reverify_hook(self.hook, gate, policy)
        return self._reverification.run(hook, limit, batch, lease, fetch_timeout, progress)

    def mark_due(self, fact_ids: Sequence[str] | None = None) -> int:
        """Make facts due for re-verification now: the listed ones, or every open fact
        the gate looks after (ungated facts are never re-verified). Returns how many."""
        ids = None if fact_ids is None else checks.strings("fact_ids", fact_ids, "fact ids")
        return self._reverification.mark_due(ids)

    def reverify_policy(self) -> reverification.ReverifyPolicy:
        """The re-verification schedule this store uses: the namespace's stored policy
        (or the defaults), with what was given to ``open()`` on top."""
        return self._reverification.policy()

    def set_reverify_policy(
        self, *, recheck_after: timedelta | None = None, retry_after: timedelta | None = None
    ) -> reverification.ReverifyPolicy:
        """Store the namespace's re-verification policy for every process; unset fields
        keep their value. Scheduled facts keep their time (``mark_due()`` moves them)."""
        changes = checks.positive_fields(recheck_after=recheck_after, retry_after=retry_after)
        return self._reverification.set_policy(changes)

    def count_due(self) -> int:
        """Facts whose re-verification is due now."""
        return self._reverification.count_due()

    def start_reverifier(
        self, every: timedelta = DEFAULT_REVERIFY_EVERY, **options: Any
    ) -> BackgroundReverifier:
        """Run ``reverify(**options)`` every ``every`` on a background thread, from now until
        ``stop_reverifier()`` or ``close()``; leases keep several processes' runs apart."""
        if self._reverifier is not None and self._reverifier.running:
            raise MemstoreError("a re-verifier is already running; stop_reverifier() first")
        checks.call_options(self.reverify, options)
        self._reverifier = BackgroundReverifier(self, checks.positive("every", every), options)
        self._reverifier.start()
        return self._reverifier

    def stop_reverifier(self, wait: bool = True) -> None:
        """Stop the background re-verifier (waiting for a run in progress by default)."""
        if self._reverifier is not None:
            self._reverifier.stop(wait=wait)
            self._reverifier = None
