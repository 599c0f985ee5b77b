"""Currency benchmark: does recall put the value true *now* first?

The dataset (:mod:`.currency_data`) goes into one fresh store, each user as
its own principal (``user:<id>`` scope, organization ``currency``), through
``Memory.write`` (``via="write"``: one write per session, each statement with
its ``event_at``) or ``Memory.ingest`` (``via="ingest"``: each session as a
conversation, each statement a user message with its ``at``). The clock
follows the sessions; questions are asked at :data:`~.currency_data.NOW`, as
their user, ``recall(q, k)``.

A recalled memory *is* a statement when it is the memory written for it
(the write's result record, unless reconcile answered ``noop``: then the
memory still says the older thing) or, through ingest, the turn of it or a
fact whose ``metadata["evidence"]`` names that turn. A memory standing for
several statements counts as the current value first, then as a stale one,
then as a look-alike.

``split="probe"`` runs its own dataset: five kinds of neither split, beside
the dev kinds (:mod:`.currency_data`), to check that a change tuned on the dev
kinds carries to kinds it has not seen before the held-out run reports it.

Metrics, over the split's kinds (per kind and per split too):

* ``current@1`` / ``current@5``: share of now-questions whose current value
  ranks first / in the top 5;
* ``stale_above_current``: of now-questions whose fact changed, the share
  where an older value ranks above the current one, or is returned while the
  current one is not (superseded memories are not returned by default: they
  count only when returned);
* ``lookalike_above_current``: of now-questions whose user stated the same
  attribute of another person, the share where that look-alike ranks above
  the current value (or is returned without it);
* ``previous@3``: share of before-questions whose previous value is in the top 3;
* ``foreign_hits``: hits from another user's scope, over every question
  (0 by construction of access control);
* ``latency_ms``: recall p50/p95; ``top1``: what ranked first.

``links`` reads the write side alone, over the split's kinds: of the updates
(a statement that changes an earlier value of the same attribute), the share
whose earlier value it retired on write (``linked``; through ``ingest``, a
memory labelled with the earlier statement replaced by one labelled with the
update), and how many memories of the split's kinds a memory standing for no
statement of their kind retired (another attribute, chatter, or nothing said:
``retired_by_another``, a true fact hidden from questions about now). The read
step orders what is not linked; these two say how much is left to it and how
much it cannot undo.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from ..clock import FixedClock
from ..config import Settings
from ..embeddings import Embedder
from ..engine import Memory
from ..lifecycle.reconcile import Action
from ..models import Principal, Role, Scope
from .currency_data import (
    DEV_KINDS,
    HOLDOUT_KINDS,
    NOW,
    PROBE,
    TUNE,
    Dataset,
    Question,
    User,
    generate,
    kinds_of,
    table_of,
)
from .stores import open_bench_memory
from .timing import percentiles

__all__ = [
    "Labels",
    "aggregate",
    "classify",
    "load_users",
    "run_currency",
    "score_before",
    "score_now",
    "user_principal",
    "write_links",
]

Via = Literal["write", "ingest"]
Split = Literal["dev", "holdout", "tune", "probe", "all"]
#: memory id -> the statements (``Statement.sid``) the memory stands for
Labels = dict[str, frozenset[str]]
ORG = "currency"
METRICS = (
    "current@1",
    "current@5",
    "stale_above_current",
    "lookalike_above_current",
    "previous@3",
)


def user_principal(uid: str) -> Principal:
    """The principal of one benchmark user (a member of organization ``currency``)."""
    return Principal(org_id=ORG, user_id=uid, roles=frozenset({Role.MEMBER}))


def load_users(
    mem: Memory, clock: FixedClock, users: Iterable[User], via: Via
) -> tuple[Labels, dict[str, int]]:
    """Store every user's statements, session by session: (labels, reconcile actions)."""
    labels: Labels = {}
    actions: dict[str, int] = {}
    for user in users:
        who = user_principal(user.uid)
        for n, said in enumerate(user.sessions()):
            clock.set(said[-1].at + timedelta(minutes=1))
            session = f"{user.uid}/s{n}"
            if via == "write":
                items = [{"content": s.text, "event_at": s.at, "session_id": session} for s in said]
                done = mem.write(items, principal=who)
                pairs: list[tuple[str, Action | None, frozenset[str]]] = [
                    (r.record.id, r.action, frozenset({s.sid}))
                    for s, r in zip(said, done, strict=True)
                ]
            else:
                pairs = _ingest_session(mem, who, user.name, session, said, labels)
            for memory_id, action, sids in pairs:
                if action is not None:
                    actions[action.value] = actions.get(action.value, 0) + 1
                if action is not Action.NOOP:
                    labels[memory_id] = sids
    return labels, actions


