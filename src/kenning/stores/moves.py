"""What moving one organization to another database reports (any backend that
routes organizations, see :meth:`~kenning.stores.registry.StoreBackend.move_organization`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["MoveReport"]


@dataclass(frozen=True, slots=True)
class MoveReport:
    """What a move did: from where to where, rows per table (verified equal on both
    sides, with their md5), and how long the organization's writes were paused."""

    org_id: str
    source: str  # the database it left (no password)
    target: str  # the database it lives in now (no password)
    tables: dict[str, tuple[int, str]] = field(default_factory=dict)
    deleted: int = 0
    paused_s: float = 0.0
    copy_s: float = 0.0
    verify_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "org_id": self.org_id,
            "from": self.source,
            "to": self.target,
            "tables": {t: {"rows": n, "md5": h} for t, (n, h) in self.tables.items()},
            "deleted_from_source": self.deleted,
            "writes_paused_s": round(self.paused_s, 3),
            "copy_s": round(self.copy_s, 3),
            "verify_s": round(self.verify_s, 3),
            "verified": True,
        }
