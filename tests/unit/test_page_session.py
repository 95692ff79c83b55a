"""The page reopens its conversation: the browser keeps only the thread id, which comes back as
untrusted input; a reload, or an app process restarted on the same data, shows the conversation, the active
patient and the waiting approval card, which is still decided once; "New conversation" starts afresh."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.approval import NO_PENDING
from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.ops.conversation_store import ConversationStore, open_store
from docgemma.runtime import build_registry
from docgemma.tools.ehr_tools import record_write_check
from docgemma.ui.messages import IMAGE_ONLY, REOPENED, WELCOME, restored_history
from docgemma.ui.page import Handlers, Page, layout
from docgemma.ui.thread_id import is_thread_id, new_thread_id, thread_from_browser
from docgemma.workspace import NO_PATIENT, Workspace

ALLERGY = "Add a penicillin allergy for Amina Okafor"


@dataclass
class App:
    """One app process: its own assistant, page and handlers on the data directory's files."""

    on: Handlers
    page: Page
    ehr: Ehr
    store: ConversationStore

    @classmethod
    def start(cls, data: Path) -> App:
        import gradio as gr

        settings = Settings(data_dir=data, backend="fake")
        store = open_store(settings)
        ehr = Ehr.embedded(data / "record.sqlite")
        assistant = Assistant(demo_llm(), build_registry(settings, ehr, in_process=True), store.checkpointer,
                              settings, patient_context=ehr.patient_context, write_check=record_write_check(ehr),
                              claims=store.claims)
        with gr.Blocks():
            page = layout()
        return cls(Handlers(Workspace(assistant, ehr), page, settings, "Demo rules · CPU", None, None), page, ehr, store)

    def last(self, updates: Iterator[dict[Any, Any]]) -> dict[Any, Any]:
        merged: dict[Any, Any] = {}
        for update in updates:
            merged.update(update)
        return merged

    def allergies(self, name: str) -> list[Any]:
        pid = self.ehr.client.search("Patient", [("name", name)])[0]["id"]
        return list(self.ehr.client.search("AllergyIntolerance", [("patient", pid)]))


@pytest.mark.parametrize("value", [
    None, "", 42, {"thread": "x"}, ["web-" + "a" * 32], "web-" + "a" * 31, "web-" + "a" * 33, "web-" + "A" * 32,
    "cli-" + "a" * 32, "web-" + "g" * 32, " web-" + "a" * 32, "web-" + "a" * 32 + "\n", "web-../../etc/passwd",
    "web-' OR 1=1 --",
])
def test_a_thread_id_from_the_browser_that_is_not_ours_starts_a_fresh_thread(value: object) -> None:
    thread, restored = thread_from_browser(value)
    assert not restored and is_thread_id(thread) and thread != value


def test_a_well_formed_id_is_kept_and_new_ids_are_unique_and_well_formed() -> None:
    made = {new_thread_id() for _ in range(100)}
    assert len(made) == 100 and all(is_thread_id(t) for t in made)
    kept = next(iter(made))
    assert thread_from_browser(kept) == (kept, True)


