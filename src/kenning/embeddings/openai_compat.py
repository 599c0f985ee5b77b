"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint.

Works with OpenAI itself and with local servers that speak the same protocol
(Ollama, vLLM, llama.cpp server, LM Studio, ...). Transient failures (HTTP 429,
5xx, connection and timeout errors) are retried with capped exponential
backoff; anything else raises :class:`~kenning.errors.EmbeddingError` at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from .._http import LazyClient, error_detail, retry_delay_s
from ..errors import ConfigError, EmbeddingError
from .base import Embedder, Vectors, check_texts, normalize_rows

__all__ = ["OpenAIEmbedder"]

_DIM_PROBE_TEXT = "dimension probe"


class OpenAIEmbedder(Embedder):
    """An :class:`Embedder` backed by an OpenAI-compatible embeddings endpoint.

    ``base_url`` is the API root including the version, e.g.
    ``"https://api.openai.com/v1"`` or ``"http://localhost:11434/v1"``; texts are
    POSTed to ``{base_url}/embeddings``. If ``dim`` is ``None`` it is taken from
    the first response (reading :attr:`dim` before any request sends one short
    probe text). Requests carry at most ``batch_size`` texts. A failed request
    is tried ``max_retries`` more times, waiting ``backoff_s * 2**attempt``
    seconds (at most ``max_backoff_s``) in between. ``transport`` lets tests or
    callers inject an ``httpx`` transport. The HTTP client is created on first
    use; call :meth:`close` (or use ``with``) to release it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        batch_size: int = 128,
        backoff_s: float = 0.2,
        max_backoff_s: float = 5.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """Validate the settings; no connection is made until the first request."""
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://; got {base_url!r}")
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("model must be a non-empty string")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise ConfigError(f"dim must be a positive int or None, got {dim!r}")
        if not timeout_s > 0:
            raise ConfigError(f"timeout_s must be > 0, got {timeout_s!r}")
        if isinstance(max_retries, bool) or max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, got {max_retries!r}")
        if isinstance(batch_size, bool) or batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size!r}")
        if backoff_s < 0 or max_backoff_s < 0:
            raise ConfigError("backoff_s and max_backoff_s must be >= 0")
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._dim = dim
        self._timeout_s = float(timeout_s)
        self._max_retries = max_retries
        self._batch_size = batch_size
        self._backoff_s = float(backoff_s)
        self._max_backoff_s = float(max_backoff_s)
        self._http = LazyClient(api_key, self._timeout_s, transport)
        self._lock = threading.Lock()  # guards the dimension learnt from responses

    @property
    def model_id(self) -> str:
        """``"openai:{model}"``."""
        return f"openai:{self._model}"

    @property
    def dim(self) -> int:
        """The vector dimension, given or learnt from the first response."""
        if self._dim is None:
            self.embed_batch([_DIM_PROBE_TEXT])
        assert self._dim is not None
        return self._dim

    @property
    def url(self) -> str:
        """The full URL embeddings are requested from."""
        return self._url

    def close(self) -> None:
        """Close the HTTP client, if one was opened; a later request opens a new one."""
        self._http.close()

    def __enter__(self) -> OpenAIEmbedder:
        """Use the embedder as a context manager that closes it on exit."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the HTTP client."""
        self.close()

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (order preserved), one request per ``batch_size`` texts."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request(items[start : start + self._batch_size])
            for start in range(0, len(items), self._batch_size)
        ]
        return normalize_rows(np.concatenate(parts, axis=0))

    def _request(self, batch: list[str]) -> Vectors:
        """POST one batch, retrying transient failures; return its raw vectors."""
        payload = {"model": self._model, "input": batch}
        last_problem = "no attempt made"
        for attempt in range(self._max_retries + 1):
            if attempt:
                self._sleep_before_retry(attempt - 1)
            try:
                response = self._http.get().post(self._url, json=payload)
            except httpx.TransportError as exc:
                last_problem = f"{type(exc).__name__}: {exc}"
                continue
            code = response.status_code
            if code == 429 or code >= 500:
                last_problem = f"HTTP {code}: {error_detail(response)}"
                continue
            if not response.is_success:
                raise EmbeddingError(
                    f"embedding request to {self._url} failed with HTTP {code} "
                    f"(model {self._model!r}): {error_detail(response)}"
                )
            return self._parse(response, len(batch))
        raise EmbeddingError(
            f"embedding request to {self._url} failed after {self._max_retries + 1} "
            f"attempt(s); last error: {last_problem}"
        )

    def _sleep_before_retry(self, attempt: int) -> None:
        delay = retry_delay_s(attempt, self._backoff_s, self._max_backoff_s)
        if delay > 0:
            time.sleep(delay)

    def _parse(self, response: httpx.Response, expected: int) -> Vectors:
        """Validate a 2xx response and return its vectors ordered by ``index``."""
        where = f"embedding response from {self._url}"
        try:
            body: Any = response.json()
        except ValueError as exc:
            raise EmbeddingError(f"{where} is not valid JSON: {response.text[:200]!r}") from exc
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise EmbeddingError(f"{where} has no 'data' list")
        if len(data) != expected:
            raise EmbeddingError(f"{where} has {len(data)} embeddings for {expected} inputs")
        rows = self._order_rows(data, where)
        try:
            matrix = np.asarray(rows, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(
                f"{where} has embeddings of inconsistent dimensions or non-numeric values"
            ) from exc
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            raise EmbeddingError(f"{where} has embeddings of inconsistent dimensions")
        if not np.all(np.isfinite(matrix)):
            raise EmbeddingError(f"{where} contains non-finite values")
        self._check_dim(matrix.shape[1], where)
        return matrix.astype(np.float32)

    @staticmethod
    def _order_rows(data: list[Any], where: str) -> list[Any]:
        """Return the ``embedding`` lists of ``data`` sorted by their ``index``."""
        if not all(isinstance(item, dict) and "embedding" in item for item in data):
            raise EmbeddingError(f"{where} has an item without an 'embedding'")
        for item in data:
            emb = item["embedding"]
            if not isinstance(emb, list):
                raise EmbeddingError(f"{where} has an embedding that is not a list of numbers")
        if all("index" not in item for item in data):
            return [item["embedding"] for item in data]
        indices = [item.get("index") for item in data]
        if sorted(i for i in indices if isinstance(i, int)) != list(range(len(data))):
            raise EmbeddingError(f"{where} has bad 'index' values {indices!r}")
        by_index = {item["index"]: item["embedding"] for item in data}
        return [by_index[i] for i in range(len(data))]

    def _check_dim(self, got: int, where: str) -> None:
        with self._lock:
            if self._dim is None:
                self._dim = got
                return
            expected = self._dim
        if got != expected:
            raise EmbeddingError(
                f"{where} has {got}-d embeddings; expected {expected} (model {self._model!r})"
            )
