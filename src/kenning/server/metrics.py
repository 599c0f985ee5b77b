"""Prometheus metrics of one server process: request rates and latencies per
route, recall latency per stage, the embedding model's runs and the texts they
embedded (their ratio is the mean micro-batch), and the store's size (read at
scrape time).

Each app has its own registry. With several workers each process counts its
own requests; scrape each worker, or aggregate with prometheus_client's
multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric

from ..embeddings import BatchingEmbedder
from ..models import LayerStats

__all__ = ["Metrics"]

_LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)


class Metrics:
    """The server's instruments, registered on a private registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "kenning_http_requests",
            "HTTP requests by route and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "kenning_http_request_seconds",
            "HTTP request latency by route",
            ["method", "route"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.recall_stage = Histogram(
            "kenning_recall_stage_seconds",
            "Recall latency per pipeline stage",
            ["stage"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.memories = Gauge(
            "kenning_memories",
            "Memories of the scraping admin's organization",
            ["layer", "status"],
            registry=self.registry,
        )
        self.store_bytes = Gauge(
            "kenning_store_bytes",
            "Size of the database (files, or the PostgreSQL database)",
            registry=self.registry,
        )

        self._embedder = _EmbedRuns()
        self.registry.register(self._embedder)

    def watch_embedder(self, batcher: BatchingEmbedder | None) -> None:
        """Report the model runs of ``batcher`` (the engine's; None: not batching)."""
        self._embedder.batcher = batcher

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one request and its latency."""
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)

    def observe_recall(self, timings_ms: Mapping[str, float]) -> None:
        """Record a recall's per-stage timings."""
        for stage, ms in timings_ms.items():
            self.recall_stage.labels(stage).observe(ms / 1000.0)

    def render(self, layers: list[LayerStats], store_bytes: int) -> bytes:
        """The exposition text, with the size gauges set from ``layers``."""
        self.memories.clear()
        for st in layers:
            for status, n in st.by_status.items():
                self.memories.labels(st.layer, status).set(n)
        self.store_bytes.set(store_bytes)
        return generate_latest(self.registry)


class _EmbedRuns:
    """A collector reading the batcher's counts at scrape time."""

    def __init__(self) -> None:
        self.batcher: BatchingEmbedder | None = None

    def collect(self) -> Iterator[Metric]:
        batcher = self.batcher
        if batcher is None:
            return
        yield CounterMetricFamily(
            "kenning_embed_runs",
            "Embedding model runs (calls that waited together shared one)",
            value=batcher.runs,
        )
        yield CounterMetricFamily(
            "kenning_embed_texts", "Texts embedded by those runs", value=batcher.texts
        )
