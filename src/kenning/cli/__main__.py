"""``python -m kenning.cli``."""

from .app import main

main()
