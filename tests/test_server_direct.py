"""``POST /v1/recall`` is served by a direct route in front of FastAPI's
(:mod:`kenning.server.direct`): ordinary requests call the endpoint without
FastAPI's per-request machinery, everything else reaches the FastAPI route
untouched. Both must answer alike, and the route must stay what the API
documents: metrics, request ids, errors, OpenAPI."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel
from serverkit import Api, bootstrap_org

from kenning import Memory
from kenning.server.direct import DirectRoute

ORG = "direct"
# a JSON media type FastAPI parses but the direct route leaves to it
OTHER_JSON = "application/vnd.kenning+json"


@pytest.fixture(scope="module")
def env(open_memory: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    mem: Memory = open_memory(tmp_path_factory.mktemp("direct"))
    keys = bootstrap_org(mem, ORG)
    api = Api(mem)
    for text in ("Alice plays the cello", "Alice lives in Porto", "Bruno sails on weekends"):
        r = api.call("POST", "/v1/memories", key=keys["alice"], json={"content": text})
        assert r.status_code == 201, r.text
    route = api.app.router.routes[0]
    assert isinstance(route, DirectRoute)
    calls: list[str] = []
    endpoint = route.endpoint

    async def counted(body: Any, caller: Any, mem: Memory, request: Any) -> Any:
        calls.append(body.query)
        return await endpoint(body, caller, mem, request)

    route.endpoint = counted
    try:
        yield {"api": api, "keys": keys, "calls": calls}
    finally:
        route.endpoint = endpoint
        api.close()
        mem.close()


def _recall(
    env: dict[str, Any], body: Any, content_type: str = "application/json", **kw: Any
) -> Any:
    import json

    headers = {"Content-Type": content_type, **kw.pop("headers", {})}
    key = kw.pop("key", env["keys"]["alice"])
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return env["api"].call("POST", "/v1/recall", key=key, headers=headers, content=data)


def _hits(response: Any) -> list[tuple[str, float]]:
    return [(h["memory"]["id"], h["score"]) for h in response.json()["hits"]]


def test_an_ordinary_recall_takes_the_direct_route_and_answers_as_fastapi_does(
    env: dict[str, Any],
) -> None:
    env["calls"].clear()
    body = {"query": "Where does Alice live?", "k": 2, "explain": True}
    direct = _recall(env, body)
    assert env["calls"] == ["Where does Alice live?"]
    routed = _recall(env, body, OTHER_JSON)
    assert env["calls"] == ["Where does Alice live?"]  # the FastAPI route answered
    assert direct.status_code == routed.status_code == 200
    assert _hits(direct) == _hits(routed) and len(_hits(direct)) == 2
    assert "Porto" in direct.json()["hits"][0]["memory"]["content"]
    a, b = direct.json()["hits"][0], routed.json()["hits"][0]
    assert a["memory"] == b["memory"] and a["explain"].keys() == b["explain"].keys()
    assert direct.headers["content-type"] == routed.headers["content-type"]
    assert direct.headers["x-request-id"] and routed.headers["x-request-id"]


def test_a_body_the_model_refuses_gets_the_fastapi_routes_error(env: dict[str, Any]) -> None:
    env["calls"].clear()
    for body, field in (({"query": "x", "k": 0}, "k"), ({"k": 3}, "query"), ([1, 2], None)):
        r = _recall(env, body)
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert error["code"] == "invalid_request"
        if field is not None:
            assert error["field"] == field, error
    unknown = _recall(env, {"query": "x", "colour": "red"})
    assert unknown.status_code == 422 and "colour" in unknown.text
    assert env["calls"] == []


def test_malformed_json_is_refused_before_any_route(env: dict[str, Any]) -> None:
    r = _recall(env, b'{"query": "x",')
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_input"
    assert "line 1" in r.json()["error"]["message"]


def test_credentials_are_checked_on_the_direct_route(env: dict[str, Any]) -> None:
    env["calls"].clear()
    for key in (None, "kn_000000000000_" + "x" * 43):
        r = _recall(env, {"query": "Alice"}, key=key)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
    assert env["calls"] == []


def test_the_persona_header_and_scopes_reach_the_engine(env: dict[str, Any]) -> None:
    r = _recall(env, {"query": "Alice", "scopes": ["team:nowhere"]})
    assert r.status_code == 403, r.text
    r = _recall(env, {"query": "Alice"}, headers={"X-Kenning-Persona": "no-such-persona"})
    assert r.status_code in (400, 403, 404), r.text


def test_other_methods_and_paths_are_not_taken(env: dict[str, Any]) -> None:
    api, key = env["api"], env["keys"]["alice"]
    assert api.call("GET", "/v1/recall", key=key).status_code == 405
    assert api.call("POST", "/v1/recall/", key=key, json={"query": "x"}).status_code in (
        307,
        404,
    )


def test_metrics_and_url_names_are_the_documented_routes(env: dict[str, Any]) -> None:
    api, keys = env["api"], env["keys"]
    assert _recall(env, {"query": "cello"}).status_code == 200
    text = api.call("GET", "/metrics", key=keys["root"]).text
    assert 'kenning_http_requests_total{method="POST",route="memory.recall",status="200"}' in text
    assert 'kenning_recall_stage_seconds_bucket{le="0.005",stage="total"}' in text
    assert api.app.url_path_for("memory.recall") == "/v1/recall"
    doc = api.call("GET", "/openapi.json").json()
    op = doc["paths"]["/v1/recall"]["post"]
    ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/RecallIn") and "401" in op["responses"]


def test_a_refusal_names_the_field_even_when_it_is_called_query(env: dict[str, Any]) -> None:
    """The location's first part says where in the request (body, query string, path);
    only that part is dropped from the field's name."""
    api, key = env["api"], env["keys"]["alice"]
    r = _recall(env, {"query": ""}, OTHER_JSON)
    assert r.json()["error"]["field"] == "query"
    assert r.json()["error"]["message"].startswith("query: ")
    listed = api.call("GET", "/v1/memories", key=key, params={"limit": "0"})
    assert listed.status_code == 422 and listed.json()["error"]["field"] == "limit"


def test_the_route_matches_below_a_proxy_prefix() -> None:
    from starlette.routing import Match

    async def endpoint(*_: Any) -> Any:
        raise AssertionError("not called")

    route = DirectRoute("/v1/recall", "memory.recall", endpoint, BaseModel, lambda *_: None)
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/v1/recall"}
    assert route.matches(scope)[0] is Match.FULL
    assert route.matches({**scope, "root_path": "/api", "path": "/api/v1/recall"})[0] is Match.FULL
    assert route.matches({**scope, "path": "/v1/recall/x"})[0] is Match.NONE
    assert route.matches({**scope, "method": "PUT"})[0] is Match.NONE
    assert route.matches({**scope, "type": "websocket"})[0] is Match.NONE
