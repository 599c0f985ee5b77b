"""The web UI end to end: Debian's headless Chromium (``/usr/bin/chromium``, never a
downloaded browser) driven by Playwright against a real uvicorn server (a thread of
the test process, real HTTP on a free port) serving ``create_app(memory=mem)``.

The scenarios follow issue 7's "Must show": sign in, search and open a hit, edit
and see the history, delete and see it gone from search, a team lead approves a
pending memory, a member cannot see another user's personal memory nor the admin
pages; plus API keys shown once and revoked, the graph walk, the insight charts,
memory content rendered as text (never HTML), and the security headers. The
main pages are screenshotted into ``docs/screenshots/`` (the README shows them).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import playwright.sync_api as pw
import pytest
import uvicorn
from serverkit import admin_of, bootstrap_org

from kenning import Memory
from kenning.config import ABSTAIN_BELOW
from kenning.server import create_app
from kenning.stores.postgres.throwaway import free_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ROOT = Path(__file__).resolve().parents[1]
#: Where the page screenshots go: an ignored folder, unless ``make screenshots`` asks
#: to refresh the committed ones (``KENNING_SCREENSHOTS=docs/screenshots``).
SHOTS = ROOT / os.environ.get("KENNING_SCREENSHOTS", ".artifacts/screenshots")
ACME = "acme"
XSS = "<img src=x onerror=alert(1)>"

# no skip: a missing browser is a failure (``make test`` installs Debian's chromium)
assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: install Debian's chromium (make test does)"
pw.expect.set_options(timeout=15_000)
expect = pw.expect


class ShiftClock:
    """The wall clock, shifted back by ``back`` (to seed memories of different ages)."""

    def __init__(self) -> None:
        self.back = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) - self.back


class LiveServer:
    """uvicorn serving ``app`` on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(20)


@dataclass
class Site:
    """The running server, its users' keys and the seeded memories by name."""

    base: str
    keys: dict[str, str]
    ids: dict[str, str]
    mem: Memory
    clock: ShiftClock = field(default_factory=ShiftClock)

    def call(
        self, method: str, path: str, who: str | None = None, key: str | None = None, **kw: Any
    ) -> httpx.Response:
        secret = key or (self.keys[who] if who else None)
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        return httpx.request(method, self.base + path, headers=headers, timeout=30, **kw)


