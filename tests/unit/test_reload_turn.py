"""A reload at any moment keeps the turn (issue 46, item 5). A clinician reloaded 0.4 s into an answer: the message
and its answer were gone from the chat (the run is checkpointed only when it ends, and Gradio drops a handler whose
page went away), the first reload showed an earlier message in its place, and a "Plain approval refused" note was
dropped. Now the message is kept when sent, the turn runs apart from the page (a reopened page follows it to its
answer), a turn whose run is gone is said to be interrupted with one Send again, and the cards' notes are kept."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.events import AgentEvent, TurnDone, TurnResult
from docgemma.llm.base import BACKEND_DOWN_SENTENCE, BackendUnavailable
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry
from docgemma.ui.messages import INTERRUPTED, NOT_ANSWERED, STILL_ANSWERING
from docgemma.ui.page import CUT_OFF_TURN
from docgemma.ui.thread_id import new_thread_id
from docgemma.ui.turn_runs import TurnRuns
from docgemma.workspace import Workspace
from tests.unit.test_page_session import App

QUESTION = "What is hypertension?"
PRESCRIBE = "Prescribe amoxicillin 500 mg three times daily for Grace Mensah"


def _texts(history: list[dict[str, Any]]) -> list[str]:
    return [str(m.get("content") or (m.get("metadata") or {}).get("title", "")) for m in history]


def test_the_message_is_kept_before_the_turn_runs_and_replaced_by_its_answer(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    thread = new_thread_id()
    events = app.on.workspace.turn(thread, QUESTION)
    next(events)  # the turn's first step: nothing of the run is checkpointed yet, the message is
    kept = app.on.workspace.saved(thread)
    assert kept.unfinished is not None and kept.unfinished["question"] == QUESTION and not kept.wrote
    for _ in events:
        pass
    done = app.on.workspace.saved(thread)
    assert done.unfinished is None
    assert [e.get("question") for e in done.transcript] == [QUESTION]  # one entry for the turn, with its answer
    assert done.transcript[0]["answer"] and "sent" not in done.transcript[0]
    app.store.close()


def test_a_turn_cut_off_shows_its_message_one_interrupted_line_and_send_again_that_works(tmp_path: Path) -> None:
    first = App.start(tmp_path)
    thread = new_thread_id()
    history = first.last(first.on.respond({"text": "Find patient Amina Okafor and check her chart", "files": []},
                                          [], thread, None))[first.page.chatbot]
    events = first.on.workspace.turn(thread, QUESTION)
    next(events)
    events.close()  # the run dies midway (the app restarted)
    first.store.close()

    second = App.start(tmp_path)
    page = second.page
    back = second.on.restore(thread)
    chat = _texts(back[page.chatbot])
    # The message just sent, not the earlier one, ends the chat, with the one line that says what happened.
    assert chat[-2:] == [QUESTION, INTERRUPTED] and chat.count(INTERRUPTED) == 1
    assert "Find patient Amina Okafor and check her chart" in chat
    assert back[page.send_again]["visible"] and back[page.resend] == QUESTION
    assert back[page.timeline] == CUT_OFF_TURN  # not the previous turn's timeline as if it were this one's
    assert not any(back[b]["visible"] for b in page.follow_buttons)  # nor its follow-ups

    # Send again sends exactly that message: the answer comes, and the offer is gone after the next reload.
    answered = second.last(second.on.respond({"text": back[page.resend], "files": []}, back[page.chatbot],
                                             thread, None))
    assert "Confidence" in _texts(answered[page.chatbot])[-1]
    again = second.on.restore(thread)
    chat = _texts(again[page.chatbot])
    assert not again[page.send_again]["visible"] and INTERRUPTED not in chat
    assert chat.count(QUESTION) == 2 and NOT_ANSWERED in chat  # the cut-off one, said once, then the answered one
    assert history  # the first turn stays on the page throughout
    second.store.close()


def hold_turns(app: Any) -> threading.Event:
    """Make the app's turns stop after their first event until the returned event is set: the answer is still
    being worked on when the page reloads or another message is sent."""
    go = threading.Event()
    turn = app.on.workspace.turn

    def held(thread: str, text: str, attachment: Any = None) -> Iterator[AgentEvent]:
        events = turn(thread, text, attachment)
        yield next(events)
        go.wait(30)
        yield from events

    app.on.workspace.turn = held
    return go


def test_a_reload_while_the_turn_runs_shows_the_message_then_its_answer(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    page, thread = app.page, new_thread_id()
    go = hold_turns(app)
    sending = app.on.respond({"text": QUESTION, "files": []}, [], thread, None)
    next(sending)
    next(sending)
    sending.close()  # the page was reloaded: Gradio stops reading this handler
    back = app.on.restore(thread)
    chat = _texts(back[page.chatbot])
    assert chat[-2:] == [QUESTION, STILL_ANSWERING] and not back[page.send_again]["visible"]
    busy = app.last(app.on.respond({"text": "another", "files": []}, back[page.chatbot], thread, None))
    assert "still being answered" in busy[page.decision_note]  # one turn at a time: nothing sent
    go.set()
    followed = app.last(app.on.follow(thread, back[page.chatbot]))
    chat = _texts(followed[page.chatbot])
    assert chat[-2] == QUESTION and "Confidence" in chat[-1] and STILL_ANSWERING not in chat
    assert "Sources" in followed[page.timeline] or "Confidence" in followed[page.timeline]
    after = app.on.restore(thread)
    assert _texts(after[page.chatbot])[-2] == QUESTION and not after[page.send_again]["visible"]
    app.store.close()


def test_a_plain_approval_refused_note_survives_the_reload(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    page, thread = app.page, new_thread_id()
    history = app.last(app.on.respond({"text": "Find patient Grace Mensah and check her chart", "files": []},
                                      [], thread, None))[page.chatbot]
    shown = app.last(app.on.respond({"text": PRESCRIBE, "files": []}, history, thread, None))
    card = shown[page.card_id]
    refused = app.last(app.on.decide("approve", "", shown[page.chatbot], thread, card))
    assert "Plain approval refused" in _texts(refused[page.chatbot])[-1]
    waiting = app.on.restore(thread)  # the card still waits: its line says it
    assert "Plain approval refused" in _texts(waiting[page.chatbot])[-1]
    # The paused turn's message, kept when sent, is shown once (with its card's line), not as interrupted.
    assert _texts(waiting[page.chatbot]).count(PRESCRIBE) == 1 and not waiting[page.send_again]["visible"]
    rejected = app.last(app.on.decide("reject", "", waiting[page.chatbot], thread, waiting[page.card_id]))
    assert rejected[page.chatbot]
    after = _texts(app.on.restore(thread)[page.chatbot])  # the card is gone; what it said is not
    assert any("Plain approval refused" in line for line in after)
    assert after.index(PRESCRIBE) < next(i for i, line in enumerate(after) if "Plain approval refused" in line)
    app.store.close()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the run's thread reports it
def test_a_turn_run_is_followed_from_its_first_event_and_an_error_reaches_the_follower() -> None:
    runs = TurnRuns()
    done = TurnDone(TurnResult(answer=""))  # a whole event: the run reads its result (TurnRuns holds an unsent one)

    def events() -> Iterator[AgentEvent]:
        yield done
        raise ValueError("boom")

    run = runs.start("t", events(), "hello")
    assert run is not None and run.wait(5)
    followed: list[AgentEvent] = []
    try:
        for event in run.follow():
            followed.append(event)
    except RuntimeError as failed:
        assert isinstance(failed.__cause__, ValueError)
    else:
        raise AssertionError("the turn's error did not reach the page")
    assert followed == [done] and runs.running("t") is None


def test_a_turn_ended_by_a_dead_model_keeps_its_sentence_not_an_interruption() -> None:
    """No answer node ran, yet the turn ended: its entry gets the one sentence the chat showed, and a reload
    does not call it interrupted."""
    llm = FakeLLM(responder=lambda call: BackendUnavailable("test: connection refused"))
    space = Workspace(Assistant(llm, default_registry()), None)
    events = list(space.turn("t", QUESTION))
    assert isinstance(events[-1], TurnDone) and events[-1].result.backend_down
    saved = space.saved("t")
    assert saved.unfinished is None
    assert [(e.get("question"), e.get("answer")) for e in saved.transcript] == [(QUESTION, BACKEND_DOWN_SENTENCE)]


def test_a_turn_run_sees_the_context_of_the_request_that_sent_it() -> None:
    """ZeroGPU attaches the GPU from Gradio's request context (context variables): the run's thread has it."""
    request: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="none")
    request.set("the sender's event")
    seen: list[str] = []

    def events() -> Iterator[AgentEvent]:
        seen.append(request.get())
        yield from ()

    run = TurnRuns().start("t", events())
    assert run is not None and run.wait(5) and seen == ["the sender's event"]


def test_send_again_sends_the_cut_off_message_s_image_too(tmp_path: Path) -> None:
    from io import BytesIO

    from PIL import Image

    data = BytesIO()
    Image.new("RGB", (32, 32), "white").save(data, format="PNG")
    first = App.start(tmp_path)
    thread = new_thread_id()
    events = first.on.workspace.turn(thread, "", {"filename": "wound.png", "data": data.getvalue()})
    next(events)
    events.close()
    first.store.close()

    second = App.start(tmp_path)
    page = second.page
    back = second.on.restore(thread)
    assert _texts(back[page.chatbot])[-1] == INTERRUPTED
    assert back[page.send_again]["visible"] and back[page.resend] == ""  # an image-only message: offered all the same
    assert back[page.queued_image]["data"] == data.getvalue() and "wound.png" in back[page.queued_note]
    answered = second.last(second.on.respond({"text": back[page.resend], "files": []}, back[page.chatbot], thread,
                                             back[page.queued_image]))
    assert INTERRUPTED not in _texts(answered[page.chatbot])[-1]
    assert second.on.workspace.saved(thread).unfinished is None  # the image turn ran to its end this time
    second.store.close()


def test_a_message_sent_while_a_card_waits_is_refused_in_the_chat_and_a_reload_keeps_the_refusal(tmp_path: Path) -> None:
    """A message sent while an approval card waited was refused with a line a reload lost: the reopened chat showed
    the card as if nothing had been sent. The refusal is now the card's notice (the card waits on, as a new card),
    so the reopened chat shows it with the waiting card, and once the card is decided it stays in the conversation."""
    app = App.start(tmp_path)
    page, thread = app.page, new_thread_id()
    history = app.last(app.on.respond({"text": "Find patient Grace Mensah and check her chart", "files": []},
                                      [], thread, None))[page.chatbot]
    shown = app.last(app.on.respond({"text": PRESCRIBE, "files": []}, history, thread, None))
    asked = "What is her latest creatinine?"
    refused = app.last(app.on.respond({"text": asked, "files": []}, shown[page.chatbot], thread, None))
    live = _texts(refused[page.chatbot])
    assert live[-1] == "Please approve, edit or reject the pending Prescription first."
    assert f"Your message was not sent while this card waits: “{asked}”" in live[-2]
    assert refused[page.approval]["visible"] and refused[page.card_id] != shown[page.card_id]  # a new card waits
    again = "and her potassium?"
    app.last(app.on.respond({"text": again, "files": []}, refused[page.chatbot], thread, None))

    waiting = app.on.restore(thread)
    reopened = _texts(waiting[page.chatbot])
    both = f"Your messages were not sent while this card waits: “{asked}”; “{again}”"
    assert both in reopened[-1] and reopened[-1].startswith("**Approval needed before writing to the record:**")
    assert reopened.count(PRESCRIBE) == 1 and asked not in reopened[:-1]  # the refused message never ran
    assert waiting[page.approval]["visible"] and app.on.workspace.pending(thread) is not None
    assert not waiting[page.send_again]["visible"]

    rejected = app.last(app.on.decide("reject", "", waiting[page.chatbot], thread, waiting[page.card_id]))
    assert "declined" in _texts(rejected[page.chatbot])[-1]  # the reopened card's id is the one that waits
    after = _texts(app.on.restore(thread)[page.chatbot])  # the card is gone; the refusal is not, said once
    notes = [i for i, line in enumerate(after) if "not sent while this card waits" in line]
    assert len(notes) == 1 and both in after[notes[0]] and after.index(PRESCRIBE) < notes[0]
    assert app.on.workspace.pending(thread) is None and asked not in [e.get("question") for e in
                                                                     app.on.workspace.saved(thread).transcript]
    app.store.close()


def test_a_callers_decision_cannot_pass_for_a_refused_message(tmp_path: Path) -> None:
    """The card's "not sent" notice is the Assistant's to set (``approval.UNSENT``, left out of ``DECISION_KEYS``): a
    decision that carries it is read as the decision it is, here none at all: a rejection."""
    from docgemma.agent.approval import UNSENT
    from docgemma.agent.events import ApprovalRequest

    app = App.start(tmp_path)
    thread = new_thread_id()
    list(app.on.workspace.turn(thread, "Find patient Grace Mensah and check her chart"))
    card = [e for e in app.on.workspace.turn(thread, PRESCRIBE) if isinstance(e, ApprovalRequest)][-1].request
    events = list(app.on.workspace.resume(thread, {UNSENT: "injected", "card_id": card["card_id"]}))
    assert not any(isinstance(e, ApprovalRequest) for e in events) and app.on.workspace.pending(thread) is None
    assert "injected" not in str(app.on.workspace.saved(thread).transcript)
    app.store.close()
