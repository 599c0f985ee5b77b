"""The core paths import no optional extra, even in the full venv.

Each test runs a child process in which a ``sys.meta_path`` finder raises
ImportError for every module an extra brings (the server, PostgreSQL and spaCy
libraries), as if only ``pip install kenning`` were installed. ``import kenning``,
Memory remember/recall, the CLI's help and non-server commands must work there,
and the doors that need an extra must say which one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from kenning._extras import EXTRAS, MissingExtra, has_extra, install_hint, require_extra
from kenning.embeddings.quantize import cache_dir
from kenning.errors import ConfigError

BLOCKED = sorted({m for modules in EXTRAS.values() for m in modules})

_PRELUDE = f"""
import importlib.abc, sys

BLOCKED = frozenset({BLOCKED!r})


class _NoExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ImportError(f"{{name}} is blocked (an optional extra)")
        return None


sys.meta_path.insert(0, _NoExtras())


def loaded_extras():
    return sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
"""


def _run(code: str, tmp_path: Path) -> dict[str, object]:
    """Run ``code`` after the blocking prelude; it prints one JSON object last."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    env.update(HOME=str(tmp_path), KENNING_MODEL_CACHE=str(cache_dir()))
    ran = subprocess.run(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(code)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    result: dict[str, object] = json.loads(ran.stdout.strip().splitlines()[-1])
    return result


def test_the_blocker_really_blocks(tmp_path: Path) -> None:
    result = _run(
        """
        import json
        failed = []
        for name in BLOCKED:
            try:
                __import__(name)
            except ImportError:
                failed.append(name)
        print(json.dumps({"failed": sorted(failed)}))
        """,
        tmp_path,
    )
    assert result["failed"] == BLOCKED


def test_memory_remember_and_recall_need_no_extra(tmp_path: Path) -> None:
    result = _run(
        """
        import json, logging
        import kenning
        from kenning import Memory
        from kenning._extras import has_extra

        logging.basicConfig(level=logging.INFO)
        with Memory("~/kenning.db") as mem:
            mem.remember("Alice prefers green tea over coffee", tags=["drinks"])
            mem.remember("Caroline moved to Lisbon in May", tags=["moves"])
            hits = mem.recall("what does Alice drink?", k=2)
            entities = mem.graph.entity("Lisbon")
        print(json.dumps({
            "top": hits[0].memory.content,
            "graph": has_extra("graph"),
            "entity": entities is not None,
            "loaded": loaded_extras(),
        }))
        """,
        tmp_path,
    )
    assert result == {
        "top": "Alice prefers green tea over coffee",
        "graph": False,
        "entity": True,
        "loaded": [],
    }


def test_the_cli_help_and_a_local_command_need_no_extra(tmp_path: Path) -> None:
    result = _run(
        """
        import json
        from typer.testing import CliRunner
        from kenning.cli import app

        runner = CliRunner()
        helped = runner.invoke(app, ["--help"])
        said = runner.invoke(app, ["--db", "k.db", "remember", "the sky is blue", "--json"])
        listed = runner.invoke(app, ["--db", "k.db", "list", "--json"])
        print(json.dumps({
            "codes": [helped.exit_code, said.exit_code, listed.exit_code],
            "help": "recall" in helped.output,
            "listed": "the sky is blue" in listed.output,
            "loaded": loaded_extras(),
        }))
        """,
        tmp_path,
    )
    assert result == {"codes": [0, 0, 0], "help": True, "listed": True, "loaded": []}


def test_doors_that_need_an_extra_name_it(tmp_path: Path) -> None:
    result = _run(
        """
        import json
        from typer.testing import CliRunner
        from kenning import Memory, Settings
        from kenning.cli import app
        from kenning.graph.extract import extractor_from_settings

        runner = CliRunner()
        out = {}
        for name, args in {
            "serve": ["--db", "k.db", "serve"],
            "mcp": ["--db", "k.db", "mcp"],
            "pg_cli": ["--db", "postgresql://u@localhost/db", "list"],
        }.items():
            ran = runner.invoke(app, args)
            out[name] = [ran.exit_code, ran.output.strip()]
        for name, make in {
            "pg_memory": lambda: Memory("postgresql://u@localhost/db"),
            "spacy_explicit": lambda: extractor_from_settings(Settings(graph_extractor="spacy")),
            "server_import": lambda: __import__("kenning.server"),
        }.items():
            try:
                make()
                out[name] = "no error"
            except Exception as exc:
                out[name] = f"{type(exc).__name__}: {exc}"
        out["default_extractor"] = type(extractor_from_settings(Settings())).__name__
        print(json.dumps(out))
        """,
        tmp_path,
    )
    server = "needs the server extra: pip install 'kenning[server]'"
    postgres = "a postgresql:// store needs the postgres extra: pip install 'kenning[postgres]'"
    assert result["serve"] == [2, f"error: kenning serve {server}"]
    assert result["mcp"] == [2, f"error: kenning mcp {server}"]
    assert result["pg_cli"] == [2, f"error: {postgres}"]
    assert result["pg_memory"] == f"MissingExtra: {postgres}"
    assert result["spacy_explicit"] == (
        "MissingExtra: graph_extractor='spacy' needs the graph extra: pip install 'kenning[graph]'"
    )
    assert result["server_import"] == f"MissingExtra: kenning.server {server}"
    assert result["default_extractor"] == "RuleExtractor"


def test_the_extras_helper_in_the_full_venv() -> None:
    for extra in EXTRAS:
        assert has_extra(extra), extra
        require_extra(extra, "this test")  # installed: no error
    assert install_hint("graph") == "pip install 'kenning[graph]'"
    error = MissingExtra("server", "kenning serve")
    assert str(error) == "kenning serve needs the server extra: pip install 'kenning[server]'"
    assert (error.extra, error.what) == ("server", "kenning serve")
    assert isinstance(error, ConfigError) and isinstance(error, ImportError)
