"""Schemathesis over the whole OpenAPI document of the REST server: every
operation, with generated (valid and invalid) data, as the admin ``root`` and
as the member ``alice``. No 5xx, every status documented, every body matching
its declared schema and content type, every declared header present.

* The OpenAPI document does not depend on the engine, so it is read from an app
  that is never started: pytest gets one test per operation at collection time.
  Requests go in-process (ASGI) to the app of the pass's ``server`` fixture:
  a fresh Memory on a temporary SQLite database with the acme organization
  (each pass its own, so one pass's generated admin changes cannot leak into
  the other). Schemathesis runs that app's lifespan (``app.state.memory``, the
  MCP mount) around each test and ends it in the test's teardown.
* Generated path and query ids are random, so most would only ever see a 404;
  the hooks below let about half the cases use ids that exist (seeded memories,
  a session, teams, users other than the caller, spare keys, a persona).
* Bounded and deterministic: a fixed seed, derandomized Hypothesis, a few
  examples per operation; the admin pass adds schemathesis' coverage phase
  (boundary and invalid values per field), the member pass only fuzzes.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import schemathesis
from conftest import T0
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from serverkit import admin_of, bootstrap_org

from kenning import FixedClock, InvalidInput, Memory
from kenning.embeddings import Embedder
from kenning.server import create_app

ORG = "acme"

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]

#: Fuzzed cases per operation (the coverage phase adds its own boundary cases).
MAX_EXAMPLES = 8

#: Existing values for path and query parameters, by parameter name (set by the
#: running pass's ``server`` fixture; the hooks read it when they draw).
KNOWN: dict[str, list[str]] = {}

_DOC = create_app().openapi()


def _schema(phases: list[str], modes: str) -> Any:
    """The document as a schemathesis schema with the test's generation settings
    (``modes``: "all", or "positive" for valid data only)."""
    config = schemathesis.Config.from_dict(
        {
            "seed": 20250301,
            "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "mode": modes},
            "phases": {
                p: {"enabled": p in phases} for p in ("examples", "coverage", "fuzzing", "stateful")
            },
        }
    )
    loaded = schemathesis.openapi.from_dict(_DOC, config=config)
    loaded.hook(flatmap_path_parameters)
    loaded.hook(flatmap_query)
    return loaded


def _with_known(values: dict[str, Any] | None) -> Any:
    """The generated values, or (as often) the same with known ids swapped in."""
    if not values:
        return st.just(values)
    swaps = {name: st.sampled_from(KNOWN[name]) for name in values if KNOWN.get(name)}
    if not swaps:
        return st.just(values)
    known = st.fixed_dictionaries({**{k: st.just(v) for k, v in values.items()}, **swaps})
    return st.one_of(st.just(values), known)


def flatmap_path_parameters(context: schemathesis.HookContext, path_parameters: Any) -> Any:
    """Path ids: generated, or ones that exist."""
    return _with_known(path_parameters)


def flatmap_query(context: schemathesis.HookContext, query: Any) -> Any:
    """Query ids (``memory_id``, ``a``, ``b``, ``user_id``): generated, or ones that exist."""
    return _with_known(query)


def _serve(embedder: Embedder, where: Any, caller: str) -> Iterator[dict[str, Any]]:
    """A server for one pass: the acme organization, seeded memories, spare keys."""
    mem = Memory(where / "kenning.db", embedder=embedder, clock=FixedClock(T0))
    keys = bootstrap_org(mem, ORG)
    admin = admin_of(ORG)
    alice = mem.directory.principal(ORG, "alice")
    seeded = mem.write(
        [
            {
                "content": f"Chen teaches river fishing, note {i}",
                "scope": scope,
                "session_id": "chat-1",
                "status": status,
                "tags": ["fishing"],
            }
            for i, (scope, status) in enumerate(
                [
                    ("user:root", "active"),
                    ("user:alice", "active"),
                    ("team:eng", "active"),
                    (f"org:{ORG}", "active"),
                    (f"org:{ORG}", "pending_review"),
                    ("team:eng", "pending_review"),
                    ("user:root", "active"),
                    ("user:alice", "active"),
                ]
                * 2
            )
        ],
        principal=admin,
    )
    mem.write(
        [{"content": "Alice prefers tea over coffee", "scope": "user:alice"}], principal=alice
    )
    spare = [mem.directory.create_key(admin, u, "spare")[0].id for u in ("alice", "lena", "bob")]
    ids = [r.record.id for r in seeded]
    KNOWN.clear()
    KNOWN.update(
        {
            "memory_id": ids,
            "a": ids,
            "b": ids,
            "session_id": ["chat-1"],
            "name": ["Chen"],
            "team_id": ["eng", "ops"],
            "persona_id": ["helper"],
            "key_id": spare,
            # never the caller itself: a generated change to its own role or status would
            # turn the rest of the pass into 401s and 403s
            "user_id": [u for u in ("alice", "lena", "bob") if u != caller],
        }
    )
    try:
        yield {"app": create_app(memory=mem), "key": keys[caller], "mem": mem}
    finally:
        KNOWN.clear()
        mem.close()


# The one-value ``params`` name the caller in each test id; they also give every
# operation its own pytest node id (with pytest 9.2, schemathesis 4.32.5 names an
# unparametrized operation test by the function alone).


@pytest.fixture(scope="module", params=["root"])
def admin_server(
    request: pytest.FixtureRequest, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """The admin pass's server."""
    caller = str(request.param)
    yield from _serve(embedder, tmp_path_factory.mktemp(f"schemathesis-{caller}"), caller)


