"""Settings: every knob in one place, read from ``KENNING_*`` environment variables.

Nothing is read or created at import; :class:`Settings` reads the environment
when it is instantiated, and paths are resolved lazily by :meth:`Settings.db_path`.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "ScoringWeights", "default_home"]


def default_home() -> Path:
    """``$KENNING_HOME`` or ``~/.kenning`` (not created here)."""
    env = os.environ.get("KENNING_HOME")
    return Path(env).expanduser() if env else Path.home() / ".kenning"


class ScoringWeights(BaseSettings):
    """Priority score weights and boosts (DESIGN.md §3, seed 000)."""

    model_config = SettingsConfigDict(env_prefix="KENNING_SCORING_", extra="forbid")

    confidence: float = Field(0.5, ge=0, le=1)
    temporal: float = Field(0.2, ge=0, le=1)
    relevance: float = Field(0.3, ge=0, le=1)
    strength: float = Field(0.0, ge=0, le=1)
    layer_boost: float = Field(0.05, ge=0, le=1)
    exact_match_boost: float = Field(0.5, ge=0, le=2)
    high_confidence_boost: float = Field(0.02, ge=0, le=1)
    persona_user_boost: float = Field(0.03, ge=0, le=1)
    persona_boost: float = Field(0.015, ge=0, le=1)
    #: How fused relevance is normalised before mixing: ``minmax`` spreads the
    #: best ``relevance_window`` candidates over [0, 1] (the rest get 0); ``max``
    #: divides by the best score; ``rank`` is 1 / (1 + rank / 10). Chosen on the
    #: LoCoMo dev split: see BENCHMARKS.md ("priority ablation").
    relevance_norm: str = Field("minmax", pattern="^(max|minmax|rank)$")
    relevance_window: int = Field(20, gt=1)


class Settings(BaseSettings):
    """kenning's configuration. Environment variables use the ``KENNING_`` prefix."""

    model_config = SettingsConfigDict(env_prefix="KENNING_", extra="forbid")

    home: Path | None = None
    #: ``sqlite:///PATH`` (the default: ``HOME/kenning.db``) or ``postgresql://…``.
    database_url: str | None = None
    #: Connections per process to PostgreSQL (recall runs two queries at once).
    pg_pool_size: int = Field(4, ge=2, le=100)
    #: PostgreSQL: readable sets up to this size are scanned exactly; larger ones
    #: walk the HNSW index with iterative scans (falling back to the exact scan
    #: when the walk ends short of k).
    pg_exact_search_max: int = Field(2000, gt=0)

    embedder: str = "minilm"
    embedder_options: dict[str, str] = Field(default_factory=dict)
    embed_threads: int | None = None

    max_content_chars: int = Field(20_000, gt=0)
    max_key_chars: int = Field(120, gt=0)
    max_tags: int = Field(32, gt=0)
    max_batch: int = Field(10_000, gt=0)
    max_k: int = Field(1_000, gt=0)

    # retrieval
    candidates_dense: int = Field(50, gt=0)
    candidates_keyword: int = Field(50, gt=0)
    fusion: str = Field("convex", pattern="^(convex|rrf)$")
    #: Weight of the dense side in convex fusion (0 = BM25 only, 1 = dense only);
    #: 0.7 sits on the dev-split plateau 0.6-0.8.
    fusion_alpha: float = Field(0.7, ge=0, le=1)
    rrf_k: int = Field(60, gt=0)
    min_confidence: float = Field(0.0, ge=0, le=1)
    #: Query words found in more than this share of the reader's memories (a
    #: user's own name in their memories, say) carry no signal there; they are
    #: dropped from both the keyword and the dense query. 0 disables.
    common_term_ratio: float = Field(0.3, ge=0, le=1)
    #: ... but only when the reader can see at least ``common_term_min_docs``
    #: and at most ``common_term_max_docs`` memories (the counts stay bounded).
    common_term_min_docs: int = Field(20, ge=1)
    common_term_max_docs: int = Field(20_000, ge=1)
    #: Keyword queries skip words found in more than this share of all indexed
    #: memories (their BM25 weight is near zero, scoring them is not).
    keyword_max_df_ratio: float = Field(0.25, gt=0, le=1)
    #: PostgreSQL: a keyword query scores at most about this many matching
    #: memories (its rarest words first), so its cost stays flat as stores grow.
    keyword_postings_budget: int = Field(2000, gt=0)
    exact_search_max: int = Field(20_000, gt=0)
    ann_min_rows: int = Field(50_000, gt=0)
    ann_expansion: int = Field(64, gt=0)
    ann_connectivity: int = Field(16, gt=0)

    # temporal decay per layer (seed 000): days and floor
    decay_days_personal: float = Field(365, gt=0)
    decay_days_shared: float = Field(180, gt=0)
    decay_days_organization: float = Field(730, gt=0)
    min_temporal_personal: float = Field(0.1, ge=0, le=1)
    min_temporal_shared: float = Field(0.2, ge=0, le=1)
    min_temporal_organization: float = Field(0.3, ge=0, le=1)

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

    scoring: ScoringWeights = Field(default_factory=ScoringWeights)

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.database_url is not None and not (
            self.database_url.startswith("sqlite:///")
            or self.database_url.startswith("postgresql://")
        ):
            from .errors import ConfigError

            raise ConfigError(
                "database_url must start with sqlite:/// or postgresql://; "
                f"got {self.database_url!r}"
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
