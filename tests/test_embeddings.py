"""Tests of kenning.embeddings against the real MiniLM model and a real local HTTP server."""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from embedkit import CountingEmbedder

from kenning.embeddings import (
    CachedEmbedder,
    EmbeddingCacheBackend,
    MemoryCacheBackend,
    MiniLMEmbedder,
    OpenAIEmbedder,
    WrappingEmbedder,
    available_embedders,
    content_hash,
    create_embedder,
    register_embedder,
)
from kenning.embeddings.base import Vectors
from kenning.errors import ConfigError, EmbeddingError, InvalidInput

# --------------------------------------------------------------------------- MiniLM


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def _sentences(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    words = (
        "Caroline went to the support group yesterday and said it was powerful Melanie "
        "painted a sunrise by the lake with her kids after camping in the mountains"
    ).split()
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def test_minilm_shape_dtype_and_unit_norm(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed_batch(["hello world", "", "A much longer sentence about memory."])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.model_id == "all-MiniLM-L6-v2-dq8" and minilm.dim == 384
    single = minilm.embed("hello world")
    assert single.shape == (384,) and single.dtype == np.float32


def test_minilm_empty_input(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed_batch([]).shape == (0, 384)
    assert minilm.embed_many([]).shape == (0, 384)


def test_minilm_order_preserved_with_mixed_lengths() -> None:
    embedder = MiniLMEmbedder(sub_batch_size=4)  # several sorted sub-batches
    texts = _sentences(23)
    random.Random(11).shuffle(texts)
    batch = embedder.embed_batch(texts)
    for text, row in zip(texts, batch, strict=True):
        assert float(row @ embedder.embed(text)) > 0.999


def test_minilm_semantics_match_reference(minilm: MiniLMEmbedder) -> None:
    food, bread, baby = minilm.embed_batch(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ]
    )
    assert float(food @ bread) > 0.6
    assert float(food @ baby) < 0.3


def test_minilm_truncates_long_text(minilm: MiniLMEmbedder) -> None:
    long_text = "memory " * 2000
    vec = minilm.embed(long_text)
    assert vec.shape == (384,) and np.isfinite(vec).all()
    # only the first 256 tokens count, so extra tail text changes nothing
    assert float(vec @ minilm.embed(long_text + " completely different ending")) > 0.9999


def test_minilm_embed_many_chunks_and_reports_progress(minilm: MiniLMEmbedder) -> None:
    texts = _sentences(10)
    seen: list[int] = []
    many = minilm.embed_many(texts, batch_size=4, progress=seen.append)
    assert seen == [4, 4, 2]
    assert np.allclose(many, minilm.embed_batch(texts), atol=1e-5)
    with pytest.raises(InvalidInput):
        minilm.embed_many(texts, batch_size=0)


def test_minilm_rejects_non_text(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(InvalidInput):
        minilm.embed_batch("a bare string")
    with pytest.raises(InvalidInput):
        minilm.embed_batch(["ok", 3])  # type: ignore[list-item]


def test_minilm_loads_lazily_once_under_concurrency() -> None:
    embedder = MiniLMEmbedder(threads=1)
    assert not embedder.loaded
    results: list[Vectors] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(embedder.embed("concurrent first use"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and len(results) == 4 and embedder.loaded
    session = embedder._session
    embedder.embed("again")
    assert embedder._session is session
    for vec in results[1:]:
        assert np.allclose(vec, results[0], atol=1e-6)


def test_minilm_sha_mismatch_is_config_error(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    embedder = MiniLMEmbedder(model_path=fake)  # construction itself loads nothing
    with pytest.raises(ConfigError, match="sha256"):
        embedder.embed("x")
    with pytest.raises(ConfigError, match="not found"):
        MiniLMEmbedder(model_path=tmp_path / "missing.onnx").load()


def test_int8_and_float32_compute_agree_and_are_told_apart(minilm: MiniLMEmbedder) -> None:
    """The derived int8 graph stays close to the shipped float32 one, under its own id."""
    exact = MiniLMEmbedder(compute="float32")
    assert exact.model_id == "all-MiniLM-L6-v2-int8" != minilm.model_id
    texts = _sentences(40, seed=8)
    cosines = np.sum(minilm.embed_batch(texts) * exact.embed_batch(texts), axis=1)
    assert float(cosines.mean()) > 0.98 and float(cosines.min()) > 0.9
    # and the nearest neighbour among the others is mostly the same text's
    a, b = minilm.embed_batch(texts), exact.embed_batch(texts)
    same = np.mean(np.argmax(a @ b.T, axis=1) == np.arange(len(texts)))
    assert same >= 0.95
    with pytest.raises(ConfigError, match="compute"):
        MiniLMEmbedder(compute="fp16")


def test_int8_vector_of_a_text_does_not_depend_on_its_batch() -> None:
    """Dynamic quantization scales a whole input tensor, so each text runs alone:
    the same text gives the same bytes alone, in any batch, on any runner thread."""
    embedder = MiniLMEmbedder(threads=2)
    texts = _sentences(30, seed=5)
    alone = np.stack([embedder.embed(t) for t in texts])
    batch = embedder.embed_batch(texts)
    shuffled = list(reversed(texts))
    assert np.array_equal(batch, alone)
    assert np.array_equal(embedder.embed_batch(shuffled), alone[::-1])
    for bad in (0, -1, True, "1"):
        with pytest.raises(ConfigError, match="threads"):
            MiniLMEmbedder(threads=bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="query_threads"):
            MiniLMEmbedder(query_threads=bad)  # type: ignore[arg-type]


def test_int8_text_alone_on_several_threads_gives_the_bytes_of_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text alone (a recall's query) runs on ``query_threads`` threads; its vector
    is bitwise the one a single-threaded run gives, up to the 256-token cap."""
    from kenning import _files

    hashed: list[Path] = []
    real_sha = _files.file_sha256
    monkeypatch.setattr(_files, "file_sha256", lambda p: hashed.append(p) or real_sha(p))
    one = MiniLMEmbedder(threads=1)
    several = MiniLMEmbedder(threads=1, query_threads=3)
    texts = _sentences(12, seed=9) + ["memory " * 300, "Ö ünïcode – text ✓", ""]
    assert not one.parallel_query and several.parallel_query
    assert several._query_threads == 3 and MiniLMEmbedder(threads=2)._query_threads == 2
    for text in texts:
        assert np.array_equal(several.embed(text), one.embed(text))
    assert several._single is not None and several._single is not several._session
    assert several._graph is not None  # the model was verified once for both sessions
    assert one._single is None  # one thread: the batch session serves single texts too
    assert len(hashed) == 2  # the shipped model, once per embedder, not once per session
    options = several._single.get_session_options()
    assert options.intra_op_num_threads == 3
    # its threads spin between a run's operators, and stop when the run returns
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "1"
    assert options.get_session_config_entry("session.force_spinning_stop") == "1"


def test_derived_model_is_cached_verified_and_rebuilt_when_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kenning.embeddings import quantize
    from kenning.embeddings.onnx_minilm import _default_model_path

    source = _default_model_path()
    built = quantize.dynamic_int8_model(source, tmp_path)
    assert built.parent == tmp_path and quantize.file_sha256(built) == quantize.DERIVED_SHA256
    stamp = built.stat().st_mtime_ns
    assert quantize.dynamic_int8_model(source, tmp_path) == built
    assert built.stat().st_mtime_ns == stamp  # reused, not rebuilt
    built.write_bytes(b"half a model")  # e.g. a copy cut short
    assert quantize.file_sha256(quantize.dynamic_int8_model(source, tmp_path)) == (
        quantize.DERIVED_SHA256
    )
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind
    # a build that does not give the pinned bytes is refused, not loaded
    monkeypatch.setattr(quantize, "DERIVED_SHA256", "0" * 64)
    with pytest.raises(ConfigError, match="pinned versions"):
        quantize.dynamic_int8_model(source, tmp_path / "other")
    # the cache directory follows KENNING_MODEL_CACHE, then XDG_CACHE_HOME
    monkeypatch.setenv("KENNING_MODEL_CACHE", str(tmp_path / "models"))
    assert quantize.cache_dir() == tmp_path / "models"
    monkeypatch.delenv("KENNING_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert quantize.cache_dir() == tmp_path / "xdg" / "kenning"


def test_unwritable_model_cache_falls_back_to_the_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from kenning.embeddings import quantize
    from kenning.embeddings.onnx_minilm import _default_model_path

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    built = quantize.dynamic_int8_model(_default_model_path(), blocker / "cache")
    assert built.is_relative_to(tmp_path / "tmp")
    assert quantize.file_sha256(built) == quantize.DERIVED_SHA256
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(blocker))  # nowhere to write
    with pytest.raises(ConfigError, match="cannot write the derived"):
        quantize.dynamic_int8_model(_default_model_path(), blocker / "cache")


def test_import_loads_nothing() -> None:
    code = (
        "import sys, kenning.embeddings as e; "
        "assert 'onnxruntime' not in sys.modules and 'tokenizers' not in sys.modules; "
        "e.MiniLMEmbedder(); assert 'onnxruntime' not in sys.modules"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    proc = subprocess.run(
        [sys.executable, "-c", code], env={"PYTHONPATH": src}, capture_output=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr.decode()


# --------------------------------------------------------------------------- cache


def test_content_hash_is_sha256_of_utf8() -> None:
    assert content_hash("abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    assert content_hash("é") != content_hash("e")
    with pytest.raises(InvalidInput):
        content_hash("\ud800")


def test_cache_second_call_hits(minilm: MiniLMEmbedder) -> None:
    counting = CountingEmbedder(minilm)
    cached = CachedEmbedder(counting)
    texts = ["alpha memory", "beta memory", "gamma memory"]
    first = cached.embed_batch(texts)
    assert (cached.hits, cached.misses) == (0, 3)
    second = cached.embed_batch(list(reversed(texts)))
    assert (cached.hits, cached.misses) == (3, 3)
    assert counting.calls == [texts]
    assert np.array_equal(second, first[::-1])
    assert np.allclose(first, minilm.embed_batch(texts), atol=1e-6)
    assert cached.model_id == minilm.model_id and cached.dim == 384
    assert isinstance(cached.backends[0], EmbeddingCacheBackend)


def test_cache_embeds_duplicates_in_a_batch_once(minilm: MiniLMEmbedder) -> None:
    counting = CountingEmbedder(minilm)
    cached = CachedEmbedder(counting)
    out = cached.embed_batch(["same", "other", "same", "same", "other"])
    assert counting.calls == [["same", "other"]]
    assert cached.misses == 2 and cached.hits == 0
    assert np.array_equal(out[0], out[2]) and np.array_equal(out[1], out[4])
    assert cached.embed_batch([]).shape == (0, 384)
    assert counting.calls == [["same", "other"]]


def test_cache_backends_in_order_with_backfill(minilm: MiniLMEmbedder) -> None:
    front, back = MemoryCacheBackend(), MemoryCacheBackend()
    warm = CachedEmbedder(minilm, [back])
    warm.embed_batch(["persisted text"])
    counting = CountingEmbedder(minilm)
    cached = CachedEmbedder(counting, [front, back])
    cached.embed_batch(["persisted text", "new text"])
    assert counting.calls == [["new text"]]
    h_old, h_new = content_hash("persisted text"), content_hash("new text")
    assert set(front.get_vectors(minilm.model_id, [h_old, h_new])) == {h_old, h_new}
    assert set(back.get_vectors(minilm.model_id, [h_old, h_new])) == {h_old, h_new}
    assert back.get_vectors("another-model", [h_old]) == {}


def test_memory_backend_is_bounded_lru() -> None:
    backend = MemoryCacheBackend(max_items=2)
    vec = np.ones(3, dtype=np.float32)
    backend.put_vectors("m", {"a": vec, "b": vec})
    backend.get_vectors("m", ["a"])  # a is now most recent
    backend.put_vectors("m", {"c": vec})
    assert set(backend.get_vectors("m", ["a", "b", "c"])) == {"a", "c"}
    assert len(backend) == 2
    stored = backend.get_vectors("m", ["a"])["a"]
    with pytest.raises(ValueError):
        stored[0] = 5.0  # cached vectors are read-only


# --------------------------------------------------------------------------- registry


def test_registry_unknown_name_lists_known() -> None:
    with pytest.raises(ConfigError, match="minilm.*openai"):
        create_embedder("no-such-embedder")
    assert {"minilm", "openai"} <= set(available_embedders())


def test_registry_builtins_and_custom(minilm: MiniLMEmbedder) -> None:
    built = create_embedder("minilm", threads="2", sub_batch_size="8")
    assert isinstance(built, MiniLMEmbedder) and not built.loaded
    with pytest.raises(ConfigError):
        create_embedder("minilm", threads="many")
    with pytest.raises(ConfigError):
        create_embedder("minilm", no_such_option=1)
    register_embedder("test-counting", lambda: CountingEmbedder(minilm))
    assert isinstance(create_embedder("test-counting"), CountingEmbedder)
    register_embedder("test-bad", lambda: object())  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="not an Embedder"):
        create_embedder("test-bad")


def test_registry_loads_entry_point_plugins_lazily(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kenning_test_plugin.py").write_text(
        "from kenning.embeddings import MiniLMEmbedder\n"
        "def make(**options):\n    return MiniLMEmbedder(**options)\n"
    )
    dist = tmp_path / "kenning_test_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: kenning-test-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[kenning.embedders]\ntest-plugin = kenning_test_plugin:make\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "test-plugin" in available_embedders()
    assert "kenning_test_plugin" not in sys.modules  # listed, not imported
    assert isinstance(create_embedder("test-plugin", threads=1), MiniLMEmbedder)
    monkeypatch.delitem(sys.modules, "kenning_test_plugin")


# --------------------------------------------------------------------------- OpenAI

Step = tuple[int, bytes] | str  # (status, raw body) or "ok"


class ScriptedServer:
    """A real HTTP server on 127.0.0.1 answering POSTs from a script of responses."""

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.requests: list[dict[str, Any]] = []
        self.dim = 4
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                step = outer.script.pop(0) if outer.script else "ok"
                status, raw = step if isinstance(step, tuple) else outer.ok_body(body["input"])
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def ok_body(self, inputs: list[str]) -> tuple[int, bytes]:
        """Deterministic vectors (first component = text length), listed in reverse order."""
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float(len(t)) + 1] + [1.0] * (self.dim - 1),
            }
            for i, t in enumerate(inputs)
        ]
        return 200, json.dumps({"object": "list", "data": data[::-1]}).encode()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    yield srv
    srv.close()


@pytest.fixture
def make_client(server: ScriptedServer) -> Iterator[Callable[..., OpenAIEmbedder]]:
    made: list[OpenAIEmbedder] = []

    def make(**kw: Any) -> OpenAIEmbedder:
        options: dict[str, Any] = {"backoff_s": 0.001, "timeout_s": 5.0, **kw}
        client = OpenAIEmbedder(server.base_url, "test-model", **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def _expected(texts: Sequence[str], dim: int = 4) -> Vectors:
    raw = np.array([[len(t) + 1.0] + [1.0] * (dim - 1) for t in texts], dtype=np.float32)
    out: Vectors = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    return out


def test_openai_success_orders_by_index_and_normalises(
    server: ScriptedServer, make_client: Callable[..., OpenAIEmbedder]
) -> None:
    client = make_client(api_key="sk-test", batch_size=2)
    texts = ["a", "bbbb", "cc", "dddddddd", "e"]
    out = client.embed_batch(texts)
    assert out.dtype == np.float32 and np.allclose(out, _expected(texts), atol=1e-6)
    assert len(server.requests) == 3  # batches of 2, 2, 1
    first = server.requests[0]
    assert first["path"] == "/v1/embeddings" and first["auth"] == "Bearer sk-test"
    assert first["body"] == {"model": "test-model", "input": ["a", "bbbb"]}
    assert client.dim == 4 and client.model_id == "openai:test-model"


def test_openai_dim_probe_and_empty_input(
    server: ScriptedServer, make_client: Callable[..., OpenAIEmbedder]
) -> None:
    client = make_client()
    assert client.embed_batch([]).shape == (0, 4)  # learns dim with one probe
    assert len(server.requests) == 1 and server.requests[0]["auth"] is None
    client.close()
    assert client.embed("again").shape == (4,)  # a closed client reopens


def test_openai_retries_5xx_and_429(
    server: ScriptedServer, make_client: Callable[..., OpenAIEmbedder]
) -> None:
    server.script = [(500, b'{"error": {"message": "boom"}}'), (429, b"{}"), "ok"]
    out = make_client().embed_batch(["x", "yy"])
    assert np.allclose(out, _expected(["x", "yy"]), atol=1e-6)
    assert len(server.requests) == 3


def test_openai_gives_up_after_max_retries(
    server: ScriptedServer, make_client: Callable[..., OpenAIEmbedder]
) -> None:
    server.script = [(503, b"unavailable")] * 5
    with pytest.raises(EmbeddingError, match="after 3 attempt.*HTTP 503"):
        make_client(max_retries=2).embed("x")
    assert len(server.requests) == 3


def test_openai_4xx_fails_without_retry(
    server: ScriptedServer, make_client: Callable[..., OpenAIEmbedder]
) -> None:
    server.script = [(400, b'{"error": {"message": "model not found"}}')]
    with pytest.raises(EmbeddingError, match="HTTP 400.*model not found"):
        make_client().embed("x")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"data": {}}', "no 'data' list"),
        (b'{"data": [{"index": 0, "embedding": [1.0, 0.0]}]}', "1 embeddings for 2 inputs"),
        (
            b'{"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]}',
            "inconsistent dimensions",
        ),
        (
            b'{"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}',
            "bad 'index'",
        ),
        (b'{"data": [{"index": 0}, {"index": 1}]}', "without an 'embedding'"),
    ],
)
def test_openai_malformed_responses(
    server: ScriptedServer,
    make_client: Callable[..., OpenAIEmbedder],
    raw: bytes,
    match: str,
) -> None:
    server.script = [(200, raw)]
    with pytest.raises(EmbeddingError, match=match):
        make_client().embed_batch(["x", "y"])
    assert len(server.requests) == 1


def test_openai_dim_mismatch(
    server: ScriptedServer, make_client: Callable[..., OpenAIEmbedder]
) -> None:
    with pytest.raises(EmbeddingError, match="4-d embeddings; expected 8"):
        make_client(dim=8).embed("x")


def test_openai_connect_error_is_retried_then_raised() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = OpenAIEmbedder(
        f"http://127.0.0.1:{port}/v1", "m", max_retries=2, backoff_s=0.001, timeout_s=2
    )
    with pytest.raises(EmbeddingError, match="after 3 attempt.*Connect"):
        client.embed("x")
    client.close()


def test_openai_config_errors_and_registry(server: ScriptedServer) -> None:
    with pytest.raises(ConfigError):
        OpenAIEmbedder("localhost:11434/v1", "m")
    with pytest.raises(ConfigError):
        OpenAIEmbedder(server.base_url, "")
    client = create_embedder(
        "openai", base_url=server.base_url, model="m", dim="4", max_retries="0", timeout_s="5"
    )
    assert isinstance(client, OpenAIEmbedder)
    assert client.embed_batch(["hi"]).shape == (1, 4)
    client.close()


def test_a_wrapper_keeps_the_wrapped_models_id_dimension_and_query_threads() -> None:
    """Any :class:`WrappingEmbedder` (the cache, a user's logger) reports its inner
    model's id, dimension and ``parallel_query``, so recall calls it the same way."""

    class Logged(WrappingEmbedder):
        def embed_batch(self, texts: Sequence[str]) -> Vectors:
            return self.inner.embed_batch(texts)

    for inner in (MiniLMEmbedder(query_threads=2), MiniLMEmbedder(threads=1)):
        for wrapper in (Logged(inner), CachedEmbedder(inner), Logged(CachedEmbedder(inner))):
            assert wrapper.parallel_query is inner.parallel_query
            assert (wrapper.model_id, wrapper.dim) == (inner.model_id, inner.dim)
    assert Logged(MiniLMEmbedder(query_threads=2)).parallel_query
    with pytest.raises(InvalidInput, match="inner must be an Embedder"):
        Logged("not an embedder")  # type: ignore[arg-type]