def _ingest_session(
    mem: Memory, who: Principal, name: str, session: str, said: Sequence[Any], labels: Labels
) -> list[tuple[str, Action | None, frozenset[str]]]:
    """One session through ``ingest``: turns labelled by their statement (action None),
    facts by their evidence turns."""
    messages = [{"role": "user", "name": name, "content": s.text, "at": s.at} for s in said]
    done = mem.ingest(messages, session, principal=who)
    turn_of: dict[str, frozenset[str]] = {}
    pairs: list[tuple[str, Action | None, frozenset[str]]] = []
    for s, record in zip(said, done.turns, strict=True):
        turn_of[record.id] = frozenset({s.sid})
        pairs.append((record.id, None, frozenset({s.sid})))
    for f in done.facts:
        evidence = f.record.metadata.get("evidence", [])
        sids = frozenset().union(*(turn_of.get(e) or labels.get(e, frozenset()) for e in evidence))
        pairs.append((f.record.id, f.action, sids))
    return pairs


def classify(item: frozenset[str], q: Question) -> str:
    """What one recalled memory is for question ``q``: current, stale, lookalike or other."""
    if q.current is not None and q.current in item:
        return "current"
    if item & set(q.stale):
        return "stale"
    if item & set(q.lookalike):
        return "lookalike"
    return "other"


def _first(kinds: Sequence[str], wanted: str) -> int | None:
    return next((i for i, kind in enumerate(kinds) if kind == wanted), None)


def _above(rank: int | None, current: int | None) -> bool:
    """True if something at ``rank`` ranks above the current value (or comes without it)."""
    return rank is not None and (current is None or rank < current)


def score_now(ranking: Sequence[frozenset[str]], q: Question) -> dict[str, Any]:
    """The now-question metrics of one ranking (None where the question has no stale
    value or no look-alike)."""
    kinds = [classify(item, q) for item in ranking]
    cur = _first(kinds, "current")
    return {
        "current@1": cur == 0,
        "current@5": cur is not None and cur < 5,
        "stale_above_current": _above(_first(kinds, "stale"), cur) if q.stale else None,
        "lookalike_above_current": (
            _above(_first(kinds, "lookalike"), cur) if q.lookalike else None
        ),
        "top1": kinds[0] if kinds else "none",
    }


def score_before(ranking: Sequence[frozenset[str]], q: Question) -> dict[str, Any]:
    """The before-question metric of one ranking: the previous value in the top 3."""
    return {"previous@3": q.previous is not None and any(q.previous in r for r in ranking[:3])}


def _mean(values: Iterable[Any]) -> float | None:
    got = [float(v) for v in values if v is not None]
    return round(sum(got) / len(got), 4) if got else None


