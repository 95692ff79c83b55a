"""The LangGraph state (seed 002 §5), plus what the product adds: attachments, the active patient,
the reasoning timeline and the turn's output (seed 000 dual output, seed 003 follow-ups).

Nodes return partial dicts. The three accumulating lists use :func:`extend_or_reset`: a node appends by
returning a list, and INPUT_ASSEMBLY starts a turn's lists afresh by putting :data:`NEW_TURN` first.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from docgemma.image_store import ImageRef
from docgemma.llm.base import Message
from docgemma.tools.outcome import Source

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


class ExtractedEntities(TypedDict):
    """Deterministic pre-extraction (seed 002 §4)."""

    patient_ids: list[str]
    patient_names: list[str]
    drug_mentions: list[str]
    action_verbs: list[str]
    has_image: bool


class ImageFindings(TypedDict):
    """Structured findings of the vision call."""

    modality: str
    findings: list[str]
    confidence: Literal["high", "medium", "low"]


class PatientRef(TypedDict):
    """The active patient of a conversation; carried across turns."""

    id: str
    name: str


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


class TimelineEvent(TypedDict):
    """One entry of the reasoning timeline (one per node run)."""

    node: str
    label: str
    decision: str
    detail: str
    duration_ms: float
    llm_calls: int
    prompt_tokens: int


class AgentState(TypedDict, total=False):
    """Everything that flows through the graph; ``total=False`` since nodes write parts of it."""

    # ── input of the turn ──
    user_query: str
    attachment: ImageRef | None  # a reference: image bytes never go into the checkpoint
    #: Unique per turn (set by the Assistant): a pending write's id derives from it, stable across replays.
    turn_id: str
    # ── carried across turns (checkpointed per thread) ──
    conversation: list[Message]
    active_patient: PatientRef | None
    # ── INPUT_ASSEMBLY ──
    history: str
    input_notes: list[str]
    extracted_entities: ExtractedEntities
    image_findings: ImageFindings | None
    patient_context: str | None
    # ── INTENT_CLASSIFY ──
    intent: Literal["DIRECT", "TOOL_NEEDED"]
    scope: Literal["clinical", "greeting", "off_topic"]
    task_summary: str
    suggested_tool: str | None
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
    patient_options: list[dict[str, Any]] | None
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


def turn_input(user_query: str, attachment: ImageRef | None = None) -> AgentState:
    """The input of one turn; everything else is derived (and per-turn fields reset) by INPUT_ASSEMBLY."""
    return AgentState(user_query=user_query, attachment=attachment)
