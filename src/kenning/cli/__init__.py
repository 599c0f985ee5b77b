"""The ``kenning`` command line (entry point ``kenning.cli:main``).

Mount more commands on :data:`app`, e.g. ``app.add_typer(bench_app, name="bench")``.
"""

from .app import EXIT_CODES, app, main

__all__ = ["EXIT_CODES", "app", "main"]
