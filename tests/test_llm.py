"""The OpenAI-compatible chat client and the LLM extractor, against a real local server.

A scripted HTTP server on 127.0.0.1 speaks the chat-completions protocol; no
network beyond loopback.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kenning.config import Settings
from kenning.errors import ConfigError, InvalidInput, LLMError
from kenning.graph.extract import RuleExtractor, create_extractor, extractor_from_settings
from kenning.graph.llm_extract import LLMExtractor
from kenning.graph.model import EntityMention, Relation
from kenning.llm import (
    ChatModel,
    Completion,
    Message,
    OpenAICompatChat,
    available_chat_models,
    chat_model_from_settings,
    create_chat_model,
    register_chat_model,
)

# (status, body, headers, delay_s); body str is sent as the assistant's content
Step = tuple[int, Any, dict[str, str], float]


def ok(content: str | dict[str, Any], usage: tuple[int, int] = (100, 20)) -> Step:
    text = content if isinstance(content, str) else json.dumps(content)
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "scripted-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }
    return 200, body, {}, 0.0


class ChatServer:
    """A real HTTP server answering chat-completion POSTs from a script."""

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.times.append(time.monotonic())
                outer.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                status, payload, headers, delay = outer.script.pop(0) if outer.script else ok("{}")
                if delay:
                    time.sleep(delay)
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for key, value in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    srv = ChatServer()
    yield srv
    srv.close()


@pytest.fixture
def make_chat(server: ChatServer) -> Iterator[Callable[..., OpenAICompatChat]]:
    made: list[OpenAICompatChat] = []

    def make(**kw: Any) -> OpenAICompatChat:
        options: dict[str, Any] = {"backoff_s": 0.001, "timeout_s": 5.0, **kw}
        chat = OpenAICompatChat(server.base_url, "test-model", **options)
        made.append(chat)
        return chat

    yield make
    for chat in made:
        chat.close()


# --- the chat client ---------------------------------------------------------------------


def test_success_with_usage_and_cost(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    chat = make_chat(api_key="sk-test", price_prompt_per_1k=0.5, price_completion_per_1k=1.5)
    server.script = [ok("hello there", usage=(1200, 300))]
    done = chat.complete([Message("system", "be brief"), Message("user", "hi")], max_tokens=50)
    assert (done.text, done.model, done.prompt_tokens, done.completion_tokens) == (
        "hello there",
        "scripted-1",
        1200,
        300,
    )
    assert done.cost_usd == pytest.approx(1.2 * 0.5 + 0.3 * 1.5)
    assert done.total_tokens == 1500 and done.latency_s > 0
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    assert req["body"]["max_tokens"] == 50 and "response_format" not in req["body"]
    server.script = [ok('{"a": 1}', usage=(1000, 0))]
    value, _ = chat.complete_json([Message("user", "json please")])
    assert value == {"a": 1}
    assert server.requests[1]["body"]["response_format"] == {"type": "json_object"}
    usage = chat.usage
    assert (usage.calls, usage.failures, usage.retries) == (2, 0, 0)
    assert (usage.prompt_tokens, usage.completion_tokens) == (2200, 300)
    assert usage.cost_usd == pytest.approx(1.05 + 0.5)


def test_500_then_success_is_retried(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    chat = make_chat(max_retries=2)
    server.script = [(500, {"error": {"message": "boom"}}, {}, 0.0), ok("fine")]
    assert chat.ask("hi") == "fine"
    assert len(server.requests) == 2
    assert (chat.usage.calls, chat.usage.retries, chat.usage.failures) == (1, 1, 0)


def test_429_honours_retry_after(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    chat = make_chat(max_retries=1, backoff_s=0.0, max_backoff_s=5.0)
    server.script = [(429, {"error": "slow down"}, {"Retry-After": "0.4"}, 0.0), ok("ok")]
    assert chat.ask("hi") == "ok"
    assert server.times[1] - server.times[0] >= 0.35
    # Retry-After is capped by max_backoff_s
    capped = make_chat(max_retries=1, backoff_s=0.0, max_backoff_s=0.05)
    server.script = [(429, {}, {"Retry-After": "30"}, 0.0), ok("ok")]
    started = time.monotonic()
    assert capped.ask("hi") == "ok"
    assert time.monotonic() - started < 2


def test_timeout_fails_after_bounded_retries(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    chat = make_chat(timeout_s=0.2, max_retries=1)
    server.script = [ok("late", usage=(1, 1))[:3] + (1.0,)] * 2
    with pytest.raises(LLMError, match=r"after 2 attempt\(s\).*Timeout"):
        chat.ask("hi")
    assert len(server.requests) == 2
    assert (chat.usage.calls, chat.usage.failures, chat.usage.retries) == (1, 1, 1)


def test_4xx_and_malformed_responses_fail_without_retry(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    chat = make_chat(max_retries=3)
    server.script = [(401, {"error": {"message": "bad key"}}, {}, 0.0)]
    with pytest.raises(LLMError, match="HTTP 401.*bad key"):
        chat.ask("hi")
    server.script = [(200, b"not json", {}, 0.0)]
    with pytest.raises(LLMError, match="not valid JSON"):
        chat.ask("hi")
    server.script = [(200, {"choices": []}, {}, 0.0)]
    with pytest.raises(LLMError, match="no 'choices'"):
        chat.ask("hi")
    server.script = [ok("this is not json")]
    with pytest.raises(LLMError, match="not valid JSON"):
        chat.complete_json([Message("user", "x")])
    assert len(server.requests) == 4  # none of these were retried


def test_json_in_code_fence_is_accepted(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    server.script = [ok('```json\n{"ok": true}\n```')]
    assert make_chat().complete_json([Message("user", "x")])[0] == {"ok": True}


def test_client_config_errors_and_registry(server: ChatServer) -> None:
    with pytest.raises(ConfigError):
        OpenAICompatChat("ftp://x", "m")
    with pytest.raises(ConfigError):
        OpenAICompatChat(server.base_url, "")
    with pytest.raises(ConfigError):
        OpenAICompatChat(server.base_url, "m", max_retries=-1)
    with pytest.raises(InvalidInput):
        OpenAICompatChat(server.base_url, "m").complete([])
    assert "openai" in available_chat_models()
    chat = create_chat_model("openai", base_url=server.base_url, model="m", max_retries="4")
    assert isinstance(chat, OpenAICompatChat) and chat.model_id == "openai:m"
    with pytest.raises(ConfigError, match="unknown chat model"):
        create_chat_model("nope")


def test_chat_model_from_settings(server: ChatServer) -> None:
    assert chat_model_from_settings(Settings()) is None
    with pytest.raises(ConfigError, match="KENNING_LLM_BASE_URL"):
        chat_model_from_settings(Settings(llm="openai"))
    settings = Settings(
        llm="openai",
        llm_base_url=server.base_url,
        llm_model="m",
        llm_api_key="sk-secret",
        llm_price_prompt_per_1k=2.0,
    )
    assert "sk-secret" not in repr(settings)
    chat = chat_model_from_settings(settings)
    assert isinstance(chat, OpenAICompatChat)
    server.script = [ok("hi", usage=(500, 0))]
    assert chat.complete([Message("user", "x")]).cost_usd == pytest.approx(1.0)
    assert server.requests[0]["auth"] == "Bearer sk-secret"
    chat.close()
    ex = extractor_from_settings(settings.model_copy(update={"graph_extractor": "llm"}))
    assert isinstance(ex, LLMExtractor)


# --- the LLM extractor -------------------------------------------------------------------

TEXTS = [
    "Caroline: I joined the LGBTQ support group in Boston.",
    "Melanie: Because of that, Caroline started volunteering at Fenway Health.",
]

_E0 = [{"name": "Boston", "type": "GPE"}, {"name": "LGBTQ support group", "type": "OTHER"}]
_E1 = [
    {"name": "Fenway Health", "type": "ORG"},
    {"name": "Caroline", "type": "PERSON"},
    {"name": "Atlantis", "type": "GPE"},  # not in the text: dropped
]
GOOD_ANSWER = {
    "memories": [{"index": 0, "entities": _E0}, {"index": 1, "entities": _E1}],
    "relations": [{"source": 0, "target": 1, "type": "causes", "confidence": 0.8}],
}


def test_llm_extractor_success_one_call_for_both(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    ex = LLMExtractor(make_chat(), fallback=RuleExtractor())
    server.script = [ok(GOOD_ANSWER)]
    mentions = ex.extract_batch(TEXTS)
    assert [[(m.norm, m.entity_type) for m in row] for row in mentions] == [
        [("caroline", "PERSON"), ("boston", "GPE"), ("lgbtq support group", None)],
        [("melanie", "PERSON"), ("fenway health", "ORG"), ("caroline", "PERSON")],
    ]  # speakers added; "Atlantis" is not in the text and is dropped
    assert ex.relations_batch(TEXTS) == [(0, 1, Relation.CAUSES, 0.8)]
    assert len(server.requests) == 1 and (ex.calls, ex.fallbacks) == (1, 0)
    sent = server.requests[0]["body"]
    assert sent["response_format"] == {"type": "json_object"}
    assert json.loads(sent["messages"][1]["content"].split("\n", 1)[1]) == [
        {"index": 0, "text": TEXTS[0]},
        {"index": 1, "text": TEXTS[1]},
    ]


def test_llm_extractor_chunks_and_offsets_relations(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    ex = LLMExtractor(make_chat(), fallback="rules", max_batch=2)
    texts = ["Oslo is cold.", "Bergen is wet.", "Paris is far.", "Rome is old."]
    second = {
        "memories": [{"index": 1, "entities": [{"name": "Rome", "type": "GPE"}]}],
        "relations": [{"source": 0, "target": 1, "type": "contrasts"}],
    }
    server.script = [ok({"memories": [], "relations": []}), ok(second)]
    result = ex.analyse_batch(texts)
    assert [[m.norm for m in row] for row in result.mentions] == [[], [], [], ["rome"]]
    assert result.relations == [(2, 3, Relation.CONTRASTS, 1.0)]
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    "step",
    [
        ok("this is not JSON {"),
        ok({"entities": ["Boston"]}),  # wrong schema: no "memories"
        ok({"memories": [{"index": 0, "entities": [{"name": "Boston", "type": "CITY"}]}]}),
        ok({"memories": [{"index": "0", "entities": []}]}),  # strict: index must be an int
        ok({"memories": [{"index": 7, "entities": []}]}),  # index out of range
        ok({"memories": [], "relations": [{"source": 0, "target": 0, "type": "causes"}]}),
        ok({"memories": [], "relations": [{"source": 0, "target": 1, "type": "likes"}]}),
        (500, {"error": "down"}, {}, 0.0),
        (400, {"error": "bad request"}, {}, 0.0),
    ],
)
def test_llm_extractor_falls_back_to_spacy(
    step: Step,
    server: ChatServer,
    make_chat: Callable[..., OpenAICompatChat],
    caplog: pytest.LogCaptureFixture,
) -> None:
    ex = create_extractor("llm", chat=make_chat(max_retries=0))
    assert isinstance(ex, LLMExtractor)
    server.script = [step]
    with caplog.at_level(logging.WARNING, logger="kenning.graph.llm"):
        mentions = ex.extract_batch(TEXTS)
    assert [[(m.norm, m.entity_type) for m in row] for row in mentions] == [
        [("caroline", "PERSON"), ("boston", "GPE"), ("lgbtq support group", None)],
        [("melanie", "PERSON"), ("caroline", "PERSON"), ("fenway health", "ORG")],
    ]  # what spaCy finds: the memories' mentions are still produced
    assert ex.relations_batch(TEXTS) == []
    assert (ex.calls, ex.fallbacks) == (1, 1)
    assert "LLM extraction failed" in caplog.text


def test_llm_extractor_timeout_falls_back(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    ex = LLMExtractor(make_chat(timeout_s=0.2, max_retries=1), fallback="rules")
    server.script = [ok(GOOD_ANSWER)[:3] + (1.0,)] * 2
    (row,) = ex.extract_batch(["Caroline: we met Dr. Watson in Boston."])
    assert [(m.norm, m.entity_type) for m in row] == [
        ("caroline", "PERSON"),
        ("watson", "PERSON"),
        ("boston", None),
    ]
    assert ex.fallbacks == 1


def test_llm_extractor_survives_a_failing_fallback(
    server: ChatServer, make_chat: Callable[..., OpenAICompatChat]
) -> None:
    class Broken(RuleExtractor):
        def extract_batch(self, texts: Any) -> list[list[EntityMention]]:
            raise RuntimeError("no model")

    ex = LLMExtractor(make_chat(max_retries=0), fallback=Broken())
    server.script = [(503, {}, {}, 0.0)]
    assert [m.norm for m in ex.extract("Caroline: hi Bob")] == ["caroline", "bob"]


def test_custom_chat_model_plugs_into_the_extractor() -> None:
    class Canned(ChatModel):
        model_id = "canned"

        def complete(
            self, messages: Any, *, json: bool = False, max_tokens: int | None = None
        ) -> Completion:
            answer = {"memories": [{"index": 0, "entities": [{"name": "Oslo", "type": "GPE"}]}]}
            return Completion(text=_json_dumps(answer), model="canned")

    register_chat_model("canned", Canned)
    chat = create_chat_model("canned")
    ex = create_extractor("llm", chat=chat, fallback="none")
    assert ex.extract("We flew to Oslo.") == [EntityMention("Oslo", "oslo", entity_type="GPE")]
    with pytest.raises(ConfigError):
        create_extractor("llm", chat="not a model")


def _json_dumps(value: Any) -> str:
    return json.dumps(value)
