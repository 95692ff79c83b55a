"""A served model (OpenAI-compatible) that fails, against a local HTTP server on 127.0.0.1: slow, trickling,
answering a streaming call with a body that is not server-sent events, 429, 500, a dropped connection, a
stream cut off. Each turn ends within ``timeout_s`` with the one clear sentence in the chat and the timeline,
writes nothing, keeps the conversation, and ``/readyz``'s model check says the backend cannot answer."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import MODEL_DOWN, Assistant
from docgemma.agent.events import NodeEnd
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.llm.base import BACKEND_DOWN_SENTENCE, BackendUnavailable, Message
from docgemma.llm.openai_backend import OpenAICompatLLM
from docgemma.ops.conversation_store import open_store
from docgemma.ops.health import NotReady, model_check
from docgemma.runtime import build_registry
from docgemma.tools.ehr_tools import record_write_check

TIMEOUT_S = 1.5
#: What a call may take past ``timeout_s``: the connection, the socket's last read, the test's own work.
SLACK_S = 1.0
QUESTION = "What is the first-line treatment for hypertension in adults?"


def _chunk(text: str) -> bytes:
    return f"data: {json.dumps({'choices': [{'delta': {'content': text}}]})}\n\n".encode()


def _answer(content: str) -> bytes:
    return json.dumps({"choices": [{"message": {"content": content}}]}).encode()


class Handler(BaseHTTPRequestHandler):
    """The server's behaviour is the model name the client asks for."""

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        mode, stream = body["model"], bool(body.get("stream"))
        if mode == "slow":  # says nothing for longer than the client waits
            time.sleep(TIMEOUT_S * 3)
            self._send(200, "application/json", _answer("{}"))
        elif mode == "trickle":  # a byte every 0.3 s: no single read times out, the whole call does
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
            self.end_headers()
            for _ in range(int(TIMEOUT_S * 3 / 0.3)):
                self.wfile.write(b"\n" if stream else b" ")
                self.wfile.flush()
                time.sleep(0.3)
        elif mode in ("429", "500"):
            self._send(int(mode), "application/json", b'{"error": "busy"}')
        elif mode == "html":  # a proxy's page in front of a model that is down, with 200
            self._send(200, "text/html", b"<html><body>Service starting</body></html>")
        elif mode == "plain-json":  # not the chat-completion shape at all
            self._send(200, "application/json", b'{"status": "ok"}')
        elif mode == "dropped":  # the connection closes with no answer
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif mode == "cut":  # a stream that stops midway, without [DONE]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk("First-line "))
            self.wfile.flush()
            self.close_connection = True
        elif mode == "json-for-stream":  # a server that ignores "stream": the whole answer as JSON
            self._send(200, "application/json", _answer("Thiazide, ACE inhibitor, ARB or calcium-channel blocker."))
        else:
            raise AssertionError(mode)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


FAILURES = ["slow", "trickle", "429", "500", "html", "plain-json", "dropped", "cut"]


def _assistant(tmp_path: Path, llm: OpenAICompatLLM) -> tuple[Assistant, Ehr]:
    settings = Settings(data_dir=tmp_path, backend="openai")
    store = open_store(settings)
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    assistant = Assistant(llm, build_registry(settings, ehr, in_process=True), store.checkpointer, settings,
                          patient_context=ehr.patient_context, write_check=record_write_check(ehr),
                          claims=store.claims)
    return assistant, ehr


def _writes(ehr: Ehr) -> int:
    return sum(len(ehr.client.search(kind, [])) for kind in ("MedicationRequest", "Provenance"))


@pytest.mark.parametrize("mode", FAILURES)
def test_each_call_ends_within_timeout_s_as_the_backend_being_down(server: str, mode: str) -> None:
    llm = OpenAICompatLLM(server, mode, timeout_s=TIMEOUT_S)
    messages = [Message(role="user", content=QUESTION)]
    for call in ("text", "json"):
        start = time.monotonic()
        with pytest.raises(BackendUnavailable):
            if call == "text":
                list(llm.generate_text(messages, temperature=0.0, max_tokens=32))
            else:
                from docgemma.agent.schemas import ResultAssessment

                llm.generate_json(messages, ResultAssessment, temperature=0.0, max_tokens=32)
        assert time.monotonic() - start < TIMEOUT_S + SLACK_S, (mode, call)


def test_a_json_body_on_a_streaming_call_is_read_as_the_answer_it_is(server: str) -> None:
    llm = OpenAICompatLLM(server, "json-for-stream", timeout_s=TIMEOUT_S)
    text = "".join(llm.generate_text([Message(role="user", content=QUESTION)], temperature=0.0, max_tokens=32))
    assert text == "Thiazide, ACE inhibitor, ARB or calcium-channel blocker."  # was "" with no error


