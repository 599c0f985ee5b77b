"""The load benchmark end to end, tiny: a real ``kenning serve`` subprocess on SQLite,
two clients, 40 requests; no errors and no lost writes."""

from __future__ import annotations

import random

import pytest

from kenning.bench.load import LoadText, run_load
from kenning.errors import ConfigError


def test_load_bench_on_sqlite() -> None:
    result = run_load(clients=2, requests=40, seed_memories=100, users=2, warmup=1.0)
    for key in (
        "store",
        "workers",
        "clients",
        "duration_s",
        "requests",
        "throughput_rps",
        "ops",
        "errors",
        "acknowledged_writes",
        "lost_writes",
        "machine",
        "server_startup_s",
    ):
        assert key in result, key
    assert result["store"] == "sqlite"
    assert result["errors"] == 0, result["error_samples"]
    assert result["requests"] == 40
    assert result["throughput_rps"] > 0
    assert result["lost_writes"] == 0
    assert result["acknowledged_writes"] > 0  # the warm-up writes too
    assert result["memories_after"] >= 100
    assert result["server_stopped_gracefully"], result["server_log_tail"]
    assert result["machine"]["cpu_count"] >= 1
    # the one worker counted every request, the warm-up's too
    (counts,) = result["per_worker_requests"]
    assert sum(counts.values()) == 40 + result["warmup"]["requests"]
    ops = result["ops"]
    assert ops["remember"]["count"] + ops["recall"]["count"] == 40
    # every remember and (uncached) recall embedded a text, in runs of one or more
    embedding = result["embedding"]
    assert 0 < embedding["runs"] <= embedding["texts"]
    assert ops["recall"]["count"] > 0 and ops["recall"]["p50_ms"] > 0
    for op in ops.values():
        assert set(op) >= {"count", "p50_ms", "p95_ms", "p99_ms"}


def test_load_bench_with_two_workers_on_one_sqlite_file() -> None:
    """Two server processes on one SQLite file: both serve, writes from both land
    (every acknowledged remember is found afterwards), nothing fails."""
    result = run_load(workers=2, clients=4, requests=60, seed_memories=50, users=2, warmup=1.0)
    assert result["store"] == "sqlite" and result["workers"] == 2
    assert result["errors"] == 0, result["error_samples"]
    assert result["lost_writes"] == 0
    assert result["acknowledged_writes"] > 0
    assert result["server_stopped_gracefully"], result["server_log_tail"]
    assert result["server_lifespans_closed"] == 2


def test_load_bench_refuses_workers_on_a_store_of_one_process() -> None:
    from kenning.stores import registry

    class OneProcess(registry.StoreBackend):
        schemes = ("oneproc",)
        example = "oneproc://NAME"

        def open(self, url, settings, model_id, dim):  # type: ignore[no-untyped-def]
            raise AssertionError("never opened")

        def inspect(self, url, field):  # type: ignore[no-untyped-def]
            raise AssertionError("never inspected")

    registry.register_store(OneProcess)
    try:
        with pytest.raises(ConfigError, match="several workers need a store"):
            run_load(store="oneproc://x", workers=2, requests=1, seed_memories=0)
    finally:
        registry.unregister_store("oneproc")


def test_load_texts_are_unique() -> None:
    text = LoadText(random.Random(0), "t")
    memories = [text.memory() for _ in range(500)]
    assert len(set(memories)) == 500
    assert text.query().endswith("?")
