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
from docgemma.llm.base import LLMError, LLMOutputError, Message
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
            self.wfile.write(b"data: [DONE]\n\n")
            return
        content = '{"quality": "success_rich"}' if body["model"] == "good" else '{"quality": "maybe"}'
        payload = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
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
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,") and parts[1]["text"] == "result"


def test_invalid_output_and_server_errors_raise(server: str) -> None:
    with pytest.raises(LLMOutputError):
        OpenAICompatLLM(server, "bad").generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)
    with pytest.raises(LLMError, match="HTTP 500"):
        OpenAICompatLLM(server, "broken").generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)
    with pytest.raises(LLMError, match="unreachable"):
        OpenAICompatLLM("http://127.0.0.1:9/v1", "x").generate_json(MESSAGES, ResultAssessment, temperature=0.0, max_tokens=64)


def test_text_streams(server: str) -> None:
    chunks = list(OpenAICompatLLM(server, "good").generate_text(MESSAGES, temperature=0.5, max_tokens=256))
    assert chunks == ["Dofetilide ", "needs ", "ECG monitoring."] and REQUESTS[-1]["stream"] is True
