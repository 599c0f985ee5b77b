"""Load benchmark: concurrent clients against a real ``kenning serve`` on loopback.

The database is prepared in-process (an organization, a handful of users in
two teams, an API key each, ``seed_memories`` memories written through
``remember_many``), then ``kenning serve`` runs as a subprocess on 127.0.0.1
with the asked number of uvicorn workers. ``clients`` asyncio clients (one
``httpx.AsyncClient`` and one user's key each) send a mix of remembers (unique
sentences, into the user's own scope or their team's) and recalls (questions
about the same people, projects and places) until ``duration`` seconds have
passed or ``requests`` requests were sent, after an unmeasured warm-up on the
same connections (see :func:`_clients`). After the run the server is stopped
with SIGTERM (its graceful shutdown flushes pending writes), the store is
opened directly, and every acknowledged remember (201 with a memory id,
warm-up included) is looked up as an admin: one that is missing is a lost
write. ``/metrics`` tells how many requests each worker served.

Everything is bounded: each request has a timeout, the run a deadline, the
server start and stop their own (a server that does not stop within 30 s is
killed, with its whole process group).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx

from ..engine import Memory
from ..errors import ConfigError, NotFound
from ..models import Principal, Role, Scope
from ..stores import database_url
from ..stores.registry import backend_for
from .stores import open_bench_memory

__all__ = ["run_load", "LoadText"]

ORG = "loadbench"
ADMIN = "admin"
TEAMS = ("t0", "t1")
#: Seconds to wait for the server to stop after SIGTERM before it is killed.
STOP_TIMEOUT_S = 30.0
#: Per-request timeout of the clients (a request slower than this is an error).
REQUEST_TIMEOUT_S = 60.0

Progress = Callable[[str], None]

_NAMES = (
    "Alice Bob Carla Dmitri Elena Farid Grace Hiro Ines Jonas Keiko Liam Maya Nadia Omar "
    "Priya Quentin Rosa Sven Tariq Uma Victor Wen Ximena Yusuf Zoe"
).split()
_PROJECTS = (
    "Atlas Borealis Cobalt Delta Ember Falcon Granite Harbor Iris Juniper Kestrel Lumen "
    "Meridian Nimbus Orion Pylon Quasar Raven Sierra Tundra"
).split()
_PLACES = (
    "Lisbon Osaka Berlin Nairobi Toronto Lyon Seoul Denver Oslo Krakow Austin Porto Dublin "
    "Hanoi Bogota Perth"
).split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_MONTHS = "January February March April May June July August September October November".split()
_FOODS = "peanuts shellfish gluten lactose sesame strawberries mushrooms eggs".split()
_DRINKS = "espresso green tea oat latte sparkling water chai cold brew".split(" ")
_TOOLS = "Grafana Terraform Jira Figma Postgres Kafka Sentry Airflow Notion Jenkins".split()
_PURPOSES = (
    "alerting,infrastructure,sprint planning,design reviews,analytics,event streaming,"
    "error tracking,data pipelines,meeting notes,release builds"
).split(",")
_HOBBIES = (
    "rock climbing,sourdough baking,chess,trail running,watercolor painting,jazz piano,"
    "birdwatching,sailing,pottery,salsa dancing"
).split(",")
_ISSUES = (
    "database outage,security audit,budget review,vendor delay,load test failure,"
    "design change,legal review,hiring freeze"
).split(",")


class LoadText:
    """Realistic memories (unique: each carries a running reference) and questions."""

    def __init__(self, rng: random.Random, tag: str) -> None:
        self.rng = rng
        self.tag = tag
        self.n = 0

    def memory(self) -> str:
        """One unique sentence about people, projects, places, tools or plans."""
        r, self.n = self.rng, self.n + 1
        name, other = r.sample(_NAMES, 2)
        project, place, day = r.choice(_PROJECTS), r.choice(_PLACES), r.choice(_DAYS)
        month, n = r.choice(_MONTHS), r.randint(2, 28)
        templates = (
            f"{name} prefers {r.choice(_DRINKS)} before the {day} stand-up",
            f"The {project} launch moved to {month} {n} after the {r.choice(_ISSUES)}",
            f"{name} is allergic to {r.choice(_FOODS)}; order something else for team lunches",
            f"Team uses {r.choice(_TOOLS)} for {r.choice(_PURPOSES)} on project {project}",
            f"{name} flies to {place} on {day} to meet the {project} customer with {other}",
            f"{name} took up {r.choice(_HOBBIES)} in {month} and practises on {day}s",
            f"{name} owns the {project} budget and reports to {other} every {day}",
            f"The {project} retro in {place} decided to freeze features until {month} {n}",
            f"{other} reviews {name}'s pull requests for {project} on {day} mornings",
            f"{name}'s sister lives in {place}; {name} visits her every {month}",
        )
        return f"{r.choice(templates)} (note {self.tag}-{self.n})."

    def query(self) -> str:
        """A question the memories can answer (more or less well)."""
        r = self.rng
        name, project, place = r.choice(_NAMES), r.choice(_PROJECTS), r.choice(_PLACES)
        return r.choice(
            (
                f"What does {name} like to drink?",
                f"When is the {project} launch?",
                f"Is {name} allergic to anything?",
                f"Which tool does the team use for {r.choice(_PURPOSES)}?",
                f"Who is travelling to {place}?",
                f"What are {name}'s hobbies?",
                f"Who owns the {project} budget?",
                f"What did the {project} retro decide?",
                f"Who reviews {name}'s pull requests?",
                f"Where does {name}'s sister live?",
            )
        )


@dataclass
class _Tally:
    """What the clients saw: latencies per op, errors, acknowledged writes."""

    latencies: dict[str, list[float]] = field(
        default_factory=lambda: {"remember": [], "recall": []}
    )
    errors: int = 0
    error_kinds: Counter[str] = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    actions: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    started: float = 0.0
    #: per op, the slowest answer: (ms, seconds into the run it was sent)
    slowest: dict[str, tuple[float, float]] = field(default_factory=dict)

    def error(self, op: str, what: str, detail: str) -> None:
        self.errors += 1
        self.error_kinds[f"{op}:{what}"] += 1
        if len(self.error_samples) < 10:
            self.error_samples.append(f"{op}: {what}: {detail[:300]}")


@dataclass
class _Client:
    user: str
    team: str
    key: str
    text: LoadText


def run_load(
    *,
    store: str | None = None,
    workers: int = 1,
    clients: int = 16,
    duration: float = 20.0,
    requests: int | None = None,
    write_ratio: float = 0.2,
    seed_memories: int = 2000,
    port: int | None = None,
    users: int = 8,
    warmup: float = 3.0,
    seed_batch: int = 250,
    startup_timeout: float = 180.0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the load benchmark; returns a JSON-ready dict (see the module docstring).

    ``requests`` (a total over all clients), when given, replaces ``duration``.
    ``store`` is an empty ``postgresql://…`` (or ``sqlite:///…``) database;
    default: a temporary SQLite file. Several workers need a store processes share.
    """
    from ..stores.postgres.throwaway import free_port

    say = progress or (lambda _msg: None)
    if clients < 1 or workers < 1 or users < 1:
        raise ConfigError("clients, workers and users must be at least 1")
    if not 0.0 <= write_ratio <= 1.0:
        raise ConfigError("write_ratio must be between 0 and 1")
    given = database_url(store, field="store") if store else None
    if workers > 1 and given and not backend_for(given, "store").serves_processes:
        raise ConfigError(
            "several workers need a store that processes share (SQLite or PostgreSQL)"
        )
    with tempfile.TemporaryDirectory(prefix="kenning-load-") as tmp_name:
        tmp = Path(tmp_name)
        url = given or database_url(str(tmp / "load.db"), field="store")
        t = time.perf_counter()
        keys, before = _prepare(store, tmp / "load.db", users, seed_memories, seed_batch, say)
        seed_s = time.perf_counter() - t
        port = port or free_port()
        base = f"http://127.0.0.1:{port}"
        log_path = tmp / "server.log"
        with log_path.open("wb") as log:
            say(f"starting kenning serve on {base} with {workers} worker(s)")
            t = time.perf_counter()
            children_before = _cpu(resource.RUSAGE_CHILDREN)
            proc = _start_server(url, workers, port, tmp / "home", log)
            try:
                kind = _wait_ready(base, proc, startup_timeout, log_path)
                startup_s = time.perf_counter() - t
                say(f"server ready after {startup_s:.1f} s; warming up")
                names = [u for u in keys if u != ADMIN]
                roster = [
                    _Client(
                        u,
                        TEAMS[int(u[1:]) % len(TEAMS)],
                        keys[u],
                        LoadText(random.Random(1000 + i), f"c{i}"),
                    )
                    for i, u in ((i, names[i % len(names)]) for i in range(clients))
                ]
                warm, tally = _Tally(), _Tally()
                elapsed, clients_cpu, per_worker = asyncio.run(
                    _clients(
                        base,
                        roster,
                        keys[ADMIN],
                        warm,
                        tally,
                        write_ratio,
                        warmup,
                        duration,
                        requests,
                        workers,
                        say,
                    )
                )
            finally:
                say("stopping the server")
                t = time.perf_counter()
                graceful, code, leftovers = _stop_server(proc)
                shutdown_s = time.perf_counter() - t
                server_cpu = _cpu(resource.RUSAGE_CHILDREN) - children_before
        log_errors, log_tail = _log_errors(log_path)
        # uvicorn logs this once per worker when its lifespan (engine flush, close) ended
        shutdowns = log_path.read_text(errors="replace").count("Application shutdown complete")
        say("checking acknowledged writes")
        acked = warm.acknowledged + tally.acknowledged
        lost, held = _lost_writes(url, acked)
    total_errors = warm.errors + tally.errors
    ops = {op: _summary(values) for op, values in tally.latencies.items()}
    for op, (_, at) in tally.slowest.items():
        ops[op]["max_sent_at_s"] = round(at, 1)
    return {
        "store": kind,
        "workers": workers,
        "clients": clients,
        "users": len(keys) - 1,
        "mode": "requests" if requests is not None else "duration",
        "duration_s": round(elapsed, 2),
        "requests": tally.requests,
        "throughput_rps": round(tally.requests / elapsed, 1) if elapsed > 0 else 0.0,
        "write_ratio": write_ratio,
        "ops": ops,
        "errors": total_errors,
        "error_kinds": dict(tally.error_kinds + warm.error_kinds),
        "error_samples": (warm.error_samples + tally.error_samples)[:10],
        "acknowledged_writes": len(acked),
        "write_actions": dict(warm.actions + tally.actions),
        "lost_writes": lost,
        "memories_before": before,
        "memories_after": held,
        "seed_memories": seed_memories,
        "seed_s": round(seed_s, 1),
        "warmup": {"seconds": warmup, "requests": warm.requests, "errors": warm.errors},
        "per_worker_requests": [w.requests for w in per_worker],
        # the embedding model's runs over the server's life (warm-up included) and the
        # texts they embedded: concurrent calls share a run (micro-batching)
        "embedding": _embedding(per_worker),
        "server_startup_s": round(startup_s, 2),
        "server_shutdown_s": round(shutdown_s, 2),
        "server_stopped_gracefully": graceful and shutdowns >= workers,
        "server_lifespans_closed": shutdowns,
        "server_exit_code": code,
        "server_leftovers_killed": leftovers,
        "server_log_errors": log_errors,
        # CPU seconds: the server and its workers over their whole life (model loads,
        # warm-up, run); the benchmark's own clients over the measured run
        "cpu_s": {"server": round(server_cpu, 1), "clients": round(clients_cpu, 1)},
        "server_log_tail": log_tail if (log_errors or total_errors or not graceful) else [],
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
    }


