"""The LangGraph state of the v3 graph, plus what the product adds: attachments, the active patient,
the reasoning timeline and the turn's output (the answer plus its reasoning trail, and follow-ups).

Nodes return partial dicts. The accumulating lists use :func:`extend_or_reset`: a node appends by
returning a list, and INPUT_ASSEMBLY starts a turn's lists afresh by putting :data:`NEW_TURN` first.

Every field is one of three kinds, declared here rather than in a node: the turn's input
(:class:`InputState`), carried over from the turn before (:data:`CARRIED_OVER`), or per-turn with a fresh
value at the start of each turn (:data:`TURN_DEFAULTS`). A test checks that every field is exactly one of
them, so a new field cannot silently carry over into the next turn.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from docgemma.clinical.entities import ExtractedEntities
from docgemma.clinical.patient import PatientListing, PatientRef
from docgemma.image_store import ImageRef
from docgemma.llm.base import Message
from docgemma.tools.outcome import Source

__all__ = ["CARRIED_OVER", "NEW_TURN", "TURN_DEFAULTS", "AgentState", "Attachment", "ExtractedEntities",
           "ImageFindings", "InputState", "PatientChange", "PatientRef", "ThreadUpdate", "TimelineEvent", "ToolResult",
           "TranscriptEntry", "turn_defaults",
           "turn_input"]

#: First element of a list update that replaces, rather than extends, an accumulating list.
NEW_TURN = "__new_turn__"

RouteAction = Literal["SYNTHESIZE", "TOOL_SELECT", "ERROR_HANDLER", "ASK_USER", "SKIP", "RETRY"]
Confidence = Literal["high", "medium", "low"]


def extend_or_reset(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Reducer: append ``right``; if it starts with :data:`NEW_TURN`, replace with the rest of it."""
    if right and right[0] == NEW_TURN:
        return list(right[1:])
    return [*(left or []), *(right or [])]


class Attachment(TypedDict):
    """An uploaded file as received by :class:`~docgemma.agent.assistant.Assistant`. It never enters the
    graph state: the assistant stores the bytes in its image store and the state carries an
    :class:`~docgemma.image_store.ImageRef` (decoded in INPUT_ASSEMBLY)."""

    filename: str
    data: bytes


class ImageFindings(TypedDict):
    """Structured findings of the vision call."""

    modality: str
    findings: list[str]
    confidence: Literal["high", "medium", "low"]


class ToolResult(TypedDict):
    """One executed (or refused) tool call."""

    tool_name: str
    tool_label: str
    args: dict[str, Any]
    status: Literal["success", "error"]
    data: Any
    formatted_result: str
    error: str | None
    error_type: str | None
    sources: list[Source]
    #: A write's arguments as first proposed, before the clinician's changes (the confirmation lists the changes).
    proposed_args: NotRequired[dict[str, Any]]
    #: What the approval cards of a write told the clinician ("Plain approval refused: …"), in order.
    notices: NotRequired[list[str]]


class TimelineEvent(TypedDict):
    """One entry of the reasoning timeline (one per node run)."""

    node: str
    label: str
    decision: str
    detail: str
    duration_ms: float
    llm_calls: int
    prompt_tokens: int
    #: Of ``prompt_tokens``, those served from a prefix cache (0 when the backend does not say).
    cached_tokens: int
    decoded_tokens: int
    #: Time inside model calls; ``duration_ms`` minus this is the agent's own share.
    model_ms: float