def _seed(mem: Memory, clock: ShiftClock) -> dict[str, str]:
    """Memories of alice, bob, the eng team and the organization, of different ages,
    types and confidences, a few typed links and some traffic."""
    d = mem.directory
    alice, bob, lena = (d.principal(ACME, u) for u in ("alice", "bob", "lena"))
    root = admin_of(ACME)
    ids: dict[str, str] = {}
    rows: list[tuple[str, Any, str, float, dict[str, Any]]] = [
        (
            "falcon_meeting",
            alice,
            "Alice met Priya Raman in Lisbon to plan the Falcon project launch",
            20,
            {"tags": ["falcon", "travel"], "confidence": 0.92},
        ),
        (
            "falcon_launch",
            alice,
            "The Falcon project launches in May with Priya Raman as the technical lead",
            12,
            {"tags": ["falcon"], "importance": 4},
        ),
        (
            "falcon_delay",
            alice,
            "Falcon's launch date moved because the Lisbon data centre failed its audit",
            3,
            {"memory_type": "episodic", "confidence": 0.7},
        ),
        (
            "falcon_deploy",
            alice,
            "To deploy Falcon: run make release, then tag the commit",
            5,
            {"memory_type": "procedural", "confidence": 0.95},
        ),
        (
            "tea",
            alice,
            "Alice prefers green tea in the morning and coffee after lunch",
            60,
            {"tags": ["preferences"], "confidence": 0.55},
        ),
        (
            "bike",
            alice,
            "Alice keeps her bike in the garage next to the workbench",
            200,
            {"confidence": 0.8},
        ),
        ("brompton", alice, "Alice's bike is a blue Brompton she bought in Utrecht", 150, {}),
        (
            "roadmap",
            alice,
            "Alice is drafting the Q3 roadmap this week",
            0.2,
            {"memory_type": "working", "confidence": 0.35},
        ),
        (
            "standup",
            lena,
            "The eng standup is at 9:30 in the Atlas room",
            40,
            {"scope": "team:eng"},
        ),
        (
            "trunk",
            lena,
            "Eng uses trunk-based development with short-lived branches",
            8,
            {"scope": "team:eng", "confidence": 0.9},
        ),
        (
            "expenses",
            root,
            "Expense reports are due on the 5th of each month",
            100,
            {"scope": f"org:{ACME}", "confidence": 0.97},
        ),
        (
            "wifi",
            root,
            "The office wifi password rotates on the first Monday of each month",
            400,
            {"scope": f"org:{ACME}"},
        ),
        ("salary", bob, "Bob's salary review is in June; he will ask for a raise to 91k", 9, {}),
    ]
    for name, who, content, days_ago, fields in rows:
        clock.back = timedelta(days=days_ago)
        ids[name] = mem.remember(content, principal=who, **fields).id
    clock.back = timedelta(days=2)
    for a, b, relation, weight in (
        ("falcon_meeting", "falcon_launch", "elaborates", 0.9),
        ("falcon_launch", "falcon_delay", "causes", 0.8),
        ("falcon_deploy", "falcon_launch", "related", 0.6),
        ("falcon_delay", "falcon_meeting", "temporal_next", 0.5),
        ("brompton", "bike", "elaborates", 0.7),
    ):
        mem.graph.link(ids[a], ids[b], relation, weight, principal=alice)
    for days_ago, names in (
        (6, ["falcon_launch", "tea"]),
        (4, ["falcon_launch"]),
        (2, ["falcon_delay", "bike", "falcon_launch"]),
        (1, ["tea"]),
        (0, ["falcon_launch", "falcon_deploy"]),
    ):
        clock.back = timedelta(days=days_ago)
        for name in names:
            mem.reinforce(ids[name], principal=alice)
    clock.back = timedelta(0)
    mem.flush()
    return ids