# -- preparation -----------------------------------------------------------------------


def _prepare(
    store: str | None, path: Path, users: int, seed: int, batch: int, say: Progress
) -> tuple[dict[str, str], int]:
    """The organization, ``users`` users in two teams with a key each, the seed memories.
    Returns user id → API key (the admin's too) and the memories held (reconcile may
    merge a few seeds); the store is closed again: the server opens it."""
    mem = open_bench_memory(store, path, None)
    try:
        d = mem.directory
        keys = {ADMIN: d.bootstrap(ORG, ADMIN, "load bench")[1]}
        admin = Principal(org_id=ORG, user_id=ADMIN, roles=frozenset({Role.ADMIN}))
        for team in TEAMS:
            d.put_team(admin, team, name=f"Team {team}")
        for i in range(users):
            user = f"u{i}"
            d.put_user(admin, user, name=f"User {i}", role="member")
            d.set_member(admin, TEAMS[i % len(TEAMS)], user, "member")
            keys[user] = d.create_key(admin, user, "load bench")[1]
        rng = random.Random(7)
        text = LoadText(rng, "seed")
        names = [u for u in keys if u != ADMIN]
        say(f"seeding {seed} memories")
        for start in range(0, seed, batch):
            items = []
            for _ in range(min(batch, seed - start)):
                pick = rng.random()
                if pick < 0.6:
                    scope = Scope.user(rng.choice(names))
                elif pick < 0.9:
                    scope = Scope.team(rng.choice(TEAMS))
                else:
                    scope = Scope.org(ORG)
                items.append({"content": text.memory(), "scope": scope})
            mem.remember_many(items, principal=admin)
        return keys, sum(s.total_memories for s in mem.stats(principal=admin))
    finally:
        mem.close()


