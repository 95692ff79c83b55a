"""The OpenAI-compatible backend against a local stand-in server (no network)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from PIL import Image

from docgemma.agent.schemas import ResultAssessment
from docgemma.llm.base import BackendUnavailable, LLMOutputError, Message, Usage
from docgemma.llm.openai_backend import OpenAICompatLLM

REQUESTS: list[dict[str, Any]] = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        REQUESTS.append(body)
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            return
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for word in ["Dofetilide ", "needs ", "ECG monitoring."]:
                self.wfile.write(f"data: {json.dumps({'choices': [{'delta': {'content': word}}]})}\n\n".encode())
            if body.get("stream_options", {}).get("include_usage"):  # vLLM's and OpenAI's last event
                usage = {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43}
                self.wfile.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            return
        content = '{"quality": "success_rich"}' if body["model"] == "good" else '{"quality": "maybe"}'
        answer: dict[str, Any] = {"choices": [{"message": {"content": content}}]}
        if body["model"] != "silent":  # a server that reports no usage
            answer["usage"] = {"prompt_tokens": 120, "completion_tokens": 14, "total_tokens": 134,
                               "prompt_tokens_details": {"cached_tokens": 96}}
        payload = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


MESSAGES = [Message(role="system", content="Classify."), Message(role="user", content="result")]


def test_json_uses_guided_decoding(server: str) -> None:
    llm = OpenAICompatLLM(server, "good", api_key="k")
    out = llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=128, images=[Image.new("RGB", (4, 4))])
    assert out.quality == "success_rich"
    sent = REQUESTS[-1]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"]["properties"]["quality"]["enum"][0] == "success_rich"
    assert sent["temperature"] == 0.0 and sent["max_tokens"] == 128
    parts = sent["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]  # text then image, as the model card
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,") and parts[0]["text"] == "result"


def test_invalid_output_and_server_errors_raise(server: str) -> None:
    with pytest.raises(LLMOutputError):
        OpenAICompatLLM(server, "bad").generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)
    with pytest.raises(BackendUnavailable, match="HTTP 500"):
        OpenAICompatLLM(server, "broken").generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)
    with pytest.raises(BackendUnavailable, match="unreachable"):
        OpenAICompatLLM("http://127.0.0.1:9/v1", "x").generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)


def test_text_streams(server: str) -> None:
    chunks = list(OpenAICompatLLM(server, "good").generate_text(MESSAGES, temperature=0.5, max_tokens=256))
    assert chunks == ["Dofetilide ", "needs ", "ECG monitoring."] and REQUESTS[-1]["stream"] is True


def test_json_call_reports_the_servers_usage_with_its_prefix_cache(server: str) -> None:
    llm = OpenAICompatLLM(server, "good")
    llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)
    usage = llm.last_usage
    assert usage is not None and (usage.prompt_tokens, usage.cached_tokens, usage.decoded_tokens) == (120, 96, 14)
    assert usage.uncached_tokens == 24 and usage.seconds > 0


def test_invalid_answer_is_still_reported(server: str) -> None:
    """The tokens of an answer that fails validation were paid for: the usage is set before it raises."""
    llm = OpenAICompatLLM(server, "bad")
    with pytest.raises(LLMOutputError):
        llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)
    assert llm.last_usage is not None and llm.last_usage.decoded_tokens == 14


def test_stream_asks_for_usage_and_reports_it_when_exhausted(server: str) -> None:
    llm = OpenAICompatLLM(server, "good")
    stream = llm.generate_text(MESSAGES, temperature=0.0, max_tokens=64)
    assert next(stream) == "Dofetilide " and llm.last_usage is None  # not before the stream ends
    assert list(stream) == ["needs ", "ECG monitoring."]
    assert REQUESTS[-1]["stream_options"] == {"include_usage": True}
    usage = llm.last_usage
    assert usage is not None and (usage.prompt_tokens, usage.cached_tokens, usage.decoded_tokens) == (40, 0, 3)


def test_server_without_usage_reports_nothing(server: str) -> None:
    """No ``usage`` in the answer: nothing is invented; the agent then counts the prompt itself."""
    llm = OpenAICompatLLM(server, "silent")
    with pytest.raises(LLMOutputError):
        llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)
    assert llm.last_usage is None


def test_each_thread_reads_the_usage_of_its_own_call(server: str) -> None:
    """Two sessions on one backend: a call that ends in between must not replace the figures the first
    session reads after its own call (the observed model reads ``last_usage`` once its call returns)."""
    llm = OpenAICompatLLM(server, "good")
    first_done, second_done = threading.Event(), threading.Event()
    seen: list[Usage | None] = []

    def session() -> None:
        llm.generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)  # usage: 120 prompt tokens
        first_done.set()
        second_done.wait(timeout=10)
        seen.append(llm.last_usage)

    worker = threading.Thread(target=session)
    worker.start()
    assert first_done.wait(timeout=10)
    list(llm.generate_text(MESSAGES, temperature=0.0, max_tokens=8))  # another session's call: 40 prompt tokens
    second_done.set()
    worker.join(timeout=10)
    assert llm.last_usage is not None and llm.last_usage.prompt_tokens == 40
    assert seen[0] is not None and seen[0].prompt_tokens == 120
