"""In Chromium: a served model that fails (HTTP 500 from a local OpenAI-compatible server) shows the clinician the
one clear sentence in the chat and the timeline, never Gradio's raw error; nothing is written, the conversation
goes on, and ``/readyz`` says the model cannot answer. The screenshot is kept for a person to look at
(``DOCGEMMA_SCREENSHOT_DIR``, else the test's temporary folder)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from docgemma.agent.assistant import Assistant
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.llm.base import BACKEND_DOWN_SENTENCE
from docgemma.llm.openai_backend import OpenAICompatLLM
from docgemma.ops.conversation_store import open_store
from docgemma.ops.metrics import Metrics
from docgemma.runtime import build_registry
from docgemma.serve import readiness
from docgemma.tools.ehr_tools import record_write_check
from docgemma.ui.page import build_demo
from docgemma.ui.server import build_app
from docgemma.workspace import Workspace
from tests.conftest import serve_in_thread
from tests.e2e.test_browser import TIMEOUT_MS, ask, page  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow


class Down(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def served_down(tmp_path: Path) -> Iterator[tuple[str, Ehr]]:
    model = ThreadingHTTPServer(("127.0.0.1", 0), Down)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    settings = Settings(data_dir=tmp_path, backend="openai")
    store = open_store(settings)
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    metrics = Metrics()
    llm = OpenAICompatLLM(f"http://127.0.0.1:{model.server_address[1]}/v1", "medgemma", timeout_s=5)
    assistant = Assistant(metrics.timed(llm), build_registry(settings, ehr, in_process=True), store.checkpointer,
                          settings, patient_context=ehr.patient_context, write_check=record_write_check(ehr),
                          claims=store.claims)
    demo = build_demo(Workspace(assistant, ehr, metrics), "medgemma via a local server")
    ready = readiness(Settings(backend="fake"), store, ehr, lambda: assistant.model.unavailable)
    url, stop = serve_in_thread(build_app(demo, ready, metrics))
    yield url, ehr
    stop()
    store.close()
    model.shutdown()


def test_a_failing_model_shows_the_clinical_sentence_not_an_app_error(served_down: tuple[str, Ehr], page: Any,  # noqa: F811
                                                                      tmp_path: Path) -> None:
    url, ehr = served_down
    writes = len(ehr.client.search("MedicationRequest", []))
    page.goto(url + "/", wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    assert httpx.get(f"{url}/readyz").status_code == 200  # no call made yet
    ask(page, "What is the first-line treatment for hypertension in adults?")
    page.locator("#chat").get_by_text("The model is not answering right now", exact=False).first.wait_for(
        timeout=TIMEOUT_MS)
    page.locator("#timeline").get_by_text("The model is not answering right now", exact=False).first.wait_for(
        timeout=TIMEOUT_MS)
    shots = Path(os.environ.get("DOCGEMMA_SCREENSHOT_DIR", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "backend_down.png"), full_page=False)
    body = page.locator("body").inner_text()
    assert "AppError" not in body and "Error" not in page.locator(".toast-wrap, .toast-body").all_inner_texts()
    assert BACKEND_DOWN_SENTENCE in page.locator("#chat").inner_text()
    assert len(ehr.client.search("MedicationRequest", [])) == writes
    ready = httpx.get(f"{url}/readyz")
    assert ready.status_code == 503 and "latest call was not answered" in ready.json()["checks"]["model"]
    said = page.locator("#chat").inner_text().count("The model is not answering right now")
    ask(page, "What is the first-line treatment for hypertension in adults?")  # the page still takes a message
    page.wait_for_function(
        f"document.querySelector('#chat').innerText.split('The model is not answering right now').length > {said + 1}",
        timeout=TIMEOUT_MS)
    page.screenshot(path=str(shots / "backend_down_again.png"), full_page=False)