@pytest.fixture(scope="module", params=["alice"])
def member_server(
    request: pytest.FixtureRequest, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """The member pass's server."""
    caller = str(request.param)
    yield from _serve(embedder, tmp_path_factory.mktemp(f"schemathesis-{caller}"), caller)


def _call(case: schemathesis.Case, server: dict[str, Any]) -> None:
    headers = {"Authorization": f"Bearer {server['key']}"}
    case.call_and_validate(app=server["app"], headers=headers, checks=CHECKS)


_SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)

admin_schema = _schema(["examples", "coverage", "fuzzing"], "all")
member_schema = _schema(["examples", "fuzzing"], "positive")


@admin_schema.parametrize()
@_SETTINGS
def test_every_operation_as_the_admin(
    case: schemathesis.Case, admin_server: dict[str, Any]
) -> None:
    _call(case, admin_server)


@member_schema.parametrize()
@_SETTINGS
def test_every_operation_as_a_member(
    case: schemathesis.Case, member_server: dict[str, Any]
) -> None:
    _call(case, member_server)


# -- the defects, pinned ----------------------------------------------------------------

#: Inputs that crashed the server before: the first found by the admin pass, the others
#: on the same fields by hand (datetimes at the ends of the calendar, integers beyond
#: the store's columns; ``capacity`` only overflowed PostgreSQL's integer column).
#: (label, query or body, status, error field); 422 where the document now has the bound.
FOUND = [
    ("GET /v1/admin/audit", {"query": {"before_seq": 2**63}}, 422, "before_seq"),
    ("GET /v1/admin/audit", {"query": {"since": "0001-01-01T00:00:00"}}, 200, None),
    (
        "POST /v1/memories",
        {"body": {"content": "late", "event_at": "9999-12-31T23:00:00-05:00"}},
        400,
        "event_at",
    ),
    (
        "GET /v1/memories",
        {"query": {"created_after": "0001-01-01T00:00:00+05:00"}},
        400,
        "created_after",
    ),
    (
        "POST /v1/recall",
        {"body": {"query": "x", "filters": {"metadata": {"n": 2**70}}}},
        400,
        "filters",
    ),
    ("PUT /v1/admin/policies", {"body": {"capacity": 2**31}}, 422, "capacity"),
]


@pytest.mark.parametrize(
    ("label", "data", "status", "field"), FOUND, ids=[f"{f[0]} {f[3]}" for f in FOUND]
)
def test_inputs_that_crashed_the_server_are_precise_errors(
    admin_server: dict[str, Any],
    label: str,
    data: dict[str, Any],
    status: int,
    field: str | None,
) -> None:
    method, path = label.split(" ", 1)
    case = admin_schema[path][method].Case(**data)
    headers = {"Authorization": f"Bearer {admin_server['key']}"}
    r = case.call_and_validate(app=admin_server["app"], headers=headers, checks=CHECKS)
    assert r.status_code == status, r.text
    if field is not None:
        assert r.json()["error"]["field"] == field


def test_the_engine_rejects_what_the_document_bounds(admin_server: dict[str, Any]) -> None:
    """The other doors (Python, MCP) get the same precise errors as the routes."""
    mem: Memory = admin_server["mem"]
    admin = admin_of(ORG)
    with pytest.raises(InvalidInput, match="before_seq must be at most"):
        mem.directory.audit(admin, before_seq=2**63)
    with pytest.raises(InvalidInput, match="capacity must be at most"):
        mem.set_policy(capacity=2**31, principal=admin)
    with pytest.raises(InvalidInput, match="since is out of range"):
        mem.directory.audit(admin, since=datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))))
