"""The conversation as the clinician saw it: one entry per finished turn (question, image, answer, confidence,
sources, write confirmations) and notes such as a patient chosen in the panel. It is kept in the thread's
state beside ``conversation`` (which is capped and shaped for prompts), so that a page reopened after a reload
or a restart shows every turn whole. No prompt reads it."""

from __future__ import annotations

from docgemma.agent.confirmation import details
from docgemma.agent.state import AgentState, Confidence, PatientRef, TranscriptEntry
from docgemma.tools.outcome import Source
from docgemma.tools.registry import ToolRegistry

#: Turns kept for the page; older ones drop off (the record, not the chat, is the clinical record).
TRANSCRIPT_CAP = 200


def written(state: AgentState, registry: ToolRegistry) -> list[str]:
    """Confirmations of the turn's successful writes (what, the resource id, any override reason), each followed by
    its values field by field and what the clinician changed from the proposal (:mod:`.confirmation`)."""
    out = []
    for r in state.get("tool_results", []):
        if r["status"] == "success" and r["tool_name"] in registry and registry[r["tool_name"]].writes:
            extra = details(r["args"], r.get("proposed_args"))
            out.append(registry[r["tool_name"]].formatter(r["data"]) + (f"\n{extra}" if extra else ""))
    return out


def turn_entry(state: AgentState, registry: ToolRegistry, answer: str, confidence: Confidence | None,
               sources: list[Source]) -> TranscriptEntry:
    """The finished turn of ``state`` as the page shows it."""
    active = state.get("active_patient")
    results = state.get("tool_results", [])
    return TranscriptEntry(question=state.get("user_query", ""), image=state.get("image_ref"), answer=answer,
                           confidence=confidence, sources=list(sources), writes=written(state, registry),
                           tools=[{"tool": r["tool_name"], "status": r["status"]} for r in results],
                           patient=PatientRef(id=active["id"], name=active["name"]) if active else None,
                           turn_id=state.get("turn_id", ""), notes=[n for r in results for n in r.get("notices", [])])


def appended(state: AgentState, entry: TranscriptEntry) -> list[TranscriptEntry]:
    """The thread's transcript with ``entry`` added (the oldest dropped past :data:`TRANSCRIPT_CAP`). A finished
    turn's entry takes the place of the one kept when its message was sent (same ``turn_id``): one entry a turn."""
    kept = state.get("transcript", [])
    turn = entry.get("turn_id")
    if turn and not entry.get("sent"):
        kept = [e for e in kept if not (e.get("sent") and e.get("turn_id") == turn)]
    return [*kept, entry][-TRANSCRIPT_CAP:]


def ended(transcript: list[TranscriptEntry], outcome: TranscriptEntry) -> list[TranscriptEntry]:
    """``transcript`` with the sent entry of ``outcome``'s turn finished with it (a turn that ended without its
    answer node: the model backend was down). Unchanged when no such entry waits."""
    turn = outcome.get("turn_id")
    out: list[TranscriptEntry] = []
    for entry in transcript:
        if turn and entry.get("sent") and entry.get("turn_id") == turn:
            entry = TranscriptEntry(**{**entry, **outcome})
            entry.pop("sent", None)
        out.append(entry)
    return out


def unfinished(transcript: list[TranscriptEntry]) -> TranscriptEntry | None:
    """The last entry when it is a message whose turn has not finished (running, or cut off)."""
    return transcript[-1] if transcript and transcript[-1].get("sent") else None
