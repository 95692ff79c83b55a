"""The clinician's workspace under any front end: the assistant and the record, and what a page does with them
(run a turn, resume a write, the patient panel, the patient search, the running tools' labels and form fields).
The web UI (``ui/``) is layout on top of this: it imports neither the agent, the tools nor the record, only this
module's public types (:data:`__all__`: the events and results a turn yields, the approval card, the patient
reference, and the few words of the agent's results a page reads).

The patient search is the agent's own ``search_patient`` tool, so the panel and the conversation find the same
patients the same way.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

from docgemma.agent.answer import strip_template_debris
from docgemma.agent.approval import ALREADY_HANDLED, BEING_WRITTEN, NO_PENDING, ApprovalCard, PatientCard, withdrawn_note
from docgemma.agent.assistant import EMPTY_MESSAGE
from docgemma.agent.confirmation import FIELD_LABELS, field_label, split
from docgemma.agent.events import AgentEvent, ApprovalRequest, NodeEnd, NodeStart, Token, TurnDone, TurnResult
from docgemma.agent.memory import SWITCH_PREFIX
from docgemma.agent.modes import Mode, capabilities, mode_of
from docgemma.agent.state import Attachment, PatientRef, TimelineEvent, TranscriptEntry
from docgemma.agent.transcript import unfinished, written
from docgemma.clinical.patient import PatientId, PatientListing, from_list_value, list_label, list_value
from docgemma.config import Settings
from docgemma.ehr.client import FhirClientError
from docgemma.fhir import display_text
from docgemma.image_store import ImageRef, load_image_bytes
from docgemma.images import ImageError
from docgemma.llm.base import Message
from docgemma.tools.args import NOT_WRITTEN, value_fields
from docgemma.tools.catalog.search_patient import PatientSearchArgs, search_patient
from docgemma.tools.http import known_offline
from docgemma.tools.outcome import Source
from docgemma.tools.registry import ToolContext, ToolRegistry

#: What a front end may import: the workspace and its types, and what a turn's events and results carry.
__all__ = [
    "ALREADY_HANDLED", "BEING_WRITTEN", "EMPTY_MESSAGE", "FIELD_LABELS", "NOT_WRITTEN", "NO_PATIENT", "NO_PENDING",
    "SWITCH_PREFIX",
    "AgentEvent", "ApprovalCard", "ApprovalRequest", "Attachment", "Mode", "NodeEnd", "NodeStart", "PatientCard",
    "PatientId", "PatientMatch", "PatientPanel", "PatientRef", "RecordImage", "SavedConversation", "Source", "TimelineEvent",
    "Token", "ToolView", "Tools", "TranscriptEntry", "TurnDone", "TurnResult", "Workspace", "field_label",
    "from_list_value", "list_label", "list_value", "split", "strip_template_debris", "withdrawn_note",
]

if TYPE_CHECKING:
    from docgemma.agent.assistant import Assistant
    from docgemma.ehr.service import Ehr
    from docgemma.ops.metrics import Metrics

#: The patient record a workspace serves, named here so the layers above (the web UI) need not import the
#: record layer to say what they pass through.
Record: TypeAlias = "Ehr"

NO_PATIENT = "*No active patient. Pick one of the demo patients above, search by name, or ask the assistant.*"
#: Patients offered in the panel's list (the demo record has a handful; a hospital's would be searched instead).
PATIENT_LIST_LIMIT = 50
#: Clinical notes shown under the summary, newest first.
NOTES_SHOWN = 3
UNREADABLE = "*The patient record could not be read.*"


@dataclass(frozen=True)
class ToolView:
    """What a page shows of one tool of the running registry (a tool a plug-in added included)."""

    label: str
    #: Its argument names, in order: a write's approval card shows each as a form field (an optional one the
    #: proposal left out too, so the clinician can fill it in).
    fields: tuple[str, ...]
    #: Reads or writes the patient record: a turn that used it names the record among its sources.
    record: bool
    #: Finds patients by name: a turn that only searched names the record's patient list.
    patient_search: bool


#: The running registry's tools by name, as a page shows them.
Tools = Mapping[str, ToolView]


def tool_views(registry: ToolRegistry) -> Tools:
    """Each tool of ``registry`` as a page shows it."""
    return MappingProxyType({spec.name: ToolView(spec.label, value_fields(spec.args_model), spec.record,
                                                 spec.patient_search) for spec in registry})


#: One patient found by name or listed: the patient's reference and their birth date.
PatientMatch = PatientListing


@dataclass
class RecordImage:
    """An image on the record (DocumentReference or Media)."""

    description: str
    filename: str
    data: bytes


@dataclass
class PatientPanel:
    """What the patient panel shows: the active patient's compiled summary and images, or why not."""

    name: str | None = None
    summary: str | None = None
    images: list[RecordImage] = field(default_factory=list)
    #: The newest clinical notes, "date · type: text" (a note saved from the chat shows here at once).
    notes: list[str] = field(default_factory=list)
    #: Markdown shown instead of a summary (no active patient, or the record could not be read).
    message: str | None = None