def test_a_restarted_app_reopens_the_conversation_patient_and_card_and_writes_once(tmp_path: Path) -> None:
    first = App.start(tmp_path)
    opened = first.on.restore(None)  # a browser with nothing stored: a fresh thread, which it is told to keep
    thread = opened[first.page.thread]
    assert is_thread_id(thread) and opened[first.page.saved_thread] == thread
    history = opened[first.page.chatbot]
    history = first.last(first.on.respond({"text": "Find patient Amina Okafor and check her chart", "files": []},
                                          history, thread, None))[first.page.chatbot]
    shown = first.last(first.on.respond({"text": ALLERGY, "files": []}, history, thread, None))
    card = shown[first.page.card_id]
    assert card and shown[first.page.approval]["visible"] and first.allergies("Okafor") == []
    first.store.close()  # the process stops; the next one opens the same files

    second = App.start(tmp_path)
    page = second.page
    back = second.on.restore(thread)
    assert back[page.thread] == thread and back[page.saved_thread] == thread
    chat = [m["content"] for m in back[page.chatbot]]
    assert chat[:2] == [second.on.welcome(), REOPENED]
    assert "Find patient Amina Okafor and check her chart" in chat and ALLERGY in chat
    # The steps are the timeline's, not the chat's (issue 46): no step, none left pending, in the reopened chat.
    assert not [m for m in back[page.chatbot] if m.get("metadata")]
    assert "Approval needed before writing to the record" in chat[-1]
    assert back[page.approval]["visible"] and back[page.card_id] == card
    assert "Amina Okafor" in back[page.approval_md]
    assert "penicillin" in back[page.field_boxes[0]]["value"].lower()  # the form's first field: the substance
    assert "Amina Okafor" in back[page.patient_md]
    assert "Waiting for your approval" in back[page.timeline]

    approved = second.last(second.on.decide("approve", back[page.approval_args], back[page.chatbot], thread, card))
    assert "Written to the record" in approved[page.chatbot][-1]["content"]
    assert len(second.allergies("Okafor")) == 1
    again = second.last(second.on.decide("approve", back[page.approval_args], back[page.chatbot], thread, card))
    assert NO_PENDING in again[page.decision_note] and len(second.allergies("Okafor")) == 1

    reloaded = second.on.restore(thread)  # after the decision: the answer is part of the conversation, no card
    assert not reloaded[page.approval]["visible"] and reloaded[page.card_id] == ""
    assert "Approval needed" not in reloaded[page.chatbot][-1]["content"]
    second.store.close()


