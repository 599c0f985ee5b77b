"""Agent-framework integrations, each behind an optional extra.

* :mod:`kenning.integrations.langgraph` — :class:`KenningStore`, a LangGraph
  ``BaseStore`` (``pip install 'kenning[langgraph]'``);
* :mod:`kenning.integrations.openai_agents` — memory tools and a ``Session`` for
  the OpenAI Agents SDK (``pip install 'kenning[openai-agents]'``);
* :mod:`kenning.integrations.pydantic_ai` — memory tools for a pydantic-ai
  ``Agent`` (``pip install 'kenning[pydantic-ai]'``).

Importing :mod:`kenning` or this package imports no framework; importing one of
the modules above without its extra raises :class:`MissingExtra` (an
``ImportError``) naming the extra to install. See ``docs/integrations.md``.
"""

from __future__ import annotations

from ._extra import MissingExtra

__all__ = ["MissingExtra"]