@pytest.mark.parametrize("mode", FAILURES)
def test_a_turn_on_a_failing_server_says_one_sentence_writes_nothing_and_keeps_the_conversation(
        server: str, mode: str, tmp_path: Path) -> None:
    llm = OpenAICompatLLM(server, "json-for-stream", timeout_s=TIMEOUT_S)
    assistant, ehr = _assistant(tmp_path, llm)
    first = assistant.run_turn("t", QUESTION)
    assert not isinstance(first, dict) and first.answer and not first.backend_down
    kept = assistant.state("t")["transcript"]
    prompts = assistant.state("t")["conversation"]
    before = _writes(ehr)
    ready = model_check(Settings(backend="fake"), lambda: True, lambda: assistant.model.unavailable)
    ready()  # the backend answered its latest call

    llm.model = mode  # the same server now fails this way
    start = time.monotonic()
    events = list(assistant.stream_turn("t", "Prescribe metformin 500 mg twice daily. " + QUESTION))
    elapsed = time.monotonic() - start
    done = events[-1].result  # type: ignore[attr-defined]
    assert done.answer == BACKEND_DOWN_SENTENCE and done.backend_down
    assert [e["detail"] for e in done.timeline if e["decision"] == MODEL_DOWN] == [BACKEND_DOWN_SENTENCE]
    # The step the failure cut off is closed in the chat's steps (no spinner left), with the sentence.
    assert any(isinstance(e, NodeEnd) and e.event["decision"] == MODEL_DOWN for e in events)
    assert "AppError" not in done.answer and "Traceback" not in done.answer
    # One model call failed and ended the turn: no node waited on the dead server again.
    assert elapsed < TIMEOUT_S + SLACK_S + 1.0, elapsed
    assert _writes(ehr) == before  # nothing written
    # The conversation the model reads is as it was; the page's transcript keeps the message with the one sentence
    # it was answered with, so a reload still shows both (issue 46), never as a turn that is still running.
    assert assistant.state("t")["conversation"] == prompts
    sent = "Prescribe metformin 500 mg twice daily. " + QUESTION
    assert [(e.get("question"), e.get("answer"), e.get("sent")) for e in assistant.state("t")["transcript"]] == [
        *((e.get("question"), e.get("answer"), None) for e in kept), (sent, BACKEND_DOWN_SENTENCE, None)]
    with pytest.raises(NotReady, match="latest call was not answered"):
        ready()

    llm.model = "json-for-stream"  # back up: the next turn answers, and the probe is ready again
    again = assistant.run_turn("t", QUESTION)
    assert not isinstance(again, dict) and not again.backend_down
    ready()


def test_an_approved_write_that_ran_before_the_model_failed_is_said_not_denied(server: str, tmp_path: Path) -> None:
    """The sentence says "nothing was written"; after an approved write that ran, the turn says the write instead,
    and the card is settled from the record (not offered again)."""
    llm = OpenAICompatLLM(server, "json-for-stream", timeout_s=TIMEOUT_S)
    assistant, ehr = _assistant(tmp_path, llm)
    card = assistant.run_turn("t", "Prescribe metformin 500 mg twice daily for Amina Okafor")
    assert isinstance(card, dict) and card["tool"] == "prescribe_medication", card
    orders = len(ehr.client.search("MedicationRequest", []))
    llm.model = "500"
    done = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert not isinstance(done, dict) and done.backend_down
    assert done.answer.startswith("Written to the record: ") and "nothing was written" not in done.answer
    assert len(ehr.client.search("MedicationRequest", [])) == orders + 1  # written once
    llm.model = "json-for-stream"
    again = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})
    assert not isinstance(again, dict)
    assert len(ehr.client.search("MedicationRequest", [])) == orders + 1  # never twice


def test_the_assembled_apps_readyz_follows_the_models_latest_call(server: str, tmp_path: Path) -> None:
    """``serve.assemble`` wires the observed model's latest failure into ``/readyz``'s model check."""
    from docgemma.serve import assemble

    llm = OpenAICompatLLM(server, "500", timeout_s=TIMEOUT_S)
    app = assemble(Settings(data_dir=tmp_path, backend="fake"), llm=llm)
    assert app.ready.report()[0]
    done = app.assistant.run_turn("t", QUESTION)
    assert not isinstance(done, dict) and done.backend_down
    ok, parts = app.ready.report()
    assert not ok and "HTTP 500" in parts["model"]
