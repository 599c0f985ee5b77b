"""The rule reconciler's thresholds: one options object, nested in the settings as
``lifecycle.reconcile_rules`` (``KENNING_LIFECYCLE_RECONCILE_RULES`` as JSON, e.g.
``{"slot_similarity": 0.4}``), and read by the rules and the write planner."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["ReconcileKnobs"]


@dataclass(frozen=True, slots=True)
class ReconcileKnobs:
    """Thresholds of :class:`RuleReconciler` (defaults tuned on the shipped cases).

    Similarities are cosines in [-1, 1]; overlaps and coverage are fractions.
    """

    #: Cosine from which a pair without a contradiction signal is a duplicate.
    duplicate_similarity: float = 0.90
    #: Cosine from which a pair sharing most content words is a paraphrase ...
    paraphrase_similarity: float = 0.80
    #: ... and the Jaccard share of content words (and numbers) it needs.
    paraphrase_overlap: float = 0.60
    #: Cosine from which the negation, number, template and change-marker signals count.
    contradiction_similarity: float = 0.50
    #: Cosine from which the slot-family signal (lives in / moved to ...) counts.
    slot_similarity: float = 0.35
    #: Cosine from which the speaker's statement with an update cue ("moved",
    #: "new", "switched") and a changed value retires their older one (0.1 lower
    #: when it repeats one of the older one's values, 0.2 when it also ends it:
    #: "Traded in the Orbea for a Brompton"). On the currency dev kinds
    #: through ``write``: precision .83 at 0.30, .96 at 0.40 (a wrong retirement
    #: hides a true fact from questions about now; the read-time step orders
    #: what this misses).
    update_similarity: float = 0.40
    #: Below this cosine, two texts that say the same word of change or novelty of
    #: different things are two changes ("My new SIM from Telia arrived today" /
    #: "My new phone is a Xperia 5", .46); from it, one fact in other words ("My new
    #: home is in Porto" / "My new flat is in Lisbon", .65).
    distinct_similarity: float = 0.50
    #: Share of the smaller side's content words a negation flip must be about.
    negation_overlap: float = 0.60
    #: Cosine from which an elaboration shadows the memory it restates ...
    shadow_similarity: float = 0.50
    #: ... and the share of that memory's content words it must repeat.
    shadow_coverage: float = 0.80
    #: Longest differing span (tokens, each side) the template signal compares.
    template_max_span: int = 2
    #: A memory of more sentences than this is a note or a turn of a conversation,
    #: not one fact: a contradiction retires none of it (its other facts would go
    #: with the changed one), and the read step orders it beside the change. Chat
    #: turns written one by one as semantic memories (LoCoMo's 3,435 dev turns) had
    #: 558 retired, nearly all wrongly; 214 at 2.
    retire_max_sentences: int = 2
    #: Earlier items of a write batch below this cosine are not reconcile candidates
    #: (every rule needs more similarity than this).
    batch_floor: float = 0.30

    def __post_init__(self) -> None:
        """Reject values that cannot work."""
        for name in (
            "duplicate_similarity",
            "paraphrase_similarity",
            "contradiction_similarity",
            "slot_similarity",
            "update_similarity",
            "distinct_similarity",
            "shadow_similarity",
            "batch_floor",
        ):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be a cosine in [-1, 1]")
        for name in ("paraphrase_overlap", "negation_overlap", "shadow_coverage"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be a fraction in [0, 1]")
        if self.template_max_span < 1:
            raise ConfigError("template_max_span must be >= 1")
        if self.retire_max_sentences < 1:
            raise ConfigError("retire_max_sentences must be >= 1")
