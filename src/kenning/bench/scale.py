"""Scale benchmark: ingest N memories across many scopes, then time recall.

Layout of the N memories in one organization: 60% in user scopes (100 per
user), 30% in team scopes (2,000 per team), 10% in the org scope. The
worst-case principal is an admin recalling over every scope (``scopes="all"``,
reads all N); the typical principal is a member of two teams reading their own
memories, those teams and the org.

``synthetic=True`` replaces the model with :class:`BagOfWordsEmbedder`
(deterministic random word vectors summed per text), so a million memories fit
in minutes; texts sharing words get similar vectors, so the ANN index faces a
realistic neighbourhood structure.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import resource
import statistics
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ..config import Settings
from ..embeddings import Embedder, MiniLMEmbedder
from ..embeddings.base import Vectors, normalize_rows
from ..engine import Memory
from ..graph.extract import NoExtractor, extractor_from_settings
from ..models import ALL_SCOPES, Principal, Role, Scope, TeamRole
from ..retrieval.text import STOPWORDS
from .stores import open_bench_memory

__all__ = ["run_scale", "BagOfWordsEmbedder", "synthetic_text"]

_WORDS = (
    "project deadline budget meeting client design review launch roadmap hiring travel "
    "invoice contract security incident backup database server deploy release feature bug "
    "customer support refund policy vacation birthday dinner coffee tea music guitar piano "
    "soccer tennis running marathon garden recipe pasta sushi paris tokyo berlin london "
    "python rust golang kubernetes docker postgres sqlite redis kafka search ranking vector "
    "graph memory agent persona team manager engineer doctor teacher student family friend "
    "sister brother mother father dog cat hiking camping painting reading novel poetry film "
    "concert museum holiday summer winter spring autumn morning evening weekend monday friday"
).split()


_SYLLABLES = [c + v for c in "bcdfghjklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def _vocabulary(size: int = 20_000) -> list[str]:
    rng = random.Random(3)
    # Like English: function words take the top frequency ranks.
    words = dict.fromkeys([w for w in sorted(STOPWORDS) if "'" not in w] + _WORDS)
    while len(words) < size:
        words.setdefault("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return list(words)


_VOCAB = _vocabulary()
#: Zipf-like word frequencies (rank^-1.07), as in natural text.
_WEIGHTS = list(itertools.accumulate(1.0 / (r + 1) ** 1.07 for r in range(len(_VOCAB))))


def synthetic_text(rng: random.Random, n_words: int = 12) -> str:
    """A pseudo-sentence with natural (Zipfian) word frequencies over 20,000 words."""
    words = rng.choices(_VOCAB, cum_weights=_WEIGHTS, k=n_words)
    return f"Note about {words[0]} and {words[1]}: " + " ".join(words[2:]) + "."


class BagOfWordsEmbedder(Embedder):
    """Deterministic synthetic embedder for benchmarks: sum of per-word random vectors."""

    def __init__(self, dim: int = 384, seed: int = 7) -> None:
        self._dim = dim
        self._seed = seed
        self._vocab: dict[str, np.ndarray] = {}

    @property
    def model_id(self) -> str:
        """Identifies the synthetic model (never mixes with real vectors)."""
        return f"synthetic-bow-{self._dim}"

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    def _word(self, word: str) -> np.ndarray:
        vec = self._vocab.get(word)
        if vec is None:
            seed = zlib.crc32(word.encode()) ^ self._seed
            vec = np.random.default_rng(seed).standard_normal(self._dim).astype(np.float32)
            self._vocab[word] = vec
        return vec

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Sum the word vectors of each text and normalise."""
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(":", " ").replace(".", " ").split():
                out[i] += self._word(word)
        return normalize_rows(out)


def _layout(n: int) -> list[Scope]:
    rng = random.Random(11)
    n_user = int(n * 0.6)
    n_team = int(n * 0.3)
    scopes: list[Scope] = [Scope.user(f"u{i // 100}") for i in range(n_user)]
    scopes += [Scope.team(f"t{i // 2000}") for i in range(n_team)]
    scopes += [Scope.org("bench")] * (n - n_user - n_team)
    rng.shuffle(scopes)
    return scopes


