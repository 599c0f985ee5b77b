"""Install footprint and cold start: ``pip install kenning`` (core) vs ``kenning[all]``.

Run from the repository root, after ``make wheelhouse-all`` (or ``make bench-footprint``)::

    .venv/bin/python bench/install_footprint.py [--runs 5] [--memories 50]

Builds the wheel from a copy of the work tree (``python -m build --no-isolation``),
then for each variant creates a fresh venv (``python -m venv``) and installs the
wheel offline from ``.cache/wheelhouse`` (``--no-index --find-links``). Prints one
JSON document: per variant, the venv's size on disk (allocated blocks, like ``du``)
and its number of distributions, and the cold start of a new process on a small
SQLite store: process start → ``import kenning`` → ``Memory`` open → first
``recall`` done (median of ``--runs`` runs, each a new interpreter, the variants
taking turns; the derived MiniLM graph is read from the machine's model cache,
so a first-ever run adds its one-time derivation). When the wheelhouse lacks
the ``[all]`` wheels, the ``all`` row measures the main ``.venv`` instead (which
also holds the dev tools) and says so in ``source``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = ROOT / ".cache" / "wheelhouse"
MAIN_VENV = ROOT / ".venv"

SEED = """
import sys
from kenning import Memory
n = int(sys.argv[2])
facts = [f"Build server {i} was restarted after its disk filled up" for i in range(n)]
facts += ["Alice prefers green tea over coffee", "Caroline moved to Lisbon in May"]
with Memory(sys.argv[1]) as mem:
    mem.remember_many([{"content": f} for f in facts])
"""

COLD = """
import json, sys, time
t_import = time.time()
import kenning
t_imported = time.time()
mem = kenning.Memory(sys.argv[1])
t_open = time.time()
hits = mem.recall("what does Alice drink?", k=3)
t_recall = time.time()
assert hits and hits[0].memory.content == "Alice prefers green tea over coffee", hits
print(json.dumps({"interpreter": t_import, "import": t_imported, "open": t_open,
                  "recall": t_recall, "modules": len(sys.modules)}))
mem.close()
"""


def _env(home: Path) -> dict[str, str]:
    """No KENNING_* settings, HOME in the temp dir, the machine's derived-model cache."""
    from kenning.embeddings.quantize import cache_dir

    env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "PIP_"))}
    env.pop("VIRTUAL_ENV", None)
    env.update(
        HOME=str(home),
        KENNING_MODEL_CACHE=str(cache_dir()),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def _run(args: list[str], env: dict[str, str], timeout: float = 900) -> str:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} ... failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def disk_usage(path: Path) -> dict[str, float]:
    """Allocated size (st_blocks, as ``du``) and apparent size of a tree, in MB."""
    blocks = apparent = files = 0
    for root, _dirs, names in os.walk(path):
        for name in names:
            st = os.lstat(os.path.join(root, name))
            blocks += st.st_blocks * 512
            apparent += st.st_size
            files += 1
    return {
        "disk_mb": round(blocks / 1e6, 1),
        "apparent_mb": round(apparent / 1e6, 1),
        "files": files,
    }


def build_wheel(work: Path) -> Path:
    """The kenning wheel, built offline from a copy of the work tree."""
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=ignore)
    dist = work / "dist"
    build = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)]
    _run([*build, str(source)], dict(os.environ))
    (wheel,) = dist.glob("kenning-*.whl")
    return wheel


def make_venv(work: Path, name: str, wheel: Path, extra: str, home: Path) -> Path:
    """A fresh venv with the wheel (``extra`` = "" or "[all]") installed offline."""
    venv = work / name
    _run([sys.executable, "-m", "venv", str(venv)], dict(os.environ))
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index"]
    links = ["--find-links", str(WHEELHOUSE), "--find-links", str(wheel.parent)]
    _run([*pip, *links, f"{wheel}{extra}"], _env(home))
    return venv