# -- the server ------------------------------------------------------------------------


def _start_server(url: str, workers: int, port: int, home: Path, log: IO[bytes]) -> Any:
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "KENNING_DATABASE_URL": url, "KENNING_HOME": str(home)}
    cmd = [
        sys.executable,
        "-m",
        "kenning.cli",
        "serve",
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]
    # its own session: the server and its workers form one process group to kill if need be
    return subprocess.Popen(
        cmd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def _wait_ready(base: str, proc: Any, timeout: float, log_path: Path) -> str:
    """Poll ``/v1/ready`` until it answers 200; returns the store kind."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=base, timeout=5.0) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = "\n".join(_tail(log_path, 20))
                raise RuntimeError(f"kenning serve exited with {proc.returncode}:\n{tail}")
            try:
                resp = client.get("/v1/ready")
                if resp.status_code == 200:
                    return str(resp.json().get("store"))
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
    raise RuntimeError(f"kenning serve was not ready within {timeout:.0f} s")


def _stop_server(proc: Any) -> tuple[bool, int | None, list[str]]:
    """SIGTERM, wait up to 30 s, else kill. Returns (graceful?, exit code, the commands
    of processes of its group still alive afterwards, which are killed)."""
    graceful = True
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            graceful = False
    left = _sweep_group(proc.pid)
    if proc.poll() is None:
        proc.wait(10)
    return graceful, proc.returncode, left


def _group_members(pgid: int) -> dict[int, str]:
    """Live processes of process group ``pgid`` (Linux ``/proc``), pid → command."""
    found: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            fields = text[text.rindex(")") + 2 :].split()
            if fields[0] != "Z" and int(fields[2]) == pgid:
                cmd = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                found[int(stat.parent.name)] = cmd.decode(errors="replace").strip()[:200]
        except (OSError, ValueError, IndexError):
            continue
    return found


def _sweep_group(pgid: int, grace: float = 5.0) -> list[str]:
    """What is left of the server's process group (say, workers of a killed supervisor):
    given ``grace`` seconds to end, then killed. Returns their commands."""
    deadline = time.monotonic() + grace
    left = _group_members(pgid)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _group_members(pgid)
    if left:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return sorted(set(left.values()))


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _tail(path: Path, n: int) -> list[str]:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [line[:500] for line in lines[-n:]]


def _log_errors(path: Path) -> tuple[int, list[str]]:
    """Error lines in the server log (JSON lines with level ERROR, or tracebacks)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return 0, []
    bad = [ln for ln in lines if '"level": "ERROR"' in ln or ln.startswith("Traceback")]
    return len(bad), [ln[:500] for ln in (bad[-5:] or lines[-20:])]


# -- the clients -----------------------------------------------------------------------


async def _clients(
    base: str,
    roster: list[_Client],
    admin_key: str,
    warm: _Tally,
    tally: _Tally,
    write_ratio: float,
    warmup: float,
    duration: float,
    requests: int | None,
    workers: int,
    say: Progress,
) -> tuple[float, float, list[_Worker]]:
    """Warm-up, then the measured run, on the same connections (one per client).

    The workers load the embedding model and the entity extractor on first use,
    so in the warm-up every client first sends one remember and one recall on
    its connection (opened one after the other, so that they spread over the
    workers), then the mix goes on for ``warmup`` seconds. The run keeps the
    connections, so every worker it reaches is warm. Returns the run's wall
    seconds, the clients' CPU seconds in it, and the requests each worker served.
    """
    async with contextlib.AsyncExitStack() as stack:
        https = [
            await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=base,
                    headers={"Authorization": f"Bearer {c.key}"},
                    timeout=REQUEST_TIMEOUT_S,
                )
            )
            for c in roster
        ]
        await _drive(https, roster, warm, write_ratio, warmup, None, prime=True)
        say(f"running {len(roster)} clients")
        own_before = _cpu(resource.RUSAGE_SELF)
        elapsed = await _drive(https, roster, tally, write_ratio, duration, requests)
        clients_cpu = _cpu(resource.RUSAGE_SELF) - own_before
    return elapsed, clients_cpu, await _per_worker(base, admin_key, workers)


