"""The clinician's workspace: event → message functions, and the app through gradio_client (a tool turn,
an image turn, the approval flow, a bad upload, eight concurrent sessions with different patients)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pydicom
import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import NodeEnd, NodeStart, Token, TurnDone
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import ToolClients, bind_tools, knowledge_clients
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.registry import default_registry
from docgemma.ui import page as app_module
from docgemma.ui.card import approval_markdown
from docgemma.ui.messages import apply_event, status_line, summary_markdown, timeline_markdown
from docgemma.ui.page import build_demo
from docgemma.workspace import Workspace
from tests.fixture_api import handler
from tests.fixture_images import bomb_png

EVENT = {
    "node": "intent_classify",
    "label": "Understanding the question",
    "decision": "DIRECT",
    "detail": "<b>x</b>",
    "duration_ms": 1200.0,
    "llm_calls": 1,
    "prompt_tokens": 10,
}
# Positions in /respond's answer (gradio_client returns the value components: states and groups are left out).
APPROVAL_CARD, APPROVAL_ARGS, TIMELINE, PATIENT_PANEL = 1, 2, 3, 4
# The decision note under the card, and (appended when the card became a form) the card's reference.
DECISION_NOTE, CARD_REF = 9, 10
CT = Path(pydicom.__file__).parent / "data" / "test_files" / "CT_small.dcm"


def test_events_become_one_pending_step_then_a_streamed_answer() -> None:
    """The step under way is one pending line (no "duration": Gradio printed it raw); the answer replaces it and
    the steps are the timeline's (issue 46), where tool and model text is escaped."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    history = apply_event(history, NodeStart("intent_classify", "Understanding the question"))
    assert history[-1]["metadata"]["status"] == "pending" and "duration" not in history[-1]["metadata"]
    history = apply_event(history, NodeEnd(EVENT))
    assert len(history) == 2
    trace = timeline_markdown(TurnResult(answer="", timeline=[EVENT]))
    assert "<b>" not in trace and "&lt;b&gt;" in trace  # tool/model text is escaped
    history = apply_event(history, Token("Hyper"))
    history = apply_event(history, Token("tension ![x](https://evil/img.png) <script>alert(1)</script>"))
    assert history[-1]["content"].startswith("Hypertension") and "![x]" not in history[-1]["content"]
    assert "<script>" not in history[-1]["content"]
    result = TurnResult(
        answer="Hypertension.",
        confidence="medium",
        sources=[{"title": "Label", "url": "https://pubmed.ncbi.nlm.nih.gov/1/"}, {"title": "x", "url": "javascript:alert(1)"},
                 {"title": "Elsewhere", "url": "https://example.org/a"}],
    )
    history = apply_event(history, TurnDone(result))
    assert "Confidence: medium" in history[-1]["content"]
    assert "[Label](https://pubmed.ncbi.nlm.nih.gov/1/)" in history[-1]["content"]
    assert "example.org" not in history[-1]["content"]  # links only to the tools' own hosts
    assert "javascript:" not in history[-1]["content"] and len(history) == 2  # the question and its answer


def test_the_step_under_way_replaces_the_one_before() -> None:
    history: list[dict[str, Any]] = []
    history = apply_event(history, NodeStart("tool_select", "Choosing a resource"))
    history = apply_event(history, NodeStart("tool_execute", "Consulting: Drug Safety Report"))
    assert len(history) == 1 and history[0]["metadata"]["title"] == "Consulting: Drug Safety Report…"


def test_panels_text() -> None:
    severe = "ALLERGY CONFLICT (SEVERE): amoxicillin is a penicillin"
    card = approval_markdown({"args": {"medication_name": "amoxicillin", "dosage": "500 mg"},  # type: ignore[typeddict-item]
                              "warnings": [severe, "DUPLICATE ORDER: x"], "severe": [severe], "override_required": True})
    shown = "Allergy conflict: amoxicillin is a penicillin"  # the card's words for it: the label says "Severe"
    assert card.index(shown) < card.index("**Drug:**")  # a severe finding is the first thing on the card
    assert card.index("**Drug:**") < card.index("Duplicate order") < card.index("**Dose:**")  # beside its field
    assert "**Patient**" in summary_markdown("Amina <b>", "## Patient\nAmina is 62.") and "<b>" not in summary_markdown(
        "A<b>", ""
    )
    assert "not clinically meaningful" in status_line("SmolLM2 · CPU", "not clinically meaningful", "offline")
    assert timeline_markdown(None) == "*No turn yet.*"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Assistant, Ehr]]:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    registry = bind_tools(default_registry(), knowledge_clients(Settings(), transport=httpx.MockTransport(handler), record=ehr))
    registry = registry
    assistant = Assistant(demo_llm(), registry, patient_context=ehr.patient_context, write_check=record_write_check(ehr))
    demo = build_demo(Workspace(assistant, ehr), "Demo rules · CPU", "not clinically meaningful")
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True)
    yield url, assistant, ehr
    demo.close()