def run_scale(
    n: int,
    *,
    synthetic: bool = False,
    queries: int = 200,
    batch: int = 2000,
    settings: Settings | None = None,
    db_path: str | Path | None = None,
    store: str | None = None,
    repeat: int = 1,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Ingest ``n`` memories, then measure recall latency; returns a JSON-ready dict.

    With ``db_path`` naming a database that already holds the ``n`` memories
    (built by an earlier run with the same ``n`` and embedder), ingest is
    skipped and only recall is timed (``ingest_per_s`` is then ``None``). The
    query texts come from their own seed, so runs on one database compare.
    ``repeat`` > 1 times the same recalls again in the same process (after
    the one index build); every pass is reported under ``passes``, the first
    one also at the top level.
    """
    embedder: Embedder = BagOfWordsEmbedder() if synthetic else MiniLMEmbedder()
    admin = Principal(org_id="bench", user_id="admin", roles=frozenset({Role.ADMIN}))
    with tempfile.TemporaryDirectory(prefix="kenning-scale-") as tmp:
        path = Path(db_path) if db_path else Path(tmp) / "scale.db"
        mem = open_bench_memory(store, path, settings, require_empty=False, embedder=embedder)
        try:
            model_rate = _model_rate(embedder, random.Random(4))
            models_rate = _models_rate(embedder, mem.settings, random.Random(4))
            held = mem.stats(scopes=ALL_SCOPES, principal=admin)
            have = sum(s.total_memories for s in held)
            ingest_s: float | None = None
            build_s: float | None = None
            if have == 0:
                ingest_s, build_s = _ingest(mem, n, batch, admin, progress)
            elif have != n:
                where = store or path
                raise ValueError(f"{where} holds {have} memories, not {n}; use a fresh database")
            rng = random.Random(6)
            # fresh texts for every pass: a repeated text would hit the query-embedding cache
            texts = [synthetic_text(rng, 8) for _ in range(2 * queries * max(1, repeat) + 1)]
            t = time.perf_counter()
            mem.recall(texts[0], 10, scopes=ALL_SCOPES, principal=admin)  # loads + builds index
            warm_s = time.perf_counter() - t
            typical_user = Principal(
                org_id="bench",
                user_id="u3",
                roles=frozenset({Role.MEMBER}),
                teams={"t0": TeamRole.MEMBER, "t1": TeamRole.MEMBER},
            )
            passes = []
            for run in range(max(1, repeat)):
                base = 1 + 2 * queries * run
                worst = texts[base : base + queries]
                typical = texts[base + queries : base + 2 * queries]
                passes.append(
                    {
                        "recall_ms": _time_recalls(mem, worst, admin, ALL_SCOPES, progress),
                        "recall_ms_typical": _time_recalls(
                            mem, typical, typical_user, None, progress
                        ),
                    }
                )
            plan = getattr(mem.store, "last_plan", None)
            kind = mem.store.kind
        finally:
            mem.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rate = None if ingest_s is None else n / ingest_s
    return {
        "n": n,
        "store": kind,
        "synthetic_vectors": synthetic,
        "model_id": embedder.model_id,
        "reused_db": ingest_s is None,
        "ingest_per_s": None if rate is None else round(rate, 1),
        "model_only_per_s": round(model_rate, 1),
        "ingest_vs_model": None if rate is None else round(rate / model_rate, 3),
        "models_only_per_s": None if models_rate is None else round(models_rate, 1),
        "ingest_vs_models": None
        if rate is None or models_rate is None
        else round(rate / models_rate, 3),
        "bulk_index_build_s": build_s,
        "index_load_and_build_s": round(warm_s, 2),
        "recall_ms": passes[0]["recall_ms"],
        "recall_ms_typical": passes[0]["recall_ms_typical"],
        "passes": passes,
        "last_plan_typical": None if plan is None else plan.method,
        "rss_mb": round(rss_mb, 1),
        "queries": queries,
    }


def _ingest(
    mem: Memory,
    n: int,
    batch: int,
    admin: Principal,
    progress: Callable[[str, int], None] | None,
) -> tuple[float, float | None]:
    """Write the ``n`` benchmark memories in batches: (seconds in all, of which index build).

    A store that builds its search indexes faster in one go (PostgreSQL's
    ``bulk_load``) gets the chance; the time includes that build.
    """
    rng = random.Random(5)
    scopes = _layout(n)
    bulk = getattr(mem.store, "bulk_load", None)
    started = time.perf_counter()
    seen: dict[str, int] = {}
    with bulk() if bulk else contextlib.nullcontext():
        for start in range(0, n, batch):
            chunk = scopes[start : start + batch]
            items = []
            for s in chunk:
                nth = seen[s.key] = seen.get(s.key, -1) + 1
                # every 20 consecutive memories of a scope are one session (a
                # temporal_next chain in the graph)
                session = f"{s.key}/{nth // 20}"
                items.append({"content": synthetic_text(rng), "scope": s, "session_id": session})
            mem.remember_many(items, principal=admin)
            if progress:
                progress("ingest", len(chunk))
        loaded = time.perf_counter()
    done = time.perf_counter()
    return done - started, (round(done - loaded, 1) if bulk else None)


def _model_rate(embedder: Embedder, rng: random.Random) -> float:
    sample = [synthetic_text(rng) for _ in range(1000)]
    embedder.embed_batch(sample[:64])  # warm-up: load the model
    t = time.perf_counter()
    embedder.embed_many(sample, batch_size=256)
    return len(sample) / (time.perf_counter() - t)


def _models_rate(embedder: Embedder, settings: Settings, rng: random.Random) -> float | None:
    """Both models of the write path alone, run as a write runs them: the entity
    extractor on a worker while the embedder takes the same texts (per s). None
    when the graph is off or has no extractor (the embedder is then the only model)."""
    if not settings.graph_enabled:
        return None
    extractor = extractor_from_settings(settings)
    if isinstance(extractor, NoExtractor):
        return None
    sample = [synthetic_text(rng) for _ in range(1000)]
    extractor.warm_up()
    extractor.extract_batch(sample[:64])
    embedder.embed_batch(sample[:64])
    with ThreadPoolExecutor(1) as worker:
        t = time.perf_counter()
        extracted = worker.submit(extractor.extract_batch, sample)
        embedder.embed_many(sample, batch_size=256)
        extracted.result()
        return len(sample) / (time.perf_counter() - t)


def _time_recalls(
    mem: Memory,
    texts: Sequence[str],
    who: Principal,
    scopes: str | None,
    progress: Callable[[str, int], None] | None,
) -> dict[str, Any]:
    """Whole-recall latency quantiles (ms), and those of its graph stage alone."""
    times: list[float] = []
    graph: list[float] = []
    for text in texts:
        t = time.perf_counter()
        result = mem.recall(text, 10, scopes=scopes, principal=who)
        times.append((time.perf_counter() - t) * 1000)
        graph.append(result.timings_ms.get("graph", 0.0))
        if progress:
            progress("recall", 1)
    return {**_quantiles(times), "graph_stage": _quantiles(graph)}


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50": round(statistics.median(ordered), 2), "p95": pick(0.95), "p99": pick(0.99)}
