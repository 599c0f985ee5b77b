"""Chat models by name: built-ins plus third-party plugins.

The built-in ``"openai"`` (any OpenAI-compatible endpoint) is registered with
:func:`register_chat_model`, exactly as a plugin may do. Packages can also
advertise chat models under the entry-point group ``kenning.chat_models``; the
entry point must load to a callable returning a :class:`ChatModel`. A name
registered here wins over an entry point. :func:`chat_model_from_settings`
builds the model the ``KENNING_LLM*`` settings describe (or None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._registry import Registry, coerce_options
from ..errors import ConfigError
from .base import ChatModel

if TYPE_CHECKING:
    from ..config import Settings

__all__ = [
    "ENTRY_POINT_GROUP",
    "register_chat_model",
    "create_chat_model",
    "available_chat_models",
    "chat_model_from_settings",
]

ENTRY_POINT_GROUP = "kenning.chat_models"

_registry: Registry[ChatModel] = Registry("chat model", ChatModel, ENTRY_POINT_GROUP)


def register_chat_model(name: str, factory: Callable[..., ChatModel]) -> None:
    """Make ``factory(**options)`` available as ``create_chat_model(name, **options)``."""
    _registry.register(name, factory)


def available_chat_models() -> list[str]:
    """Sorted names of every registered and plugin-provided chat model."""
    return _registry.available()


def create_chat_model(name: str, **options: Any) -> ChatModel:
    """Build the chat model registered as ``name``; :class:`ConfigError` if that fails."""
    return _registry.create(name, **options)


def chat_model_from_settings(settings: Settings) -> ChatModel | None:
    """The chat model ``settings.llm`` names, configured from the ``llm_*`` fields.

    None when ``settings.llm`` is None (no LLM). Built-in ``"openai"`` needs
    ``llm_base_url`` and ``llm_model``; plugins receive the same keyword options.
    """
    if settings.llm is None:
        return None
    if not settings.llm_base_url or not settings.llm_model:
        raise ConfigError("KENNING_LLM is set but KENNING_LLM_BASE_URL or KENNING_LLM_MODEL is not")
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return create_chat_model(
        settings.llm,
        base_url=settings.llm_base_url,
        model=settings.llm_model,
        api_key=key,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        price_prompt_per_1k=settings.llm_price_prompt_per_1k,
        price_completion_per_1k=settings.llm_price_completion_per_1k,
    )


def _openai(**options: Any) -> ChatModel:
    from .openai_compat import OpenAICompatChat

    kinds: dict[str, type[Any]] = {
        "timeout_s": float,
        "max_retries": int,
        "backoff_s": float,
        "max_backoff_s": float,
        "price_prompt_per_1k": float,
        "price_completion_per_1k": float,
        "temperature": float,
    }
    return OpenAICompatChat(**coerce_options(options, kinds, "chat model 'openai'"))


register_chat_model("openai", _openai)
