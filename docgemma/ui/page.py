"""The clinician's workspace (Gradio Blocks): chat with streamed answers and collapsible reasoning steps,
image upload (PNG, JPEG, DICOM), an approval card for writes, follow-up buttons, the reasoning timeline of
the last turn, and a patient panel (search, select, compiled summary, record images).

Uploads are bounded three times: Gradio refuses files over the byte limit (``max_file_size``), the pixel
count is checked from the header before decoding, and the bytes go to the assistant's image store, never
into the conversation checkpoint. The chat previews we write are deleted when the turn ends (Gradio keeps
its own cached copy, cleaned by ``delete_cache``).

Each browser session has its own conversation thread and active patient (``gr.State``); the browser keeps the
thread's id (only the id, ``gr.BrowserState``: localStorage) so that a reload, or an app process restarted on the
same data, reopens the conversation with its waiting approval card, until "New conversation". Model calls are
queued one at a time, which is what one GPU can serve.
"""

from __future__ import annotations

import atexit
import itertools
import json
import logging
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docgemma.config import Settings
from docgemma.image_store import decode_upload
from docgemma.images import DEFAULT_MAX_PIXELS, ImageError, size_error
from docgemma.ops.logsafe import remember
from docgemma.ui.card import MAX_FIELDS, RECHECK, args_json, card_reference, check_markdown, edited_args
from docgemma.ui.card import fields as card_fields
from docgemma.ui.card import header_markdown as card_header
from docgemma.ui.messages import (
    INTERRUPTED,
    INTERRUPTED_AFTER_WRITE,
    WELCOME,
    answering_line,
    apply_event,
    escape,
    restored_history,
    status_line,
    summary_markdown,
    timeline_markdown,
    transcript_history,
    user_message,
)
from docgemma.ui.strip import NO_ACTIVE, strip_markdown
from docgemma.ui.thread_id import new_thread_id, thread_from_browser
from docgemma.ui.turn_runs import Held, TurnRuns
from docgemma.ui.uploads import UploadRefused, allowed_roots, checked_path, enable_gradio_check, safe_history
from docgemma.workspace import (
    ALREADY_HANDLED,
    BEING_WRITTEN,
    EMPTY_MESSAGE,
    NO_PATIENT,
    NO_PENDING,
    AgentEvent,
    ApprovalCard,
    ApprovalRequest,
    Mode,
    PatientMatch,
    PatientRef,
    SavedConversation,
    TranscriptEntry,
    TurnDone,
    TurnResult,
    Workspace,
    from_list_value,
    list_label,
    list_value,
    withdrawn_note,
)

log = logging.getLogger(__name__)
EXAMPLES = [
    "What is hypertension?",
    "Check FDA warnings for dofetilide",
    "Check interactions between warfarin, aspirin and ibuprofen",
    "Find recent studies on SGLT2 inhibitors in heart failure",
    "Find recruiting clinical trials for triple-negative breast cancer",
    "Find patient Amina Okafor and check her chart",
    "What were her last kidney function results?",
    "What happened at her visits this year?",
    "Prescribe amoxicillin 500 mg three times daily for Grace Mensah",
    "Record a latex allergy (urticaria) for the active patient",
    "Save a progress note: stable, review in 4 weeks",
    "What does this image show?",
]
MAX_FOLLOW_UPS = 3
INPUT_LABEL = "Your message to the assistant"
LABEL_INPUT_JS = (
    "() => { const t = document.querySelector('#input textarea');"
    f" if (t) {{ t.setAttribute('aria-label', '{INPUT_LABEL}'); }} }}"
)
#: Gradio's own cache of uploads and shown files: checked hourly, files older than a day deleted.
DELETE_CACHE = (3600, 86400)
#: Where the browser keeps the conversation id. The key and the "secret" are fixed so that every replica and a
#: restarted process read what another wrote; Gradio's encryption with a secret sent to the page is no
#: protection, which is why only the (unguessable) id is stored there.
BROWSER_KEY = "docgemma-conversation"
BROWSER_SECRET = "docgemma-conversation-id"
NO_TURN = "*No turn yet.*"
#: The timeline of a turn cut off before its end (its steps were not kept), and of one still running.
CUT_OFF_TURN = "*The last turn was interrupted before it finished: its steps were not kept.*"
RUNNING_TURN = "*The last turn is still running: its steps show here when it ends.*"
#: A message sent while the conversation's previous turn still runs (a page reopened mid-answer): not sent.
BUSY = "Your previous message is still being answered: send this one when its answer has arrived."
SEND_AGAIN = "Send again"
#: A reopened page's box, given back the message the conversation refused without sending it (issue 46).
HELD_BACK = "Your last message was not sent; it is back in the box: send it when ready."
#: What the patient list shows until a patient is picked (a blank box gave no hint), and after a search that
#: found nobody. Their value is empty: "Make active patient" then changes nothing.
CHOOSE_PATIENT = "Choose a patient…"
NO_MATCH = "No patient of that name on record"
#: A /select_patient value that names no patient of the list (not ``id|name``).
NOT_LISTED = "That is not a patient of the list; the active patient is unchanged."
#: A decision that names no card, or another card than the one waiting: it decides nothing.
STALE_CLICK = ("That decision was for a card that is no longer the one waiting (it was edited, re-checked or "
               "decided since): nothing was written. Review the card shown now.")
_PREVIEWS = Path(tempfile.mkdtemp(prefix="docgemma-previews-"))
atexit.register(shutil.rmtree, _PREVIEWS, ignore_errors=True)


