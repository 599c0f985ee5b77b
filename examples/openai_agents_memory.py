"""An OpenAI Agents SDK agent with kenning memory tools and a kenning session.

Run: python examples/openai_agents_memory.py   (needs: pip install 'kenning[openai-agents]')

Offline by default: the agent runs on ``ScriptedModel`` below, a ``Model`` that
answers from its input like a real model would (it calls ``save_memory`` for
"remember ...", ``recall_memories`` for a question, then answers from the
tool's output). With OPENAI_API_KEY set in the environment it runs on a real
OpenAI model instead (``KENNING_EXAMPLE_MODEL``, default gpt-4o-mini): the
same tools and session, no other change. Nothing else goes over the network.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
from agents.testing import assistant_message, function_call

from kenning import Memory
from kenning.integrations.openai_agents import KenningSession, memory_tools


class ScriptedModel(Model):
    """A stand-in for an LLM, deciding from the latest input item."""

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        last = {"role": "user", "content": input} if isinstance(input, str) else dict(input[-1])
        if last.get("type") == "function_call_output":
            result = json.loads(last["output"])
            text = result[0]["content"] if isinstance(result, list) and result else "Saved."
            output = [assistant_message(text)]
        elif str(last["content"]).lower().startswith("remember "):
            fact = str(last["content"])[len("remember ") :]
            output = [function_call("save_memory", {"content": fact}, call_id="call-save")]
        elif str(last["content"]).endswith("?"):
            args = {"query": last["content"]}
            output = [function_call("recall_memories", args, call_id="call-recall")]
        else:
            output = [assistant_message("Nice to hear from you.")]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("this example does not stream")


async def main() -> None:
    real = bool(os.environ.get("OPENAI_API_KEY"))
    model: str | Model = (
        os.environ.get("KENNING_EXAMPLE_MODEL", "gpt-4o-mini") if real else ScriptedModel()
    )
    config = RunConfig(tracing_disabled=not real)
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "kenning.db") as mem:
        agent = Agent(
            name="assistant",
            instructions="Save facts the user tells you with save_memory; "
            "answer questions with recall_memories.",
            model=model,
            tools=memory_tools(mem, agent_id="assistant"),
        )
        # first conversation: the session keeps its turns in kenning, and the facts
        # said in it become long-term memory
        monday = KenningSession("monday", mem, user_name="Sam")
        for text in [
            "I just moved to Porto and started a job at a bakery.",
            "remember Sam's dentist appointment is on 3 June",
        ]:
            result = await Runner.run(agent, text, session=monday, run_config=config)
            print(f"> {text}\n{result.final_output}")

        # a new conversation finds what the first one stored
        tuesday = KenningSession("tuesday", mem, user_name="Sam")
        question = "When is Sam's dentist appointment?"
        result = await Runner.run(agent, question, session=tuesday, run_config=config)
        print(f"> {question}\n{result.final_output}")

        print("monday's items:", len(await monday.get_items()))
        facts = mem.list(filters={"source": "extraction"}).items
        print("facts kenning extracted:", [f.content for f in facts])


if __name__ == "__main__":
    asyncio.run(main())