def _text(history: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content")) for m in history)


def _titles(history: list[dict[str, Any]]) -> list[str]:
    return [m["metadata"]["title"] for m in history if m.get("metadata")]


@pytest.mark.slow
def test_tool_turn_image_turn_approval_and_bad_upload(served: tuple[str, Assistant, Ehr], tmp_path: Path) -> None:
    from gradio_client import Client, handle_file

    url, _, ehr = served
    client = Client(url, verbose=False)
    out = client.predict({"text": "Check FDA warnings for Coumadin", "files": []}, [], None, api_name="/respond")
    history = out[0]
    assert not _titles(history)  # the steps are the timeline's, not the chat's (issue 46)
    assert "dailymed.nlm.nih.gov" in _text(history) and "Confidence:" in _text(history)
    assert "Drug Safety Report" in str(out[TIMELINE])

    out = client.predict(
        {"text": "What does this image show?", "files": [handle_file(str(CT))]}, history, None, api_name="/respond"
    )
    history = out[0]
    assert "image attached" in str(out[TIMELINE]) and not _titles(history)
    assert any(isinstance(m.get("content"), dict) or "file" in str(m.get("content")) for m in history if m["role"] == "user")

    bad = tmp_path / "notes.png"
    bad.write_bytes(b"this is not an image")
    # gradio_client cannot send back a history holding file messages; the browser keeps its own, so start afresh
    # (same session, same conversation thread on the server).
    out = client.predict({"text": "Look at this", "files": [handle_file(str(bad))]}, [], None, api_name="/respond")
    history = out[0]
    assert "not a supported image" in _text(history)

    pid = ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    out = client.predict(
        {"text": f"Prescribe amoxicillin 500 mg three times daily for patient {pid}", "files": []},
        history,
        None,
        api_name="/respond",
    )
    history = out[0]
    assert "Allergy conflict" in str(out[APPROVAL_CARD]) and "Approval needed" in _text(history)
    assert not ehr.client.search("MedicationRequest", [("patient", pid)])
    assert "Grace Mensah" in str(out[APPROVAL_CARD]) and "Anaphylaxis" in str(out[APPROVAL_CARD])
    out = client.predict(str(out[APPROVAL_ARGS]), history, out[CARD_REF], api_name="/approve")  # plain click refused
    assert "Plain approval refused" in str(out[APPROVAL_CARD])
    assert not ehr.client.search("MedicationRequest", [("patient", pid)])
    out = client.predict("allergist-supervised challenge passed", out[0], out[CARD_REF], api_name="/override")
    orders = ehr.client.search("MedicationRequest", [("patient", pid)])
    # The confirmation says the kind in words; the order's id (a FHIR reference) is not shown (issue 27).
    assert len(orders) == 1 and "Written to the record" in _text(out[0]) and orders[0]["id"] not in _text(out[0])
    assert "allergist-supervised challenge passed" in _text(out[0])


@pytest.mark.slow
def test_approve_edit_reject_clicked_together_write_once(served: tuple[str, Assistant, Ehr]) -> None:
    """The three buttons run on separate queues: whichever comes first consumes the card."""
    from gradio_client import Client

    url, _, ehr = served
    client = Client(url, verbose=False)
    pid = ehr.client.search("Patient", [("name", "Garcia")])[0]["id"]
    before = len(ehr.client.search("MedicationRequest", [("patient", pid)]))
    out = client.predict({"text": f"Prescribe lisinopril 10 mg once daily for patient {pid}", "files": []}, [], None,
                         api_name="/respond")
    history, args, card = out[0], str(out[APPROVAL_ARGS]), out[CARD_REF]
    edited = args.replace("10 mg", "20 mg")
    jobs = [client.submit(args, history, card, api_name="/approve"), client.submit(edited, history, card, api_name="/edit"),
            client.submit(args, history, card, api_name="/reject"), client.submit(args, history, card, api_name="/approve")]
    notes = [str(job.result()[DECISION_NOTE]) for job in jobs]
    # A click that starts after the winner finished finds no card, or a newer one: that is said just as clearly.
    assert sum("already handled" in n or "no pending action" in n or "no longer the one waiting" in n
               for n in notes) == 3, notes
    written = len(ehr.client.search("MedicationRequest", [("patient", pid)])) - before
    assert written <= 1
    # Approving the card the edit made needs that card's reference: the old one decides nothing.
    stale = client.predict(edited, history, card, api_name="/approve")
    assert len(ehr.client.search("MedicationRequest", [("patient", pid)])) - before == written
    assert "no longer the one waiting" in str(stale[DECISION_NOTE]) or "no pending action" in str(stale[DECISION_NOTE])
    # The edit's output (when the edit won) shows the new card's reference; a refused click changes no output.
    newest = next((job.result()[CARD_REF] for job in jobs
                   if isinstance(job.result()[CARD_REF], str) and job.result()[CARD_REF]), "")
    final = client.predict(edited, history, newest, api_name="/approve") if newest else stale
    written = len(ehr.client.search("MedicationRequest", [("patient", pid)])) - before
    declined = "declined" in str(final[0]) or any("declined" in str(job.result()[0]) for job in jobs)
    assert written == (0 if declined else 1)


@pytest.mark.slow
def test_page_is_honest_and_uploads_cannot_hurt(served: tuple[str, Assistant, Ehr], tmp_path: Path) -> None:
    """Through the app's API: a welcome message; the clinician's text escaped (no
    remote image); a pixel bomb answered with a clear message (it was a generic error); preview files
    deleted; no "(image)" bubble for an empty message; confidence that differs with the evidence; and while a
    write waits for approval, the timeline of that turn (it showed the previous turn's)."""
    from gradio_client import Client, handle_file

    url, _, ehr = served
    assert "clinical decision-support assistant" in httpx.get(f"{url}config").text  # the welcome message
    client = Client(url, verbose=False)

    out = client.predict({"text": "What is hypertension? ![x](http://attacker.example/?q=1)", "files": []}, [], None,
                         api_name="/respond")
    user = [m for m in out[0] if m["role"] == "user"]
    assert len(user) == 1 and "![x](" not in str(user[0]["content"]) and "attacker.example" in str(user[0]["content"])
    assert "Confidence: low" in _text(out[0])  # model knowledge only, from a model that is not meaningful

    bomb = tmp_path / "scan.png"
    bomb.write_bytes(bomb_png(14_000, 14_000))
    out = client.predict({"text": "", "files": [handle_file(str(bomb))]}, [], None, api_name="/respond")
    assert "14000×14000 pixels" in _text(out[0]) and "limit is 50 megapixels" in _text(out[0])
    assert "(image)" not in _text(out[0])

    out = client.predict({"text": "What does this image show?", "files": [handle_file(str(CT))]}, [], None,
                         api_name="/respond")
    assert any("file" in str(m.get("content")) for m in out[0] if m["role"] == "user")  # the preview was shown …
    assert list(app_module._PREVIEWS.iterdir()) == []  # … and our file of it deleted after the turn

    out = client.predict({"text": "  ", "files": []}, [], None, api_name="/respond")
    assert not isinstance(out[0], list)  # an empty message changes nothing on the page (it replaced the answer)

    out = client.predict({"text": "Check FDA warnings for Coumadin", "files": []}, [], None, api_name="/respond")
    assert "Drug Safety Report" in str(out[TIMELINE]) and "Confidence: medium" in _text(out[0])
    pid = ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    out = client.predict({"text": f"Prescribe amoxicillin 500 mg three times daily for patient {pid}", "files": []},
                         [], None, api_name="/respond")
    panel = str(out[TIMELINE])
    assert "Waiting for your approval" in panel and "Prescription" in panel and "Drug Safety Report" not in panel


@pytest.mark.slow
def test_eight_concurrent_sessions_keep_their_own_patients(served: tuple[str, Assistant, Ehr]) -> None:
    from gradio_client import Client

    url, _, _ = served
    names = [
        "Amina Okafor",
        "Joseph Mwangi",
        "Grace Mensah",
        "Fatima Bello",
        "Kofi Asante",
        "Margaret Oduya",
        "Samuel Kariuki",
        "Maria Garcia",
    ]

    def session(name: str) -> tuple[str, str, str]:
        client = Client(url, verbose=False)
        first = client.predict({"text": f"Find patient {name} and check her chart", "files": []}, [], None, api_name="/respond")
        second = client.predict({"text": "Show her chart again", "files": []}, first[0], None, api_name="/respond")
        return name, _text(second[0]), str(second[PATIENT_PANEL])

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(session, names))
    for name, transcript, panel in results:
        assert name in panel, f"{name}: patient panel shows another patient"
        others = [n for n in names if n != name]
        assert not any(other in transcript or other in panel for other in others), f"{name}: another patient leaked"


@pytest.mark.slow
def test_login_is_required_when_configured(tmp_path: Path) -> None:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    demo = build_demo(Workspace(Assistant(demo_llm(), default_registry()), ehr), "Demo rules · CPU")
    _, url, _ = demo.launch(
        prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True, auth=("clinician", "s3cret")
    )
    try:
        assert httpx.get(f"{url}config").status_code in (401, 403)
        session = httpx.Client()
        login = session.post(f"{url}login", data={"username": "clinician", "password": "s3cret"})
        assert login.status_code == 200 and session.get(f"{url}config").status_code == 200
    finally:
        demo.close()


def test_no_patient_data_in_logs_at_default_level(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.WARNING)
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    assistant = Assistant(
        demo_llm(),
        bind_tools(default_registry(), ToolClients(record=ehr)),
        patient_context=ehr.patient_context,
        write_check=record_write_check(ehr),
    )
    assistant.run_turn("t", "Find patient Amina Okafor and check her chart")
    assistant.run_turn("t", "What were her last kidney function results?")
    pid = ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]
    assert not any(word in caplog.text for word in ("Amina", "Okafor", pid, "creatinine", "Creatinine"))