def preview_image(filename: str, data: bytes, max_bytes: int, max_pixels: int = DEFAULT_MAX_PIXELS) -> Any:
    """The upload as a PIL image the page can show (DICOM is windowed); None when it is not a readable image."""
    try:  # the turn that sends these bytes reuses this decode
        return decode_upload(filename, data, max_bytes, max_pixels)
    except ImageError:
        return None


def preview_png(filename: str, data: bytes, max_bytes: int, max_pixels: int = DEFAULT_MAX_PIXELS,
                name: str = "") -> str | None:
    """A PNG file the chat can show; None when the upload is not a readable image. The caller deletes it
    (:func:`delete_previews`) once Gradio has copied it into its cache; ``name`` (hex) names a preview that is
    kept and reused instead."""
    image = preview_image(filename, data, max_bytes, max_pixels)
    if image is None:
        return None
    path = _PREVIEWS / f"{name if name.isalnum() else uuid.uuid4().hex}.png"
    image.save(path, format="PNG")
    return str(path)


def delete_previews(paths: list[str]) -> None:
    """Remove preview files written for a turn."""
    for path in paths:
        Path(path).unlink(missing_ok=True)


class NetworkStatus:
    """Whether the knowledge tools' APIs answer, probed once in the background at start-up."""

    def __init__(self, probe: Any) -> None:
        self.text = "checking…"
        #: None until the probe has answered.
        self.reachable: bool | None = None
        self._thread = threading.Thread(target=self._run, args=(probe,), daemon=True)
        self._thread.start()

    def _run(self, probe: Any) -> None:
        self.reachable = bool(probe())
        self.text = ("reachable" if self.reachable else
                     "offline — the FDA, literature and trial look-ups are not available on this machine")


def _gr() -> Any:
    import gradio as gr

    return gr


@dataclass
class Page:
    """The page's components (:func:`layout`): what the handlers update and :func:`wire` connects."""

    thread: Any
    saved_thread: Any
    card_id: Any
    #: The form's values as JSON when Override & approve is pressed (a State: not an input of the /override API).
    form_args: Any
    queued_image: Any
    record_images: Any
    selected: Any
    header: Any
    status_md: Any
    chatbot: Any
    approval: Any
    approval_md: Any
    approval_args: Any
    card_ref: Any
    field_boxes: list[Any]
    field_checks: list[Any]
    override_row: Any
    override_reason: Any
    override: Any
    approve: Any
    edit: Any
    reject: Any
    decision_note: Any
    follow_buttons: list[Any]
    queued_note: Any
    box: Any
    patient_query: Any
    find: Any
    matches: Any
    use: Any
    patient_md: Any
    images: Any
    send_image: Any
    timeline: Any
    new_conversation: Any
    #: The active patient's name and safety flags above the chat (sticky on a phone: ``ui/strip.py``).
    patient_strip: Any
    #: One button under an interrupted turn that sends its message again, and that message (issue 46).
    send_again: Any
    resend: Any

    def card_parts(self) -> list[Any]:
        """Every component the approval card's updates touch."""
        return [self.approval, self.approval_md, self.approval_args, self.card_id, self.override_row,
                self.override_reason, *self.form_parts()]

    def form_parts(self) -> list[Any]:
        """The card's parts added after the API's outputs were fixed (appended there, in this order)."""
        return [self.card_ref, *self.field_boxes, *self.field_checks, self.approve]


def _approval_card(gr: Any) -> dict[str, Any]:
    """The approval card: a header (who, findings), one field per value with its checks, the card's reference
    (a decision names it), the buttons. Hidden until a write waits."""
    parts: dict[str, Any] = {"field_boxes": [], "field_checks": []}
    with gr.Group(visible=False, elem_id="approval") as parts["approval"]:
        parts["approval_md"] = gr.Markdown(elem_id="approval-header")
        for i in range(MAX_FIELDS):  # each value, with the checks about it right under it
            parts["field_boxes"].append(gr.Textbox(visible=False, elem_id=f"card-field-{i}"))
            parts["field_checks"].append(gr.Markdown(visible=False, elem_classes=["field-checks"],
                                                     elem_id=f"card-checks-{i}"))
        # The arguments as JSON: the /edit API's input (the page edits the fields above).
        parts["approval_args"] = gr.Textbox(visible=False, label="Arguments (JSON)", lines=4)
        with gr.Row(visible=False) as parts["override_row"]:
            parts["override_reason"] = gr.Textbox(label="Override reason (required for a severe finding)",
                                                  scale=3, elem_id="override-reason")
            parts["override"] = gr.Button("Override & approve", variant="stop", scale=1, elem_id="override")
        with gr.Row():
            parts["approve"] = gr.Button("Approve", variant="primary", elem_id="approve")
            parts["edit"] = gr.Button(RECHECK, elem_id="edit")
            parts["reject"] = gr.Button("Reject", variant="stop", elem_id="reject")
        # The id and version of the card shown, sent with each click so that it decides only what the clinician
        # sees; kept off the screen (an id is no clinical text: issue 27).
        parts["card_ref"] = gr.Textbox(label="Card", interactive=False, max_lines=1, elem_id="card-ref", visible=False)
        parts["decision_note"] = gr.Markdown(elem_id="decision-note")
    return parts


