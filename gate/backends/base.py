"""The one base class every verifier backend implements (like httpx's BaseTransport)."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType


class VerifierBackend:
    """Estimates P(claim is true | context) for batches of (claim, context) pairs.

    Subclasses implement ``estimate_many``. ``deterministic`` backends (same input,
    same output) may be cached; ``identity`` names the model and prompt for the cache.
    """

    name: str = "backend"
    model: str = ""
    deterministic: bool = True

    @property
    def identity(self) -> str:
        return f"{self.name}:{self.model}"

    def estimate_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One probability per (claim, context) pair, in order."""
        raise NotImplementedError

    def estimate(self, claim: str, context: str) -> float:
        return self.estimate_many([(claim, context)])[0]

    def close(self) -> None:
        """Release models, sessions or connections. A no-op by default."""

    def __enter__(self) -> VerifierBackend:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
