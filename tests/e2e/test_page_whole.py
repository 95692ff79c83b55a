"""The page as a clinician and a judge meet it, in Chromium on ``python app.py`` (the demo rules, the embedded
record, SQLite conversations; the knowledge services unreachable, as offline):

* a ten-turn conversation with a patient, two approved writes, an override with its reason and an image leaves
  nothing clinical in the browser: localStorage, sessionStorage and IndexedDB hold the conversation id only
  (Gradio's run history kept 25 runs with names, allergies and values);
* after a reload, and after the app is restarted, the conversation comes back whole: every question, each
  write's confirmation (its kind in words, no record reference) and the override reason, the image, the last timeline;
* a saved note shows in the patient panel; the card is a form whose Approve is greyed out while refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docgemma.ehr.service import Ehr
from docgemma.ui.page import BROWSER_KEY
from tests.conftest import free_port
from tests.e2e.test_browser import ARTIFACTS, CT, TIMEOUT_MS, page  # noqa: F401  (fixture)
from tests.e2e.test_restart_browser import AppProcess

pytestmark = pytest.mark.slow
REASON = "tolerated a supervised challenge in allergy clinic"
TURNS = [
    "Find patient Amina Okafor and check her chart",
    "What were her last kidney function results?",
    "Record a latex allergy (urticaria) for the active patient",
    "Save a progress note: stable, review in 4 weeks",
    "What happened at her visits this year?",
    "Prescribe amoxicillin 500 mg three times daily for Grace Mensah",
    "What does this image show?",
    "What is hypertension?",
    "Check FDA warnings for dofetilide",
    "Find patient James Wilson and check his chart",
]
#: Everything the browser keeps, as one text.
STORAGE_JS = """async () => {
  const out = {local: {}, session: {}, idb: {}};
  for (let i = 0; i < localStorage.length; i++) { const k = localStorage.key(i); out.local[k] = localStorage.getItem(k); }
  for (let i = 0; i < sessionStorage.length; i++) { const k = sessionStorage.key(i); out.session[k] = sessionStorage.getItem(k); }
  const dbs = indexedDB.databases ? await indexedDB.databases() : [];
  for (const info of dbs) {
    out.idb[info.name] = await new Promise((resolve) => {
      const req = indexedDB.open(info.name);
      req.onsuccess = async () => {
        const db = req.result, rows = {};
        for (const store of db.objectStoreNames) {
          rows[store] = await new Promise((r) => {
            const all = db.transaction(store).objectStore(store).getAll();
            all.onsuccess = () => r(JSON.stringify(all.result)); all.onerror = () => r('?');
          });
        }
        db.close(); resolve(rows);
      };
      req.onerror = () => resolve('?');
    });
  }
  out.caches = (typeof caches !== 'undefined') ? await caches.keys() : [];
  return out;
}"""


def settle(page: Any) -> None:  # noqa: F811
    """Wait until the chat stops changing (a turn finished)."""
    last, stable = None, 0
    page.wait_for_timeout(600)
    for _ in range(240):
        text = page.locator("#chat").inner_text()
        stable = stable + 1 if text == last else 0
        if stable >= 3:
            return
        last = text
        page.wait_for_timeout(400)
    raise AssertionError("the turn did not finish")


def ask(page: Any, text: str) -> None:  # noqa: F811
    box = page.locator("#input textarea")
    box.fill(text)
    box.press("Enter")
    settle(page)


def conversation(page: Any) -> str:  # noqa: F811
    return str(page.locator("#chat").inner_text())


def test_a_ten_turn_conversation_leaves_nothing_clinical_in_the_browser_and_comes_back_whole(
        page: Any, tmp_path: Path) -> None:  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    app = AppProcess(tmp_path, free_port(), "fake")
    app.start()
    try:
        page.goto(app.url + "/", wait_until="domcontentloaded")
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        for turn in TURNS:
            if "image" in turn:
                page.locator("#input input[type=file]").set_input_files(str(CT))
            ask(page, turn)
            if page.locator("#approve").is_visible():
                if "amoxicillin" in turn:  # penicillin anaphylaxis: a plain approval is not offered
                    assert not page.locator("#approve").is_enabled()
                    assert "Severe" in page.locator("#approval").first.inner_text()
                    assert page.locator("#card-field-0 textarea, #card-field-0 input").first.input_value() == "amoxicillin"
                    page.locator("#override-reason textarea, #override-reason input").first.fill(REASON)
                    page.locator("#override").click()
                else:
                    page.locator("#approve").click()
                settle(page)
            if turn.startswith("Save a progress note"):  # the saved note is in the panel at once
                page.locator("#patient-summary").get_by_text("stable, review in 4 weeks", exact=False).first.wait_for(
                    timeout=TIMEOUT_MS)
        page.screenshot(path=str(ARTIFACTS / "08_ten_turns.png"), full_page=True)

        ehr = Ehr.embedded(tmp_path / "record.sqlite")
        okafor = ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]
        mensah = ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
        order = ehr.client.search("MedicationRequest", [("patient", mensah)])
        allergy = [a for a in ehr.client.search("AllergyIntolerance", [("patient", okafor)]) if "latex" in str(a).lower()]
        assert len(order) == 1 and len(allergy) == 1

        kept = page.evaluate(STORAGE_JS)
        stored = json.dumps(kept)
        for private in ("Okafor", "Mensah", "Wilson", "latex", "urticaria", "amoxicillin", "eGFR", "creatinine",
                        "review in 4 weeks", REASON, okafor, mensah, order[0]["id"]):
            assert private.lower() not in stored.lower(), (private, stored[:2000])
        assert set(kept["local"]) == {BROWSER_KEY} and not kept["session"], kept
        assert not any(kept["idb"].values()) and not kept["caches"], kept

        def whole() -> None:
            text = conversation(page)
            for turn in TURNS:
                assert turn in text, turn
            assert text.count("Written to the record") == 3
            # The confirmations say the kind in words; the FHIR reference is not shown (issue 27).
            assert "— prescription" in text and "— allergy" in text
            assert "MedicationRequest/" not in text and order[0]["id"] not in text and allergy[0]["id"] not in text
            assert REASON in text
            assert page.locator("#chat img").count() >= 1  # the image turn's image
            assert "James Wilson" in page.locator("#timeline").inner_text()  # the last turn's timeline
            assert "TOOL_NEEDED" not in text and "success_partial" not in text

        page.reload(wait_until="domcontentloaded")
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        whole()
        app.stop()
        app.start()
        page.reload(wait_until="domcontentloaded")
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        whole()
        page.screenshot(path=str(ARTIFACTS / "09_ten_turns_after_restart.png"), full_page=True)
    finally:
        app.stop()


@pytest.mark.parametrize("viewport", [{"width": 1440, "height": 900}, {"width": 390, "height": 844}])
def test_the_examples_patients_and_timeline_are_where_a_new_user_looks(page: Any, tmp_path: Path,  # noqa: F811
                                                                        viewport: dict[str, int]) -> None:
    """Examples without scrolling at 1440×900 and on a phone; the demo patients listed to pick from; at desktop
    width the timeline beside the conversation, not a long scroll under the patient panel."""
    app = AppProcess(tmp_path, free_port(), "fake")
    app.start()
    try:
        page.set_viewport_size(viewport)
        page.goto(app.url + "/", wait_until="domcontentloaded")
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        first = page.get_by_text("What is hypertension?", exact=True).first
        box = first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= viewport["height"], box
        page.screenshot(path=str(ARTIFACTS / f"10_on_load_{viewport['width']}px.png"))
        if viewport["width"] >= 1000:
            chat, timeline = page.locator("#chat").bounding_box(), page.locator("#timeline").bounding_box()
            assert chat is not None and timeline is not None
            assert timeline["x"] > chat["x"] + chat["width"] - 1 and timeline["y"] < viewport["height"]
        page.locator("#patient-matches input").first.click()
        names = page.get_by_role("option").all_inner_texts()
        assert any("Amina Okafor" in n for n in names) and any("Grace Mensah" in n for n in names), names
    finally:
        app.stop()