def _patient_panel(gr: Any) -> dict[str, Any]:
    parts: dict[str, Any] = {}
    with gr.Accordion("Patient", open=True, elem_id="patient-panel"):
        parts["matches"] = gr.Dropdown(label="Patients on record (pick one, or search below)",
                                       choices=[(CHOOSE_PATIENT, "")], value="", interactive=True,
                                       elem_id="patient-matches")
        # Secondary: choosing a patient is a step of the panel, not the page's main action.
        parts["use"] = gr.Button("Make active patient", variant="secondary", size="sm", elem_id="patient-select")
        with gr.Row():
            parts["patient_query"] = gr.Textbox(label="Search patient by name", scale=3, elem_id="patient-search")
            parts["find"] = gr.Button("Search", scale=1, size="sm")
        parts["patient_md"] = gr.Markdown(NO_PATIENT, elem_id="patient-summary")
        parts["images"] = gr.Gallery(label="Images on record", height=160, columns=3, allow_preview=True,
                                     elem_id="record-images")
        parts["send_image"] = gr.Button("Send selected image to the chat", size="sm", elem_id="send-image")
    return parts


#: The phone's way from the answer to the timeline (shown on narrow screens only: ``ui/style.py``).
TIMELINE_LINK = "[How this answer was reached: the timeline ↓](#timeline)"


def layout() -> Page:
    """The page's components, created inside the caller's ``gr.Blocks`` context: a header (the disclaimer,
    once, and the status line), then three columns at desktop width (conversation | reasoning timeline |
    patient), stacked in that order on a phone."""
    gr = _gr()
    thread = gr.State(lambda: new_thread_id())
    saved_thread = gr.BrowserState(None, storage_key=BROWSER_KEY, secret=BROWSER_SECRET)
    card_id = gr.State("")
    form_args = gr.State("")
    queued_image = gr.State(None)
    record_images = gr.State([])
    selected = gr.State(None)
    header = gr.Markdown(header_markdown(None), elem_id="header")
    status_md = gr.Markdown(elem_id="status")
    with gr.Row():
        with gr.Column(scale=7, min_width=340):  # the conversation is what is read: the widest column
            patient_strip = gr.Markdown(NO_ACTIVE, elem_id="patient-strip")
            chatbot = gr.Chatbot(value=[{"role": "assistant", "content": WELCOME}], label="Conversation",
                                 elem_id="chat")
            # On a phone the timeline sits below the examples (~3,400 px down): one tap away from the answer.
            gr.Markdown(TIMELINE_LINK, elem_id="timeline-link")
            card = _approval_card(gr)
            with gr.Row():
                # A class of their own: a browser test tells them from the example requests.
                follow_buttons = [gr.Button(visible=False, size="sm", elem_classes=["follow-up"]) for _ in range(MAX_FOLLOW_UPS)]
            send_again = gr.Button(SEND_AGAIN, visible=False, variant="primary", size="sm", elem_id="send-again")
            resend = gr.State("")
            queued_note = gr.Markdown()
            box = gr.MultimodalTextbox(
                label=INPUT_LABEL,
                show_label=False,
                placeholder="Ask a clinical question, or attach an image (PNG, JPEG, DICOM)",
                file_types=[".png", ".jpg", ".jpeg", ".dcm", ".dicom"],
                file_count="single",
                elem_id="input",
            )
            gr.Examples([[{"text": e, "files": []}] for e in EXAMPLES], inputs=box, label="Examples (click one)",
                        examples_per_page=len(EXAMPLES), elem_id="examples")
            # The conversation survives reloads: on a shared computer, the next clinician starts afresh here.
            new_conversation = gr.Button("New conversation (clears this chat from this browser)", size="sm",
                                         variant="secondary", elem_id="new-conversation")
        with gr.Column(scale=4, min_width=300), gr.Accordion("Reasoning timeline (last turn)", open=True):
            timeline = gr.Markdown(NO_TURN, elem_id="timeline")
        with gr.Column(scale=4, min_width=300):
            panel = _patient_panel(gr)
    return Page(
        thread=thread, saved_thread=saved_thread, new_conversation=new_conversation, header=header,
        card_id=card_id, form_args=form_args, queued_image=queued_image, record_images=record_images, selected=selected,
        status_md=status_md, chatbot=chatbot, approval=card["approval"], approval_md=card["approval_md"],
        approval_args=card["approval_args"], card_ref=card["card_ref"], field_boxes=card["field_boxes"],
        field_checks=card["field_checks"], override_row=card["override_row"],
        override_reason=card["override_reason"], override=card["override"], approve=card["approve"],
        edit=card["edit"], reject=card["reject"], decision_note=card["decision_note"], follow_buttons=follow_buttons,
        queued_note=queued_note, box=box, patient_query=panel["patient_query"], find=panel["find"],
        matches=panel["matches"], use=panel["use"], patient_md=panel["patient_md"], images=panel["images"],
        send_image=panel["send_image"], timeline=timeline, patient_strip=patient_strip, send_again=send_again,
        resend=resend,
    )


def header_markdown(mode: Mode | None) -> str:
    """The page's title and the decision-support disclaimer, once per page (not under every answer)."""
    demo = ("  \n*This demo writes no medical text: a look-up's answer is the information as the source returned it, "
            "without interpretation.*" if mode is not None and not mode.medical_text else "")
    return ("## DocGemma Connect — clinical decision support\n"
            "*Decision support only: verify before acting. Nothing is written to the record without your approval.*"
            + demo)


def welcome_text(mode: Mode, can_do: str) -> str:
    """The greeting: what this installation really offers (``can_do``: :meth:`Workspace.capabilities`)."""
    attach = (" You can attach an image (PNG, JPEG or DICOM)." if mode.images else
              " An attached image (PNG, JPEG or DICOM) is shown, not read.")
    return (f"Hello, I am **DocGemma Connect**, a clinical decision-support assistant. "
            f"{escape(can_do)}{attach} Pick a patient in the panel or ask about one by name. "
            "Nothing is written to the record without your approval, and the timeline beside the chat shows how "
            "each answer was reached.")


