"""Talk to a running kenning server with kenning.Client.

kenning serve                      # prints the first admin key on first start
export KENNING_URL=http://127.0.0.1:8765 KENNING_API_KEY=kn_...
python examples/remote_client.py
"""

from __future__ import annotations

from kenning import Client, NotFound


def main() -> None:
    with Client() as client:  # KENNING_URL and KENNING_API_KEY, read here
        rec = client.remember("Alice prefers green tea over coffee", tags=["preferences"])
        print("stored", rec.id, "in", rec.scope.key)
        client.upsert("standup", "The team standup is at 9:30")
        for hit in client.recall("what does Alice drink?", k=3):
            print(f"{hit.score:.2f}  {hit.memory.content}")
        print(client.build_hint(query="drinks", max_chars=400))
        client.forget(rec.id)
        try:
            client.get(rec.id)
        except NotFound as exc:
            print("forgotten:", exc)


if __name__ == "__main__":
    main()
