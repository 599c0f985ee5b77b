"""What the default entity extractor (spaCy NER + tagger + key phrases) costs per text.

    python bench/ner_speed.py --data /work/shared/bench/locomo10.json [--n 2000] [--single 500]

Runs ``SpacyExtractor.extract_batch`` over the first ``--n`` LoCoMo turns
("Speaker: text") in one call (``nlp.pipe`` batches of 64, as ``ingest`` and
``remember_many`` do), then over the first ``--single`` turns one at a time (as
a single ``remember`` does), after a warm-up that loads the pipeline. Prints
JSON: texts per CPU-second and per wall-second in batches, CPU and wall ms for
one text, and how many entity mentions were found (the same count on any
machine for the same pipeline).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from kenning.bench.locomo_data import load_locomo
from kenning.graph.spacy_ner import SpacyExtractor


def main() -> None:
    """Time the extractor in batches and one text at a time; print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--n", type=int, default=2000, help="turns extracted in one batch")
    ap.add_argument("--single", type=int, default=500, help="turns extracted one at a time")
    args = ap.parse_args()
    turns = [t.document for conv in load_locomo(str(args.data)) for t in conv.turns][: args.n]
    extractor = SpacyExtractor()
    extractor.extract_batch(turns[:50])  # loads the pipeline
    cpu, wall = time.process_time(), time.perf_counter()
    found = extractor.extract_batch(turns)
    batch_cpu, batch_wall = time.process_time() - cpu, time.perf_counter() - wall
    alone = turns[: args.single]
    cpu, wall = time.process_time(), time.perf_counter()
    for text in alone:
        extractor.extract_batch([text])
    single_cpu, single_wall = time.process_time() - cpu, time.perf_counter() - wall
    print(
        json.dumps(
            {
                "texts": len(turns),
                "batch_texts_per_cpu_s": round(len(turns) / batch_cpu, 1),
                "batch_texts_per_s": round(len(turns) / batch_wall, 1),
                "single_texts": len(alone),
                "single_cpu_ms": round(single_cpu / len(alone) * 1000, 2),
                "single_wall_ms": round(single_wall / len(alone) * 1000, 2),
                "mentions": sum(len(m) for m in found),
            }
        )
    )


if __name__ == "__main__":
    main()