class Handlers:
    """What the page does, one method per event. Layout only: the work is the workspace's."""

    def __init__(self, workspace: Workspace, page: Page, settings: Settings, model_line: str, note: str | None,
                 network: NetworkStatus | None) -> None:
        self.workspace = workspace
        self.page = page
        self.max_bytes = settings.max_image_bytes
        self.max_pixels = settings.max_image_pixels
        self.model_line = model_line
        self.note = note
        self.network = network
        self.mode = workspace.mode
        #: The running registry's tools: their labels in the steps, their fields on the card, their sources.
        self.tools = workspace.tools
        self.image_store = settings.image_store_path
        #: The turns running in this process: a turn outlives the page that sent it (a reload follows it).
        self.runs = TurnRuns()

    def roots(self) -> tuple[Path, ...]:
        """The folders a client may name a file in: Gradio's uploads, the image store, our previews."""
        return allowed_roots(self.image_store, _PREVIEWS)

    def status(self) -> str:
        return status_line(self.model_line, self.note, self.network.text if self.network else "not checked")

    def welcome(self) -> str:
        offline = None if self.network is None or self.network.reachable is None else not self.network.reachable
        return welcome_text(self.mode, self.workspace.capabilities(offline))

    def patient_view(self, patient: PatientRef | None) -> tuple[str, list[tuple[str, str]], list[dict[str, Any]], str]:
        """The panel's summary, its gallery (and the images behind it), and the strip above the chat."""
        panel = self.workspace.patient_panel(patient)
        if panel.message is not None:
            # An unreadable record is said in the strip too: its flags are unknown, not absent.
            return panel.message, [], [], NO_ACTIVE if panel.message == NO_PATIENT else panel.message
        gallery, stored = [], []
        for image in panel.images:
            # Gradio stores the shown image itself: no file of ours.
            shown = preview_image(image.filename, image.data, self.max_bytes, self.max_pixels)
            if shown is not None:
                gallery.append((shown, image.description))
                stored.append({"filename": image.filename, "data": image.data, "description": image.description})
        return (summary_markdown(str(panel.name), str(panel.summary), panel.notes), gallery, stored,
                strip_markdown(panel.name, panel.summary))

    def after_turn(self, result: TurnResult | None, pending: bool = False) -> dict[Any, Any]:
        """The timeline and the follow-up buttons of ``result``."""
        follow = list(result.follow_ups)[:MAX_FOLLOW_UPS] if result and not pending else []
        updates: dict[Any, Any] = {
            self.page.timeline: timeline_markdown(result, pending=pending, names=self.workspace.patient_name,
                                                  tools=self.tools),
        }
        for i, button in enumerate(self.page.follow_buttons):
            updates[button] = _gr().update(value=follow[i] if i < len(follow) else "", visible=i < len(follow))
        return updates

    def patient_shown(self, patient: PatientRef | None) -> dict[Any, Any]:
        """The panel, the strip and the list, all showing ``patient`` (a turn may have made another one active)."""
        summary, gallery, stored, strip = self.patient_view(patient)
        return {self.page.patient_md: summary, self.page.patient_strip: strip, self.page.images: gallery,
                self.page.record_images: stored, self.page.matches: self.patient_choices(active=patient)}

    def run_events(self, events: Iterator[AgentEvent], history: list[Any], thread: str) -> Iterator[dict[Any, Any]]:
        """The turn's events on the chat, then the card, timeline and patient its last event shows: a finished
        turn's result carries them (no read of the conversation's checkpoint); a turn paused for a write is read
        once, for its timeline so far."""
        result: TurnResult | None = None
        pending: ApprovalCard | None = None
        for event in events:
            history = apply_event(history, event, self.workspace.patient_name, self.workspace.patient_born, self.tools)
            if isinstance(event, TurnDone):
                result = event.result
            elif isinstance(event, ApprovalRequest):
                pending = event.request  # the card waits (also when a turn was refused because of it)
            yield {self.page.chatbot: history}
        # While a write waits, the timeline is that paused turn's (from the thread's state), not the last one's.
        shown = result if pending is None else self.workspace.paused_turn(thread)
        # A refusal before the graph ran (an empty message) did not touch the conversation: the panel stays.
        patient = self.patient_shown(shown.active_patient) if shown is not None and shown.ran else {}
        # A message the turn refused and kept nowhere (TurnRuns holds it for a reload) goes back in the box.
        back = {self.page.box: _gr().update(value={"text": result.unsent, "files": []})} \
            if result is not None and result.unsent else {}
        yield {self.page.chatbot: history, **self.card(pending), **patient, **back,
               **self.after_turn(shown, pending=pending is not None)}

    def card(self, pending: ApprovalCard | None) -> dict[Any, Any]:
        """The approval card's components for the waiting write (hidden when there is none)."""
        gr = _gr()
        shown, general = card_fields(pending, self.tools) if pending else ([], [])
        updates: dict[Any, Any] = {
            self.page.approval: gr.update(visible=pending is not None),
            self.page.approval_md: card_header(pending, general) if pending else "",
            self.page.approval_args: args_json(pending),
            self.page.card_id: card_reference(pending) if pending else "",
            self.page.card_ref: card_reference(pending) if pending else "",
            self.page.override_row: gr.update(visible=bool(pending and pending.get("override_required"))),
            self.page.override_reason: "",
            # A refused plain approval is not offered: the button is greyed out and says why.
            self.page.approve: gr.update(
                interactive=not (pending and pending.get("override_required")),
                variant="secondary" if pending and pending.get("override_required") else "primary",
                value="Approve (refused: severe finding)" if pending and pending.get("override_required") else "Approve"),
        }
        for i, (box, checks) in enumerate(zip(self.page.field_boxes, self.page.field_checks, strict=True)):
            f = shown[i] if i < len(shown) else None
            updates[box] = gr.update(visible=f is not None, label=f.label if f else "", value=f.value if f else "",
                                     lines=f.lines if f else 1)
            updates[checks] = gr.update(visible=bool(f and f.checks), value=check_markdown(f.checks) if f else "")
        return updates

    def restore(self, saved: object) -> dict[Any, Any]:
        """On page load: reopen the conversation whose id the browser kept (every turn, waiting card, patient
        panel, last timeline), or start a fresh one when the browser has none or sends something else."""
        thread, restored = thread_from_browser(saved)
        if not restored:
            return self.new_conversation(thread)
        # A write whose approval died with its app process is settled first: a write that landed is then in the
        # conversation ("The prescription was written: …"), a card nothing was written for waits again, said here.
        settled = self.workspace.settle(thread)
        conversation = self.workspace.saved(thread)
        pending = conversation.pending
        if conversation.transcript or not conversation.messages:
            history = transcript_history(self.welcome(), conversation.transcript, pending,
                                         conversation.paused_question, self.transcript_image,
                                         self.workspace.patient_born, self.workspace.patient_name, self.tools)
        else:  # a conversation saved before the transcript was kept: its prompt history is all there is
            history = restored_history(conversation.messages, pending, conversation.paused_question)
        last = self.workspace.paused_turn(thread) if pending is not None else conversation.last_turn
        updates = {self.page.thread: thread, self.page.saved_thread: thread, self.page.chatbot: history,
                   self.page.decision_note: escape(settled) if pending is not None else "",
                   self.page.header: header_markdown(self.mode),
                   **self.card(pending), **self.after_turn(last, pending=pending is not None),
                   **self.patient_shown(conversation.active_patient), **self.resend_offered("")}
        return {**updates, **self.unfinished_turn(thread, conversation, history), **self.held_back(thread, updates)}

    def held_back(self, thread: str, updates: dict[Any, Any]) -> dict[Any, Any]:
        """The message this conversation refused without keeping it (``TurnRuns.hold``), back in the reopened
        page's box with the note that says why (after the note ``updates`` gives); nothing when there is none."""
        held = self.runs.held(thread)
        if held is None:
            return {}
        why = BUSY if self.runs.running(thread) is not None else HELD_BACK
        shown = updates.get(self.page.decision_note) or ""
        back = {self.page.box: _gr().update(value={"text": held.text, "files": []}),
                self.page.decision_note: f"{shown}\n\n*{why}*" if shown else f"*{why}*"}
        if held.attachment is not None:  # its image is attached to the next message again
            back |= {self.page.queued_image: held.attachment,
                     self.page.queued_note: f"*Attached to your next message: {escape(held.attachment['filename'])}*"}
        return back

    def unfinished_turn(self, thread: str, conversation: SavedConversation, history: list[Any]) -> dict[Any, Any]:
        """A reopened conversation's last message whose turn has not ended (``history`` ends with it, told as not
        answered): still running here, its answer follows (:meth:`follow`); its run gone, the one line that says
        so and one button that sends it again. Nothing when the last turn ended."""
        run = self.runs.running(thread)
        entry = conversation.unfinished
        if entry is None and run is None:
            return {}
        if entry is None:  # sent a moment ago: the turn has not kept it yet
            history = [*history, user_message(run.message)] if run is not None and run.message.strip() else history
        else:
            history = history[:-1]  # the "not answered" line transcript_history gives every cut-off message
        # The previous answer's timeline and follow-ups are not this turn's: they leave the page.
        if run is not None:
            return {**self.after_turn(None), self.page.chatbot: [*history, answering_line()],
                    self.page.timeline: RUNNING_TURN}
        question = str((entry or {}).get("question", ""))
        line = INTERRUPTED_AFTER_WRITE if conversation.wrote else INTERRUPTED
        updates = {**self.after_turn(None), self.page.chatbot: [*history, {"role": "assistant", "content": line}],
                   self.page.timeline: CUT_OFF_TURN}
        image = self.workspace.image((entry or {}).get("image"))
        if image is not None:  # the message's image goes with it again (attached to the next message sent)
            updates |= {self.page.queued_image: {"filename": image[0], "data": image[1]},
                        self.page.queued_note: f"*Attached to your next message: {escape(image[0])}*"}
        return {**updates, **self.resend_offered(question, image is not None)}

    def resend_offered(self, question: str, image: bool = False) -> dict[Any, Any]:
        """The Send again button for ``question`` (and the image queued with it); hidden when there is neither."""
        return {self.page.send_again: _gr().update(visible=bool(question.strip()) or image),
                self.page.resend: question}

    def follow(self, thread: str, history: list[Any]) -> Iterator[dict[Any, Any]]:
        """After a reload: the answer of the conversation's turn still running here, streamed into the reopened chat
        (its events from the first; the pending line restore left is replaced by its steps)."""
        run = self.runs.running(thread)
        if run is None:
            yield {self.page.chatbot: _gr().skip()}  # nothing runs: the reopened page stays as it is
            return
        yield from self.run_events(run.follow(), safe_history(history or [], self.roots()), thread)

    def transcript_image(self, entry: TranscriptEntry) -> dict[str, Any] | None:
        """A reopened turn's image as a chat message (a PNG preview), or None when the store no longer has it."""
        found = self.workspace.image(entry.get("image"))
        ref: dict[str, Any] = dict(entry.get("image") or {})
        # Named by the image's hash: a page reopened again reuses the file (removed when the app exits).
        png = preview_png(found[0], found[1], self.max_bytes, self.max_pixels, name=str(ref.get("sha256") or "")) \
            if found else None
        if png is None:
            return None
        return {"role": "user", "content": {"path": png, "alt_text": found[0] if found else "image"}}

    def new_conversation(self, thread: str | None = None) -> dict[Any, Any]:
        """A fresh conversation: a new id (kept by the browser), an empty chat, no card, no active patient. The
        previous conversation stays in the database, untouched (a write it left waiting is not made)."""
        thread = thread or new_thread_id()
        return {self.page.thread: thread, self.page.saved_thread: thread,
                self.page.chatbot: [{"role": "assistant", "content": self.welcome()}], self.page.decision_note: "",
                self.page.header: header_markdown(self.mode),
                self.page.queued_image: None, self.page.queued_note: "", **self.card(None),
                **self.after_turn(None), **self.patient_shown(None), **self.resend_offered("")}

    def respond(
        self, message: dict[str, Any], history: list[Any], thread: str, queued: dict[str, Any] | None
    ) -> Iterator[dict[Any, Any]]:
        message = message or {}  # an empty box sends nothing at all
        text = str(message.get("text") or "")
        files = message.get("files") or []
        if not text.strip() and not files and not queued:
            # Nothing to send: the screen stays as it was (the last answer is not replaced by a prompt to type).
            # gr.skip() changes nothing; a generator that yields nothing would set every output to None.
            _gr().Info(EMPTY_MESSAGE)
            yield {self.page.chatbot: _gr().skip()}
            return
        attachment: dict[str, Any] | None = None
        history = safe_history(history, self.roots())
        if text.strip():
            # The clinician's own text is shown as text too: no HTML, no remote images (![x](http://…)).
            history.append(user_message(text))
        if files:
            first = files[0]
            try:  # checked before anything opens it, however the app is served
                path = checked_path(first if isinstance(first, str) else str(first.get("path", "")), self.roots())
            except UploadRefused as refused:
                yield {self.page.chatbot: [*history, {"role": "assistant", "content": escape(str(refused))}],
                       self.page.box: _gr().update(value=None)}
                return
            size = path.stat().st_size
            if size > self.max_bytes:  # also when launched without max_file_size: never read into memory
                note = f"{size_error(path.name, size, self.max_bytes)} Nothing was sent."
                yield {self.page.chatbot: [*history, {"role": "assistant", "content": escape(note)}],
                       self.page.box: _gr().update(value=None)}
                return
            attachment = {"filename": path.name, "data": path.read_bytes()}
        elif queued:
            attachment = {"filename": queued["filename"], "data": queued["data"]}
        run = self.runs.running(thread)
        if run is not None:  # one turn at a time per conversation: the message stays in the box, and a reload
            yield from self.busy(thread, text, attachment)  # gives it back there
            return
        previews: list[str] = []
        if attachment:
            png = preview_png(attachment["filename"], attachment["data"], self.max_bytes, self.max_pixels)
            if png:
                previews.append(png)
                history.append({"role": "user", "content": {"path": png, "alt_text": attachment["filename"]}})
        try:
            yield {self.page.box: _gr().update(value=None), self.page.queued_image: None, self.page.queued_note: "",
                   self.page.decision_note: ""}
            # Run apart from this handler: Gradio drops the handler when its page is reloaded, the turn goes on.
            started = self.runs.start(thread, self.workspace.turn(thread, text, attachment), text,  # type: ignore[arg-type]
                                      attachment)
            if started is None:  # another page of this conversation sent one a moment ago
                yield from self.busy(thread, text, attachment, back=True)
                return
            yield from self.run_events(started.follow(), history, thread)
        finally:
            delete_previews(previews)  # Gradio copied them into its cache when the history was sent

    def busy(self, thread: str, text: str, attachment: dict[str, Any] | None,
             back: bool = False) -> Iterator[dict[Any, Any]]:
        """A message refused because the conversation's previous turn still runs: said, and held for a reloaded
        page (``TurnRuns.hold``). ``back``: the box was already emptied for sending, so the message is put back."""
        self.runs.hold(thread, Held(text, attachment))
        _gr().Warning(BUSY)
        shown: dict[Any, Any] = {}
        if back:
            shown[self.page.box] = _gr().update(value={"text": text, "files": []})
            if attachment is not None:  # its image waits with it, attached to the next message
                shown |= {self.page.queued_image: attachment,
                          self.page.queued_note: f"*Attached to your next message: {escape(attachment['filename'])}*"}
        yield {**shown, self.page.decision_note: f"*{BUSY}*"}

    def fields_json(self, thread: str, current: str, *values: str | None) -> str:
        """The card's form fields as the JSON arguments a re-check sends (unchanged when no card waits)."""
        pending = self.workspace.pending(thread)
        edited = edited_args(pending, values, self.tools) if pending else None
        return current if edited is None else json.dumps(edited, indent=1)

    def decide(self, action: str, edited: str, history: list[Any], thread: str,
               card: str | None, user: str = "", form: str = "") -> Iterator[dict[Any, Any]]:
        """A decision on the card whose reference the page shows (``card``). A decision without it, or on any
        other card (one replaced by an edit, or already decided), is refused as stale: a click decides only
        what the clinician saw. ``user``: the signed-in user (named in the write's Provenance).

        Approve sends the form's values as JSON (``edited``: the page puts them there; an API client's JSON, or
        none), Override & approve in ``form`` (its ``edited`` is the reason): values that differ from the card's
        are checked again by the agent before anything is written (``tool_execute._approval``)."""
        history = safe_history(history, self.roots())
        pending = self.workspace.pending(thread)
        if not card or pending is None or card != card_reference(pending):
            note = STALE_CLICK if pending is not None else NO_PENDING
            _gr().Warning(note)
            yield {self.page.decision_note: f"*{note}*"}
            return
        decision: dict[str, Any] = {"action": action, "card_id": card, **({"approved_by": user} if user else {})}
        if action == "override":
            decision["reason"] = edited
            if not edited.strip():
                yield {self.page.decision_note: "**An override needs a reason; nothing was written.**"}
                return
        values = edited if action in ("edit", "approve") else form if action == "override" else ""
        if values.strip() or action == "edit":
            try:
                decision["args"] = json.loads(values)
            except json.JSONDecodeError:
                yield {self.page.decision_note: "**The edited arguments are not valid JSON; nothing was written.**"}
                return
            if not isinstance(decision["args"], dict):
                yield {self.page.decision_note: "**The edited arguments are not a JSON object; nothing was written.**"}
                return
        events = self.workspace.resume(thread, decision)
        first = next(events, None)
        if isinstance(first, TurnDone) and first.result.answer in (ALREADY_HANDLED, NO_PENDING, BEING_WRITTEN):
            # A losing click touches neither the conversation nor the card: the winner's output stays on the page.
            _gr().Warning(first.result.answer)
            yield {self.page.decision_note: f"*{first.result.answer}*"}
            return
        yield {self.page.decision_note: ""}
        yield from self.run_events(itertools.chain([first] if first else [], events), history, thread)

    def patient_choices(self, found: list[PatientMatch] | None = None, active: PatientRef | None = None) -> Any:
        """The patient list: every patient on record (the demo's handful), or the matches of a search; the
        conversation's ``active`` patient, when listed, is the one shown chosen (a reload matches the panel)."""
        listed = self.workspace.patients() if found is None else found
        remember(p["name"] for p in listed)  # the names this page shows are kept out of the log
        choices = [(list_label(p), list_value(p)) for p in listed]
        if found and choices:  # a search's first match is ready to be made active
            return _gr().update(choices=choices, value=choices[0][1])
        first = (NO_MATCH if found is not None else CHOOSE_PATIENT, "")
        # Matched by id: the list's value carries the record's spelling of the name.
        shown = next((list_value(p) for p in listed if active and p["id"] == active["id"]), "")
        return _gr().update(choices=[first, *choices], value=shown)

    def search(self, query: str) -> Any:
        if not query.strip():
            return self.patient_choices()
        return self.patient_choices(self.workspace.search_patients(query))

    def select(self, choice: str | None, history: list[Any], thread: str) -> dict[Any, Any]:
        history = safe_history(history or [], self.roots())
        try:
            patient = from_list_value(choice)
        except ValueError:  # an API client's value that names no patient of the list: nothing is changed
            return {self.page.decision_note: f"*{NOT_LISTED}*"}
        waiting = self.workspace.pending(thread)
        if patient and self.workspace.select_patient(thread, patient):
            # Said in the conversation, so nobody reads the next answer as being about the previous patient.
            history.append({"role": "assistant", "content": f"*Active patient is now {escape(patient['name'])}.* "
                            "Earlier messages about the previous patient are not used for the next answers."})
            if waiting is not None:  # the switch withdrew the card: said, and the card leaves the page
                history.append({"role": "assistant", "content": f"*{escape(withdrawn_note(waiting))}*"})
        return self._selected(patient or self.workspace.active_patient(thread), history)

    def card_now(self, thread: str) -> dict[Any, Any]:
        """The card as the conversation has it now (hidden when none waits: a patient switch withdrew it)."""
        return self.card(self.workspace.pending(thread))

    def _selected(self, patient: PatientRef | None, history: list[Any]) -> dict[Any, Any]:
        # No choice changes nothing: the panel goes on showing the conversation's active patient.
        summary, gallery, stored, strip = self.patient_view(patient)
        return {self.page.patient_md: summary, self.page.images: gallery, self.page.record_images: stored,
                self.page.chatbot: history, self.page.decision_note: "", self.page.patient_strip: strip}

    def queue_image(self, index: int | None, stored: list[dict[str, Any]]) -> tuple[Any, str]:
        if index is None or index >= len(stored):
            return None, "*Select an image first.*"
        item = stored[index]
        return item, f"*Attached to your next message: {item['description']}*"


