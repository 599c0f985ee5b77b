"""Settings: every knob in one place, read from ``KENNING_*`` environment variables.

Nothing is read or created at import; :class:`Settings` reads the environment
when it is instantiated, and paths are resolved lazily by :meth:`Settings.db_path`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .graph.model import RELATION_PRIORS
from .lifecycle.knobs import ReconcileKnobs

__all__ = [
    "Settings",
    "ScoringWeights",
    "GraphRead",
    "Retrieval",
    "RerankRecall",
    "TimeRecall",
    "EpisodeRecall",
    "AuthorMatch",
    "CurrencyRecall",
    "Lifecycle",
    "Server",
    "default_home",
    "LEGACY_NAMES",
    "StoreOptions",
]


def default_home() -> Path:
    """``$KENNING_HOME`` or ``~/.kenning`` (not created here)."""
    env = os.environ.get("KENNING_HOME")
    return Path(env).expanduser() if env else Path.home() / ".kenning"


class ScoringWeights(BaseSettings):
    """Priority score weights, boosts and temporal decay (DESIGN.md §3, seed 000).

    The boosts are read by the priority-stage recall signals
    (:mod:`kenning.retrieval.signals`): ``layer_boost`` (layer),
    ``persona_*_boost`` (persona), ``exact_match_boost`` (exact_match) and
    ``high_confidence_*`` (high_confidence).
    """

    model_config = SettingsConfigDict(env_prefix="KENNING_SCORING_", extra="forbid")

    confidence: float = Field(0.5, ge=0, le=1)
    #: Seed 000 has 0.2; at that weight recency outranks relevance (an old but
    #: exact answer loses to a recent near miss): LoCoMo dev R@10 .771 at 0.02
    #: against .745 at 0.2 (BENCHMARKS.md). Recency stays a tie-breaker.
    temporal: float = Field(0.02, ge=0, le=1)
    relevance: float = Field(0.3, ge=0, le=1)
    strength: float = Field(0.0, ge=0, le=1)
    layer_boost: float = Field(0.05, ge=0, le=1)
    #: Seed 000 ranks exact matches first "regardless of layer": 1.0 is more than
    #: every other term of the priority can differ by at these weights (relevance
    #: 0.3, confidence 0.5, temporal 0.02, layer, persona and high-confidence
    #: boosts 0.1), so an exact match goes first whatever its relevance.
    exact_match_boost: float = Field(1.0, ge=0, le=2)
    high_confidence_boost: float = Field(0.02, ge=0, le=1)
    #: ... added to a memory whose confidence is above this (seed 000's "very high").
    high_confidence_threshold: float = Field(0.9, ge=0, le=1)
    persona_user_boost: float = Field(0.03, ge=0, le=1)
    persona_boost: float = Field(0.015, ge=0, le=1)
    #: How fused relevance is normalised before mixing: ``minmax`` spreads the
    #: best ``relevance_window`` candidates over [0, 1] (the rest get 0); ``max``
    #: divides by the best score; ``rank`` is 1 / (1 + rank / 10). Chosen on the
    #: LoCoMo dev split: see BENCHMARKS.md ("priority ablation").
    relevance_norm: str = Field("minmax", pattern="^(max|minmax|rank)$")
    relevance_window: int = Field(20, gt=1)
    #: Temporal score per layer (seed 000): decay days (half-life = days / 2) and floor.
    decay_days_personal: float = Field(365, gt=0)
    decay_days_shared: float = Field(180, gt=0)
    decay_days_organization: float = Field(730, gt=0)
    min_temporal_personal: float = Field(0.1, ge=0, le=1)
    min_temporal_shared: float = Field(0.2, ge=0, le=1)
    min_temporal_organization: float = Field(0.3, ge=0, le=1)


class GraphRead(BaseSettings):
    """Read-side graph post-processing (seed 002 §3-4; defaults are the seed's).

    Environment: ``KENNING_GRAPH_PROPAGATE_BETA`` and so on, as the seed names them.
    """

    model_config = SettingsConfigDict(env_prefix="KENNING_GRAPH_", extra="forbid")

    #: Master switch for support, expansion and paths at recall (fail-open either way).
    rerank_enabled: bool = True
    #: Seed 002 has 0.15; 0.3 on the LoCoMo dev split (R@10 .778 vs .771).
    propagate_beta: float = Field(0.3, ge=0, le=5)
    propagate_iters: int = Field(1, ge=0, le=5)
    support_cap: float = Field(1.0, ge=0, le=10)
    #: Expansion score factor; 0 disables relation expansion (support and paths
    #: stay). Seed 002 has 0.3; kenning ships 0: on the LoCoMo dev split the
    #: admitted memories change no ranking (merged into their seed, or too weak
    #: to win a slot when competing), and at 100,000 memories expansion costs
    #: ~6 ms per recall, past the graph stage's 5 ms budget (BENCHMARKS.md).
    relax_gamma: float = Field(0.0, ge=0, le=5)
    seed_floor: float = Field(0.5, ge=0, le=1)
    max_expand: int = Field(20, ge=0, le=200)
    expand_hops: int = Field(2, ge=0, le=4)
    #: Expansion starts from at most this many of the best candidates.
    expand_seeds: int = Field(10, ge=1, le=1000)
    #: Per hop, the walk goes on from at most this many nodes, and this many
    #: nominees (the most promising) face the semantic gate.
    expand_prefilter_top_n: int = Field(50, ge=1, le=1000)
    seed_sim_delta: float = Field(0.2, ge=0, le=2)
    #: Per relation type, at most this many admissions per recall.
    relation_quota: int = Field(10, ge=1, le=200)
    #: Admitted memories ride with their seed (no top-k slot) instead of competing.
    expand_merge_seed: bool = True
    #: Co-mention support: candidates sharing a rare entity (at most
    #: ``mention_max_df`` readable memories mention it) with one of the best
    #: ``mention_seeds`` candidates gain ``mention_support`` x that seed's score.
    #: Off by default: on the LoCoMo dev split it moved R@10 by +-0.001 and cost
    #: multi-hop all-hit@20 0.006-0.012 (BENCHMARKS.md).
    mention_support: float = Field(0.0, ge=0, le=5)
    mention_seeds: int = Field(5, ge=0, le=100)
    mention_max_df: int = Field(20, ge=1, le=10_000)
    path_enabled: bool = True
    path_high_floor: float = Field(0.5, ge=0, le=1)
    #: Relation-type priors (seed 002 §3.4); unknown types take ``related``'s.
    priors: dict[str, float] = Field(default_factory=lambda: dict(RELATION_PRIORS))


class TimeRecall(BaseSettings):
    """Time-aware recall ("last May", "before the trip", "when did ..."): the
    ``time`` signal and the window's extra candidates. Env: ``KENNING_RETRIEVAL_TIME_*``."""

    model_config = SettingsConfigDict(env_prefix="KENNING_RETRIEVAL_TIME_", extra="forbid")

    #: Parse the query's time expressions at all (off: no window, no "when").
    enabled: bool = True
    #: Relevance added to a memory whose time falls in the window the query names.
    window_boost: float = Field(0.3, ge=0, le=5)
    #: Relevance added, for a "when ...?" question, to a memory whose text names a time.
    when_boost: float = Field(0.15, ge=0, le=5)
    #: How many of the best candidates have their text read for time expressions.
    content_scan: int = Field(30, ge=0, le=1000)
    #: With a window, this many more candidates come from a search inside it.
    window_candidates: int = Field(20, ge=0, le=1000)


class EpisodeRecall(BaseSettings):
    """The ``episode`` signal (seed 002 §4, episode recall): memories of the
    ``top`` best-scoring episodes (else sessions) gain up to ``weight`` fused
    relevance; 0 disables. Env: ``KENNING_RETRIEVAL_EPISODE_*``."""

    model_config = SettingsConfigDict(env_prefix="KENNING_RETRIEVAL_EPISODE_", extra="forbid")

    weight: float = Field(0.1, ge=0, le=2)
    top: int = Field(3, ge=0, le=100)


class AuthorMatch(BaseSettings):
    """The ``author`` signal: a memory whose author (first of ``fields`` in its
    metadata) is named in the query gains ``boost`` fused relevance; 0 disables.
    Env: ``KENNING_RETRIEVAL_AUTHOR_*``."""

    model_config = SettingsConfigDict(env_prefix="KENNING_RETRIEVAL_AUTHOR_", extra="forbid")

    boost: float = Field(0.3, ge=0, le=2)
    fields: tuple[str, ...] = ("speaker", "author")


#: The ``retrieval.abstain_below`` to set for recall that prefers no hits to weak
#: ones (see the setting); chosen on the dev splits with ``kenning bench abstain``.
ABSTAIN_BELOW = 0.008


class CurrencyRecall(BaseSettings):
    """The currency step (:mod:`kenning.retrieval.currency`): for a question about
    a value, memories of the same subject that answer it alike are ordered by
    when they were said (newest first for "now", the earlier ones first for
    "before"), and facts about other people rank below the subject's own.
    Env: ``KENNING_RETRIEVAL_CURRENCY_*``."""

    model_config = SettingsConfigDict(env_prefix="KENNING_RETRIEVAL_CURRENCY_", extra="forbid")

    enabled: bool = True
    #: How many of the best hits the step reorders (5 on the currency dev kinds:
    #: .857 / .899 current@1 through write / ingest, against .843 / .836 at 10).
    window: int = Field(5, ge=1, le=200)
    #: For a question about the asker's own value, the best ``window`` hits keep
    #: their priorities but take them in the order of their embedding's cosine to
    #: the question: a shared keyword ("home", "called") or a recent date does
    #: not lift another fact above the answer (which value is newest is the
    #: groups' business, below); statements come before the asker's own
    #: questions and requests, which state no value.
    by_meaning: bool = True
    #: ... where a memory that says its value is new or changed ("now", "my new",
    #: "switched", "retired") adds this times the share of the question's search
    #: terms it uses to its cosine: a cosine near 0.25 is little evidence, and the
    #: question's own words in an update are more ("Dr. Costa retired, so my
    #: check-ups are with Dr. Rossi now" for "Who does my check-ups currently?",
    #: behind "Started volunteering with the food bank" by cosine). Currency
    #: tune kinds, write / ingest current@1: .842 / .836 at 0; .845 / .839 at
    #: 0.1; .851 / .839 at 0.2; .854 / .848 at 0.4, where the dev kinds through
    #: write and the probe kinds through ingest lose a question each (both
    #: unchanged at 0.1 and 0.2).
    cue_terms: float = Field(0.2, ge=0, le=2)
    #: ... and any other memory this much: a near tie of cosines is noise, the
    #: question's own word is not ("I work at SAP" .345 / "I live in Hamburg" .353
    #: for "Where do I work now?"). Currency dev, tune and probe kinds, current@1
    #: through write and ingest: the same at 0.05 and 0.08 as at 0 (previous@3 on
    #: the tune kinds through ingest .900 → .905 / .911); at 0.1 the dev kinds
    #: through write and the probe kinds through both lose a question.
    plain_terms: float = Field(0.05, ge=0, le=2)
    #: Cosine between two memories from which they answer the question alike ...
    pair_similarity: float = Field(0.40, ge=-1, le=1)
    #: ... or from which they do when the newer one has an update cue.
    cue_pair_similarity: float = Field(0.30, ge=-1, le=1)
    #: ... or when that cue is a word of change ("switched", "sold", "instead",
    #: "gave up"), not one that says only that a value is new or current ("new",
    #: "now": "I tried a new bakery"). "I support Celtic" / "I've switched
    #: allegiance to Juventus" embed at 0.39, "I always get a chai latte at the
    #: café" / "Lately I order a flat white instead" at 0.27 (currency dev and
    #: tune kinds, write / ingest current@1: .934 / .923 and .773 / .778 at 0.15;
    #: .930 / .927 and .762 / .773 at 0.30; .20 as .15 on dev, .767 / .773 on tune).
    change_pair_similarity: float = Field(0.15, ge=-1, le=1)
    #: ... or, for a newer memory with an update cue, from this much below its floor
    #: when the two share a content word other than a word of change ("I work from
    #: the office in Altona" / "Our team went fully remote, I work from home now",
    #: 0.296 against 0.30). Currency dev, tune and probe kinds through write and
    #: ingest: the same at 0.05 and 0.10 as at 0; counting "since" or "first" as
    #: a shared word cost a dev question at 0.05.
    shared_word_margin: float = Field(0.05, ge=0, le=1)
    #: ... and whose cosine to the question is within this of the best such memory's
    #: (``cue_band`` times this for a memory with an update cue: "we moved", "my new"):
    #: a memory that answers the question far less well than the best does not
    #: take its place for being newer (currency dev kinds, write / ingest
    #: current@1: .913 / .906 at 0.20 and 2; .909 / .906 without bands, where a
    #: small store's unrelated newer fact of the same speaker took the answer's
    #: place; .909 / .902 at 0.15 and 3).
    query_band: float = Field(0.20, ge=0, le=2)
    cue_band: float = Field(2.0, ge=1, le=10)
    #: The older memory of a pair must be the newer one's most alike among what was
    #: said before it (within this cosine): an update changes the fact it is most
    #: like, so "My new phone is a Pixel" does not take the place of "My new car is
    #: a Tesla" for "What car do I drive?" when "My phone is a Galaxy" was said
    #: before it (currency dev kinds, write / ingest current@1 with the bands above:
    #: .913 / .906 at 0.05; .864 / .892 with the bands alone). 2 disables.
    nearest_margin: float = Field(0.05, ge=0, le=2)
    #: Below this cosine, two memories that say the same word of change or novelty
    #: of different things never join one group ("My new car is a Honda Civic" /
    #: "My new phone is a Galaxy S21", .33); from it they may ("My new home is in
    #: Porto" / "My new flat is in Lisbon", .65).
    distinct_similarity: float = Field(0.50, ge=-1, le=1)
    #: Priority factor of a fact about someone else than the question's subject
    #: ("My sister lives in Rome" for "Where do I live?"); 1 disables.
    other_subject_factor: float = Field(0.5, ge=0, le=1)
    #: Questions about earlier values ("before", "previous", a past year) also
    #: search superseded memories.
    history: bool = True
    #: Questions about the present value also search superseded memories, and a
    #: superseded match hands its place to the memory that replaced it ("I work at
    #: Nokia" matches "Where do I work now?"; "I quit Nokia and joined Philips"
    #: answers it); the superseded one never shows.
    successors: bool = True


class RerankRecall(BaseSettings):
    """The rerank step (:mod:`kenning.retrieval.rerank`, opt-in): a cross-encoder
    reads the query with each of the ``top_n`` best hits, and their order becomes
    a reciprocal-rank blend of its ranks (``weight``) and the pipeline's. Off
    while ``model`` is None; ``"ms-marco-minilm"`` is the built-in (``pip install
    'kenning[rerank]'``). Env: ``KENNING_RETRIEVAL_RERANK_*``."""

    model_config = SettingsConfigDict(
        env_prefix="KENNING_RETRIEVAL_RERANK_", extra="forbid", protected_namespaces=()
    )

    #: A registered reranker's name (:mod:`kenning.rerank.registry`); None: off.
    model: str | None = None
    #: Its options (``KENNING_RETRIEVAL_RERANK_OPTIONS='{"threads": "2"}'``).
    options: dict[str, str] = Field(default_factory=dict)
    #: How many of the best hits it reads: 30 on the LoCoMo dev split (recall@10
    #: .781 -> .794; 20: .790 in two thirds of the time; 50 in a run over saved
    #: candidates: no better than 30).
    top_n: int = Field(30, ge=1, le=200)
    #: The reranker's share of the blend: 0.3 on the LoCoMo dev split (runs over
    #: saved candidates: 0.5 .788, 0.7 .777, the reranker's order alone .774).
    weight: float = Field(0.3, ge=0, le=1)
    rrf_k: int = Field(60, gt=0)


class Retrieval(BaseSettings):
    """The read pipeline: candidates, fusion, common terms and the recall signals
    with their options. Env: ``KENNING_RETRIEVAL_*`` (``KENNING_RETRIEVAL_TIME_*``
    and so on for a signal's options)."""

    model_config = SettingsConfigDict(env_prefix="KENNING_RETRIEVAL_", extra="forbid")

    #: Candidates per side (at least ``k`` each); 40 matches 50 on the LoCoMo dev
    #: split (R@10 .777 vs .775, R@20 .822 vs .826, multi-hop all-hit@20 .361 at
    #: both) and reads a fifth fewer records.
    candidates_dense: int = Field(40, gt=0)
    candidates_keyword: int = Field(40, gt=0)
    fusion: str = Field("convex", pattern="^(convex|rrf)$")
    #: Weight of the dense side in convex fusion (0 = BM25 only, 1 = dense only);
    #: 0.6 with the context and graph signals on (dev-split plateau 0.6-0.8).
    fusion_alpha: float = Field(0.6, ge=0, le=1)
    rrf_k: int = Field(60, gt=0)
    #: Query words found in more than this share of the reader's memories (a
    #: user's own name in their memories, say) carry no signal there; they are
    #: dropped from both the keyword and the dense query. 0 disables.
    common_term_ratio: float = Field(0.3, ge=0, le=1)
    #: ... but only when the reader can see at least ``common_term_min_docs``
    #: and at most ``common_term_max_docs`` memories (the counts stay bounded).
    common_term_min_docs: int = Field(20, ge=1)
    common_term_max_docs: int = Field(20_000, ge=1)
    #: The recall signals, by registered name (:mod:`kenning.retrieval.signals`);
    #: None: the built-ins (graph, episode, author, time, layer, persona,
    #: exact_match, high_confidence). Each runs in its stage, in this order.
    signals: tuple[str, ...] | None = None
    time: TimeRecall = Field(default_factory=TimeRecall)
    episode: EpisodeRecall = Field(default_factory=EpisodeRecall)
    author: AuthorMatch = Field(default_factory=AuthorMatch)
    currency: CurrencyRecall = Field(default_factory=CurrencyRecall)
    rerank: RerankRecall = Field(default_factory=RerankRecall)
    #: The relevance the priority reads blends the signals' relevance with the
    #: learned model's reading of each candidate's evidence
    #: (:mod:`kenning.retrieval.order`) at this weight; 0: the signals' alone.
    #: Chosen on the LoCoMo dev split, each conversation ordered by a model fit
    #: on the others (``bench/fit_order.py``).
    learned_weight: float = Field(1.0, ge=0, le=1)
    #: A fact ``ingest`` drew from one turn and that turn say the same thing: when
    #: both are found, only the better-ranked one is returned
    #: (:mod:`kenning.retrieval.collapse`), so ``k`` hits are ``k`` statements.
    collapse_restatements: bool = True
    #: Recall leaves out hits whose calibrated score
    #: (:mod:`kenning.retrieval.calibration`) is below this; None: off.
    min_score: float | None = Field(None, ge=0, le=1)
    #: Recall returns no hits at all when none of its hits scores this much:
    #: nothing stored answers the question (``RecallResult.abstained``). Unlike
    #: ``min_score`` it keeps every hit of a question something answers. None
    #: (off) by default: at :data:`ABSTAIN_BELOW` (0.008, chosen on the dev
    #: splits with ``kenning bench abstain``) 89% of the currency questions
    #: nothing answers get no hits and LoCoMo dev recall@10 falls by only 0.006,
    #: but 7% of the answerable currency questions lose their answer with the
    #: rest (current@1 .923 -> .875): an agent that prefers silence to noise
    #: sets it.
    abstain_below: float | None = Field(None, ge=0, le=1)
    #: The same for the memory hint (``build_hint`` with a query). 0.05 on the
    #: LoCoMo dev split (``bench/fit_calibration.py``): 87% of questions about
    #: another conversation's people and events put none of their top 20 hits
    #: in the hint, and a memory sharing a query word at a cosine near 0.5 still
    #: passes; None: off.
    hint_min_score: float | None = Field(0.05, ge=0, le=1)


#: Old flat ``Settings`` names (and ``KENNING_<NAME>`` variables), still accepted:
#: old name -> its place now (``group.field`` or ``group.options.field``).
LEGACY_NAMES: dict[str, str] = {
    **{
        n: f"retrieval.{n}"
        for n in (
            "candidates_dense",
            "candidates_keyword",
            "fusion",
            "fusion_alpha",
            "rrf_k",
            "common_term_ratio",
            "common_term_min_docs",
            "common_term_max_docs",
        )
    },
    "time_aware": "retrieval.time.enabled",
    "time_window_boost": "retrieval.time.window_boost",
    "time_when_boost": "retrieval.time.when_boost",
    "time_content_scan": "retrieval.time.content_scan",
    "time_window_candidates": "retrieval.time.window_candidates",
    "episode_recall_weight": "retrieval.episode.weight",
    "episode_recall_top": "retrieval.episode.top",
    "author_boost": "retrieval.author.boost",
    "author_fields": "retrieval.author.fields",
    **{
        f"{kind}_{layer}": f"scoring.{kind}_{layer}"
        for kind in ("decay_days", "min_temporal")
        for layer in ("personal", "shared", "organization")
    },
}


class Lifecycle(BaseSettings):
    """Strength, reconcile, consolidation and forgetting (seeds 002-004).

    Environment: ``KENNING_LIFECYCLE_REINFORCEMENT`` and so on.
    """

    model_config = SettingsConfigDict(env_prefix="KENNING_LIFECYCLE_", extra="forbid")

    # -- strength (HMD, seed 003) ---------------------------------------------------
    #: Strength a new memory starts with, per memory type.
    initial_strength: dict[str, float] = Field(
        default_factory=lambda: {
            "episodic": 0.8,
            "semantic": 0.8,
            "procedural": 0.9,
            "working": 0.6,
        }
    )
    #: Per-day decay rate (0.85-0.99, seed 003), per memory type: working memory
    #: fades within days, procedures last longest.
    decay_rate: dict[str, float] = Field(
        default_factory=lambda: {
            "episodic": 0.95,
            "semantic": 0.97,
            "procedural": 0.98,
            "working": 0.90,
        }
    )
    #: Strength added by one access (a recall hit, an explicit reinforce).
    reinforcement: float = Field(0.15, ge=0, le=1)
    #: Recall hits are reinforced (one batched write per recall, off the caller's path).
    reinforce_on_recall: bool = True
    #: Recall accesses are written together, at most this long after the first of
    #: them (``Memory.flush`` and ``close`` write at once): a write makes every other
    #: connection drop its page cache, so one per burst keeps recalls fast.
    access_write_delay_ms: int = Field(250, ge=0, le=10_000)

    # -- reconcile on write (seed 002) ----------------------------------------------
    #: "rules" (default), "llm" (needs ``llm``; falls back to rules) or "off".
    reconcile: str = Field("rules", pattern="^(rules|llm|off)$")
    #: Memory types reconciled on write; episodic and working memories are
    #: events (two alike events are still two), so they are always added.
    reconcile_types: tuple[str, ...] = ("semantic", "procedural")
    #: Same-scope neighbours read per new memory (the cost stays flat as stores grow).
    reconcile_neighbours: int = Field(5, ge=1, le=50)
    #: The rule reconciler's thresholds (:class:`~kenning.lifecycle.knobs.ReconcileKnobs`:
    #: duplicate, paraphrase, contradiction, slot, shadow similarities and overlaps,
    #: the batch floor); ``KENNING_LIFECYCLE_RECONCILE_RULES`` takes them as JSON.
    reconcile_rules: ReconcileKnobs = Field(default_factory=ReconcileKnobs)

    # -- conversations (seed 004) ---------------------------------------------------
    #: Messages of a session kept as working memory for its context window.
    context_window: int = Field(20, ge=1, le=1000)
    #: Extracted facts start as pending_review in these layers (seed 001 phase 2;
    #: a scope's policy can also ask for it).
    review_extracted_layers: tuple[str, ...] = ()

    # -- consolidation and forgetting (seed 004) -------------------------------------
    #: Episodic memories reinforced more than this many times (with importance
    #: at least ``promote_min_importance``) are promoted to a semantic memory.
    promote_min_reinforcements: int = Field(3, ge=0)
    promote_min_importance: int = Field(4, ge=1, le=5)
    #: Episodic memories repeated this many times in one scope (near-duplicates,
    #: cosine >= ``repeat_similarity``) are promoted too.
    promote_min_repeats: int = Field(3, ge=2)
    repeat_similarity: float = Field(0.85, ge=0, le=1)
    #: Forget (archive) below this strength once older than ``forget_after_days``.
    forget_strength: float = Field(0.1, ge=0, le=1)
    forget_after_days: float = Field(30, ge=0)
    #: Trivial memories (importance 1) are archived after this many days.
    trivial_after_days: float = Field(7, ge=0)
    #: Working memory older than this is consolidated (episodic) or archived.
    working_ttl_days: float = Field(1, ge=0)

    # -- sectors (seed 003) ------------------------------------------------------------
    sector_max_size: int = Field(5000, ge=4)
    sector_auto_split: bool = True


def _env(name: str) -> AliasChoices:
    """``KENNING_STORE_NAME``, then the flat ``KENNING_NAME`` of earlier releases."""
    return AliasChoices(f"KENNING_STORE_{name.upper()}", f"KENNING_{name.upper()}")


class StoreOptions(BaseSettings):
    """The stores' knobs: one owner for each default (the stores take this object).

    Environment: ``KENNING_STORE_EXACT_SEARCH_MAX`` and so on; the flat names of
    earlier releases (``KENNING_EXACT_SEARCH_MAX``, ``KENNING_PG_POOL_SIZE``, ...)
    still work. A store reads the knobs it has and ignores the others.
    """

    model_config = SettingsConfigDict(
        env_prefix="KENNING_STORE_", extra="forbid", populate_by_name=True
    )

    # -- SQLite --------------------------------------------------------------------
    #: Readable sets up to this size are scanned exactly (numpy); larger ones
    #: use the HNSW index of their partition once it holds ``ann_min_rows``.
    exact_search_max: int = Field(20_000, gt=0, validation_alias=_env("exact_search_max"))
    ann_min_rows: int = Field(50_000, gt=0, validation_alias=_env("ann_min_rows"))
    #: HNSW graph degree (usearch ``connectivity``).
    ann_connectivity: int = Field(16, gt=0, validation_alias=_env("ann_connectivity"))
    #: HNSW search breadth (usearch ``expansion_search``; pgvector ``hnsw.ef_search``).
    ann_expansion: int = Field(64, gt=0, validation_alias=_env("ann_expansion"))
    #: Check the keyword matches' scope, status and time window in the
    #: in-process row mirror (false: in SQL); same answers, faster. BM25 itself
    #: is always computed in process, with the reader's statistics.
    keyword_in_process: bool = Field(True, validation_alias=_env("keyword_in_process"))
    #: Read connections per store (WAL: reads run beside each other and a write).
    read_connections: int = Field(4, ge=1, le=64, validation_alias=_env("read_connections"))

    # -- both ------------------------------------------------------------------------
    #: Keyword queries skip words found in more than this share of the reader's
    #: memories (their BM25 weight is near zero, scoring them is not).
    keyword_max_df_ratio: float = Field(
        0.25, gt=0, le=1, validation_alias=_env("keyword_max_df_ratio")
    )

    # -- PostgreSQL ------------------------------------------------------------------
    #: Connections per process (recall runs two queries at once).
    pg_pool_size: int = Field(4, ge=2, le=100, validation_alias=_env("pg_pool_size"))
    #: Readable sets up to this size are scanned exactly; larger ones walk the
    #: HNSW index with iterative scans (falling back to the exact scan when the
    #: walk ends short of k). 2,000, not SQLite's 20,000: an exact scan here
    #: reads every visible row from the table rather than a numpy block; the
    #: PostgreSQL figures in BENCHMARKS.md were measured with 2,000.
    pg_exact_search_max: int = Field(2000, gt=0, validation_alias=_env("pg_exact_search_max"))
    #: A keyword query scores at most about this many matching memories (its
    #: rarest words first), so its cost stays flat as stores grow.
    keyword_postings_budget: int = Field(
        2000, gt=0, validation_alias=_env("keyword_postings_budget")
    )
    #: Visible memories (BM25 statistics, plan choices) are counted in one pass
    #: up to this many; a reader who sees more is counted in full. Counts are the
    #: reader's own and cached for a minute.
    pg_count_cap: int = Field(50_000, gt=0, validation_alias=_env("pg_count_cap"))
    #: A read replica further behind the primary than this (seconds) leaves the
    #: rotation until it catches up; its reads go to the primary meanwhile.
    replica_max_lag_s: float = Field(5.0, gt=0)
    #: How often replicas' health and lag are checked (seconds, in the background).
    replica_check_s: float = Field(1.0, gt=0)


class Server(BaseSettings):
    """The REST/MCP server (``kenning serve``). Environment: ``KENNING_SERVER_*``."""

    model_config = SettingsConfigDict(env_prefix="KENNING_SERVER_", extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=1, le=65535)
    #: Server processes sharing the store (SQLite or PostgreSQL).
    workers: int = Field(1, ge=1, le=64)
    #: Recalls and single writes one server process runs at once (writes in at
    #: most all but one of the places); the others wait their turn in arrival
    #: order. Default: on SQLite, the process's share of the cores plus one (more
    #: at once only adds thread switches); on PostgreSQL no bound beyond the thread
    #: pool (calls wait on the network part of the time).
    engine_threads: int | None = Field(None, ge=1, le=1024)
    #: Whether recalls and hints run on the process's event loop, one at a time,
    #: rather than in the lane's threads (writes always take a thread: they may
    #: wait for the database's write lock; so does a read the audit log records
    #: as it happens, an admin's). Default: on a store bound by this
    #: machine's cores (SQLite); a database server's calls wait on the network,
    #: and the loop must not wait with them.
    inline_reads: bool | None = None
    #: Requests with a larger body are refused with 413 before they are read.
    max_body_bytes: int = Field(4_000_000, gt=0)
    #: The largest ``k`` / ``limit`` a request may ask for.
    max_k: int = Field(200, gt=0)
    #: Optional bearer JWT verification: the key (an HMAC secret, or a PEM public
    #: key for RS*/ES*/EdDSA), the accepted algorithms, and the claims naming the
    #: organization and the user (who must exist in the directory).
    jwt_key: SecretStr | None = None
    jwt_algorithms: tuple[str, ...] = ("HS256",)
    jwt_audience: str | None = None
    jwt_issuer: str | None = None
    jwt_org_claim: str = "org"
    jwt_user_claim: str = "sub"
    #: Write an audit line for reads by admins too (DESIGN.md §1: admin access is audited).
    audit_admin_reads: bool = True
    #: Seconds uvicorn waits for open requests at shutdown.
    graceful_timeout_s: int = Field(20, ge=0)
    #: Per-API-key request rate (a token bucket: ``rate_limit_per_s`` requests a
    #: second on average, bursts of up to ``rate_limit_burst``); past it a request
    #: is answered 429 with ``Retry-After`` before it reaches the engine. JWT
    #: callers are limited per user. 0 (the default) turns the limit off. Each
    #: server process keeps its own buckets: with N workers a key may reach N
    #: times the rate.
    rate_limit_per_s: float = Field(0.0, ge=0)
    rate_limit_burst: int = Field(60, ge=1)


class Settings(BaseSettings):
    """kenning's configuration. Environment variables use the ``KENNING_`` prefix."""

    model_config = SettingsConfigDict(env_prefix="KENNING_", extra="forbid")

    home: Path | None = None
    #: ``sqlite:///PATH`` (the default: ``HOME/kenning.db``), ``postgresql://…`` or
    #: the URL of a store a plugin registers (:mod:`kenning.stores.registry`).
    database_url: str | None = None
    #: Read replicas of a PostgreSQL ``database_url`` (``KENNING_DATABASE_READ_URLS``:
    #: comma-separated ``postgresql://`` URLs of hot standbys streaming from it);
    #: recall, list, get, history, stats and graph reads go to them, writes to the
    #: primary (see "Read replicas" in ``docs/operations.md``).
    database_read_urls: Annotated[tuple[str, ...], NoDecode] = ()
    #: The stores' knobs (``KENNING_STORE_*``; see :class:`StoreOptions`).
    store: StoreOptions = Field(default_factory=StoreOptions)

    embedder: str = "minilm"
    embedder_options: dict[str, str] = Field(default_factory=dict)
    embed_threads: int | None = None
    #: Embedding calls that wait at the same moment (concurrent recalls and
    #: writes) share one model run (:mod:`kenning.embeddings.batching`).
    embed_batching: bool = True
    #: The most texts one shared run takes.
    embed_batch_max: int = Field(64, ge=1, le=4096)
    #: Under load, how long a run waits for more calls to join it (0: never).
    embed_batch_wait_ms: float = Field(0.0, ge=0, le=1000)

    # optional LLM (an OpenAI-compatible chat endpoint); None = no LLM anywhere
    llm: str | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    llm_timeout_s: float = Field(30.0, gt=0)
    llm_max_retries: int = Field(2, ge=0, le=10)
    #: US dollars per 1,000 tokens, for per-call cost accounting (0 = not tracked).
    llm_price_prompt_per_1k: float = Field(0.0, ge=0)
    llm_price_completion_per_1k: float = Field(0.0, ge=0)
    #: Entity extraction for the graph: "spacy" (default), "rules", "llm", "none"
    #: or a plugin name; "llm" needs ``llm`` and falls back to spaCy per batch.
    graph_extractor: str = "spacy"

    max_content_chars: int = Field(20_000, gt=0)
    max_key_chars: int = Field(120, gt=0)
    max_tags: int = Field(32, gt=0)
    max_batch: int = Field(10_000, gt=0)
    max_k: int = Field(1_000, gt=0)
    #: The most memories (of any status; deleting frees room, archiving does not)
    #: one organization may hold; a write or import that would pass it is refused
    #: whole with ``QuotaExceeded``. None (the default): no quota.
    max_memories_per_org: int | None = Field(None, gt=0)

    # retrieval (the read pipeline's own knobs are in ``retrieval``)
    min_confidence: float = Field(0.0, ge=0, le=1)

    # memory graph (seed 002): the write-side projection
    #: Project memories into the graph (entities, topics, links); False: nothing
    #: is projected and graph reads return nothing.
    graph_enabled: bool = True
    #: Each memory of a write batch links (``co_occurs``) to at most this many
    #: batch neighbours of its scope (the nearest in batch order).
    graph_co_occurs_max: int = Field(4, ge=0, le=64)
    #: ``semantic_neighbor`` links to existing memories of the same scope need at
    #: least this cosine similarity ...
    graph_semantic_min: float = Field(0.80, ge=0, le=1)
    #: ... and at most this many per new memory (0 disables them).
    graph_semantic_max: int = Field(3, ge=0, le=32)
    #: ``temporal_next`` links along event time within one scope and episode
    #: (or session, for memories without an episode).
    graph_temporal_spine: bool = True

    retrieval: Retrieval = Field(default_factory=Retrieval)
    scoring: ScoringWeights = Field(default_factory=ScoringWeights)
    graph: GraphRead = Field(default_factory=GraphRead)
    lifecycle: Lifecycle = Field(default_factory=Lifecycle)
    server: Server = Field(default_factory=Server)

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        """Old flat names (``candidates_dense=...``, ``KENNING_TIME_AWARE``) move to
        their group (:data:`LEGACY_NAMES`); a name given wins over its variable."""
        if not isinstance(data, dict):
            return data
        given = {k: data[k] for k in LEGACY_NAMES if k in data}
        from_env = _legacy_env(set(given), data)
        if not given and not from_env:
            return data
        data = {k: v for k, v in data.items() if k not in LEGACY_NAMES}
        for group, kind in (("retrieval", Retrieval), ("scoring", ScoringWeights)):
            moved = {
                LEGACY_NAMES[k].removeprefix(f"{group}."): v
                for k, v in {**from_env, **given}.items()
                if LEGACY_NAMES[k].startswith(f"{group}.")
            }
            if moved:
                data[group] = _build(kind, _merge(_as_dict(data.get(group)), moved))
        return data

    @model_validator(mode="before")
    @classmethod
    def _flat_store_knobs(cls, data: Any) -> Any:
        """``Settings(exact_search_max=...)`` (the flat names of earlier releases)
        sets ``store.exact_search_max``."""
        if not isinstance(data, dict):
            return data
        flat = {k: v for k, v in data.items() if k in StoreOptions.model_fields}
        if not flat:
            return data
        rest = {k: v for k, v in data.items() if k not in flat}
        given = rest.get("store")
        if isinstance(given, StoreOptions):
            given = given.model_dump()
        rest["store"] = StoreOptions(**{**(given or {}), **flat})
        return rest

    @model_validator(mode="after")
    def _check(self) -> Settings:
        # which schemes exist is the store registry's business (kenning.stores);
        # here only the shape: a URL, not a bare path
        if self.database_url is not None and "://" not in self.database_url:
            from .errors import ConfigError

            raise ConfigError(
                "database_url must be a database URL (sqlite:///PATH, postgresql://…); "
                f"got {self.database_url!r}"
            )
        return self

    @field_validator("database_read_urls", mode="before")
    @classmethod
    def _split_read_urls(cls, value: Any) -> Any:
        """``"postgresql://a/db, postgresql://b/db"`` -> a tuple; each must be PostgreSQL."""
        return read_urls(value)

    @model_validator(mode="after")
    def _check_read_urls(self) -> Settings:
        primary = self.database_url or "sqlite:///"
        if self.database_read_urls and not primary.startswith(("postgresql://", "postgres://")):
            from .errors import ConfigError

            raise ConfigError(
                "database_read_urls (KENNING_DATABASE_READ_URLS) needs a PostgreSQL primary: "
                "read replicas stream from a PostgreSQL database_url, and this database_url "
                f"is {primary.partition('://')[0]}://…"
            )
        return self

    def resolved_home(self) -> Path:
        """The data directory (not created here)."""
        return self.home.expanduser() if self.home else default_home()

    def db_path(self) -> Path:
        """Path of the embedded SQLite database."""
        if self.database_url and self.database_url.startswith("sqlite:///"):
            return Path(self.database_url.removeprefix("sqlite:///")).expanduser()
        return self.resolved_home() / "kenning.db"


def read_urls(value: Any) -> Any:
    """The read replica URLs as a tuple (from a comma-separated string or a sequence);
    :class:`~kenning.errors.ConfigError` for one that is not a ``postgresql://`` URL."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        return value  # pydantic names the wrong type
    urls = tuple(str(u).strip() for u in items if str(u).strip())
    for n, url in enumerate(urls, 1):
        if not url.startswith(("postgresql://", "postgres://")):
            from .errors import ConfigError

            shown = url if "@" not in url else "…@" + url.rpartition("@")[2]
            raise ConfigError(
                f"database_read_urls (KENNING_DATABASE_READ_URLS) entry {n} must be a "
                f"PostgreSQL URL (postgresql://USER@HOST/DB); got {shown!r}"
            )
    return urls


def _legacy_env(given: set[str], data: dict[str, Any]) -> dict[str, Any]:
    """``KENNING_<OLD_NAME>`` variables, for groups not passed whole (JSON or text)."""
    out: dict[str, Any] = {}
    for name, place in LEGACY_NAMES.items():
        raw = os.environ.get(f"KENNING_{name.upper()}")
        if raw is None or name in given or place.partition(".")[0] in data:
            continue
        try:
            out[name] = json.loads(raw)
        except ValueError:
            out[name] = raw
    return out


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True)
    return dict(value) if isinstance(value, dict) else {}


def _merge(base: dict[str, Any], dotted: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``dotted`` (``"time.enabled": False``) set into it."""
    out = dict(base)
    for path, value in dotted.items():
        head, dot, rest = path.partition(".")
        out[head] = _merge(_as_dict(out.get(head)), {rest: value}) if dot else value
    return out


def _build(kind: type[BaseSettings], values: dict[str, Any]) -> BaseSettings:
    """``kind(**values)``, nested option groups built the same way, so the
    environment still fills what ``values`` leaves out."""
    for name, info in kind.model_fields.items():
        sub = info.annotation
        if isinstance(values.get(name), dict) and isinstance(sub, type):
            if issubclass(sub, BaseSettings):
                values[name] = _build(sub, values[name])
    return kind(**values)