def aggregate(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean of every metric over the rows that define it, with the question counts."""
    now = [r for r in rows if r["role"] == "now"]
    out: dict[str, Any] = {m: _mean(r.get(m) for r in rows) for m in METRICS}
    out["current@1_changed"] = _mean(r["current@1"] for r in now if r["changed"])
    out["current@1_unchanged"] = _mean(r["current@1"] for r in now if not r["changed"])
    top1 = [r["top1"] for r in now]
    out["top1"] = {k: _mean(t == k for t in top1) for k in ("current", "stale", "lookalike")}
    out["top1"]["other_or_none"] = _mean(t in ("other", "none") for t in top1)
    out["questions"] = {
        "now": len(now),
        "now_changed": sum(r["changed"] for r in now),
        "now_with_lookalike": sum(r["lookalike_above_current"] is not None for r in now),
        "before": sum(r["role"] == "before" for r in rows),
    }
    return out


def _ask(
    mem: Memory,
    users: Sequence[User],
    kinds: Sequence[str],
    labels: Labels,
    k: int,
    progress: Callable[[str, int], None] | None,
) -> tuple[list[dict[str, Any]], list[float], int]:
    """Every answerable question of ``kinds``: (rows of metrics, latencies, foreign hits)."""
    rows: list[dict[str, Any]] = []
    latencies: list[float] = []
    foreign = 0
    for user in users:
        who, own = user_principal(user.uid), Scope.user(user.uid).key
        for q in user.questions:
            if not q.answerable or q.kind not in kinds:
                continue
            t = time.perf_counter()
            hits = mem.recall(q.text, k, principal=who).hits
            latencies.append((time.perf_counter() - t) * 1000)
            foreign += sum(h.memory.scope.key != own for h in hits)
            ranking = [labels.get(h.memory.id, frozenset()) for h in hits]
            row = score_now(ranking, q) if q.role == "now" else score_before(ranking, q)
            rows.append({**row, "role": q.role, "kind": q.kind, "changed": bool(q.stale)})
            if progress:
                progress("recall", 1)
    return rows, latencies, foreign


def _report(rows: Sequence[dict[str, Any]], kinds: Sequence[str]) -> dict[str, Any]:
    """Overall, per split and per kind."""
    out = aggregate(rows)
    out["by_split"] = {
        name: aggregate([r for r in rows if r["kind"] in split_kinds])
        for name, split_kinds in (
            ("dev", DEV_KINDS),
            ("holdout", HOLDOUT_KINDS),
            ("tune", TUNE),
            ("probe", PROBE),
        )
        if set(split_kinds) & set(kinds)
    }
    out["by_kind"] = {kind: aggregate([r for r in rows if r["kind"] == kind]) for kind in kinds}
    return out


def write_links(
    mem: Memory, users: Sequence[User], kinds: Sequence[str], labels: Labels
) -> dict[str, Any]:
    """How the write side linked the changes of ``kinds`` (``links`` in the module
    docstring): overall and per kind."""
    memories: dict[str, list[str]] = {}  # statement id -> the memories labelled with it
    for memory_id, sids in labels.items():
        for sid in sids:
            memories.setdefault(sid, []).append(memory_id)
    kind_of = {s.sid: s.kind for u in users for s in u.statements}
    updates: dict[str, list[bool]] = {kind: [] for kind in kinds}
    retired: dict[str, int] = dict.fromkeys(kinds, 0)
    for user in users:
        who = user_principal(user.uid)
        replaced_by = {
            memory_id: mem.get(memory_id, principal=who).superseded_by
            for s in user.statements
            for memory_id in memories.get(s.sid, [])
        }
        last: dict[str, str] = {}  # kind -> the statement holding its value so far
        for s in sorted(user.statements, key=lambda x: x.at):
            if s.kind not in updates or s.role not in ("first", "update"):
                continue
            if s.role == "update" and s.kind in last:
                mine = set(memories.get(s.sid, []))
                updates[s.kind].append(
                    any(replaced_by[m] in mine for m in memories.get(last[s.kind], []))
                )
            last[s.kind] = s.sid
            for m in memories.get(s.sid, []):
                by = replaced_by[m]
                if by is not None and s.kind not in {kind_of.get(x) for x in labels.get(by, ())}:
                    retired[s.kind] += 1
    return {
        **_links_of([v for vs in updates.values() for v in vs], sum(retired.values())),
        "by_kind": {kind: _links_of(updates[kind], retired[kind]) for kind in kinds},
    }


def _links_of(linked: Sequence[bool], retired: int) -> dict[str, Any]:
    return {"updates": len(linked), "linked": _mean(linked), "retired_by_another": retired}


def run_currency(
    split: Split = "dev",
    via: Via = "write",
    *,
    n_users: int = 60,
    seed: int = 19,
    k: int = 10,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    store: str | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Load the dataset through ``via`` into a fresh store, ask the split's questions,
    and return the metrics (see the module docstring) as a JSON-ready dict."""
    data = generate(n_users, seed, table=table_of(split))
    kinds = kinds_of(split)
    clock = FixedClock(NOW)
    with tempfile.TemporaryDirectory(prefix="kenning-currency-") as tmp:
        mem = open_bench_memory(
            store, Path(tmp) / "currency.db", settings, embedder=embedder, clock=clock
        )
        try:
            started = time.perf_counter()
            labels, actions = load_users(mem, clock, data.users, via)
            load_s = time.perf_counter() - started
            clock.set(NOW)
            rows, latencies, foreign = _ask(mem, data.users, kinds, labels, k, progress)
            links = write_links(mem, data.users, kinds, labels)
            kind_of_store = mem.store.kind
        finally:
            mem.close()
    out: dict[str, Any] = {"benchmark": "currency", "split": split, "via": via}
    out.update(_report(rows, kinds))
    out["foreign_hits"] = foreign
    out["links"] = links
    out["latency_ms"] = percentiles(latencies)
    out.update(_meta(data, kinds, k, actions, load_s, kind_of_store))
    return out


def _meta(
    data: Dataset,
    kinds: Sequence[str],
    k: int,
    actions: Mapping[str, int],
    load_s: float,
    store_kind: str,
) -> dict[str, Any]:
    """What the run was: dataset, split, store, reconcile outcomes, load time."""
    counts = data.counts()
    statements = sum(v for key, v in counts.items() if key.startswith("statements_"))
    return {
        "kinds": list(kinds),
        "dev_kinds": list(data.dev_kinds),
        "holdout_kinds": list(data.holdout_kinds),
        "k": k,
        "seed": data.seed,
        "now": data.now.isoformat(),
        "dataset": counts,
        "store": store_kind,
        "reconcile_actions": dict(sorted(actions.items())),
        "load_s": round(load_s, 1),
        "statements_per_s": round(statements / load_s, 1) if load_s else None,
    }
