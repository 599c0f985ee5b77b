"""What ``kenning reembed`` costs: memories re-embedded per second after a model change.

    python bench/reembed_speed.py --data /work/shared/bench/locomo10.json [--n 3000]

Fills a fresh SQLite store with the first ``--n`` turns of the LoCoMo
conversations (one user per conversation) embedded by the float32 MiniLM graph
(``embedder_options={"compute": "float32"}``, model id
``all-MiniLM-L6-v2-int8``), then opens it with the default int8 graph
(``all-MiniLM-L6-v2-dq8``), whose vectors differ, and times
``Memory.reembed_all()`` — what ``kenning reembed`` runs. Prints JSON: memories
re-embedded, seconds, memories per second, the batch size, and whether every
vector is then the default model's (a second ``reembed_all`` finds nothing).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from kenning import Memory, Settings
from kenning.bench.locomo import conversation_user
from kenning.bench.locomo_data import load_locomo


def main() -> None:
    """Fill with the old model, re-embed with the new one, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--n", type=int, default=3000, help="turns to store")
    ap.add_argument("--batch-size", type=int, default=256)
    args = ap.parse_args()
    old = Settings(embedder_options={"compute": "float32"})
    with tempfile.TemporaryDirectory(prefix="kenning-reembed-") as tmp:
        db = Path(tmp) / "reembed.db"
        left = args.n
        with Memory(db, settings=old) as mem:
            old_model = mem.embedder.model_id
            for conv in load_locomo(str(args.data)):
                items = [{"content": t.document} for t in conv.turns[:left]]
                if items:
                    mem.remember_many(items, principal=conversation_user(conv))
                left -= len(items)
                if left <= 0:
                    break
        with Memory(db) as mem:
            started = time.perf_counter()
            done = mem.reembed_all(batch_size=args.batch_size)
            seconds = time.perf_counter() - started
            again = mem.reembed_all(batch_size=args.batch_size)
            new_model = mem.embedder.model_id
    count = sum(done.values())
    print(
        json.dumps(
            {
                "memories": count,
                "from_model": old_model,
                "to_model": new_model,
                "seconds": round(seconds, 2),
                "per_s": round(count / seconds, 1) if seconds else None,
                "batch_size": args.batch_size,
                "all_current_after": sum(again.values()) == 0,
            }
        )
    )


if __name__ == "__main__":
    main()