@pytest.fixture(scope="module")
def site(embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The acme organization with seeded memories behind a live server (SQLite)."""
    clock = ShiftClock()
    mem = Memory(tmp_path_factory.mktemp("web") / "k.db", embedder=embedder, clock=clock)
    keys = bootstrap_org(mem, ACME)
    ids = _seed(mem, clock)
    try:
        with LiveServer(create_app(memory=mem)) as server:
            yield Site(server.base, keys, ids, mem, clock)
    finally:
        mem.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with pw.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class Tab:
    """A browser page on the site, with what it requested and what went wrong."""

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(
            base_url=base,
            viewport={"width": 1280, "height": 860},
            locale="en-GB",
            timezone_id="UTC",
        )
        self.page = self.context.new_page()
        self.urls: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("request", lambda r: self.urls.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on(
            "console",
            lambda m: (
                self.errors.append(m.text)
                if m.type == "error" and "Failed to load resource" not in m.text
                else None
            ),
        )

        def on_dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        self.page.on("dialog", on_dialog)

    def sign_in(self, key: str) -> Any:
        page = self.page
        page.goto("/")
        page.get_by_label("API key").fill(key)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("navigation", name="Main")).to_be_visible()
        return page

    def go(self, hash_route: str) -> Any:
        self.page.evaluate("(h) => { location.hash = h; }", hash_route)
        return self.page

    def shot(self, name: str, full_page: bool = False) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.mouse.move(0, 0)
        self.page.evaluate("document.getElementById('status').replaceChildren()")
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)


@pytest.fixture
def tab(browser: Any, site: Site) -> Iterator[Tab]:
    t = Tab(browser, site.base)
    try:
        yield t
        secrets = [k.split("_", 2)[2] for k in site.keys.values()]
        assert not [u for u in t.urls if any(s in u for s in secrets)], "an API key in a URL"
        assert not t.errors, t.errors
        assert not t.dialogs, f"a script ran: {t.dialogs}"
    finally:
        t.context.close()


def _cards(page: Any) -> Any:
    return page.locator(".result-list > li")


# -- sign in, search, open ---------------------------------------------------------------


def test_sign_in_search_and_open_a_hit(tab: Tab, site: Site) -> None:
    page = tab.page
    page.goto("/")
    expect(page.get_by_role("heading", name="Sign in to kenning")).to_be_visible()
    tab.shot("signin")
    page.get_by_label("API key").fill("kn_000000000000_" + "x" * 43)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not accepted")
    tab.sign_in(site.keys["alice"])
    header = page.locator("#topbar")
    expect(header).to_contain_text("Alice")
    expect(header).to_contain_text("acme")
    assert page.evaluate("sessionStorage.getItem('kenning.key')") == site.keys["alice"]
    assert page.evaluate("localStorage.length") == 0
    page.locator(".whoami summary").click()
    panel = page.locator(".whoami-panel")
    expect(panel).to_contain_text("eng (member)")
    expect(panel).to_contain_text("helper")
    expect(panel).to_contain_text("org")
    page.locator(".whoami summary").click()
    page.get_by_label("Persona").select_option("helper")
    expect(page.locator("#status")).to_contain_text("Acting as persona helper")
    page.locator(".whoami summary").click()
    expect(page.locator(".whoami-panel dt:has-text('Active persona') + dd")).to_have_text("helper")
    assert page.evaluate("sessionStorage.getItem('kenning.persona')") == "helper"
    page.get_by_label("Persona").select_option("")
    expect(page.locator("#status")).to_contain_text("No persona active")

    page.get_by_label("Search memories").fill("When does the Falcon project launch?")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_role("heading", name=re.compile("results? for"))).to_be_visible()
    first = _cards(page).first
    expect(first).to_contain_text("Falcon project launches in May")
    breakdown = first.get_by_label("Score breakdown")
    for part in (
        "Dense",
        "Keyword",
        "Graph",
        "Learned",
        "Relevance",
        "Confidence",
        "Temporal",
        "Strength",
        "Layer boost",
        "Final",
    ):
        expect(breakdown).to_contain_text(part)
    expect(page.locator(".result-list")).not_to_contain_text("salary")  # bob's
    tab.shot("search")

    first.get_by_role("link").click()
    expect(page.get_by_role("heading", name="Memory", exact=True)).to_be_visible()
    expect(page.locator("#memory-content")).to_have_text(
        "The Falcon project launches in May with Priya Raman as the technical lead"
    )
    assert page.url.endswith(f"#/memory/{site.ids['falcon_launch']}")
    provenance = page.locator("section", has=page.get_by_role("heading", name="Provenance"))
    for label in ("Source", "Agent", "Session", "Episode", "Created by", "Valid from"):
        expect(provenance).to_contain_text(label)
    expect(page.locator("#history")).to_contain_text("create")
    related = page.locator("section", has=page.get_by_role("heading", name="Related memories"))
    expect(related).to_contain_text("causes")
    entities = page.locator("section", has=page.get_by_role("heading", name="Entities and topics"))
    expect(entities).to_contain_text("Priya Raman")
    access = page.locator("section", has=page.get_by_role("heading", name="Access log"))
    expect(access).to_contain_text("reinforce")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in to kenning")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0


def test_filters_and_list_pagination(tab: Tab, site: Site) -> None:
    page = tab.sign_in(site.keys["alice"])
    expect(page.get_by_role("heading", name="Memories, newest first")).to_be_visible()
    page.locator(".filters summary").click()
    page.get_by_label("Type").select_option("procedural")
    page.get_by_role("button", name="List all").click()
    expect(_cards(page)).to_have_count(1)
    expect(_cards(page).first).to_contain_text("make release")
    page.get_by_label("Type").select_option("")
    page.get_by_label("Scope").fill(f"org:{ACME}")
    page.get_by_role("button", name="List all").click()
    expect(_cards(page)).to_have_count(2)
    page.get_by_role("button", name="Reset filters").click()
    page.get_by_label("Tags (all of)").fill("falcon")
    page.get_by_label("Search memories").fill("Falcon")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(_cards(page)).to_have_count(2)
    page.get_by_role("button", name="Reset filters").click()
    # a minimum score: a question nothing answers gets nothing
    page.get_by_label("Minimum score").select_option("0.5")
    page.get_by_label("Search memories").fill("What is the melting point of tungsten?")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_text("Nothing found.")).to_be_visible()
    page.get_by_label("Minimum score").select_option("0")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(_cards(page).first).to_be_visible()
    page.get_by_role("button", name="Reset filters").click()
    # a server that abstains says that nothing answers, not that nothing was found
    settings = site.mem.settings
    abstaining = settings.retrieval.model_copy(update={"abstain_below": ABSTAIN_BELOW})
    site.mem.settings = settings.model_copy(update={"retrieval": abstaining})
    try:
        page.get_by_label("Search memories").fill("What is the melting point of tungsten?")
        page.get_by_role("button", name="Search", exact=True).click()
        expect(page.get_by_text("No memory answers this.")).to_be_visible()
    finally:
        site.mem.settings = settings
    page.get_by_role("button", name="Reset filters").click()
    # paging: 25 notes of alice's, 20 a page
    alice = site.mem.directory.principal(ACME, "alice")
    notes = [
        site.mem.remember(f"Alice's paging note number {i}", principal=alice, tags=["paging"]).id
        for i in range(25)
    ]
    try:
        _page_through(page)
    finally:
        for note in notes:
            site.mem.forget(note, principal=alice)


def _page_through(page: Any) -> None:
    page.get_by_label("Tags (all of)").fill("paging")
    page.get_by_label("Search memories").fill("")
    page.get_by_role("button", name="List all").click()
    expect(_cards(page)).to_have_count(20)
    expect(page.get_by_role("button", name="← Previous")).to_be_disabled()
    page.get_by_role("button", name="Next →").click()
    expect(_cards(page)).to_have_count(5)
    expect(page.get_by_role("button", name="Next →")).to_be_disabled()
    page.get_by_role("button", name="← Previous").click()
    expect(_cards(page)).to_have_count(20)
    expect(_cards(page).first).to_contain_text("number 24")


# -- correct it --------------------------------------------------------------------------


def test_edit_and_see_the_history_and_a_conflict(tab: Tab, site: Site) -> None:
    page = tab.sign_in(site.keys["alice"])
    mid = site.ids["bike"]
    tab.go(f"#/memory/{mid}")
    expect(page.locator("#memory-content")).to_contain_text("garage")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Alice keeps her bike in the shed behind the house")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#status")).to_contain_text("version 2")
    expect(page.locator("#memory-content")).to_have_text(
        "Alice keeps her bike in the shed behind the house"
    )
    history = page.locator("#history tbody tr")
    expect(history).to_have_count(2)
    expect(history.nth(1)).to_contain_text("update")
    expect(history.nth(1)).to_contain_text("shed behind the house")
    page.get_by_role("button", name="▲ Upvote").click()
    expect(page.locator("#status")).to_contain_text("Upvoted")
    expect(history).to_have_count(3)
    expect(history.nth(2)).to_contain_text("feedback")
    tab.shot("detail", full_page=True)
    # someone else changes it while the form is open: the save is refused, not lost
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Alice keeps her bike at the office")
    changed = site.call(
        "PATCH",
        f"/v1/memories/{mid}",
        "alice",
        json={"content": "Alice keeps her bike in the basement"},
    )
    assert changed.status_code == 200
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator(".form-problem")).to_contain_text("someone changed this memory")
    expect(page.locator("#error")).to_contain_text("409")
    page.get_by_role("button", name="Reload").click()
    expect(page.locator("#memory-content")).to_have_text("Alice keeps her bike in the basement")
    # archive and restore
    page.get_by_role("button", name="Archive").click()
    expect(page.locator(".memory .meta")).to_contain_text("archived")
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("button", name="Archive")).to_be_visible()


def test_delete_with_confirmation_and_it_is_gone_from_search(tab: Tab, site: Site) -> None:
    made = site.call(
        "POST", "/v1/memories", "alice", json={"content": "Alice's gym locker code is 4512"}
    ).json()["memory"]
    page = tab.sign_in(site.keys["alice"])
    page.get_by_label("Search memories").fill("gym locker code")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(_cards(page).first).to_contain_text("gym locker code is 4512")
    _cards(page).first.get_by_role("link").click()
    page.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("cannot be restored")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    assert site.call("GET", f"/v1/memories/{made['id']}", "alice").status_code == 200
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete memory").click()
    expect(page.locator("#status")).to_contain_text("Memory deleted")
    expect(page.get_by_role("heading", name=re.compile("results? for"))).to_be_visible()
    expect(page.locator(".results")).not_to_contain_text("4512")
    assert site.call("GET", f"/v1/memories/{made['id']}", "alice").status_code == 404


# -- review ------------------------------------------------------------------------------


def test_a_team_lead_approves_edits_and_rejects_pending_memories(tab: Tab, site: Site) -> None:
    assert site.call("PUT", "/v1/admin/teams/eng", "root", json={"review": True}).status_code == 200
    try:
        held = []
        for text in (
            "The eng on-call rotation changes on Mondays",
            "Eng deploys from the release branch on Thursdays",
            "Eng code freeze starts two days before a release",
            "Eng retro notes go in the team wiki",
        ):
            r = site.call(
                "POST",
                "/v1/memories",
                "alice",
                json={"content": text, "scope": "team:eng", "agent_id": "claude"},
            )
            assert r.json()["memory"]["status"] == "pending_review"
            held.append(r.json()["memory"]["id"])
        page = tab.sign_in(site.keys["lena"])
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Review").click()
        items = page.locator(".review-item")
        expect(items).to_have_count(4)
        expect(items.first).to_contain_text("by alice")
        expect(items.first).to_contain_text("agent claude")
        tab.shot("review")
        one = page.locator(f'.review-item[data-id="{held[0]}"]')
        one.get_by_role("button", name="Approve", exact=True).click()
        expect(one).to_have_count(0)
        two = page.locator(f'.review-item[data-id="{held[1]}"]')
        two.get_by_role("button", name="Edit and approve").click()
        two.get_by_label("Content").fill("Eng deploys from the release branch on Wednesdays")
        two.get_by_role("button", name="Approve with edits").click()
        expect(two).to_have_count(0)
        page.get_by_label(re.compile("Select “Eng code freeze")).check()
        page.get_by_label(re.compile("Select “Eng retro")).check()
        page.get_by_label("Reason").fill("not agreed yet")
        page.get_by_role("button", name="Reject selected").click()
        expect(page.locator("#status")).to_contain_text("2 rejected")
        expect(page.get_by_text("Nothing waits for review.")).to_be_visible()
        first = site.call("GET", f"/v1/memories/{held[0]}", "alice").json()
        second = site.call("GET", f"/v1/memories/{held[1]}", "alice").json()
        assert first["status"] == second["status"] == "active"
        assert second["content"].endswith("Wednesdays")
        assert site.call("GET", f"/v1/memories/{held[2]}", "root").status_code == 404
    finally:
        site.call("PUT", "/v1/admin/teams/eng", "root", json={"review": False})


# -- what a member may not see -----------------------------------------------------------


def test_a_member_cannot_see_another_users_memory_nor_the_admin_pages(tab: Tab, site: Site) -> None:
    page = tab.sign_in(site.keys["alice"])
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Memories")).to_be_visible()
    expect(nav.get_by_role("link", name="Admin")).to_have_count(0)
    expect(nav.get_by_role("link", name="Review")).to_have_count(0)
    page.get_by_label("Search memories").fill("salary review raise")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_role("heading", name=re.compile("results? for"))).to_be_visible()
    expect(page.locator(".results")).not_to_contain_text("91k")
    tab.go(f"#/memory/{site.ids['salary']}")
    expect(page.get_by_role("heading", name="Memory not found")).to_be_visible()
    expect(page.locator("main")).not_to_contain_text("91k")
    tab.go("#/admin")
    expect(page.locator("#not-allowed")).to_contain_text("Not allowed")
    status = page.evaluate("""async () => (await fetch('/v1/admin/audit', {headers:
        {Authorization: 'Bearer ' + sessionStorage.getItem('kenning.key')}})).status""")
    assert status == 403
    assert site.call("GET", f"/v1/memories/{site.ids['salary']}", "alice").status_code == 404


# -- admin -------------------------------------------------------------------------------


def test_an_admin_creates_a_key_sees_the_secret_once_and_revokes_it(tab: Tab, site: Site) -> None:
    page = tab.sign_in(site.keys["root"])
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Admin").click()
    expect(page.get_by_label("Recall mode")).to_have_value("org")
    page.get_by_role("link", name="Users").click()
    expect(page.locator("#users-table")).to_contain_text("lena")
    tab.shot("admin")
    page.get_by_role("link", name="API keys").click()
    # the Users tab has a "Name" field too: fill the key form once it is there
    form = page.get_by_role("form", name="Create an API key")
    expect(form).to_be_visible()
    form.get_by_label("Name", exact=True).fill("ci-bot")
    form.get_by_label("For user").select_option("bob")
    form.get_by_role("button", name="Create key").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("shown this once")
    secret = dialog.get_by_label("Secret").input_value()
    assert secret.startswith("kn_")
    assert site.call("GET", "/v1/me", key=secret).json()["user"]["id"] == "bob"
    bob = Tab(tab.context.browser, site.base)
    bob.sign_in(secret)
    dialog.get_by_role("button", name="I have copied it").click()
    expect(dialog).to_have_count(0)
    assert secret not in page.content()
    key_id = secret.split("_")[1]
    row = page.locator(f'#keys-table tr[data-key="{key_id}"]')
    expect(row).to_contain_text("ci-bot")
    expect(row).to_contain_text("active")
    row.get_by_role("button", name="Revoke").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke key").click()
    expect(page.locator(f'#keys-table tr[data-key="{key_id}"]')).to_contain_text("revoked")
    assert site.call("GET", "/v1/me", key=secret).status_code == 401
    try:  # a tab signed in with the revoked key is signed out at its next call
        bob.go("#/insight")
        expect(bob.page.get_by_role("heading", name="Sign in to kenning")).to_be_visible()
        expect(bob.page.locator(".notice")).to_contain_text("revoked")
        assert bob.page.evaluate("sessionStorage.length") == 0
    finally:
        bob.context.close()
    # teams and the organization's switches
    page.get_by_role("link", name="Teams").click()
    expect(page.locator('[data-team="eng"]')).to_contain_text("lena")
    page.get_by_role("link", name="Organization").click()
    page.get_by_label("Review organization memory").check()
    page.get_by_role("button", name="Save organization").click()
    expect(page.locator("#status")).to_contain_text("Organization saved")
    try:
        assert site.call("GET", "/v1/me", "alice").json()["org"]["review"] is True
    finally:
        site.call("PATCH", "/v1/admin/org", "root", json={"review": False})


def test_an_admin_exports_and_erases_a_user(tab: Tab, site: Site) -> None:
    d, root = site.mem.directory, admin_of(ACME)
    d.put_user(root, "zoe", name="Zoe")
    d.set_member(root, "eng", "zoe", "member")
    zoe_key = d.create_key(root, "zoe", "web")[1]
    zoe = d.principal(ACME, "zoe")
    own = site.mem.remember("Zoe keeps her bicycle in the basement", principal=zoe).id
    shared = site.mem.remember("Zoe set up the eng build cache", scope="team:eng", principal=zoe).id
    page = tab.sign_in(site.keys["root"])
    tab.go("#/admin/users")
    row = page.locator('#users-table tr[data-user="zoe"]')
    with page.expect_download() as got:
        row.get_by_role("button", name="Export").click()
    lines = [json.loads(x) for x in Path(got.value.path()).read_text().splitlines()]
    assert got.value.suggested_filename == "kenning-export-zoe.jsonl"
    assert {m["data"]["id"] for m in lines if m["type"] == "memory"} == {own, shared}
    expect(
        page.locator('#users-table tr[data-user="root"]').get_by_role("button", name="Erase")
    ).to_have_count(0)
    row.get_by_role("button", name="Erase").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("stay, their author replaced")
    dialog.get_by_role("button", name="Cancel").click()
    assert site.call("GET", "/v1/me", key=zoe_key).status_code == 200  # cancelled: nothing happened
    row.get_by_role("button", name="Erase").click()
    page.get_by_role("dialog").get_by_role("button", name="Erase for good").click()
    expect(page.locator("#status")).to_contain_text("User zoe erased")
    expect(page.locator('#users-table tr[data-user="zoe"]')).to_have_count(0)
    assert site.call("GET", "/v1/me", key=zoe_key).status_code == 401
    assert site.call("GET", f"/v1/memories/{own}", "root").status_code == 404
    assert site.call("GET", f"/v1/memories/{shared}", "root").json()["created_by"] == "(erased)"


# -- graph and insight -------------------------------------------------------------------


def test_the_graph_renders_a_neighbourhood_and_a_click_walks(tab: Tab, site: Site) -> None:
    page = tab.sign_in(site.keys["alice"])
    ids = site.ids
    tab.go(f"#/graph?memory={ids['falcon_launch']}")
    graph = page.locator("svg.graph")
    expect(graph.locator("a.node.memory")).to_have_count(3)
    graph.locator(f'a.node.memory[href*="{ids["falcon_deploy"]}"]').focus()  # the keyboard
    page.keyboard.press("Enter")
    expect(page.locator(".center-label")).to_contain_text("make release")
    page.go_back()
    expect(graph.locator("a.node.entity")).not_to_have_count(0)
    expect(graph.locator(".edge-labels")).to_contain_text("causes")
    expect(graph.locator(".edge-labels")).to_contain_text("elaborates")
    page.set_viewport_size({"width": 1280, "height": 1000})
    tab.shot("graph")
    page.set_viewport_size({"width": 1280, "height": 860})
    graph.locator(f'a.node.memory[href*="{ids["falcon_delay"]}"]').click()
    expect(page).to_have_url(re.compile(f"memory={ids['falcon_delay']}"))
    expect(page.locator(".center-label")).to_contain_text("data centre failed its audit")
    graph.locator("a.node.entity", has_text="Lisbon").click()
    lisbon = page.get_by_role("heading", name=re.compile("Around the entity “Lisbon”"))
    expect(lisbon).to_be_visible()
    expect(graph.locator("a.node.memory")).to_have_count(2)
    page.get_by_label("From", exact=True).fill(ids["falcon_meeting"])
    page.get_by_label("To", exact=True).fill(ids["falcon_delay"])
    page.get_by_role("button", name="Find paths").click()
    paths = page.locator(".path-list > li")
    expect(paths.first).to_be_visible()
    expect(page.locator(".paths")).to_contain_text("elaborates")
    expect(page.locator(".paths")).to_contain_text("Lisbon data centre")


def test_insight_renders_the_charts_and_the_audit_log(tab: Tab, site: Site) -> None:
    page = tab.sign_in(site.keys["root"])
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Insight").click()
    for chart in ("types", "confidence", "age", "traffic"):
        expect(page.locator(f"#chart-{chart} svg rect.bar")).not_to_have_count(0)
    expect(page.locator("#chart-curves svg path.line")).to_have_count(6)
    expect(page.locator("#layer-stats")).to_contain_text("organization")
    expect(page.locator("#chart-traffic")).to_contain_text("reinforce")
    rows = page.locator("#audit-table tbody tr")
    expect(rows).to_have_count(25)
    page.set_viewport_size({"width": 1280, "height": 1180})
    tab.shot("insight")
    first_seq = int(rows.first.locator("td").first.inner_text())
    page.get_by_role("button", name="Older →").click()
    expect(rows.first.locator("td").first).not_to_have_text(str(first_seq))
    assert int(rows.first.locator("td").first.inner_text()) < first_seq
    page.get_by_label("Action starts with").fill("admin.")
    page.get_by_role("button", name="Filter").click()
    expect(rows.first).to_contain_text("admin.")
    # the filtered page replaces the older one: wait until no row is another action
    expect(rows.locator("td:nth-child(4)").filter(has_not_text="admin.")).to_have_count(0)
    actions = rows.locator("td:nth-child(4)").all_inner_texts()
    assert actions and all(a.startswith("admin.") for a in actions)


# -- safety ------------------------------------------------------------------------------


def test_memory_content_is_rendered_as_text_never_as_html(tab: Tab, site: Site) -> None:
    made = site.call(
        "POST",
        "/v1/memories",
        "alice",
        json={
            "content": f"Alice pasted {XSS} into her notes",
            "tags": ["xss"],
            "metadata": {"note": XSS},
        },
    ).json()["memory"]
    page = tab.sign_in(site.keys["alice"])
    page.get_by_label("Search memories").fill("Alice pasted into her notes")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(_cards(page).first).to_contain_text(XSS)
    tab.go(f"#/memory/{made['id']}")
    expect(page.locator("#memory-content")).to_have_text(f"Alice pasted {XSS} into her notes")
    expect(page.locator("#history")).to_contain_text(XSS)
    tab.go(f"#/graph?memory={made['id']}")
    expect(page.locator(".center-label")).to_contain_text(XSS)
    assert page.locator("img").count() == 0
    assert page.evaluate("document.querySelectorAll('[onerror]').length") == 0
    # the tab fixture fails the test if an alert() ran


def test_ui_responses_carry_a_strict_content_security_policy(site: Site) -> None:
    page = httpx.get(site.base + "/", timeout=10)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    script = httpx.get(site.base + "/ui/app.js", timeout=10)
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert script.headers["content-security-policy"] == csp
    assert "innerHTML" not in "".join(
        p.read_text() for p in (ROOT / "src/kenning/web/static").glob("*.js")
    )
    assert httpx.get(site.base + "/docs", timeout=10).status_code == 200
    assert httpx.get(site.base + "/ui/nope.js", timeout=10).status_code == 404


# -- the same UI on both stores ----------------------------------------------------------


def test_sign_in_search_and_detail_on_each_store(
    browser: Any, make_memory: Callable[..., Memory], store_kind: str
) -> None:
    mem = make_memory("web")
    keys = bootstrap_org(mem, ACME)
    alice = mem.directory.principal(ACME, "alice")
    mid = mem.remember(
        f"On {store_kind}, Alice's favourite hiking trail is the Kungsleden",
        principal=alice,
        tags=["hiking"],
    ).id
    mem.remember("Bob's hiking boots are size 44", principal=mem.directory.principal(ACME, "bob"))
    with LiveServer(create_app(memory=mem)) as server:
        t = Tab(browser, server.base)
        try:
            page = t.sign_in(keys["alice"])
            page.get_by_label("Search memories").fill("favourite hiking trail")
            page.get_by_role("button", name="Search", exact=True).click()
            expect(_cards(page)).to_have_count(1)
            _cards(page).first.get_by_role("link").click()
            expect(page.locator("#memory-content")).to_contain_text(f"On {store_kind}")
            expect(page.locator("#history")).to_contain_text("create")
            expect(page.locator(".chips")).to_contain_text("hiking")
            assert page.url.endswith(mid)
            assert not t.errors, t.errors
        finally:
            t.context.close()