def signed_in(request: Any) -> str:
    """The signed-in user's name (``DOCGEMMA_AUTH``); empty when the app has no login."""
    return str(getattr(request, "username", None) or "")


def _decider(on: Handlers, action: str) -> Any:
    """The handler of one decision button, with the signed-in user from Gradio's request (not an API input)."""

    def decide(edited: str, history: list[Any], thread: str, card: str | None, request: Any) -> Iterator[dict[Any, Any]]:
        yield from on.decide(action, edited, history, thread, card, user=signed_in(request))

    # Gradio finds the request argument by its annotation object; postponed annotations are strings here.
    decide.__annotations__["request"] = _gr().Request
    return decide


def _override_decider(on: Handlers) -> Any:
    """Override & approve's handler: the reason, and the form's values from a State (no input of the API)."""

    # ``edited`` (the reason) keeps the /override API's parameter name.
    def decide(edited: str, history: list[Any], thread: str, card: str | None, form: str | None,
               request: Any) -> Iterator[dict[Any, Any]]:
        yield from on.decide("override", edited, history, thread, card, user=signed_in(request), form=form or "")

    decide.__annotations__["request"] = _gr().Request
    return decide


def _wire_send_again(page: Page, on: Handlers, chat: list[Any], outputs: list[Any]) -> None:
    """"Send again" resends an interrupted message; any message sent withdraws that offer (steps of the page only,
    not API endpoints)."""
    page.box.submit(lambda: _gr().update(visible=False), None, page.send_again, queue=False, api_visibility="private")
    page.send_again.click(lambda q: ({"text": q, "files": []}, _gr().update(visible=False)), page.resend,
                          [page.box, page.send_again], queue=False, api_visibility="private").then(
        on.respond, chat, outputs, api_visibility="private")


