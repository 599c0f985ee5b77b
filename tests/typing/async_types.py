"""Type-checked, never run, by ``tests/test_async_parity.py``: the async façades have
real signatures. Each ``type: ignore`` marks a line that must be a type error; with
``warn_unused_ignores`` (strict) an ``Any`` return would make it an error instead.
"""

from __future__ import annotations

from kenning import (
    ApiKey,
    AsyncMemory,
    ConsolidationReport,
    EntityView,
    Hit,
    IngestResult,
    MemoryRecord,
    Neighbour,
    Org,
    Page,
    Principal,
    RecallResult,
    WriteResult,
)


async def check(amem: AsyncMemory, who: Principal) -> None:
    """Assignments mypy accepts only if each method returns what the sync one does."""
    result: RecallResult = await amem.recall("where is the harbour?", k=3, explain=True)
    hits: list[Hit] = result.hits
    record: MemoryRecord = await amem.remember("Alice prefers tea", principal=who)
    page: Page = await amem.list(limit=3)
    written: list[WriteResult] = await amem.write([{"content": "x"}], reconcile=False)
    ingested: IngestResult = await amem.ingest(["Alice: hi"], "s1")
    report: ConsolidationReport = await amem.consolidate(dry_run=True)
    near: list[Neighbour] = await amem.graph.neighbours(record.id, limit=5)
    view: EntityView = await amem.graph.entity("Alice")
    org: Org = await amem.directory.org(who.org_id)
    key: tuple[ApiKey, str] = await amem.directory.create_key(who, "alice", "laptop")
    wrong: int = await amem.recall("q")  # type: ignore[assignment]
    await amem.recall(k=3)  # type: ignore[call-arg]
    await amem.graph.paths("a", "b", hops=2)  # type: ignore[call-arg]
    await amem.directory.users()  # type: ignore[call-arg]
    del hits, page, written, ingested, report, near, view, org, key, wrong
