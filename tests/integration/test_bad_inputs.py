"""Held-out bad inputs (tests/fixtures/bad_inputs.json, written for this test, not for any rule): empty and
whitespace messages, a 20k-character message, binary junk, SQL and FHIR-search injection, path-traversal,
unknown and malformed patient ids, prompt injection, absurd doses, RTL and zero-width characters, and files that
are not images, a 1x1 image and a pixel bomb. Each goes through the Assistant the app builds (the demo model,
``DOCGEMMA_BACKEND=fake``) and through the page's handlers, and gets a clear, non-empty answer with no traceback;
nothing is written to the record without an approval, and no patient's data appears but the patient's the
conversation or the message names."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.events import ApprovalRequest, TurnDone
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.fhir import display_text
from docgemma.ops.conversation_store import open_store
from docgemma.runtime import build_assistant
from docgemma.ui.page import Handlers, Page, layout
from docgemma.workspace import Workspace
from tests.fixture_images import bomb_png

FIXTURE = json.loads((Path(__file__).parent.parent / "fixtures" / "bad_inputs.json").read_text())
MESSAGES: list[dict[str, Any]] = FIXTURE["messages"]
IMAGES: list[dict[str, Any]] = FIXTURE["images"]
#: What must never reach a clinician: a framework's or the interpreter's own words.
INTERNALS = ("Traceback (most recent call last)", 'File "/', "ValidationError", "sqlite3.", "KeyError", "TypeError",
             "Exception:", "pydantic", "langgraph", "UnicodeEncodeError")
CLOSED = "http://127.0.0.1:9"  # no service listens there: a look-up fails at once, nothing leaves the machine


class App:
    """The app as `python app.py` builds it (demo model, embedded record), and its page handlers."""

    def __init__(self, data: Path) -> None:
        import gradio as gr

        self.settings = Settings(data_dir=data, backend="fake", openfda_url=CLOSED, eutils_url=CLOSED,
                                 europepmc_url=CLOSED, ctgov_url=CLOSED)
        self.ehr = Ehr.embedded(data / "record.sqlite")
        self.store = open_store(self.settings)
        self.assistant: Assistant = build_assistant(self.settings, ehr=self.ehr, store=self.store)
        self.workspace = Workspace(self.assistant, self.ehr)
        with gr.Blocks():
            self.page: Page = layout()
        self.on = Handlers(self.workspace, self.page, self.settings, "Demo rules · CPU", None, None)
        self.patients = {display_text(p): str(p["id"]) for p in self.ehr.client.search("Patient", [], limit=500)}

    def writes(self) -> int:
        """Every write the record holds comes with a Provenance."""
        return len(self.ehr.client.search("Provenance", [], limit=100_000))

    def activate(self, thread: str, name: str | None) -> None:
        if name:
            self.workspace.select_patient(thread, {"id": self.patients[name], "name": name})

    def turn(self, thread: str, message: str, attachment: dict[str, Any] | None = None) -> str:
        """The turn's answer, or, when it proposes a write, what its approval card says (nothing is written yet)."""
        events = list(self.workspace.turn(thread, message, attachment))  # type: ignore[arg-type]
        done = [e.result for e in events if isinstance(e, TurnDone)]
        cards = [e.request for e in events if isinstance(e, ApprovalRequest)]
        assert len(done) + len(cards) == 1, events
        if cards:
            card = cards[0]
            patient = card["patient"]["name"] if card["patient"] else "no patient"
            return f"Approval needed: {card['label']} for {patient}; " + " ".join(card["warnings"])
        return done[0].answer

    def page_turn(self, thread: str, message: str, files: list[str] | None = None) -> dict[Any, Any]:
        merged: dict[Any, Any] = {}
        history = [{"role": "assistant", "content": "earlier answer"}]
        for update in self.on.respond({"text": message, "files": files or []}, history, thread, None):
            merged.update(update)
        return merged


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    built = App(tmp_path_factory.mktemp("bad-inputs"))
    yield built
    built.store.close()


def others(app: App, case: dict[str, Any]) -> list[str]:
    """The patients whose names the answer must not hold: all but the active one and those the case allows."""
    allowed = {case.get("active"), *case.get("allowed", [])}
    return [name for name in app.patients if name not in allowed]


def assert_clear(text: str, case_id: str) -> None:
    assert text.strip(), f"{case_id}: empty answer"
    for word in INTERNALS:
        assert word not in text, f"{case_id}: {word!r} in {text[:300]!r}"


