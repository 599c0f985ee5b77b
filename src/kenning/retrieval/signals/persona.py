"""The ``persona`` signal (seed 001): with an active persona, its persona_user
memories gain ``scoring.persona_user_boost`` and its persona memories
``scoring.persona_boost`` on the final score (persona_user > persona > user)."""

from __future__ import annotations

from collections.abc import Mapping

from ...models import ScopeKind
from .base import RecallContext, Stage

__all__ = ["PersonaBoost"]


class PersonaBoost:
    """The persona-scope boost as a signal (stage ``boost``; ``scope_boost`` in explain)."""

    name = "persona"
    stage: Stage = "boost"
    reads: tuple[str, ...] = ("scoring.persona_user_boost", "scoring.persona_boost")

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        """The boost of each candidate in one of the active persona's scopes."""
        persona = ctx.principal.active_persona
        if not persona:
            return {}
        w = ctx.settings.scoring
        out: dict[str, float] = {}
        for mid in scores:
            record = ctx.records.get(mid)
            if record is None or record.scope.owner_id != persona:
                continue
            if record.scope.kind is ScopeKind.PERSONA_USER:
                out[mid] = w.persona_user_boost
            elif record.scope.kind is ScopeKind.PERSONA:
                out[mid] = w.persona_boost
        return out
