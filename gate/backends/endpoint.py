"""An OpenAI-compatible ``/chat/completions`` endpoint as the ``openai`` backend and
memstore's ``llm`` fact extractor both call it: one httpx client carrying the bearer
key, and POSTs retried with exponential backoff. Each caller reads the answer its own
way; this module only sends and retries."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import httpx

from gate.backends.base import Closing

#: HTTP statuses worth retrying (overloaded, rate-limited, gateway trouble).
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def retry_status(response: httpx.Response) -> bool:
    """Whether an answer is worth another try: its status is in ``RETRY_STATUS``."""
    return response.status_code in RETRY_STATUS


class ChatEndpoint(Closing):
    """POSTs to ``{base_url}/chat/completions``, each under ``timeout`` seconds.

    The bearer key is ``api_key``, else the environment variable ``api_key_env`` (no
    ``Authorization`` header without either). With ``client`` given, requests go
    through it and ``close`` leaves it open.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        api_key_env: str,
        *,
        timeout: float,
        retries: int,
        backoff: float,
        client: httpx.Client | None = None,
    ) -> None:
        self.retries = max(0, retries)
        self.backoff = max(0.0, backoff)
        key = api_key if api_key is not None else os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.client = client or httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout
        )
        self._owns_client = client is None

    def post(
        self,
        payload: dict[str, Any],
        retryable: Callable[[httpx.Response], bool] = retry_status,
    ) -> tuple[httpx.Response, int]:
        """POST ``payload``; after a transport error or a ``retryable`` answer, wait
        ``backoff`` seconds (doubled per attempt) and try again, ``retries`` times at
        most. Returns the last answer and the attempts made; raises the last
        ``httpx.RequestError`` when every attempt failed with one."""
        attempt = 0
        while True:
            try:
                response = self.client.post("/chat/completions", json=payload)
            except httpx.RequestError:
                if attempt >= self.retries:
                    raise
            else:
                if attempt >= self.retries or not retryable(response):
                    return response, attempt + 1
            time.sleep(self.backoff * 2**attempt)
            attempt += 1

    def close(self) -> None:
        if self._owns_client:
            self.client.close()
