"""The page after an app process died while carrying out an approval (its claim left in the conversation
database, its lease run out): the next click on the card says what really happened, in the chat, and the card
is either gone (the write had landed: the record id is named) or waiting again (nothing was written). A claim
still live in another process is "being carried out right now", never "already handled"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.approval import BEING_WRITTEN, RECOVERED_RELEASED
from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.ops.conversation_store import open_store
from docgemma.runtime import build_registry
from docgemma.tools.ehr_tools import record_write_check, write_lookup
from docgemma.tools.registry import ToolContext
from docgemma.ui.page import Handlers, layout
from docgemma.workspace import Workspace

ALLERGY = "Add a penicillin allergy for Amina Okafor"
#: What a reopened conversation says of the allergy whose write had landed.
WRITTEN = "The allergy documentation was written: allergy to penicillin"


def merged(updates: Iterator[dict[Any, Any]]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for update in updates:
        out.update(update)
    return out


def _allergy_card(tmp_path: Path) -> tuple[Any, Any, Ehr, Any, Assistant, Handlers, str, dict[Any, Any]]:
    """The page on a fresh conversation, showing the approval card of ALLERGY for Amina Okafor: (page, store, record,
    registry, assistant, handlers, thread, the card's page update)."""
    import gradio as gr

    settings = Settings(data_dir=tmp_path, backend="fake")
    store, ehr = open_store(settings), Ehr.embedded(tmp_path / "record.sqlite")
    registry = build_registry(settings, ehr, in_process=True)
    assistant = Assistant(demo_llm(), registry, store.checkpointer, settings, patient_context=ehr.patient_context,
                          write_check=record_write_check(ehr), claims=store.claims, find_write=write_lookup(ehr, registry))
    with gr.Blocks():
        page = layout()
    on = Handlers(Workspace(assistant, ehr), page, settings, "Demo rules · CPU", None, None)
    thread = on.restore(None)[page.thread]
    history = merged(on.respond({"text": "Find patient Amina Okafor and check her chart", "files": []}, [], thread,
                                None))[page.chatbot]
    shown = merged(on.respond({"text": ALLERGY, "files": []}, history, thread, None))
    return page, store, ehr, registry, assistant, on, thread, shown


@pytest.mark.parametrize("died", ["before the write", "after the write", "elsewhere, still running"])
def test_a_click_on_a_card_whose_approval_died_says_what_happened(died: str, tmp_path: Path) -> None:
    page, store, ehr, registry, assistant, on, thread, shown = _allergy_card(tmp_path)
    card = assistant.pending_approval(thread)
    assert card is not None and shown[page.card_id]
    pid = ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]

    def allergies() -> int:
        return len(ehr.client.search("AllergyIntolerance", [("patient", pid)]))

    before = allergies()
    if died == "after the write":  # the dead process's write, under the action's key
        spec = registry["add_allergy"]
        spec.run(spec.args_model(**card["args"]), ToolContext(scope=card["action_id"]))
    lease = 60.0 if died.startswith("elsewhere") else 0.0
    store.claims.claim(thread, card["card_id"], "another-process", lease, {"action": "approve"})

    after = merged(on.decide("approve", shown[page.approval_args], shown[page.chatbot], thread, shown[page.card_id]))
    if died.startswith("elsewhere"):  # a note beside the card; the conversation and the card are left as they are
        assert BEING_WRITTEN in after[page.decision_note] and page.chatbot not in after and allergies() == before
        assert assistant.pending_approval(thread) == card
        store.close()
        return
    chat = str(after[page.chatbot][-1]["content"])
    if died == "before the write":
        assert RECOVERED_RELEASED in chat and allergies() == before
        assert after[page.approval]["visible"] and after[page.card_id] == shown[page.card_id]  # decide again
    else:
        assert "before the interruption: AllergyIntolerance/" in chat and "Written to the record" in chat
        assert allergies() == before + 1 and not after[page.approval]["visible"]
    store.close()


def _dead_owner() -> str:
    """A claim owner that is a process of this machine that is gone (this pid, another start time)."""
    from docgemma.agent.claims import process_owner

    host, pid, token, machine, _ = process_owner().split(":")
    return ":".join([host, pid, token, machine, "1"])


@pytest.mark.parametrize("died", ["after the write", "before the write", "elsewhere, still running"])
def test_a_reopened_page_says_what_landed_without_a_click(died: str, tmp_path: Path) -> None:
    """The write had landed, the app was restarted, the page reopened: the card was still shown as waiting and the
    chat did not say the write was made (and for the lease's 20-32 s a click was told "being carried out by
    another server", on a single server). Now the reopened page settles it at once and says what was written."""
    from docgemma.agent.claims import owner_gone

    if not owner_gone(_dead_owner()):
        pytest.skip("a dead owner cannot be told apart on this system (no /proc)")
    page, store, _ehr, registry, assistant, on, thread, _shown = _allergy_card(tmp_path)
    card = assistant.pending_approval(thread)
    assert card is not None
    if died == "after the write":
        spec = registry["add_allergy"]
        spec.run(spec.args_model(**card["args"]), ToolContext(scope=card["action_id"]))
    owner = "other-host:7:abcd:x/1:5" if died.startswith("elsewhere") else _dead_owner()
    store.claims.claim(thread, card["card_id"], owner, 60.0, {"action": "approve"})  # a lease far from over

    reopened = on.restore(thread)
    chat = " ".join(str(m["content"]) for m in reopened[page.chatbot])
    if died == "after the write":
        assert WRITTEN in chat and "before the interruption: AllergyIntolerance/" in chat, chat[-900:]
        assert not reopened[page.approval]["visible"] and assistant.pending_approval(thread) is None
        again = " ".join(str(m["content"]) for m in on.restore(thread)[page.chatbot])
        assert WRITTEN in again  # kept in the conversation, every reopening
    elif died == "before the write":
        assert RECOVERED_RELEASED in reopened[page.decision_note] and reopened[page.approval]["visible"]
        assert "was written" not in chat
    else:  # a live claim on another machine: its lease decides, and the page says it is being carried out
        assert BEING_WRITTEN in reopened[page.decision_note] and assistant.pending_approval(thread) == card
    store.close()
