"""Changing the embedding model: the warning on open, ``Memory.reembed`` and ``kenning reembed``.

A database built with the float32 graph (the default before the int8 one) is
opened with the int8 default: the store says so, recall still works, and a
re-embed gives every memory the new model's vector, resumably, admins only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kenning import Memory, PermissionDenied, Principal
from kenning.cli import app
from kenning.embeddings import CachedEmbedder, Embedder, MemoryCacheBackend, MiniLMEmbedder
from kenning.models import Role


@pytest.fixture(scope="module")
def old_model() -> Embedder:
    return CachedEmbedder(MiniLMEmbedder(compute="float32"), [MemoryCacheBackend(10_000)])


def _all_stale(mem: Memory, org: str = "default") -> list[tuple[str, str]]:
    return mem.store.stale_vectors(org, mem.embedder.model_id, 10_000)


def test_reembed_replaces_every_old_vector_and_only_for_admins(
    make_memory: Callable[..., Memory],
    old_model: Embedder,
    caplog: pytest.LogCaptureFixture,
    make_sentences: Callable[..., list[str]],
) -> None:
    texts = make_sentences(25)
    before = make_memory(embedder=old_model)
    made = before.remember_many([{"content": t} for t in texts])
    before.close()
    with caplog.at_level(logging.WARNING, logger="kenning.store"):
        mem = make_memory()  # the session's default (int8) model
    assert "kenning reembed" in caplog.text and "all-MiniLM-L6-v2-int8" in caplog.text
    assert len(_all_stale(mem)) == len(texts)
    assert mem.recall(texts[3], 3).hits  # old vectors still answer meanwhile
    member = Principal.member("someone")
    with pytest.raises(PermissionDenied, match="admin"):
        mem.reembed(principal=member)
    assert len(_all_stale(mem)) == len(texts)  # refused: nothing changed
    seen: list[int] = []
    admin = Principal(roles=frozenset({Role.ADMIN}))
    assert mem.reembed(batch_size=10, principal=admin, progress=seen.append) == len(texts)
    assert seen == [10, 10, 5] and _all_stale(mem) == []
    view = mem.policy.readable(admin)
    stored = mem.store.memory_vectors([r.id for r in made], view)
    fresh = mem.embedder.embed_many(texts)
    for record, vector in zip(made, fresh, strict=True):
        assert np.allclose(stored[record.id], vector, atol=1e-6)
    assert mem.recall(texts[3], 1).hits[0].memory.id == made[3].id
    assert mem.reembed(principal=admin) == 0  # nothing left: a second run is a no-op


def test_kenning_reembed_command(
    tmp_path: Path, old_model: Embedder, minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "kenning.db"
    with Memory(db, embedder=old_model) as mem:
        mem.remember("The boiler was serviced in March")
        mem.remember("Team note", scope="org:default")
    from kenning import core

    monkeypatch.setattr(core, "create_embedder", lambda name, **options: minilm)
    result = CliRunner().invoke(app, ["--db", str(db), "reembed", "--json"])
    assert result.exit_code == 0, (result.stdout, result.exception)
    out = json.loads(result.stdout)
    assert out == {"model_id": "all-MiniLM-L6-v2-dq8", "reembedded": {"default": 2}}
    again = CliRunner().invoke(app, ["--db", str(db), "reembed", "--json"])
    assert json.loads(again.stdout)["reembedded"] == {"default": 0}
