"""Prometheus metrics of one server process: request rates and latencies per
route, recall latency per stage, the embedding model's runs and the texts they
embedded (their ratio is the mean micro-batch), the engine lanes' sizes and the
calls waiting for them, the store's size and, with read replicas, each replica's
state (read at scrape time).

Each app has its own registry. With several workers each process counts its
own requests; scrape each worker, or aggregate with prometheus_client's
multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from ..embeddings import BatchingEmbedder
from ..lanes import EngineLanes
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
        self._replicas = _ReplicaStates()
        self.registry.register(self._replicas)
        self._lane = _LaneState()
        self.registry.register(self._lane)

    def watch_embedder(self, batcher: BatchingEmbedder | None) -> None:
        """Report the model runs of ``batcher`` (the engine's; None: not batching)."""
        self._embedder.batcher = batcher

    def watch_lanes(self, lanes: EngineLanes | None) -> None:
        """Report the engine lanes' sizes and waiting calls (unbounded lanes: nothing)."""
        self._lane.lanes = lanes

    def watch_replicas(self, replicas: Replicas | None) -> None:
        """Report the state of the store's read replicas (None: the store has none)."""
        self._replicas.replicas = replicas

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


class _LaneState:
    """A collector reading the engine lane's size and queue at scrape time: every
    call of the lane (``lane="engine"``) and the writes among them (``"writes"``)."""

    def __init__(self) -> None:
        self.lanes: EngineLanes | None = None

    def collect(self) -> Iterator[Metric]:
        lanes = self.lanes
        if lanes is None or lanes.engine is None or lanes.writes is None:
            return
        families = (
            ("size", "Engine calls this process runs at once (all; writes)", "total_tokens"),
            ("running", "Engine calls running (all; writes)", "borrowed_tokens"),
            ("waiting", "Engine calls waiting for their turn (all; writes)", "tasks_waiting"),
        )
        stats = {"engine": lanes.engine.statistics(), "writes": lanes.writes.statistics()}
        for name, doc, field in families:
            family = GaugeMetricFamily(f"kenning_engine_lane_{name}", doc, labels=["lane"])
            for lane, st in stats.items():
                family.add_metric([lane], getattr(st, field))
            yield family


class ReplicaState(Protocol):
    """What the metrics read of one replica (``ReplicaStatus`` of the PostgreSQL store)."""

    @property
    def url(self) -> str: ...
    @property
    def healthy(self) -> bool: ...
    @property
    def lag_s(self) -> float: ...
    @property
    def reads(self) -> int: ...


class Replicas(Protocol):
    """A store's read replicas (the PostgreSQL store's ``replicas``)."""

    def status(self) -> Sequence[ReplicaState]: ...


class _ReplicaStates:
    """A collector reading each read replica's state at scrape time: in rotation or
    not, its replay lag at the last check, the reads it served. Labelled by the
    replica's URL without credentials."""

    def __init__(self) -> None:
        self.replicas: Replicas | None = None

    def collect(self) -> Iterator[Metric]:
        replicas = self.replicas
        states = replicas.status() if replicas is not None else ()
        if not states:
            return
        up = GaugeMetricFamily(
            "kenning_replica_up",
            "Read replica in rotation (1) or out of it (0: unreachable, lagging, failed)",
            labels=["replica"],
        )
        lag = GaugeMetricFamily(
            "kenning_replica_lag_seconds",
            "How far the replica's replay was behind the primary at the last check",
            labels=["replica"],
        )
        reads = CounterMetricFamily(
            "kenning_replica_reads", "Reads this process sent to the replica", labels=["replica"]
        )
        for state in states:
            up.add_metric([state.url], 1.0 if state.healthy else 0.0)
            lag.add_metric([state.url], state.lag_s)
            reads.add_metric([state.url], state.reads)
        yield from (up, lag, reads)