def test_the_fixture_covers_every_kind_of_bad_input() -> None:
    ids = {c["id"] for c in MESSAGES} | {c["id"] for c in IMAGES}
    for kind in ("empty", "whitespace", "long_20k", "binary_junk", "sql_injection_name", "fhir_search_injection",
                 "path_traversal_chart", "unknown_uuid", "truncated_uuid", "prompt_injection_write", "absurd_dose",
                 "rtl_override", "zero_width_name", "text_named_png", "one_pixel", "pixel_bomb"):
        assert kind in ids
    assert len(next(c for c in MESSAGES if c["id"] == "long_20k")["message"]) >= 20_000


@pytest.mark.parametrize("case", MESSAGES, ids=[c["id"] for c in MESSAGES])
def test_a_bad_message_gets_a_clear_safe_answer_from_the_assistant(app: App, case: dict[str, Any]) -> None:
    thread = f"assistant-{case['id']}"
    app.activate(thread, case.get("active"))
    before = app.writes()
    answer = app.turn(thread, case["message"])
    assert_clear(answer, case["id"])
    if case["expect_any"]:
        assert any(e in answer for e in case["expect_any"]), f"{case['id']}: {answer[:400]!r}"
    for name in others(app, case):
        assert name not in answer, f"{case['id']}: {name} in {answer[:400]!r}"
    assert app.writes() == before, f"{case['id']}: written without an approval"
    active = app.assistant.state(thread).get("active_patient")
    assert active is None or active["name"] in {case.get("active"), *case.get("allowed", [])}, case["id"]


@pytest.mark.parametrize("case", MESSAGES, ids=[c["id"] for c in MESSAGES])
def test_a_bad_message_gets_a_clear_safe_answer_on_the_page(app: App, case: dict[str, Any]) -> None:
    import gradio as gr

    thread = f"page-{case['id']}"
    app.activate(thread, case.get("active"))
    before = app.writes()
    shown = app.page_turn(thread, case["message"])
    chat = shown[app.page.chatbot]
    if not case["message"].strip():
        # Nothing to send: the screen stays as it was (the previous answer is not replaced).
        assert isinstance(chat, type(gr.skip())), case["id"]
        return
    answers = [m for m in chat if m["role"] == "assistant" and not m.get("metadata") and isinstance(m["content"], str)]
    assert answers and answers[-1]["content"] != "earlier answer", case["id"]
    assert_clear(answers[-1]["content"], case["id"])
    assert "<script" not in answers[-1]["content"] and "<img" not in answers[-1]["content"]
    for name in others(app, case):
        assert name not in answers[-1]["content"], f"{case['id']}: {name}"
    assert app.writes() == before, f"{case['id']}: written without an approval"


def image_bytes(recipe: str) -> bytes:
    if recipe == "text":
        return b"this is not an image, it is a note about a patient\n" * 20
    if recipe == "exe":
        return b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff" + bytes(range(256)) * 8
    if recipe == "empty":
        return b""
    if recipe == "truncated_png":
        return bomb_png(64, 64)[:40]
    if recipe == "bomb":
        return bomb_png(14_000, 14_000)
    if recipe == "svg":
        return b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    if recipe == "one_pixel":
        from PIL import Image

        buffer = io.BytesIO()
        Image.new("L", (1, 1), 128).save(buffer, format="PNG")
        return buffer.getvalue()
    raise ValueError(recipe)


@pytest.mark.parametrize("case", IMAGES, ids=[c["id"] for c in IMAGES])
def test_a_bad_image_gets_a_clear_safe_answer(app: App, case: dict[str, Any], tmp_path: Path) -> None:
    data = image_bytes(case["recipe"])
    before = app.writes()
    assert_clear(app.turn(f"image-{case['id']}", case["message"], {"filename": case["filename"], "data": data}),
                 case["id"])
    # Through the page, as an uploaded file.
    path = tmp_path / case["filename"]
    path.write_bytes(data)
    shown = app.page_turn(f"page-image-{case['id']}", case["message"], [str(path)])
    answers = [m for m in shown[app.page.chatbot]
               if m["role"] == "assistant" and not m.get("metadata") and isinstance(m["content"], str)]
    assert answers and answers[-1]["content"] != "earlier answer", case["id"]
    assert_clear(answers[-1]["content"], case["id"])
    assert "<script" not in answers[-1]["content"]
    assert app.writes() == before
