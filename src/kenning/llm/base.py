"""The :class:`ChatModel` contract every chat (LLM) backend implements.

Backends implement only :meth:`ChatModel.complete`; :meth:`ChatModel.ask` and
:meth:`ChatModel.complete_json` are built on it. Nothing in kenning needs an
LLM: callers that have none simply do not create a chat model.
"""

from __future__ import annotations

import json as _json
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import InvalidInput, LLMError

__all__ = ["ChatModel", "Completion", "Message", "Usage", "UsageMeter"]

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message: ``role`` is ``"system"``, ``"user"`` or ``"assistant"``."""

    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        """The OpenAI wire form ``{"role": ..., "content": ...}``."""
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class Completion:
    """A model's answer and what it cost.

    ``cost_usd`` is computed by the client from its configured prices per
    1,000 tokens (0 when no price is configured); ``latency_s`` covers the
    successful attempt only.
    """

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Usage:
    """Totals over the calls a client has made."""

    calls: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class UsageMeter:
    """Thread-safe running :class:`Usage` totals (one per client)."""

    def __init__(self) -> None:
        """Start from zero."""
        self._lock = threading.Lock()
        self._usage = Usage()

    def add(
        self, completion: Completion | None = None, *, failed: bool = False, retries: int = 0
    ) -> None:
        """Count one call: its completion (if it succeeded), failure and retries."""
        with self._lock:
            u = self._usage
            self._usage = Usage(
                calls=u.calls + 1,
                failures=u.failures + int(failed),
                retries=u.retries + retries,
                prompt_tokens=u.prompt_tokens + (completion.prompt_tokens if completion else 0),
                completion_tokens=u.completion_tokens
                + (completion.completion_tokens if completion else 0),
                cost_usd=u.cost_usd + (completion.cost_usd if completion else 0.0),
            )

    @property
    def usage(self) -> Usage:
        """A snapshot of the totals."""
        with self._lock:
            return self._usage


def check_messages(messages: Sequence[Message]) -> list[Message]:
    """Return ``messages`` as a list, raising :class:`InvalidInput` if any is not a Message."""
    out = list(messages)
    if not out:
        raise InvalidInput("at least one message is required", field="messages")
    for i, m in enumerate(out):
        if not isinstance(m, Message):
            raise InvalidInput(
                f"messages[{i}] is {type(m).__name__}, expected Message", field="messages"
            )
    return out


class ChatModel(ABC):
    """A chat-completion model: messages in, one :class:`Completion` out."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """A stable identifier of the backend and model, e.g. ``"openai:gpt-4o-mini"``."""

    @abstractmethod
    def complete(
        self,
        messages: Sequence[Message],
        *,
        json: bool = False,
        max_tokens: int | None = None,
    ) -> Completion:
        """Answer ``messages``; with ``json=True`` ask the model for one JSON object.

        Raises :class:`~kenning.errors.LLMError` when the model cannot answer
        (after whatever retries the backend makes).
        """

    def ask(self, prompt: str, *, system: str | None = None, max_tokens: int | None = None) -> str:
        """One user ``prompt`` (after an optional ``system`` message); the answer's text."""
        messages = [Message("system", system)] if system else []
        messages.append(Message("user", prompt))
        return self.complete(messages, max_tokens=max_tokens).text

    def complete_json(
        self, messages: Sequence[Message], *, max_tokens: int | None = None
    ) -> tuple[Any, Completion]:
        """Ask for JSON and parse it; returns ``(parsed value, completion)``.

        A Markdown code fence around the JSON is tolerated. Raises
        :class:`~kenning.errors.LLMError` if the text is not valid JSON.
        """
        completion = self.complete(messages, json=True, max_tokens=max_tokens)
        return parse_json_text(completion.text), completion

    def __repr__(self) -> str:
        """A short description naming the model."""
        return f"{type(self).__name__}(model_id={self.model_id!r})"


def parse_json_text(text: str) -> Any:
    """Parse ``text`` as JSON, tolerating a surrounding Markdown code fence."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        return _json.loads(body)
    except ValueError as exc:
        raise LLMError(f"model answer is not valid JSON: {text[:200]!r}") from exc