def has_all_wheels(wheel: Path, work: Path, home: Path) -> bool:
    """Whether pip can resolve ``kenning[all]`` from the wheelhouse alone (a dry run)."""
    probe = work / "probe"
    _run([sys.executable, "-m", "venv", "--without-pip", str(probe)], dict(os.environ))
    args = [sys.executable, "-m", "pip", "--python", str(probe / "bin" / "python"), "install"]
    args += ["--dry-run", "--quiet", "--no-index", "--find-links", str(WHEELHOUSE)]
    args += ["--find-links", str(wheel.parent), f"{wheel}[all]"]
    ok = subprocess.run(args, env=_env(home), capture_output=True, timeout=600).returncode == 0
    shutil.rmtree(probe)
    return ok


def distributions(python: Path, home: Path) -> int:
    """How many distributions the venv of ``python`` holds."""
    code = "import importlib.metadata as m; print(len(list(m.distributions())))"
    return int(_run([str(python), "-c", code], _env(home)).strip())


def one_cold_start(python: Path, store: Path, env: dict[str, str]) -> dict[str, float]:
    """One new process, in seconds (start is the parent's spawn time)."""
    start = time.time()
    out = json.loads(_run([str(python), "-c", COLD, str(store)], env).strip().splitlines()[-1])
    return {
        "to_import_start": out["interpreter"] - start,
        "import_kenning": out["import"] - out["interpreter"],
        "open_memory": out["open"] - out["import"],
        "first_recall": out["recall"] - out["open"],
        "total": out["recall"] - start,
        "modules": out["modules"],
    }


def summarise(rows: list[dict[str, float]]) -> dict[str, Any]:
    """Medians of each figure, and every run's total."""
    medians = {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]}
    return {**medians, "total_runs": [round(r["total"], 3) for r in rows]}


def measure(
    variants: dict[str, tuple[Path, str]], work: Path, home: Path, args: Any
) -> dict[str, Any]:
    """Size, distribution count and cold start of each venv; the cold starts of the
    variants alternate, so the machine's load falls on all of them alike."""
    env = _env(home)
    stores: dict[str, Path] = {}
    for name, (venv, _source) in variants.items():
        stores[name] = work / f"{name}.db"
        _run([str(venv / "bin" / "python"), "-c", SEED, str(stores[name]), str(args.memories)], env)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    for _ in range(args.runs):
        for name, (venv, _source) in variants.items():
            rows[name].append(one_cold_start(venv / "bin" / "python", stores[name], env))
    return {
        name: {
            "source": source,
            **disk_usage(venv),
            "distributions": distributions(venv / "bin" / "python", home),
            "cold_start_s": summarise(rows[name]),
        }
        for name, (venv, source) in variants.items()
    }


def main() -> None:
    """Build, install both variants, measure, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="cold starts per variant")
    parser.add_argument("--memories", type=int, default=50, help="memories in the store")
    args = parser.parse_args()
    if not (WHEELHOUSE / "core.txt").is_file():
        raise SystemExit(f"no wheelhouse at {WHEELHOUSE}: run `make wheelhouse-all` first")
    work = Path(tempfile.mkdtemp(prefix="kenning-footprint-"))
    try:
        home = work / "home"
        home.mkdir()
        wheel = build_wheel(work)
        variants = {
            "core": (make_venv(work, "core", wheel, "", home), "fresh venv: pip install kenning")
        }
        if has_all_wheels(wheel, work, home):
            all_venv = make_venv(work, "all", wheel, "[all]", home)
            variants["all"] = (all_venv, "fresh venv: pip install 'kenning[all]'")
        else:
            variants["all"] = (
                MAIN_VENV,
                "main .venv ([dev] = [all] + test tools; no [all] wheelhouse)",
            )
        results = measure(variants, work, home, args)
        report = {
            "python": sys.version.split()[0],
            "wheelhouse": str(WHEELHOUSE.relative_to(ROOT)),
            "memories": args.memories + 2,
            "runs": args.runs,
            "variants": results,
        }
        print(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
