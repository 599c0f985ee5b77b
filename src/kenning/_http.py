"""What the OpenAI-compatible clients (embeddings, chat) share: a lazily opened,
thread-safe ``httpx.Client`` with bearer auth, and the server's error message."""

from __future__ import annotations

import threading

import httpx

__all__ = ["LazyClient", "error_detail", "retry_delay_s"]


def error_detail(response: httpx.Response) -> str:
    """The server's own error message if it sent one, else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])[:200]
        if isinstance(err, str):
            return err[:200]
    return response.text[:200]


def retry_delay_s(attempt: int, base_s: float, cap_s: float) -> float:
    """Capped exponential backoff before retry number ``attempt`` (0-based)."""
    return float(min(base_s * 2.0**attempt, cap_s))


class LazyClient:
    """An ``httpx.Client`` opened on first use; ``close`` drops it (a later use reopens)."""

    def __init__(
        self, api_key: str | None, timeout_s: float, transport: httpx.BaseTransport | None
    ) -> None:
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def get(self) -> httpx.Client:
        """The open client (opening it if needed)."""
        with self._lock:
            if self._client is None:
                headers = {"Accept": "application/json"}
                if self._api_key:
                    headers["Authorization"] = f"Bearer {self._api_key}"
                self._client = httpx.Client(
                    headers=headers, timeout=self._timeout_s, transport=self._transport
                )
            return self._client

    def close(self) -> None:
        """Close the client, if one was opened."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