class TranscriptEntry(TypedDict, total=False):
    """One finished turn as the clinician saw it (or a note such as a patient switch), kept so that a reopened
    conversation shows every turn whole. Never read by a prompt: the model sees ``conversation`` only."""

    question: str
    #: The turn's image (a reference into the image store; the bytes may have been evicted since).
    image: ImageRef | None
    answer: str
    confidence: Confidence | None
    sources: list[Source]
    #: One confirmation per write of the turn, with its resource id and any override reason.
    writes: list[str]
    #: Set instead of a question and answer: a note in the conversation (a patient chosen in the panel).
    note: str
    #: The turn's tool calls (``tool``: its name, ``status``) and its active patient (``id``, ``name``): the
    #: page names "the patient record of …" among the sources from them, after a reload as live.
    tools: list[dict[str, str]]
    patient: PatientRef | None
    #: The finished turn's steps and its wall-clock time, as the page showed them: a reload shows them again
    #: (they were lost, and the timeline read "0.0 s").
    steps: list[TimelineEvent]
    latency_ms: float
    #: The turn's id (``AgentState.turn_id``): its finished entry replaces the one written when it was sent.
    turn_id: str
    #: True from the moment the message is sent until the turn's outcome replaces the entry: a reload then still
    #: shows the message, and a turn whose run died is said to be interrupted (issue 46).
    sent: bool
    #: The notices and refusals the turn's approval cards showed ("Plain approval refused: …"), in order.
    notes: list[str]


class PatientChange(TypedDict):
    """A node's proposal of a new active patient (None: no active patient), committed by COMMIT_PATIENT, the one
    node that writes ``active_patient``; ``by`` names who proposed it (the panel through THREAD_UPDATE, a pick from
    a clarification's list in INPUT_ASSEMBLY, a tool's result in TOOL_EXECUTE) and so where the run goes on."""

    patient: PatientRef | None
    by: Literal["panel", "choice", "tool"]


class ThreadUpdate(TypedDict, total=False):
    """A change to the conversation made outside a turn, entered through the graph (THREAD_UPDATE)."""

    #: The patient panel's choice (None: no active patient).
    set_active_patient: PatientRef | None
    #: A note kept in the transcript (one that led a recovered answer).
    note: str
    #: The finished turn's steps and time, kept on its transcript entry (see :class:`TranscriptEntry`).
    turn_figures: TranscriptEntry
    #: The clinician's message, kept the moment it is sent, before the turn runs (``sent`` is set on it).
    sent: TranscriptEntry
    #: The outcome of a turn that ended without its answer node (the model backend down): merged into its entry.
    turn_end: TranscriptEntry


class AgentState(TypedDict, total=False):
    """Everything that flows through the graph; ``total=False`` since nodes write parts of it."""

    # ── input of the turn ──
    user_query: str
    image_ref: ImageRef | None  # the stored upload (a reference: image bytes never go into the checkpoint)
    #: Unique per turn (set by the Assistant): a pending write's id derives from it, stable across replays.
    turn_id: str
    #: Set instead of a question: the run is a thread update, not a turn (THREAD_UPDATE clears it).
    thread_update: ThreadUpdate | None
    # ── carried across turns (checkpointed per thread) ──
    conversation: list[Message]
    #: The one active-patient field; only COMMIT_PATIENT writes it (a test checks), from a :class:`PatientChange`.
    active_patient: PatientRef | None
    #: A proposed change of active patient, waiting for COMMIT_PATIENT (which clears it).
    patient_change: PatientChange | None
    #: Every finished turn as shown (``conversation`` is capped for the prompts; this is for the page).
    transcript: list[TranscriptEntry]
    # ── INPUT_ASSEMBLY ──
    history: str
    input_notes: list[str]
    extracted_entities: ExtractedEntities
    image_findings: ImageFindings | None
    patient_context: str | None
    # ── INTENT_CLASSIFY ──
    intent: Literal["DIRECT", "TOOL_NEEDED"]
    #: "acknowledgement": the clinician asks for nothing ("don't add anything yet"); answered by code.
    scope: Literal["clinical", "greeting", "off_topic", "acknowledgement"]
    task_summary: str
    suggested_tool: str | None
    #: No rule was sure and the model is not fit to judge (not clinically meaningful), so it was not asked:
    #: the answer says what the demo can do here and offers the closest actions.
    undecided: bool
    #: The turn's decision (rules and the learned router, ``agent/decision.py``), made once and read by TOOL_SELECT.
    route_decision: dict[str, Any] | None
    # ── tool loop ──
    current_tool: str | None
    current_args: dict[str, Any] | None
    tool_results: Annotated[list[ToolResult], extend_or_reset]
    step_count: int
    retry_count: int
    total_retries: int
    retry_mode: Literal["same", "different"] | None
    skipped_tools: list[str]
    # ── RESULT_CLASSIFY ──
    last_result_classification: str | None
    last_result_summary: str | None
    qualities: Annotated[list[str], extend_or_reset]
    # ── routing and errors ──
    route: RouteAction | None
    error_action: RouteAction | None
    router_actions: Annotated[list[str], extend_or_reset]
    error_messages: Annotated[list[str], extend_or_reset]
    clarification_request: str | None
    #: The patients a clarification listed, and the request that led to it: the next message may pick one.
    patient_options: list[PatientListing] | None
    pending_request: str | None
    #: This turn's pick from that list (INPUT_ASSEMBLY), if any.
    selected_patient: PatientRef | None
    #: The active patient when the turn began: a change during the turn is a patient switch.
    patient_at_turn_start: PatientRef | None
    # ── output ──
    final_response: str | None
    confidence: Confidence | None
    sources: list[Source]
    follow_ups: list[str]
    timeline: Annotated[list[TimelineEvent], extend_or_reset]


