"""Optional chat models (LLMs) for kenning: the :class:`ChatModel` contract and backends.

* :class:`OpenAICompatChat` — any OpenAI-compatible ``/v1/chat/completions`` endpoint;
* :func:`create_chat_model` — build one by name, including third-party plugins;
* :func:`chat_model_from_settings` — the one ``KENNING_LLM*`` settings describe.

Importing this package opens no connection (httpx is imported on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import ChatModel, Completion, Message, Usage
from .registry import (
    available_chat_models,
    chat_model_from_settings,
    create_chat_model,
    register_chat_model,
)

if TYPE_CHECKING:
    from .openai_compat import OpenAICompatChat


def __getattr__(name: str) -> Any:
    """Import :class:`OpenAICompatChat` (and httpx) only when it is asked for."""
    if name == "OpenAICompatChat":
        from .openai_compat import OpenAICompatChat

        return OpenAICompatChat
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ChatModel",
    "Completion",
    "Message",
    "Usage",
    "OpenAICompatChat",
    "available_chat_models",
    "chat_model_from_settings",
    "create_chat_model",
    "register_chat_model",
]
