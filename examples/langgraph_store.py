"""A LangGraph graph whose long-term memory is kenning (offline: no LLM involved).

Run: python examples/langgraph_store.py   (needs: pip install 'kenning[langgraph]')

Two users talk to the same compiled graph. The ``remember`` node writes what
each says into kenning through the store LangGraph injects; the ``recall`` node
searches it (a kenning recall: hybrid keyword + embedding ranking). Each user's
store is bound to that user, so one never sees the other's memories; a
namespace starting with a scope label (``team:travel``) writes to that shared
scope instead. Swap the ``answer`` node for an LLM call to make it a chatbot.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict

from kenning import Memory, Principal, Role, TeamRole
from kenning.integrations.langgraph import KenningStore


class State(TypedDict, total=False):
    message: str
    recalled: list[str]
    answer: str


def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
    if not state["message"].endswith("?"):
        store.put(("memories",), uuid.uuid4().hex, {"text": state["message"]})
    return {}


def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
    hits = store.search(("memories",), query=state["message"], limit=2)
    return {"recalled": [h.value["text"] for h in hits]}


def answer(state: State) -> dict[str, Any]:
    best = state["recalled"][0] if state["recalled"] else "nothing yet"
    return {"answer": f"I remember: {best}"}


def build(store: KenningStore) -> Any:
    graph = StateGraph(State)
    for name, node in [("remember", remember), ("recall", recall), ("answer", answer)]:
        graph.add_node(name, node)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", "answer")
    graph.add_edge("answer", END)
    return graph.compile(store=store)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp) / "kenning.db") as mem:
        people = {
            name: Principal(
                org_id="acme", user_id=name, roles={Role.MEMBER}, teams={"travel": TeamRole.MEMBER}
            )
            for name in ("alice", "bob")
        }
        # text_fields: what kenning embeds and searches (default: the value as JSON)
        stores = {
            n: KenningStore(mem, principal=p, text_fields=["text"]) for n, p in people.items()
        }
        apps = {name: build(store) for name, store in stores.items()}

        apps["alice"].invoke({"message": "My passport expires in March 2027"})
        apps["bob"].invoke({"message": "I prefer aisle seats on long flights"})
        for name, app in apps.items():
            out = app.invoke({"message": "What do you know about my travel documents?"})
            print(f"{name}: {out['answer']}")

        policy = {"text": "Economy class under 6 hours"}
        stores["alice"].put(("team:travel", "policies"), "budget", policy)
        print("bob sees namespaces:", stores["bob"].list_namespaces())
        alices = mem.list(principal=people["alice"]).items
        print("alice's memories in kenning:", [(str(m.scope), m.content) for m in alices])


if __name__ == "__main__":
    main()
