"""The one exception tree of kenning.

Every error kenning raises on purpose derives from :class:`KenningError`::

    KenningError
    ├── InvalidInput          bad arguments: empty/oversized content, bad ranges,
    │                         malformed filters, unknown scope kinds, bad UTF-8
    ├── Unauthenticated       no valid credentials (missing, unknown, revoked key)
    ├── PermissionDenied      the principal may not read/write that scope
    │   └── QuotaExceeded     the write would take the organization past its quota
    ├── NotFound              no such memory (or not visible to the caller)
    ├── Conflict              a concurrent change won (version mismatch)
    ├── RateLimited           too many requests from one API key (server doors)
    ├── ConfigError           settings that cannot work (unknown embedder, bad URL)
    ├── EmbeddingError        the embedding model or endpoint failed
    ├── LLMError              the chat-model endpoint failed or answered unusably
    └── StoreError            the database failed in a way the caller cannot fix

Doors (CLI, REST, MCP) translate this tree into their own error shapes in one
place; nothing else needs to know about them.
"""

from __future__ import annotations

__all__ = [
    "KenningError",
    "InvalidInput",
    "Unauthenticated",
    "PermissionDenied",
    "QuotaExceeded",
    "NotFound",
    "Conflict",
    "RateLimited",
    "ConfigError",
    "EmbeddingError",
    "LLMError",
    "StoreError",
    "error_code",
]


class KenningError(Exception):
    """Root of every error raised by kenning."""


class InvalidInput(KenningError, ValueError):
    """The caller passed something kenning cannot accept; nothing was changed.

    ``field`` names the offending argument when there is one.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class Unauthenticated(KenningError):
    """No valid credentials: a missing, malformed, unknown or revoked key or token."""


class PermissionDenied(KenningError):
    """The principal may not perform this operation on this scope."""


class QuotaExceeded(PermissionDenied):
    """The write would take the organization past its memory quota; nothing was written.

    ``limit`` is the quota, ``count`` the memories the organization holds now
    (None when not known, as on the client side) and ``adding`` how many the
    refused write would have added.
    """

    def __init__(
        self,
        message: str,
        *,
        limit: int | None = None,
        count: int | None = None,
        adding: int | None = None,
    ) -> None:
        super().__init__(message)
        self.limit = limit
        self.count = count
        self.adding = adding


class NotFound(KenningError, LookupError):
    """The memory does not exist, or the caller may not know that it exists."""


class Conflict(KenningError):
    """The write lost against a concurrent change (for example a version check)."""


class RateLimited(KenningError):
    """Too many requests from one API key (the server's per-key rate limit).

    ``retry_after_s`` is how long to wait before the next request is accepted
    (whole seconds, at least 1).
    """

    def __init__(self, message: str, *, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = max(1, int(retry_after_s))


class ConfigError(KenningError):
    """The configuration cannot work as given."""


class EmbeddingError(KenningError):
    """The embedding model or remote embedding endpoint failed."""


class LLMError(KenningError):
    """The chat-model (LLM) endpoint failed, timed out or answered unusably."""


class StoreError(KenningError):
    """The storage backend failed in a way the caller cannot correct."""


#: The stable, door-independent code of each error kind; the first match wins.
_CODES: tuple[tuple[type[KenningError], str], ...] = (
    (InvalidInput, "invalid_input"),
    (Unauthenticated, "unauthenticated"),
    (QuotaExceeded, "quota_exceeded"),
    (PermissionDenied, "permission_denied"),
    (NotFound, "not_found"),
    (Conflict, "conflict"),
    (RateLimited, "rate_limited"),
    (ConfigError, "config_error"),
    (EmbeddingError, "embedding_unavailable"),
    (LLMError, "llm_unavailable"),
    (StoreError, "store_unavailable"),
)


def error_code(exc: KenningError) -> str:
    """The stable code of a kenning error (``invalid_input``, ``not_found``, ...) that
    every door reports, whatever its own status numbers."""
    return next((code for kind, code in _CODES if isinstance(exc, kind)), "error")
