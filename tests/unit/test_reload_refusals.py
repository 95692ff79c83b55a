"""Issue 46: "every note and refusal survives" a reload. Three refusals lost the clinician's typed message on a
reload: a message sent while the conversation's previous turn still ran (BUSY: the message stayed in the box, and a
reload emptied the box), a message that settled an approval whose process had died ("Your message was not sent":
said once, the message quoted nowhere), and a message sent while another process carried out a decision on the card
(BEING_WRITTEN: said once). Each reopened page now shows the refusal and gives the message back."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.approval import BEING_WRITTEN, RECOVERED_RELEASED
from docgemma.tools.registry import ToolContext
from docgemma.ui.page import BUSY, HELD_BACK
from docgemma.ui.thread_id import new_thread_id
from tests.unit.test_page_approval_recovery import _allergy_card, merged
from tests.unit.test_page_session import App
from tests.unit.test_reload_turn import hold_turns

QUESTION = "What is hypertension?"
SECOND = "And what is a normal blood pressure for a 70 year old?"
ASKED = "What are her allergies?"


def _texts(history: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content") or (m.get("metadata") or {}).get("title", "")) for m in history]


def _box(updates: dict[Any, Any], page: Any) -> str | None:
    """The text a page update puts in the message box (None: the box is left as it is)."""
    return updates[page.box]["value"]["text"] if page.box in updates else None


def test_a_message_refused_while_the_previous_turn_runs_is_back_in_the_box_after_a_reload(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    app = App.start(tmp_path)
    page, thread = app.page, new_thread_id()
    go = hold_turns(app)  # the first answer is still being worked on
    sending = app.on.respond({"text": QUESTION, "files": []}, [], thread, None)
    next(sending)
    next(sending)
    busy = app.last(app.on.respond({"text": SECOND, "files": []}, [], thread, None))
    assert BUSY in busy[page.decision_note] and page.box not in busy  # the live page: it stays in the box
    sending.close()  # the page is reloaded mid-answer

    back = app.on.restore(thread)  # the previous turn still runs: the refusal as it was, the message in the box
    assert _box(back, page) == SECOND and BUSY in back[page.decision_note]
    go.set()
    assert app.on.runs.running(thread) is None or app.on.runs.running(thread).wait(30)  # type: ignore[union-attr]
    later = app.on.restore(thread)  # its answer has come: the message waits in the box, said not sent
    assert _box(later, page) == SECOND and HELD_BACK in later[page.decision_note] and BUSY not in later[page.decision_note]
    assert SECOND not in _texts(later[page.chatbot])  # never sent

    sent = app.last(app.on.respond({"text": _box(later, page), "files": []}, later[page.chatbot], thread, None))
    assert _texts(sent[page.chatbot])[-2] == SECOND
    after = app.on.restore(thread)  # sent now: the box is left empty, and no note says "not sent"
    assert page.box not in after and not after[page.decision_note]
    assert SECOND not in caplog.text and QUESTION not in caplog.text  # the typed messages are not logged
    app.store.close()


def test_a_message_that_settles_a_dead_approval_is_kept_on_the_card_across_a_reload(tmp_path: Path) -> None:
    page, store, _ehr, _registry, assistant, on, thread, shown = _allergy_card(tmp_path)
    card = assistant.pending_approval(thread)
    assert card is not None
    store.claims.claim(thread, card["card_id"], "another-process", 0.0, {"action": "approve"})  # its process died
    live = merged(on.respond({"text": ASKED, "files": []}, shown[page.chatbot], thread, None))
    said = _texts(live[page.chatbot])[-1]
    assert RECOVERED_RELEASED in said and "Your message was not sent" in said and live[page.approval]["visible"]

    back = on.restore(thread)  # the card waits again, its notice says which message was not sent
    reopened = _texts(back[page.chatbot])
    assert f"Your message was not sent while this card waits: “{ASKED}”" in reopened[-1]
    assert back[page.approval]["visible"] and ASKED not in reopened[:-1]
    store.close()


def test_a_message_that_settles_a_dead_approval_whose_write_landed_is_quoted_and_given_back(tmp_path: Path) -> None:
    page, store, _ehr, registry, assistant, on, thread, shown = _allergy_card(tmp_path)
    card = assistant.pending_approval(thread)
    assert card is not None
    spec = registry["add_allergy"]  # the dead process's write, under the action's key
    spec.run(spec.args_model(**card["args"]), ToolContext(scope=card["action_id"]))
    store.claims.claim(thread, card["card_id"], "another-process", 0.0, {"action": "approve"})
    live = merged(on.respond({"text": ASKED, "files": []}, shown[page.chatbot], thread, None))
    assert f"Your message was not sent: “{ASKED}”; send it again." in str(live[page.chatbot])
    assert _box(live, page) == ASKED and not live[page.approval]["visible"]

    back = on.restore(thread)  # the note is in the conversation, and the message back in the box
    assert any(f"Your message was not sent: “{ASKED}”" in line for line in _texts(back[page.chatbot]))
    assert _box(back, page) == ASKED and HELD_BACK in back[page.decision_note]
    store.close()


def test_a_message_sent_while_another_process_carries_out_the_card_is_given_back_after_a_reload(
        tmp_path: Path) -> None:
    page, store, _ehr, _registry, assistant, on, thread, shown = _allergy_card(tmp_path)
    card = assistant.pending_approval(thread)
    assert card is not None
    store.claims.claim(thread, card["card_id"], "another-process", 60.0, {"action": "approve"})  # alive, elsewhere
    live = merged(on.respond({"text": ASKED, "files": []}, shown[page.chatbot], thread, None))
    assert _texts(live[page.chatbot])[-1] == BEING_WRITTEN and _box(live, page) == ASKED

    back = on.restore(thread)
    assert _box(back, page) == ASKED
    assert BEING_WRITTEN in back[page.decision_note] and HELD_BACK in back[page.decision_note]
    assert assistant.pending_approval(thread) == card  # the card was not touched
    store.close()
