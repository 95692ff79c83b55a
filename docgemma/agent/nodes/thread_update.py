"""THREAD_UPDATE: a change to the conversation made outside a turn — the patient panel's choice of active patient,
or a note that leads a recovered answer — entered through the graph like a turn, so that every write to the
thread's state is a node's (no state written from outside the graph under another node's name)."""

from __future__ import annotations

from typing import Any, Literal

from docgemma.agent.memory import switch_marker, switched
from docgemma.agent.state import AgentState, PatientChange, PatientRef, ThreadUpdate, TranscriptEntry
from docgemma.agent.transcript import appended, ended


def route_at_start(state: AgentState) -> Literal["thread_update", "input_assembly"]:
    """A thread update runs alone; anything else is a turn."""
    return "thread_update" if state.get("thread_update") else "input_assembly"


def switch_note(patient: PatientRef | None) -> str:
    """The transcript's note of a change of active patient."""
    return f"Active patient is now {patient['name'] if patient else 'none'}."


def thread_update(state: AgentState) -> dict[str, Any]:
    """Apply the request, then clear it. A change to another patient is recorded in the conversation (so the
    earlier turns, about the previous patient, no longer reach the prompts) and in the transcript; the patient
    itself is proposed to COMMIT_PATIENT, the one writer of ``active_patient``."""
    request: ThreadUpdate = state.get("thread_update") or {}
    # A proposal left by a run that stopped before COMMIT_PATIENT is cleared, never committed by a later update.
    out: dict[str, Any] = {"thread_update": None, "patient_change": None}
    transcript = list(state.get("transcript", []))
    if "set_active_patient" in request:
        patient = request["set_active_patient"]
        out["patient_change"] = PatientChange(patient=patient, by="panel")
        if switched(state.get("active_patient"), patient):
            out["conversation"] = [*state.get("conversation", []), switch_marker(patient)]
            transcript = appended(state, TranscriptEntry(note=switch_note(patient)))
            out["transcript"] = transcript
    if request.get("note"):
        out["transcript"] = appended(AgentState(transcript=transcript), TranscriptEntry(note=request["note"]))
    if request.get("turn_figures") and transcript and not transcript[-1].get("note"):
        out["transcript"] = [*transcript[:-1], {**transcript[-1], **request["turn_figures"]}]
    if request.get("sent"):  # the message, kept before its turn runs: a reload mid-answer still shows it
        out["transcript"] = appended(AgentState(transcript=transcript), {**request["sent"], "sent": True})
    if request.get("turn_end"):
        out["transcript"] = ended(transcript, request["turn_end"])
    return out