async def _drive(
    https: list[httpx.AsyncClient],
    roster: list[_Client],
    tally: _Tally,
    write_ratio: float,
    duration: float,
    requests: int | None,
    *,
    prime: bool = False,
) -> float:
    """Run every client until ``duration`` has passed (or ``requests`` were sent, in
    all); returns the wall seconds from the start to the last answer. With ``prime``
    client ``i`` starts, ``i`` x 50 ms in, with one remember and one recall."""
    left = [requests if requests is not None else -1]
    started = tally.started = time.perf_counter()
    stop_at = started + duration if requests is None else float("inf")
    # a hard bound in every mode: the run ends even if the server stalls
    bound = (duration if requests is None else 600.0) + REQUEST_TIMEOUT_S + 30.0
    finished = [started]

    async def one(i: int, http: httpx.AsyncClient, client: _Client) -> None:
        rng = random.Random(i)
        if prime:
            await asyncio.sleep(0.05 * i)
            for write in (True, False):
                await _one_op(http, client, rng, tally, write)
        while time.perf_counter() < stop_at and left[0] != 0:
            left[0] -= 1
            await _one_op(http, client, rng, tally, rng.random() < write_ratio)
            finished[0] = time.perf_counter()

    runs = (one(i, h, c) for i, (h, c) in enumerate(zip(https, roster, strict=True)))
    try:
        await asyncio.wait_for(asyncio.gather(*runs), timeout=bound)
    except TimeoutError:
        tally.error("run", "deadline", f"the run passed its {bound:.0f} s bound")
    return finished[0] - started


