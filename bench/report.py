"""Render the JSON in bench/results/ as the Markdown tables of BENCHMARKS.md.

python bench/report.py > /tmp/tables.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
CATS = ("single-hop", "multi-hop", "temporal", "open-domain")


def _f(x: float) -> str:
    return f"{x:.3f}"


def locomo(name: str) -> None:
    r = json.loads((RESULTS / name).read_text())
    print(
        "| split | questions | R@1 | R@5 | R@10 | R@20 | any-hit@10 | all-hit@10 | p50 ms "
        "| p95 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {r['split']} | {r['questions']} | {_f(r['recall@1'])} | {_f(r['recall@5'])} | "
        f"{_f(r['recall@10'])} | {_f(r['recall@20'])} | {_f(r['any_hit@10'])} | "
        f"{_f(r['all_hit@10'])} | {r['latency_ms']['p50']} | {r['latency_ms']['p95']} |"
    )
    print()
    print("| category | questions | R@10 | R@20 | all-hit@10 | all-hit@20 |")
    print("|---|---|---|---|---|---|")
    for cat in CATS:
        c = r["by_category"][cat]
        print(
            f"| {cat} | {c['questions']} | {_f(c['recall@10'])} | {_f(c['recall@20'])} | "
            f"{_f(c['all_hit@10'])} | {_f(c['all_hit@20'])} |"
        )


def ablation() -> None:
    r = json.loads((RESULTS / "ablation.json").read_text())
    for split in ("dev", "holdout"):
        print(f"\n**{split}** (R@10 per category; multi-hop all-hit@20 last)\n")
        print(
            "| configuration | R@1 | R@5 | R@10 | R@20 | all-hit@10 | "
            + " | ".join(CATS)
            + " | multi-hop all-hit@20 |"
        )
        print("|---" * (7 + len(CATS)) + "|")
        for name, per in r.items():
            m = per[split]
            cat = m["by_category"]
            cats = " | ".join(_f(cat[c]["recall@10"]) for c in CATS)
            print(
                f"| {name} | {_f(m['recall@1'])} | {_f(m['recall@5'])} | {_f(m['recall@10'])} | "
                f"{_f(m['recall@20'])} | {_f(m['all_hit@10'])} | {cats} | "
                f"{_f(cat['multi-hop']['all_hit@20'])} |"
            )


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("all", "ablation"):
        ablation()
    if what in ("all", "locomo"):
        locomo("locomo_all.json")
