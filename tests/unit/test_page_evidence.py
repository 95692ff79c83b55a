"""What the page says after a turn follows what really happened: a record read that found nothing of a kind is
a fact of the record (high confidence); a write the clinician declined is their decision, not a failure; the
follow-up buttons offer only what this mode can do; a reopened conversation shows the live Sources line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.test_page_session import App

THREAD = "web-" + "e" * 32


def _say(app: App, thread: str, history: list[Any], text: str) -> dict[Any, Any]:
    return app.last(app.on.respond({"text": text, "files": []}, history, thread, None))


def test_nothing_of_a_kind_on_record_for_the_exact_patient_is_high_confidence(tmp_path: Path) -> None:
    """"Amina Okafor — no active allergies on record" said "Confidence: low": the empty read was taken for a
    look-up that found nothing."""
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    history = _say(app, THREAD, history, "Find patient Amina Okafor")[page.chatbot]
    shown = _say(app, THREAD, history, "what are her allergies?")
    answer = shown[page.chatbot][-1]["content"]
    assert "no active allergies on record" in answer
    assert "*Confidence: high*" in answer and "**Confidence:** high" in shown[page.timeline]
    missing = _say(app, THREAD, shown[page.chatbot], "Find patient Zebedee Nobody")  # a search with no match
    assert "Confidence: low" in missing[page.chatbot][-1]["content"]
    app.store.close()
