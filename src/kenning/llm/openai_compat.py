"""Chat completions from any OpenAI-compatible ``/v1/chat/completions`` endpoint.

Works with OpenAI and with local servers speaking the same protocol (Ollama,
vLLM, llama.cpp server, LM Studio, ...). Transient failures (HTTP 429, 5xx,
connection errors, timeouts) are retried a bounded number of times with capped
exponential backoff, honouring ``Retry-After``; anything else raises
:class:`~kenning.errors.LLMError` at once. Every call's cost is computed from
configurable prices per 1,000 tokens and added to :attr:`OpenAICompatChat.usage`.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Sequence
from typing import Any

import httpx

from .._http import LazyClient, error_detail, retry_delay_s
from ..errors import ConfigError, LLMError
from .base import ChatModel, Completion, Message, Usage, UsageMeter, check_messages

__all__ = ["OpenAICompatChat"]


def _retry_after_s(response: httpx.Response) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta or HTTP date), if any."""
    raw = response.headers.get("Retry-After")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _token_count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class OpenAICompatChat(ChatModel):
    """A :class:`ChatModel` backed by an OpenAI-compatible chat-completions endpoint.

    ``base_url`` is the API root including the version (``https://api.openai.com/v1``,
    ``http://localhost:11434/v1``); requests go to ``{base_url}/chat/completions``.
    A failed request is tried ``max_retries`` more times, waiting the server's
    ``Retry-After`` or ``backoff_s * 2**attempt`` seconds, never more than
    ``max_backoff_s``. ``price_prompt_per_1k`` / ``price_completion_per_1k`` are
    US dollars per 1,000 tokens. ``temperature`` is sent with every request.
    ``transport`` lets tests or callers inject an ``httpx`` transport. The HTTP
    client opens on first use; :meth:`close` (or ``with``) releases it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        backoff_s: float = 0.5,
        max_backoff_s: float = 10.0,
        price_prompt_per_1k: float = 0.0,
        price_completion_per_1k: float = 0.0,
        temperature: float = 0.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """Validate the settings; no connection is made until the first request."""
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://; got {base_url!r}")
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("model must be a non-empty string")
        if not timeout_s > 0:
            raise ConfigError(f"timeout_s must be > 0, got {timeout_s!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be an int >= 0, got {max_retries!r}")
        if backoff_s < 0 or max_backoff_s < 0:
            raise ConfigError("backoff_s and max_backoff_s must be >= 0")
        if price_prompt_per_1k < 0 or price_completion_per_1k < 0:
            raise ConfigError("token prices must be >= 0")
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._timeout_s = float(timeout_s)
        self._max_retries = max_retries
        self._backoff_s = float(backoff_s)
        self._max_backoff_s = float(max_backoff_s)
        self._prices = (float(price_prompt_per_1k), float(price_completion_per_1k))
        self._temperature = float(temperature)
        self._http = LazyClient(api_key, self._timeout_s, transport)
        self._meter = UsageMeter()

    @property
    def model_id(self) -> str:
        """``"openai:{model}"``."""
        return f"openai:{self._model}"

    @property
    def url(self) -> str:
        """The full URL completions are requested from."""
        return self._url

    @property
    def usage(self) -> Usage:
        """Totals over every call this client made (calls, failures, tokens, cost)."""
        return self._meter.usage

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """US dollars for the given token counts at this client's prices."""
        return (prompt_tokens * self._prices[0] + completion_tokens * self._prices[1]) / 1000.0

    def close(self) -> None:
        """Close the HTTP client, if one was opened; a later request opens a new one."""
        self._http.close()

    def __enter__(self) -> OpenAICompatChat:
        """Use the client as a context manager that closes it on exit."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the HTTP client."""
        self.close()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json: bool = False,
        max_tokens: int | None = None,
    ) -> Completion:
        """POST the messages, retrying transient failures; see the class docstring."""
        payload: dict[str, Any] = {
            "model": self._model,
            "messages": [m.to_dict() for m in check_messages(messages)],
            "temperature": self._temperature,
        }
        if json:
            payload["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            payload["max_tokens"] = int(max_tokens)
        last_problem, wait = "no attempt made", None
        for attempt in range(self._max_retries + 1):
            if attempt:
                self._sleep(attempt - 1, wait)
            try:
                outcome = self._attempt(payload)
            except LLMError:
                self._meter.add(failed=True, retries=attempt)
                raise
            if isinstance(outcome, Completion):
                self._meter.add(outcome, retries=attempt)
                return outcome
            last_problem, wait = outcome
        self._meter.add(failed=True, retries=self._max_retries)
        raise LLMError(
            f"chat request to {self._url} failed after {self._max_retries + 1} "
            f"attempt(s); last error: {last_problem}"
        )

    def _attempt(self, payload: dict[str, Any]) -> Completion | tuple[str, float | None]:
        """One POST: the completion, or ``(problem, Retry-After)`` if worth retrying.

        Raises :class:`LLMError` for failures a retry cannot fix.
        """
        started = time.perf_counter()
        try:
            response = self._http.get().post(self._url, json=payload)
        except httpx.TransportError as exc:  # includes timeouts
            return f"{type(exc).__name__}: {exc}", None
        code = response.status_code
        if code == 429 or code >= 500:
            return f"HTTP {code}: {error_detail(response)}", _retry_after_s(response)
        if not response.is_success:
            raise LLMError(
                f"chat request to {self._url} failed with HTTP {code} "
                f"(model {self._model!r}): {error_detail(response)}"
            )
        return self._parse(response, time.perf_counter() - started)

    def _sleep(self, attempt: int, retry_after: float | None) -> None:
        delay = (
            retry_delay_s(attempt, self._backoff_s, self._max_backoff_s)
            if retry_after is None
            else min(retry_after, self._max_backoff_s)
        )
        if delay > 0:
            time.sleep(delay)

    def _parse(self, response: httpx.Response, latency_s: float) -> Completion:
        """Validate a 2xx response; return its first choice's text with usage and cost."""
        where = f"chat response from {self._url}"
        try:
            body: Any = response.json()
        except ValueError as exc:
            raise LLMError(f"{where} is not valid JSON: {response.text[:200]!r}") from exc
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LLMError(f"{where} has no 'choices'")
        message = choices[0].get("message")
        text = message.get("content") if isinstance(message, dict) else None
        if not isinstance(text, str):
            raise LLMError(f"{where} has no message content")
        usage = body.get("usage")
        prompt = _token_count(usage, "prompt_tokens")
        completion = _token_count(usage, "completion_tokens")
        model = body.get("model")
        return Completion(
            text=text,
            model=model if isinstance(model, str) and model else self._model,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost_usd=self.cost(prompt, completion),
            latency_s=latency_s,
        )