@dataclass
class SavedConversation:
    """A conversation as the checkpointer keeps it, for a page that reopens it (after a reload or a restart)."""

    #: The finished turns' user and assistant messages; a patient switch is a ``system`` entry.
    messages: list[Message] = field(default_factory=list)
    #: The write waiting for the clinician, if any.
    pending: ApprovalCard | None = None
    #: The question of the turn paused for that write (it joins ``messages`` only when the turn ends).
    paused_question: str | None = None
    #: Every finished turn as it was shown, and notes such as a patient chosen in the panel.
    transcript: list[TranscriptEntry] = field(default_factory=list)
    #: The last turn as far as the state holds it (its timeline, confidence and sources), if any.
    last_turn: TurnResult | None = None
    #: The conversation's active patient (the panel and the list show it).
    active_patient: PatientRef | None = None
    #: The last message when its turn has not finished: still running, or cut off by a reload or a restart.
    unfinished: TranscriptEntry | None = None
    #: True when that turn wrote to the record (an approved card) before it stopped: the page then does not say
    #: "nothing was written".
    wrote: bool = False


class Workspace:
    """One assistant and one record (``ehr`` may be None: no patient panel); ``metrics`` counts the turns."""

    def __init__(self, assistant: Assistant, ehr: Record | None, metrics: Metrics | None = None) -> None:
        self.assistant = assistant
        self.ehr = ehr
        self.metrics = metrics
        self._names: dict[str, str] = {}
        #: The tools the assistant runs, by name: their labels, form fields and kinds for the page.
        self.tools: Tools = tool_views(assistant.registry)

    @property
    def settings(self) -> Settings:
        """The settings the assistant runs with (the page's upload limits, the image store)."""
        return self.assistant.settings

    @property
    def mode(self) -> Mode:
        """What this installation can really do (the greeting and the header say only that)."""
        return mode_of(self.assistant.llm)

    def capabilities(self, offline: bool | None) -> str:
        """What the clinician can ask for here, in a sentence (``offline``: None when not known yet; a knowledge
        service already found unreachable in this process counts as offline)."""
        return capabilities(self.mode, offline or known_offline() or None)

    # ── conversation ──

    def turn(self, thread: str, message: str, attachment: Attachment | None = None) -> Iterator[AgentEvent]:
        """Run one turn; see :meth:`Assistant.stream_turn`."""
        events = self.assistant.stream_turn(thread, message, attachment)
        return self.metrics.turn(events) if self.metrics else events

    def resume(self, thread: str, decision: dict[str, Any]) -> Iterator[AgentEvent]:
        """Decide on the waiting write; see :meth:`Assistant.stream_resume`."""
        events = self.assistant.stream_resume(thread, decision)
        return self.metrics.decision(str(decision.get("action")), events) if self.metrics else events

    def settle(self, thread: str) -> str:
        """On reopening ``thread``: settle a card whose approval died with its process (see
        :meth:`Assistant.settle`). Returns what the chat should say about it ("" when nothing was to settle);
        a write that had landed is also kept in the conversation, with its turn finished."""
        said = ""
        for event in self.assistant.settle(thread):
            if isinstance(event, TurnDone):
                said = event.result.answer
        return said

    def pending(self, thread: str) -> ApprovalCard | None:
        """The write waiting for the clinician on this thread, if any."""
        return self.assistant.pending_approval(thread)

    def paused_turn(self, thread: str) -> TurnResult:
        """The turn paused for an approval, as far as it got (its timeline so far)."""
        return TurnResult.from_state(self.assistant.state(thread), 0.0)

    def saved(self, thread: str) -> SavedConversation:
        """The conversation so far, from the thread's checkpointed state (empty for an unknown thread)."""
        state = self.assistant.state(thread)
        messages = [m for m in state.get("conversation", [])
                    if m["role"] != "system" or m["content"].startswith(SWITCH_PREFIX)]
        pending = self.pending(thread)
        question = state.get("user_query") if pending is not None else None
        kept = [e for e in state.get("transcript", []) if not e.get("sent")] or [{}]
        # The turn's wall-clock time as the page showed it, kept on its transcript entry (never "0.0 s").
        last = TurnResult.from_state(state, float(kept[-1].get("latency_ms", 0.0))) if state.get("timeline") else None
        transcript = list(state.get("transcript", []))
        open_turn = unfinished(transcript)
        # The checkpoint holds the turn's own state when it paused for a card or its run was stopped (a run saves
        # when it ends, pauses or is closed); a process killed outright leaves the state before it, when the turn
        # had reached no card and so written nothing (every write passes one).
        own = open_turn is not None and open_turn.get("turn_id") == state.get("turn_id")
        if open_turn is not None and pending is not None and own:
            transcript.pop()  # the paused turn: its question and its card's line are shown with the card
            open_turn = None
        return SavedConversation(messages=messages, pending=pending, paused_question=question or None,
                                 transcript=transcript, last_turn=last, active_patient=state.get("active_patient"),
                                 unfinished=open_turn, wrote=own and bool(written(state, self.assistant.registry)))

    def image(self, ref: ImageRef | None) -> tuple[str, bytes] | None:
        """A turn's image from the image store (filename, bytes); None when it is no longer kept."""
        if not ref or ref.get("error"):
            return None
        try:
            return ref["filename"], load_image_bytes(ref)
        except ImageError:  # cleaned up since (the store is bounded) or changed on disk
            return None

    # ── patients ──

    def search_patients(self, query: str) -> list[PatientMatch]:
        """Patients matching ``query`` (2+ characters), found by the ``search_patient`` tool; none when the record
        cannot be searched."""
        if self.ehr is None or len(query.strip()) < 2:
            return []
        outcome = search_patient(self.ehr, PatientSearchArgs(name=query.strip()[:60]), ToolContext())
        if outcome.get("status") != "success":
            return []
        return [PatientMatch(id=str(m["id"]), name=str(m["name"]), birth_date=m.get("birth_date"))
                for m in outcome["data"]["matches"]]

    def patients(self) -> list[PatientMatch]:
        """The patients on record, by name, for the panel's list (at most :data:`PATIENT_LIST_LIMIT`)."""
        if self.ehr is None:
            return []
        try:
            found = self.ehr.client.search("Patient", [("_count", str(PATIENT_LIST_LIMIT))], limit=PATIENT_LIST_LIMIT)
        except FhirClientError:
            return []
        listed = [PatientMatch(id=str(p["id"]), name=display_text(p), birth_date=p.get("birthDate")) for p in found]
        return sorted(listed, key=lambda p: p["name"].split()[-1:] + p["name"].split()[:1])

    def patient_name(self, patient_id: PatientId) -> str | None:
        """The name of the patient with this id, or None (not a patient, or the record cannot be read)."""
        if self.ehr is None:
            return None
        if patient_id not in self._names:
            try:
                self._names[patient_id] = display_text(self.ehr.client.read("Patient", patient_id))
            except FhirClientError:
                return None
        return self._names[patient_id]

    def patient_born(self, patient_id: PatientId) -> str | None:
        """A patient's birth date and sex as the page says them ("born 1991-01-22, female"), or None (not a
        patient, or the record cannot be read)."""
        if self.ehr is None:
            return None
        try:
            patient = self.ehr.client.read("Patient", patient_id)
        except FhirClientError:
            return None
        sex = f", {patient['gender']}" if patient.get("gender") else ""
        return f"born {patient.get('birthDate') or 'date unknown'}{sex}"

    def active_patient(self, thread: str) -> PatientRef | None:
        """The conversation's active patient, or None."""
        return self.assistant.state(thread).get("active_patient")

    def select_patient(self, thread: str, patient: PatientRef | None) -> bool:
        """Make this the conversation's active patient; True when that switched from another patient."""
        return self.assistant.set_active_patient(thread, patient)

    def patient_panel(self, active: PatientRef | None) -> PatientPanel:
        """The summary and record images of ``active`` (a turn's result names its active patient: the record is
        read, the conversation's checkpoint is not)."""
        if not active or self.ehr is None:
            return PatientPanel(message=NO_PATIENT)
        try:
            summary = self.ehr.summary(active["id"])
            images = self.ehr.images(active["id"])
            notes = self.ehr.client.search("DocumentReference", [("patient", active["id"])], limit=200)
        except FhirClientError:
            return PatientPanel(message=UNREADABLE)
        return PatientPanel(name=active["name"], summary=summary.text,
                            images=[RecordImage(d, f, b) for d, f, b in images], notes=_notes(notes))


def _notes(documents: list[dict[str, Any]]) -> list[str]:
    """The newest text notes among ``documents`` as "date · type: text" (images and other files are skipped)."""
    out = []
    for doc in sorted(documents, key=lambda d: str(d.get("date", "")), reverse=True):
        for content in doc.get("content", []):
            attachment = content.get("attachment", {})
            if attachment.get("contentType", "").startswith("text/plain") and attachment.get("data"):
                try:
                    text = base64.b64decode(attachment["data"]).decode("utf-8", "replace")
                except (binascii.Error, ValueError):
                    continue
                kind = (doc.get("type") or {}).get("text") or "note"
                out.append(f"{str(doc.get('date', ''))[:10]} · {kind}: {' '.join(text.split())[:300]}")
                break
        if len(out) >= NOTES_SHOWN:
            break
    return out
