"""Hypothesis against the REST bodies of the main write and read routes, over the
real app (in-process ASGI, a real SQLite store and the real model): generated
JSON of the right shape with wrong values, any JSON at all, NaN and Infinity
literals, broken UTF-8 and damaged bytes. No answer is a 5xx, and every 4xx
carries the one error body (``code``, ``message``, ``request_id``).

``tests/test_schemathesis.py`` covers every operation from the OpenAPI
document with schema-shaped data; this file covers the bytes a document does
not describe. Bounded and deterministic (derandomized, a fixed number of
examples per route).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serverkit import Api, bootstrap_org

from kenning import Memory

pytestmark = pytest.mark.stores("sqlite")

ACME = "acme"
EXAMPLES = 40

# -- values ---------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
    | st.sampled_from(["", " ", "user:alice", "team:eng", "org:acme", "all", "\x00", "\ud800"])
)
anything = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Nine times in ten a ``valid`` value (so requests reach the engine), else anything."""
    return st.integers(min_value=0, max_value=9).flatmap(lambda i: anything if i == 0 else valid)


words = st.text(st.characters(codec="utf-8"), min_size=1, max_size=60)
texts = mostly(words)
numbers = mostly(st.integers(min_value=-10, max_value=2**64) | st.floats(allow_nan=True))
scopes = mostly(st.sampled_from(["user:alice", "team:eng", "org:acme", "persona:helper", "x:y"]))
moments = mostly(st.sampled_from(["2024-05-01T10:00:00Z", "2024-05-01", "2024-06-01T00:00+02:00"]))

MEMORY_FIELDS = {
    "scope": scopes,
    "key": texts,
    "memory_type": mostly(st.sampled_from(["episodic", "semantic", "procedural", "working"])),
    "importance": mostly(st.integers(min_value=1, max_value=5)),
    "confidence": mostly(st.floats(min_value=0, max_value=1)),
    "tags": mostly(st.lists(words, max_size=5)),
    "metadata": mostly(st.dictionaries(st.text(max_size=8), anything, max_size=3)),
    "event_at": moments,
    "valid_from": moments,
    "valid_to": moments,
    "status": mostly(st.sampled_from(["active", "pending_review"])),
}
RECALL_FIELDS = {
    "k": mostly(st.integers(min_value=0, max_value=300)),
    "scopes": mostly(st.sampled_from(["all", ["user:alice"], ["team:eng", "org:acme"], ["x:y"]])),
    "layers": mostly(st.lists(st.sampled_from(["personal", "shared", "organization", "x"]))),
    "filters": mostly(
        st.dictionaries(
            st.sampled_from(["tags", "memory_type", "metadata", "since", "until", "x"]),
            anything,
            max_size=3,
        )
    ),
    "min_confidence": numbers,
    "explain": mostly(st.booleans()),
    "min_score": numbers,
}


def _objects(
    required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[Any]:
    """Objects with the ``required`` fields and some ``optional`` ones; now and then
    one lacking a field, with an unknown one, or any JSON at all."""
    shaped = st.fixed_dictionaries(required, optional=optional)
    loose = st.fixed_dictionaries({}, optional={**required, **optional, "unknown": anything})
    return st.integers(min_value=0, max_value=9).flatmap(
        lambda i: loose if i == 0 else anything if i == 1 else shaped
    )


def _encoded(values: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """JSON text of ``values`` (NaN and Infinity written as Python does), sometimes
    damaged: a byte changed, cut short, or not UTF-8."""
    plain = values.map(lambda v: json.dumps(v, allow_nan=True).encode("utf-8", "surrogatepass"))

    @st.composite
    def damaged(draw: st.DrawFn) -> bytes:
        raw = draw(plain)
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        how = draw(st.sampled_from(["replace", "cut", "insert"]))
        junk = draw(st.binary(min_size=1, max_size=3))
        if how == "cut":
            return raw[:at]
        if how == "insert":
            return raw[:at] + junk + raw[at:]
        return raw[:at] + junk + raw[at + 1 :]

    return st.one_of(plain, plain, plain, damaged(), st.binary(max_size=80))


MEMORY = _objects({"content": texts}, MEMORY_FIELDS)
UPSERT_FIELDS = {k: v for k, v in MEMORY_FIELDS.items() if k not in ("key", "status")}
ROUTES: dict[str, tuple[str, str, st.SearchStrategy[bytes]]] = {
    "remember": ("POST", "/v1/memories", _encoded(MEMORY)),
    "batch": (
        "POST",
        "/v1/memories/batch",
        _encoded(
            _objects(
                {"items": mostly(st.lists(MEMORY, min_size=1, max_size=3))},
                {"reconcile": mostly(st.booleans())},
            )
        ),
    ),
    "upsert": (
        "PUT",
        "/v1/memories/by-key",
        _encoded(_objects({"key": texts, "content": texts}, UPSERT_FIELDS)),
    ),
    "update": (
        "PATCH",
        "/v1/memories/{id}",
        _encoded(_objects({}, {"content": texts, "key": texts, **UPSERT_FIELDS})),
    ),
    "recall": ("POST", "/v1/recall", _encoded(_objects({"query": texts}, RECALL_FIELDS))),
    "query": ("POST", "/v1/memories/query", _encoded(_objects({}, RECALL_FIELDS))),
    "hint": (
        "POST",
        "/v1/hint",
        _encoded(
            _objects(
                {},
                {"query": texts, "persona": mostly(st.just("helper")), "max_chars": numbers},
            )
        ),
    ),
    "ingest": (
        "POST",
        "/v1/sessions/s1/messages",
        _encoded(
            _objects(
                {
                    "messages": mostly(
                        st.lists(
                            words | st.fixed_dictionaries({"role": texts, "content": texts}),
                            min_size=1,
                            max_size=3,
                        )
                    )
                },
                {"scope": scopes, "extract": mostly(st.booleans())},
            )
        ),
    ),
}


@pytest.fixture(scope="module")
def server(open_memory: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    mem: Memory = open_memory(tmp_path_factory.mktemp("fuzz"))
    keys = bootstrap_org(mem, ACME)
    api = Api(mem)
    made = api.call("POST", "/v1/memories", key=keys["alice"], json={"content": "Alice keeps bees"})
    assert made.status_code == 201, made.text
    try:
        yield {"api": api, "key": keys["alice"], "id": made.json()["memory"]["id"]}
    finally:
        api.close()
        mem.close()


def _check(response: Any) -> None:
    assert response.status_code < 500, (response.status_code, response.text)
    if response.status_code < 400:
        return
    error = response.json()["error"]
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["message"], str) and error["message"]
    assert error["request_id"] == response.headers["x-request-id"]


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_no_body_makes_the_server_fail(server: dict[str, Any], route: str) -> None:
    method, path, bodies = ROUTES[route]
    path = path.replace("{id}", server["id"])
    headers = {"Content-Type": "application/json"}

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(body=bodies)
    def send(body: bytes) -> None:
        _check(server["api"].call(method, path, key=server["key"], content=body, headers=headers))

    send()
