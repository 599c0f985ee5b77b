"""API key material: minting, parsing and checking (pure, no I/O).

A key reads ``kn_<id>_<secret>``: ``id`` (12 lowercase hex digits) names the
stored row, ``secret`` (43 URL-safe characters, 256 bits) proves possession.
Only ``sha256(secret)`` is stored; a high-entropy secret needs no slow hash,
and the comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from ..errors import Unauthenticated

__all__ = ["mint", "parse", "hash_secret", "matches"]

_KEY_RE = re.compile(r"^kn_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")


def hash_secret(secret: str) -> str:
    """The stored form of a secret."""
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def mint() -> tuple[str, str, str]:
    """A new key: ``(key_id, full key to show once, hash to store)``."""
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return key_id, f"kn_{key_id}_{secret}", hash_secret(secret)


def parse(token: str) -> tuple[str, str]:
    """Split a presented key into ``(key_id, secret)``; ``Unauthenticated`` if malformed."""
    found = _KEY_RE.match(token.strip())
    if found is None:
        raise Unauthenticated("malformed API key (expected kn_<id>_<secret>)")
    return found.group(1), found.group(2)


def matches(secret: str, stored_hash: str) -> bool:
    """Whether ``secret`` is the one ``stored_hash`` was made from (constant time)."""
    return hmac.compare_digest(hash_secret(secret), stored_hash)
