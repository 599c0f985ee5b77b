"""The ``layer`` signal (seed 000): ``scoring.layer_boost`` on the final score
for personal memories in personal mode and team memories otherwise.

With an active persona, seed 001's order persona_user > persona > user
decides between those three scopes (the ``persona`` signal), so the layer
boost is not applied to them; it still lifts team scopes in org mode.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...models import Layer, RecallMode, ScopeKind
from .base import RecallContext, Stage

__all__ = ["LayerBoost", "PERSONA_ORDERED"]

#: The scopes seed 001's persona order ranks among themselves.
PERSONA_ORDERED = (ScopeKind.USER, ScopeKind.PERSONA, ScopeKind.PERSONA_USER)


class LayerBoost:
    """The layer boost as a signal (stage ``boost``)."""

    name = "layer"
    stage: Stage = "boost"
    reads: tuple[str, ...] = ("scoring.layer_boost",)

    def contribute(self, ctx: RecallContext, scores: Mapping[str, float]) -> dict[str, float]:
        """``layer_boost`` for each candidate of the reader's preferred layer."""
        boost = ctx.settings.scoring.layer_boost
        who = ctx.principal
        wanted = Layer.PERSONAL if who.mode is RecallMode.PERSONAL else Layer.SHARED
        out: dict[str, float] = {}
        for mid in scores:
            record = ctx.records.get(mid)
            if record is None or record.layer is not wanted:
                continue
            if who.active_persona and record.scope.kind in PERSONA_ORDERED:
                continue
            out[mid] = boost
        return out
