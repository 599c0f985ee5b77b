"""What the store suites share: a batch whose last row must fail."""

from __future__ import annotations

from kenning import Conflict, Memory, MemoryRecord, Scope
from kenning.embeddings import content_hash


def insert_failing_batch(mem: Memory, duplicate_of: str) -> list[MemoryRecord]:
    """``Store.insert`` three new team memories, the third with ``duplicate_of``'s id,
    so the batch fails on its last row; returns the records it tried."""
    texts = ["Window cleaner comes on Fridays", "Gutter repair is booked", "Roof tiles replaced"]
    vecs = mem.embedder.embed_many(texts)
    now = mem.clock.now()
    records = [
        MemoryRecord(
            id=f"{i:032x}",
            org_id="default",
            scope=Scope.team("house"),
            content=t,
            created_at=now,
            updated_at=now,
            content_hash=content_hash(t),
        )
        for i, t in enumerate(texts)
    ]
    records[2].id = duplicate_of  # duplicate id: the third row must fail
    try:
        mem.store.insert(list(zip(records, vecs, strict=True)), "default")
    except Conflict:
        return records
    raise AssertionError("the insert with a duplicate id did not fail")
