"""The reconcile decisions of one big batch, replayed on two versions of kenning.

    python bench/reconcile_replay.py capture --db /tmp/kb/s1m.db --out /tmp/kb/batch.pkl
    python bench/reconcile_replay.py replay --items /tmp/kb/batch.pkl \\
        --a /path/to/old/src --b src --rounds 5

A big batch's write time moves by about 5% from run to run (the vector graph,
SQLite, the machine), which hides a change to the rules' speed. ``capture``
copies a ``kenning bench scale --synthetic-vectors --db`` database (organization
``bench``; SQLite's backup API), writes one batch of synthetic memories into
the copy to load its indexes, and records the reconciler's inputs for the next
batch (each new memory with its neighbours, as the write path gathers them:
both of its ``decide_many`` calls). ``replay`` has a worker process per source
tree (``PYTHONPATH``) decide those inputs ``--rounds`` times, each round with
the analysis caches of the rules cleared (the word-token cache kept, as a long
import keeps it), the sides alternating. It runs the slot lookup's text
analysis first when the version has it, as the write path does. Prints JSON:
per side the median and every round in ms, B/A, and whether both sides took
the same decisions.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from kenning.bench.stores import copy_sqlite

_CAPTURE = r"""
import pickle, random, sys
from kenning import Memory, Principal, Settings
from kenning.bench.scale import BagOfWordsEmbedder, _layout, synthetic_text
from kenning.lifecycle import reconcile
from kenning.models import Role

db, out, size, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
mem = Memory(db, settings=Settings(graph_extractor="rules"), embedder=BagOfWordsEmbedder())
admin = Principal(org_id="bench", user_id="admin", roles=frozenset({Role.ADMIN}))
rng = random.Random(seed)
scopes = _layout(2 * size)
def batch(b):
    items = [
        {"content": synthetic_text(rng), "scope": s, "session_id": f"{s.key}/r{seed}-{b}"}
        for s in scopes[b * size : (b + 1) * size]
    ]
    mem.remember_many(items, principal=admin)
batch(0)  # loads the mirrors
seen = []
decide_many = reconcile.RuleReconciler.decide_many
def recording(self, items):
    seen.append(list(items))
    return decide_many(self, items)
reconcile.RuleReconciler.decide_many = recording
batch(1)
mem.close()
with open(out, "wb") as f:
    pickle.dump(seen, f)
print([len(s) for s in seen])
"""

_REPLAY = r"""
import hashlib, json, pickle, sys, time
from kenning.config import Settings
from kenning.lifecycle import reconcile, slots
from kenning.lifecycle.writer import reconciler_for

with open(sys.argv[1], "rb") as f:
    seen = pickle.load(f)
rounds = int(sys.argv[2])
rules = reconciler_for(Settings(), None)
slot_query = getattr(reconcile, "slot_query", None)

def clear():
    for module in (reconcile, slots):
        for name in dir(module):
            cached = getattr(module, name)
            if hasattr(cached, "cache_clear") and name != "_tok":
                cached.cache_clear()

spent = []
out = []
for _ in range(rounds):
    clear()
    t = time.perf_counter()
    if slot_query is not None:
        for new, _near in seen[0]:
            slot_query(new.content, rules.knobs)
    out = [rules.decide_many(items) for items in seen]
    spent.append((time.perf_counter() - t) * 1000)
digest = hashlib.sha256(
    repr([[(d.action.value, d.target, d.reason) for d in part] for part in out]).encode()
).hexdigest()
print(json.dumps({"ms": spent, "digest": digest, "decisions": sum(len(p) for p in out)}))
"""


def _run(code: str, tree: str, *args: str) -> str:
    # the rule reconciler, whatever the environment sets
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(tree).resolve()),
        "KENNING_LIFECYCLE_RECONCILE": "rules",
    }
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def capture(args: argparse.Namespace) -> None:
    """Record one batch's reconciler inputs from a copy of ``--db``."""
    with tempfile.TemporaryDirectory(prefix="kenning-replay-") as tmp:
        copy = Path(tmp) / "copy.db"
        copy_sqlite(args.db, copy)
        counts = _run(_CAPTURE, args.tree, str(copy), str(args.out), str(args.batch), "23")
    print(json.dumps({"out": str(args.out), "decide_many_calls": json.loads(counts)}))


def replay(args: argparse.Namespace) -> None:
    """Replay ``--items`` on both trees, alternating, and print the JSON report."""
    with open(args.items, "rb") as f:
        calls = [len(items) for items in pickle.load(f)]
    runs: dict[str, dict[str, Any]] = {"a": {"ms": []}, "b": {"ms": []}}
    for p in range(args.passes):
        for side in ("a", "b") if p % 2 == 0 else ("b", "a"):
            got = json.loads(_run(_REPLAY, getattr(args, side), str(args.items), str(args.rounds)))
            print(json.dumps({"pass": p, "side": side, **got}), file=sys.stderr)
            runs[side]["ms"] += got["ms"]
            runs[side]["digest"] = got["digest"]
    report: dict[str, Any] = {"decide_many_calls": calls}
    for side, run in runs.items():
        report[side] = {
            "ms_p50": round(statistics.median(run["ms"]), 1),
            "ms": [round(x, 1) for x in run["ms"]],
        }
    report["b_over_a"] = round(report["b"]["ms_p50"] / report["a"]["ms_p50"], 3)
    report["same_decisions"] = runs["a"]["digest"] == runs["b"]["digest"]
    print(json.dumps(report, indent=2))


def main() -> None:
    """Parse the command line and run ``capture`` or ``replay``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture", help="record one batch's reconciler inputs")
    cap.add_argument("--db", required=True, type=Path)
    cap.add_argument("--out", required=True, type=Path)
    cap.add_argument("--batch", type=int, default=2000)
    cap.add_argument("--tree", default="src", help="source tree to capture with")
    rep = sub.add_parser("replay", help="replay them on two source trees")
    rep.add_argument("--items", required=True, type=Path)
    rep.add_argument("--a", required=True, help="source tree of version A (its src/)")
    rep.add_argument("--b", required=True, help="source tree of version B")
    rep.add_argument("--rounds", type=int, default=5, help="replays per worker")
    rep.add_argument("--passes", type=int, default=2, help="workers per side")
    args = ap.parse_args()
    capture(args) if args.command == "capture" else replay(args)


if __name__ == "__main__":
    main()