_COUNTER = re.compile(
    r'^kenning_http_requests_total\{method="(\w+)",route="([^"]*)",status="(\d+)"\} (\S+)$'
)
_EMBED = re.compile(r"^kenning_embed_(runs|texts)_total (\S+)$")


@dataclass(frozen=True)
class _Worker:
    """What one worker's ``/metrics`` said: POST requests per route, and its
    embedding model's runs and the texts they embedded."""

    requests: dict[str, int]
    embed_runs: int = 0
    embed_texts: int = 0


async def _per_worker(base: str, admin_key: str, workers: int) -> list[_Worker]:
    """Each worker's counts (warm-up included), busiest first.

    Every worker has its own metrics; ``/metrics`` is scraped on fresh
    connections until each worker has answered (or 10 tries per worker), and
    workers are told apart by their counts, which no longer change.
    """
    seen: dict[tuple[frozenset[tuple[str, int]], int, int], _Worker] = {}
    headers = {"Authorization": f"Bearer {admin_key}", "Connection": "close"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30.0) as http:
        for _ in range(10 * workers):
            try:
                resp = await http.get("/metrics")
            except httpx.HTTPError:
                continue
            counts: Counter[str] = Counter()
            embed = {"runs": 0, "texts": 0}
            for line in resp.text.splitlines():
                m = _COUNTER.match(line)
                if m and m.group(1) == "POST":
                    counts[m.group(2)] += int(float(m.group(4)))
                m = _EMBED.match(line)
                if m:
                    embed[m.group(1)] = int(float(m.group(2)))
            key = (frozenset(counts.items()), embed["runs"], embed["texts"])
            seen.setdefault(key, _Worker(dict(counts), embed["runs"], embed["texts"]))
            if len(seen) >= workers:
                break
    return sorted(seen.values(), key=lambda w: -sum(w.requests.values()))