def wire(page: Page, on: Handlers, demo: Any) -> None:
    """Connect the components to the handlers. The ``api_name``s are the app's API: /respond, /approve, /edit,
    /reject, /override, /search_patients, /select_patient. A decision's API call names the card it decides on
    (its last input, the reference the card shows, ``card_id`` in /respond's output)."""
    gr = _gr()
    # The API's outputs keep their order; what the form added comes last.
    outputs = [
        page.chatbot, page.approval, page.approval_md, page.approval_args, page.timeline, page.patient_md, page.images,
        page.record_images, page.box, page.queued_image, page.queued_note, *page.follow_buttons, page.card_id,
        page.override_row, page.override_reason, page.decision_note, *page.form_parts(), page.matches,
        page.patient_strip,
    ]
    chat = [page.box, page.chatbot, page.thread, page.queued_image]
    card = [page.approval_args, page.chatbot, page.thread, page.card_ref]
    page.box.submit(on.respond, chat, outputs, api_name="respond")
    _wire_send_again(page, on, chat, outputs)
    # The form's fields become the JSON of /approve and /edit first (a step of the page only), so the API keeps its
    # inputs: Approve writes what the form shows, checked again by the agent when it differs from the card.
    form = [page.thread, page.approval_args, *page.field_boxes]
    page.approve.click(on.fields_json, form, page.approval_args, api_visibility="private").then(
        _decider(on, "approve"), card, outputs, api_name="approve")
    page.edit.click(on.fields_json, form, page.approval_args, api_visibility="private").then(
        _decider(on, "edit"), card, outputs, api_name="edit")
    page.reject.click(_decider(on, "reject"), card, outputs, api_name="reject")
    # /override's inputs stay (reason, chat, card): the form's values travel in a State the API does not show.
    page.override.click(on.fields_json, form, page.form_args, api_visibility="private").then(
        _override_decider(on), [page.override_reason, page.chatbot, page.thread, page.card_ref, page.form_args],
        outputs, api_name="override")
    for button in page.follow_buttons:
        button.click(lambda q: {"text": q, "files": []}, button, page.box).then(on.respond, chat, outputs)
    page.find.click(on.search, page.patient_query, page.matches, api_name="search_patients")
    page.patient_query.submit(on.search, page.patient_query, page.matches)
    page.use.click(on.select, [page.matches, page.chatbot, page.thread],
                   [page.patient_md, page.images, page.record_images, page.chatbot, page.decision_note,
                    page.patient_strip],
                   api_name="select_patient").then(
        # The /select_patient API keeps its outputs; the card a switch withdrew leaves the page in a step of its own.
        on.card_now, page.thread, page.card_parts(), api_visibility="private")

    def on_select(evt: Any) -> int:
        return int(evt.index)

    # Gradio finds the event argument by its annotation object; postponed annotations are strings here.
    on_select.__annotations__["evt"] = gr.SelectData
    page.images.select(on_select, None, page.selected)
    page.send_image.click(on.queue_image, [page.selected, page.record_images], [page.queued_image, page.queued_note])
    # Not API endpoints: an API client has its own session thread and nothing in a browser to restore.
    session = [page.thread, page.saved_thread, page.chatbot, page.decision_note, page.queued_image, page.queued_note,
               page.box, page.header, page.matches, *page.card_parts(), page.timeline, page.patient_md, page.images,
               page.record_images, *page.follow_buttons, page.patient_strip, page.send_again, page.resend]
    # The status line comes after the restore, so that its showing means the page is the reopened conversation.
    demo.load(on.restore, page.saved_thread, session, api_visibility="private").then(
        on.status, None, page.status_md).then(
        # A turn still running when the page was reloaded: its answer follows (waiting is no model work: no limit).
        # No loading marks: on nearly every load nothing runs, and the page's parts must not flicker "0.1s".
        on.follow, [page.thread, page.chatbot], outputs, api_visibility="private", concurrency_limit=None,
        show_progress="hidden")
    page.new_conversation.click(on.new_conversation, None, session, api_visibility="private")
    # Gradio does not tie the visible label to the textarea: name it for screen readers ourselves.
    demo.load(None, None, None, js=LABEL_INPUT_JS)


def build_demo(workspace: Workspace, model_line: str, note: str | None = None, network: NetworkStatus | None = None) -> Any:
    """The Blocks app over an assembled :class:`~docgemma.workspace.Workspace` (``docgemma/serve.py`` builds it):
    :func:`layout`, :class:`Handlers` on the workspace, :func:`wire`."""
    gr = _gr()
    # The CSS and the run history are serving options in Gradio 6: ui/style.page_options, wherever it is served.
    with gr.Blocks(title="DocGemma Connect", delete_cache=DELETE_CACHE) as demo:
        page = layout()
        wire(page, Handlers(workspace, page, workspace.settings, model_line, note, network), demo)
    demo.queue(default_concurrency_limit=1)
    enable_gradio_check(demo)  # Gradio's own upload-folder check, also where the app is mounted, not launched
    return demo