def test_new_conversation_clears_chat_card_and_patient_and_keeps_the_old_thread_intact(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    thread = new_thread_id()
    app.last(app.on.respond({"text": ALLERGY, "files": []}, [], thread, None))
    fresh = app.on.new_conversation()
    page = app.page
    assert is_thread_id(fresh[page.thread]) and fresh[page.thread] != thread
    assert fresh[page.saved_thread] == fresh[page.thread]
    assert fresh[page.chatbot] == [{"role": "assistant", "content": app.on.welcome()}]
    assert not fresh[page.approval]["visible"] and fresh[page.card_id] == ""
    assert fresh[page.patient_md] == NO_PATIENT and fresh[page.images] == []
    assert app.on.workspace.pending(thread) is not None  # the old conversation is left as it was, nothing written
    app.store.close()


def test_an_unknown_well_formed_id_opens_an_empty_conversation(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    thread = new_thread_id()
    back = app.on.restore(thread)
    assert back[app.page.thread] == thread and back[app.page.chatbot] == [{"role": "assistant", "content": app.on.welcome()}]
    assert not back[app.page.approval]["visible"] and back[app.page.patient_md] == NO_PATIENT
    app.store.close()


def test_restored_text_is_escaped_like_live_text() -> None:
    messages = [{"role": "user", "content": "![x](http://attacker.example/p.png) <img src=x>"},
                {"role": "assistant", "content": "## Safety\n<script>alert(1)</script>"},
                {"role": "system", "content": "[active patient changed] now: Grace <b>Mensah</b> (ID gm-1)"},
                {"role": "system", "content": "some other system text"},
                {"role": "user", "content": ""}]  # an image-only turn
    shown = restored_history(messages)
    text = "\n".join(m["content"] for m in shown)
    assert "![x](" not in text and "<img" not in text and "<script>" not in text and "<b>" not in text
    assert "**Safety**" in text and "Active patient changed to Grace" in text
    assert "some other system text" not in text and len(shown) == 6
    assert shown[1]["content"] == REOPENED and shown[-1] == {"role": "user", "content": IMAGE_ONLY}
    assert restored_history([]) == [{"role": "assistant", "content": WELCOME}]  # nothing to reopen: no note


def test_restoring_and_new_conversation_are_not_api_endpoints_and_the_api_is_unchanged() -> None:
    """An API client has its own session thread; what a page does on load or on "New conversation" is not API,
    and /respond still takes (message, history): the thread is not a parameter."""
    from docgemma.tools.registry import default_registry
    from docgemma.ui.page import build_demo

    demo = build_demo(Workspace(Assistant(demo_llm(), default_registry()), None), "Demo rules · CPU")
    named = demo.get_api_info()["named_endpoints"]
    assert set(named) >= {"/respond", "/approve", "/edit", "/reject", "/override", "/search_patients",
                          "/select_patient"}
    assert not [name for name in named if "restore" in name or "new_conversation" in name]
    assert [p["parameter_name"] for p in named["/respond"]["parameters"]] == ["message", "history"]


def test_a_select_patient_value_that_names_no_patient_changes_nothing(tmp_path: Path) -> None:
    """/select_patient from an API client with a value not of the list's form: said, nothing changed (it used to
    raise inside the handler)."""
    from docgemma.ui.page import NOT_LISTED

    app = App.start(tmp_path)
    thread = new_thread_id()
    out = app.on.select("not a list value", [], thread)
    assert out == {app.page.decision_note: f"*{NOT_LISTED}*"}
    assert app.on.workspace.active_patient(thread) is None


def test_a_patient_switch_withdraws_the_waiting_card_and_says_so(tmp_path: Path) -> None:
    """Issue 43: the card vanished silently when another patient was selected, and a later Approve said "There is
    no pending action". Decision: the switch withdraws it, with a sentence in the chat and in the transcript."""
    from docgemma.clinical.patient import list_value

    app = App.start(tmp_path)
    page, thread = app.page, new_thread_id()
    history = app.on.restore(thread)[page.chatbot]
    history = app.last(app.on.respond({"text": "Find patient Amina Okafor and check her chart", "files": []},
                                      history, thread, None))[page.chatbot]
    shown = app.last(app.on.respond({"text": ALLERGY, "files": []}, history, thread, None))
    card = shown[page.card_id]
    assert card and shown[page.approval]["visible"]
    mensah = app.ehr.client.search("Patient", [("name", "Mensah")])[0]
    again = app.on.select(list_value({"id": str(mensah["id"]), "name": "Grace Mensah"}), shown[page.chatbot], thread)
    said = [m["content"] for m in again[page.chatbot]]
    assert "Active patient is now Grace Mensah" in said[-2]
    assert "withdrawn" in said[-1] and "Amina Okafor" in said[-1] and "nothing was written" in said[-1]
    assert not app.on.card_now(thread)[page.approval]["visible"]
    late = app.last(app.on.decide("approve", shown[page.approval_args], again[page.chatbot], thread, card))
    assert NO_PENDING in late[page.decision_note] and app.allergies("Okafor") == []
    reopened = [m["content"] for m in app.on.restore(thread)[page.chatbot]]
    assert any("withdrawn" in str(m) for m in reopened), "the reopened conversation says it too"
    app.store.close()


def test_selecting_the_same_patient_keeps_the_waiting_card(tmp_path: Path) -> None:
    from docgemma.clinical.patient import list_value

    app = App.start(tmp_path)
    page, thread = app.page, new_thread_id()
    history = app.on.restore(thread)[page.chatbot]
    history = app.last(app.on.respond({"text": "Find patient Amina Okafor and check her chart", "files": []},
                                      history, thread, None))[page.chatbot]
    shown = app.last(app.on.respond({"text": ALLERGY, "files": []}, history, thread, None))
    amina = app.on.workspace.active_patient(thread)
    assert amina is not None
    app.on.select(list_value(amina), shown[page.chatbot], thread)
    assert app.on.workspace.pending(thread) is not None
    approved = app.last(app.on.decide("approve", shown[page.approval_args], shown[page.chatbot], thread,
                                      shown[page.card_id]))
    assert "Written to the record" in approved[page.chatbot][-1]["content"] and len(app.allergies("Okafor")) == 1
    app.store.close()