def _embedding(per_worker: list[_Worker]) -> dict[str, float]:
    runs = sum(w.embed_runs for w in per_worker)
    texts = sum(w.embed_texts for w in per_worker)
    return {"runs": runs, "texts": texts, "texts_per_run": round(texts / runs, 2) if runs else 0.0}


async def _one_op(
    http: httpx.AsyncClient,
    client: _Client,
    rng: random.Random,
    tally: _Tally,
    write: bool,
) -> None:
    op = "remember" if write else "recall"
    if write:
        body: dict[str, Any] = {"content": client.text.memory()}
        if rng.random() < 0.3:
            body["scope"] = f"team:{client.team}"
        path, want = "/v1/memories", 201
    else:
        body, path, want = {"query": client.text.query(), "k": 10}, "/v1/recall", 200
    t = time.perf_counter()
    try:
        resp = await http.post(path, json=body)
    except httpx.HTTPError as exc:
        tally.requests += 1
        tally.error(op, type(exc).__name__, str(exc))
        return
    ms = (time.perf_counter() - t) * 1000
    tally.requests += 1
    if resp.status_code != want:
        tally.error(op, str(resp.status_code), resp.text)
        return
    tally.latencies[op].append(ms)
    if ms > tally.slowest.get(op, (0.0, 0.0))[0]:
        tally.slowest[op] = (ms, t - tally.started)
    if write:
        try:
            out = resp.json()
            tally.acknowledged.append(str(out["memory"]["id"]))
            tally.actions[str(out.get("action"))] += 1
        except (ValueError, KeyError, TypeError) as exc:
            tally.error(op, "bad body", f"{exc}: {resp.text}")


# -- results ---------------------------------------------------------------------------


def _lost_writes(url: str, ids: list[str]) -> tuple[int, int]:
    """How many acknowledged ids the store no longer has, and how many memories it holds
    (looked up as an admin of the organization, with the server stopped)."""
    mem = Memory(url)
    try:
        admin = Principal(org_id=ORG, user_id=ADMIN, roles=frozenset({Role.ADMIN}))
        lost = 0
        for memory_id in ids:
            try:
                mem.get(memory_id, principal=admin)
            except NotFound:
                lost += 1
        held = sum(s.total_memories for s in mem.stats(principal=admin))
        return lost, held
    finally:
        mem.close()


def _summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"count": 0, "p50_ms": None, "p95_ms": None, "p99_ms": None}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)

    return {
        "count": len(ordered),
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": pick(0.95),
        "p99_ms": pick(0.99),
        "max_ms": round(ordered[-1], 1),
    }