class InputState(TypedDict, total=False):
    """What a turn is started with (the graph's declared input); everything else is derived or carried over."""

    user_query: str
    image_ref: ImageRef | None
    turn_id: str
    thread_update: ThreadUpdate | None


#: Fields that carry over from one turn to the next (checkpointed per thread).
CARRIED_OVER: frozenset[str] = frozenset({"conversation", "active_patient", "transcript"})

#: The value of every per-turn field when a turn starts (INPUT_ASSEMBLY overrides what it derives). The four
#: accumulating lists start with :data:`NEW_TURN` so that their reducer replaces the last turn's entries.
TURN_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "history": "",
    "input_notes": [],
    "extracted_entities": ExtractedEntities(
        patient_ids=[], patient_names=[], drug_mentions=[], action_verbs=[], has_image=False,
    ),
    "image_findings": None,
    "patient_context": None,
    "intent": "DIRECT",
    "scope": "clinical",
    "task_summary": "",
    "suggested_tool": None,
    "undecided": False,
    "route_decision": None,
    "current_tool": None,
    "current_args": None,
    "tool_results": [NEW_TURN],
    "step_count": 0,
    "retry_count": 0,
    "total_retries": 0,
    "retry_mode": None,
    "skipped_tools": [],
    "last_result_classification": None,
    "last_result_summary": None,
    "qualities": [NEW_TURN],
    "route": None,
    "error_action": None,
    "router_actions": [NEW_TURN],
    "error_messages": [NEW_TURN],
    "clarification_request": None,
    "patient_options": None,
    "pending_request": None,
    "patient_change": None,
    "selected_patient": None,
    "patient_at_turn_start": None,
    "final_response": None,
    "confidence": None,
    "sources": [],
    "follow_ups": [],
    "timeline": [NEW_TURN],
})


def turn_defaults() -> dict[str, Any]:
    """A fresh copy of :data:`TURN_DEFAULTS` (its lists are never shared between turns)."""
    return copy.deepcopy(dict(TURN_DEFAULTS))


def turn_input(user_query: str, image_ref: ImageRef | None = None, turn_id: str | None = None) -> InputState:
    """The input of one turn; everything else is derived (and per-turn fields reset) by INPUT_ASSEMBLY."""
    out = InputState(user_query=user_query, image_ref=image_ref, thread_update=None)
    if turn_id is not None:
        out["turn_id"] = turn_id
    return out
