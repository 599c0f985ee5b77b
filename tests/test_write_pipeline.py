"""One write pipeline: every path that writes memories keeps the same rules.

For each writer (remember, write, upsert, ingest's turns and facts,
consolidation, review approval, import, re-embedding) these tests show that

* the **review gate** holds: a member's write into a team scope whose review
  switch is on arrives ``pending_review``;
* the **scope check** holds: a governed organization refuses a write into a
  team, persona or user it does not list, admins included, and nothing is
  written;
* the **commit is one transaction**: a failure at the last step of the write
  leaves nothing of it behind.

Plus the embedded rule: an organization without directory users records
teams by use, and the instance's own principal recalls them by default.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kenning import InvalidInput, Memory, Principal, Settings
from kenning.config import Lifecycle
from kenning.models import Role, Status, TeamRole

ORG = "acme"
ROOT = Principal(org_id=ORG, user_id="root", roles=frozenset({Role.ADMIN}))
ALL = {"statuses": ["active", "pending_review", "archived", "superseded"]}


def _settings() -> Settings:
    return Settings(
        lifecycle=Lifecycle(reconcile="rules", reinforce_on_recall=False),
        graph_extractor="rules",
    )


@pytest.fixture
def mem(make_memory: Callable[..., Memory]) -> Memory:
    """A governed organization: admin root, member bob of team eng (review on)."""
    mem = make_memory(settings=_settings(), principal=ROOT)
    d = mem.directory
    d.bootstrap(ORG, "root", "setup")
    d.put_user(ROOT, "bob", role="member")
    d.put_team(ROOT, "eng", review=True)
    d.set_member(ROOT, "eng", "bob", "member")
    return mem


@pytest.fixture
def bob(mem: Memory) -> Principal:
    return mem.directory.principal(ORG, "bob")


def _everything(mem: Memory) -> list[tuple[str, str, int]]:
    """Every memory of the organization (any status) with its version and history
    length, read through the public API as the admin."""
    rows = mem.list(scopes="all", filters=ALL, limit=1000, principal=ROOT).items
    return sorted((r.id, r.status.value, len(mem.history(r.id, principal=ROOT))) for r in rows)


@contextmanager
def _failing_last_step(mem: Memory, method: str) -> Iterator[None]:
    """Make ``store.<method>`` fail *after* doing its work, as a crash between the
    steps of a write would."""
    store = mem.store
    real = getattr(store, method)

    def broken(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)
        raise RuntimeError(f"{method} failed after writing")

    setattr(store, method, broken)
    try:
        yield
    finally:
        setattr(store, method, real)


def _three_alike_episodes(mem: Memory) -> None:
    """Three near-identical episodes in team:eng (by the admin): consolidation promotes them."""
    said = [
        "Sam ordered an oat milk latte",
        "Sam ordered an oat milk latte again",
        "Sam ordered an oat milk latte today",
    ]
    mem.write(
        [{"content": t, "memory_type": "episodic", "scope": "team:eng"} for t in said],
        principal=ROOT,
    )


# -- the review gate on every writer ---------------------------------------------------


def test_remember_write_and_upsert_hold_a_members_write_for_review(
    mem: Memory, bob: Principal
) -> None:
    a = mem.remember("The eng wiki moved to Confluence", scope="team:eng", principal=bob)
    (b,) = mem.write([{"content": "Deploys freeze on Fridays", "scope": "team:eng"}], principal=bob)
    c = mem.upsert("oncall", "Oncall rota is weekly", scope="team:eng", principal=bob)
    assert [a.status, b.record.status, c.status] == [Status.PENDING_REVIEW] * 3
    # the team's lead (here the admin) writes straight in
    d = mem.remember("Standup is at 10:00", scope="team:eng", principal=ROOT)
    assert d.status is Status.ACTIVE


def test_ingest_holds_turns_and_facts_for_review(mem: Memory, bob: Principal) -> None:
    out = mem.ingest(
        [
            {"content": "I moved to Lisbon last month", "role": "user", "name": "bob"},
            {"content": "Noted!", "role": "assistant"},
        ],
        "s1",
        scope="team:eng",
        principal=bob,
    )
    assert out.turns and all(t.status is Status.PENDING_REVIEW for t in out.turns)
    assert all(f.record.status is Status.PENDING_REVIEW for f in out.facts)


def test_consolidation_holds_its_promotion_for_review(mem: Memory, bob: Principal) -> None:
    _three_alike_episodes(mem)
    report = mem.consolidate(principal=bob)
    (promotion,) = [a for a in report.actions if a.op == "promote"]
    pending = mem.review_queue(principal=ROOT).items
    assert [(r.source, r.status) for r in pending] == [("consolidation", Status.PENDING_REVIEW)]
    assert set(pending[0].metadata["evidence"]) == set(promotion.evidence)


def test_import_holds_active_rows_for_review(
    mem: Memory, bob: Principal, make_memory: Callable[..., Memory]
) -> None:
    m = mem.remember("Retro notes live in the eng drive", scope="team:eng", principal=ROOT)
    out = io.StringIO()
    mem.export_jsonl(out, scopes=["team:eng"], principal=ROOT)
    mem.forget(m.id, principal=ROOT)
    assert mem.import_jsonl(out.getvalue().splitlines(), principal=bob) == 1
    assert mem.get(m.id, principal=ROOT).status is Status.PENDING_REVIEW


def test_approval_goes_through_the_pipeline(mem: Memory, bob: Principal) -> None:
    m = mem.remember("Retro is every other Thursday", scope="team:eng", principal=bob)
    with pytest.raises(Exception, match="review"):
        mem.approve(m.id, principal=bob)  # a member does not review the team
    approved = mem.approve(m.id, changes={"content": "Retro is every Thursday"}, principal=ROOT)
    assert approved.status is Status.ACTIVE
    top = mem.recall("when is the retro?", 1, scopes=["team:eng"], principal=ROOT).hits
    assert top[0].memory.id == m.id  # re-embedded with the edited content
    assert [e.op for e in mem.history(m.id, principal=ROOT)][-1] == "approve"


# -- the scope must exist ----------------------------------------------------------------


@pytest.mark.parametrize(
    "scope", ["team:no-such-team", "persona:no-such-persona", "user:nobody", "persona_user:x/bob"]
)
def test_a_governed_org_refuses_unknown_scopes_for_everyone(mem: Memory, scope: str) -> None:
    before = _everything(mem)
    writers: list[Callable[[], object]] = [
        lambda: mem.remember("Orphan fact", scope=scope, principal=ROOT),
        lambda: mem.write(
            [{"content": "ok", "scope": "user:root"}, {"content": "Orphan", "scope": scope}],
            principal=ROOT,
        ),  # noqa: E501
        lambda: mem.upsert("orphan", "Orphan fact", scope=scope, principal=ROOT),
        lambda: mem.ingest(["I like tea"], "s9", scope=scope, principal=ROOT),
    ]
    for write in writers:
        with pytest.raises(InvalidInput, match="has no") as err:
            write()
        assert err.value.field == "scope"
    assert _everything(mem) == before


def test_import_into_an_unknown_team_is_refused(
    mem: Memory, make_memory: Callable[..., Memory]
) -> None:
    other = make_memory("other", settings=_settings(), principal=ROOT)
    other.remember("A fact of a team only the other store has", scope="team:ghost")
    out = io.StringIO()
    other.export_jsonl(out)
    before = _everything(mem)
    with pytest.raises(InvalidInput, match="has no team 'ghost'"):
        mem.import_jsonl(out.getvalue().splitlines(), principal=ROOT)
    assert _everything(mem) == before


def test_a_known_team_accepts_and_a_deleted_one_refuses(mem: Memory) -> None:
    m = mem.remember("Payments team owns the ledger", scope="team:eng", principal=ROOT)
    mem.directory.put_team(ROOT, "payments")
    mem.remember("Ledger close is on day 3", scope="team:payments", principal=ROOT)
    mem.directory.delete_team(ROOT, "eng")
    with pytest.raises(InvalidInput, match="has no team 'eng'"):
        mem.update(m.id, content="Payments team owns the ledger and the vault", principal=ROOT)
    assert mem.get(m.id, principal=ROOT).version == m.version


# -- one transaction per write -------------------------------------------------------------


def test_a_reconciled_write_commits_in_one_transaction(mem: Memory) -> None:
    mem.remember("Ana's favourite colour is green", key="ana colour", principal=ROOT)
    before = _everything(mem)
    with _failing_last_step(mem, "replace_many"), pytest.raises(RuntimeError):
        # a newer value of the same key: insert + a change to the old one
        mem.remember("Ana's favourite colour is blue", key="ana colour", principal=ROOT)
    assert _everything(mem) == before


def test_ingest_commits_turns_facts_and_aging_in_one_transaction(
    make_memory: Callable[..., Memory],
) -> None:
    settings = Settings(
        lifecycle=Lifecycle(reconcile="rules", context_window=2), graph_extractor="rules"
    )
    mem = make_memory("ingest", settings=settings)
    mem.ingest(["I live in Berlin", "I work at Acme"], "s1")
    before = _everything(mem)
    with _failing_last_step(mem, "replace_many"), pytest.raises(RuntimeError):
        mem.ingest(["My sister lives in Rome", "We got a dog named Rex"], "s1")  # ages two
    assert _everything(mem) == before


def test_consolidations_confirm_branch_is_one_transaction(mem: Memory) -> None:
    fact = mem.remember("Sam drinks oat milk lattes", principal=ROOT)
    said = [
        "Sam drinks oat milk lattes",
        "Sam drinks oat milk lattes again",
        "Sam drinks oat milk lattes today",
    ]
    mem.write([{"content": t, "memory_type": "episodic"} for t in said], principal=ROOT)
    before = _everything(mem)
    with _failing_last_step(mem, "graph_write"), pytest.raises(RuntimeError):
        mem.consolidate(principal=ROOT)  # the summary confirms `fact`: no insert
    assert _everything(mem) == before
    report = mem.consolidate(principal=ROOT)
    assert [a.op for a in report.actions] == ["promote"]
    assert mem.get(fact.id, principal=ROOT).confidence > fact.confidence


def test_reembedding_goes_through_the_pipeline(mem: Memory) -> None:
    mem.remember("The boiler was serviced in March", principal=ROOT)
    assert mem.reembed(principal=ROOT) == 0  # every vector is the configured model's
    lines = mem.directory.audit(ROOT, action="memory.reembed")
    assert [(a.outcome, a.detail["door"]) for a in lines] == [("ok", "sdk")]


# -- the embedded single-user install --------------------------------------------------------


def test_embedded_install_records_teams_by_use_and_recalls_them(
    make_memory: Callable[..., Memory],
) -> None:
    mem = make_memory("embedded", settings=_settings())
    mem.remember("My dentist appointment is on Tuesday")
    mem.remember("The billing database runs on PostgreSQL 16", scope="team:platform")
    hits = mem.recall("billing database", 3).hits
    assert hits[0].memory.content == "The billing database runs on PostgreSQL 16"
    assert [t.id for t in mem.directory.teams(mem.principal)] == ["platform"]
    # another principal of that organization still sees only the teams it is in
    other = Principal(user_id="guest", roles=frozenset({Role.MEMBER}))
    assert not [h for h in mem.recall("billing database", 3, principal=other).hits]
    member = Principal(
        user_id="guest", roles=frozenset({Role.MEMBER}), teams={"platform": TeamRole.MEMBER}
    )
    assert mem.recall("billing database", 1, principal=member).hits


def test_consolidation_skips_a_promotion_whose_team_is_gone(mem: Memory) -> None:
    _three_alike_episodes(mem)
    mem.directory.delete_team(ROOT, "eng")
    before = _everything(mem)
    report = mem.consolidate(principal=ROOT)
    (skipped,) = report.actions
    assert skipped.op == "skip" and "has no team 'eng'" in skipped.reason
    assert len(skipped.evidence) == 3
    assert _everything(mem) == before
