"""The integration examples run as shipped: offline, in a fresh process, default settings.

Each example is run with this interpreter and without OPENAI_API_KEY (so the
scripted models answer) and without the suite's KENNING_* overrides; the
test checks what it prints.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

EXPECTED = {
    "langgraph_store.py": [
        "alice: I remember: My passport expires in March 2027",
        "bob: I remember: I prefer aisle seats on long flights",
        "bob sees namespaces: [('memories',), ('team:travel', 'policies')]",
    ],
    "openai_agents_memory.py": [
        "Sam's dentist appointment is on 3 June",
        "monday's items: 6",
        "Porto",
    ],
    "pydantic_ai_memory.py": [
        "> What is Mia allergic to?\nmy daughter Mia is allergic to peanuts",
        "dana's memories:",
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline(name: str, tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("KENNING_") and k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    }
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for line in EXPECTED[name]:
        assert line in done.stdout, done.stdout


def test_importing_kenning_imports_no_framework() -> None:
    frameworks = ("langgraph", "langchain_core", "agents", "openai", "pydantic_ai")
    code = (
        "import sys, kenning, kenning.integrations\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {frameworks!r})\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
