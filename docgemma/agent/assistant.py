"""One clinician turn as a stream of events: what the UI, the CLI and the golden runner all use.

Events (plain dicts): ``node_start``, ``node_end`` (a timeline event), ``token`` (answer text),
``approval`` (a write waits for the clinician: resume with :meth:`Assistant.stream_resume`), and ``done``
(the :class:`TurnResult`). Each conversation is a LangGraph thread; its state lives in the checkpointer.
"""

from __future__ import annotations

import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from docgemma.agent.approval import ALREADY_HANDLED, NO_PENDING
from docgemma.agent.graph import build_graph
from docgemma.agent.memory import switch_marker, switched
from docgemma.agent.nodes.input_assembly import PatientContext
from docgemma.agent.nodes.tool_execute import WriteCheck
from docgemma.agent.state import AgentState, Attachment, PatientRef, TimelineEvent, turn_input
from docgemma.config import Settings
from docgemma.image_store import ImageStore
from docgemma.llm.base import LLM
from docgemma.tools.outcome import Source
from docgemma.tools.registry import ToolRegistry

Event = dict[str, Any]
EMPTY_MESSAGE = "Please type a question, or attach an image (PNG, JPEG or DICOM)."


@dataclass
class TurnResult:
    """The output of a finished turn (seed 000 dual output + seed 003 follow-ups)."""

    answer: str
    confidence: str | None = None
    sources: list[Source] = field(default_factory=list)
    follow_ups: list[str] = field(default_factory=list)
    timeline: list[TimelineEvent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    intent: str | None = None
    entities: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    router_actions: list[str] = field(default_factory=list)
    clarification: str | None = None
    active_patient: dict[str, str] | None = None
    latency_ms: float = 0.0
    #: What this turn wrote to the record, one confirmation per write with its resource id.
    writes: list[str] = field(default_factory=list)

    @property
    def path(self) -> list[str]:
        """Nodes in the order they ran."""
        return [e["node"] for e in self.timeline]

    @property
    def llm_calls(self) -> int:
        """Model calls of the turn."""
        return sum(e["llm_calls"] for e in self.timeline)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of the turn."""
        return sum(e["prompt_tokens"] for e in self.timeline)

    @classmethod
    def from_state(cls, state: AgentState, latency_ms: float) -> TurnResult:
        """Read the result off the final graph state."""
        return cls(
            answer=state.get("final_response") or "",
            confidence=state.get("confidence"),
            sources=list(state.get("sources", [])),
            follow_ups=list(state.get("follow_ups", [])),
            timeline=list(state.get("timeline", [])),
            notes=list(state.get("input_notes", [])),
            intent=state.get("intent"),
            entities=dict(state.get("extracted_entities", {})),
            tools=[
                {"tool": r["tool_name"], "label": r["tool_label"], "args": r["args"], "status": r["status"],
                 "error_type": r["error_type"]}
                for r in state.get("tool_results", [])
            ],
            router_actions=list(state.get("router_actions", [])),
            clarification=state.get("clarification_request"),
            active_patient=_patient(state),
            latency_ms=latency_ms,
        )


class Assistant:
    """The agent for many conversations: one compiled graph, one thread per conversation."""

    def __init__(
        self,
        llm: LLM,
        registry: ToolRegistry,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        settings: Settings | None = None,
        *,
        patient_context: PatientContext | None = None,
        write_check: WriteCheck | None = None,
        image_store: ImageStore | None = None,
    ) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        self.llm = llm
        self.registry = registry
        self.settings = settings or Settings()
        if image_store is None:
            # No durable store given (tests, golden runs): a private temporary one, removed with the assistant.
            self._image_dir = tempfile.TemporaryDirectory(prefix="docgemma-images-")
            image_store = ImageStore(Path(self._image_dir.name), max_file_bytes=self.settings.max_image_bytes)
        self.images = image_store
        self.graph = build_graph(
            llm, registry, checkpointer or InMemorySaver(), self.settings,
            patient_context=patient_context, write_check=write_check,
        )
        # The per-thread claim on approval cards: whichever button or API call comes first consumes a card;
        # shared by every caller of this Assistant (Gradio queues, API, CLI). The record's idempotency key
        # (the pending action's id) still stops a second write across processes.
        self._claim_lock = threading.Lock()
        self._claimed: dict[str, list[str]] = {}

    @staticmethod
    def _config(thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    def pending_approval(self, thread_id: str) -> dict[str, Any] | None:
        """The write waiting for the clinician on this thread, if any."""
        snapshot = self.graph.get_state(self._config(thread_id))
        for item in getattr(snapshot, "interrupts", ()):
            value = item.value
            if isinstance(value, dict) and value.get("kind") == "approval":
                return value
        return None

    def state(self, thread_id: str) -> AgentState:
        """The thread's current state (empty for a new thread)."""
        return cast(AgentState, self.graph.get_state(self._config(thread_id)).values)

    def set_active_patient(self, thread_id: str, patient: dict[str, str] | None) -> bool:
        """Make ``patient`` (``{"id", "name"}``) the conversation's active patient (the UI's patient panel).
        Returns True when this switched from another patient: the conversation then records the switch, and
        the earlier turns (about the previous patient) no longer reach the prompts."""
        value = PatientRef(id=patient["id"], name=patient["name"]) if patient else None
        state = self.state(thread_id)
        update: dict[str, Any] = {"active_patient": value}
        change = switched(state.get("active_patient"), value)
        if change:
            update["conversation"] = [*state.get("conversation", []), switch_marker(value)]
        self.graph.update_state(self._config(thread_id), update, as_node="synthesize")
        return change

    def stream_turn(self, thread_id: str, message: str, attachment: Attachment | None = None) -> Iterator[Event]:
        """Run one turn. Empty input, or a turn while a write awaits approval, is refused with a message."""
        if not message.strip() and attachment is None:
            yield {"type": "done", "result": TurnResult(answer=EMPTY_MESSAGE, notes=[EMPTY_MESSAGE])}
            return
        pending = self.pending_approval(thread_id)
        if pending is not None:
            text = f"Please approve, edit or reject the pending {pending['label']} first."
            yield {"type": "approval", "request": pending}
            yield {"type": "done", "result": TurnResult(answer=text, notes=[text])}
            return
        ref = self.images.put(attachment["filename"], attachment["data"]) if attachment is not None else None
        yield from self._run(turn_input(message, ref, turn_id=uuid.uuid4().hex), thread_id)

    def stream_resume(self, thread_id: str, decision: dict[str, Any]) -> Iterator[Event]:
        """Continue a paused write with ``{"action": "approve" | "reject" | "edit" | "override", "args": {...},
        "reason": "...", "card_id": "..."}``. ``card_id`` names the card the clinician decided on (the UI sends
        it); a card is consumed once, by whichever decision claims it first: later ones, and decisions on a card
        that was already replaced, get :data:`ALREADY_HANDLED` and change nothing."""
        with self._claim_lock:
            pending = self.pending_approval(thread_id)
            card = str(pending.get("card_id", "")) if pending else ""
            claimed = self._claimed.setdefault(thread_id, [])
            wanted = str(decision.get("card_id") or "")
            refusal = (NO_PENDING if pending is None and not wanted else
                       ALREADY_HANDLED if pending is None or card in claimed or (wanted and wanted != card) else None)
            if refusal is None:
                claimed.append(card)
                del claimed[:-16]  # a card id is never pending again once consumed; keep only recent ones
        if refusal is not None:
            yield {"type": "done", "result": TurnResult(answer=refusal, notes=[refusal])}
            return
        finished = False
        try:
            yield from self._run(Command(resume={**decision, "card_id": card}), thread_id)
            finished = True
        finally:
            if not finished:  # the run failed or was abandoned before the graph moved on: the card may be used again
                with self._claim_lock:
                    if card in claimed:
                        claimed.remove(card)

    def _run(self, graph_input: Any, thread_id: str) -> Iterator[Event]:
        config = self._config(thread_id)
        start = time.perf_counter()
        # durability="exit": one checkpoint when the run ends or pauses for an approval, instead of one per
        # step (measured: ~20 → ~16 ms of per-turn overhead). A turn cut off midway is simply not recorded.
        for mode, chunk in self.graph.stream(graph_input, config, stream_mode=["updates", "custom"], durability="exit"):
            if mode == "custom":
                yield chunk
            elif isinstance(chunk, dict) and "__interrupt__" in chunk:
                yield {"type": "approval", "request": chunk["__interrupt__"][0].value}
                return
        state = self.graph.get_state(config).values
        result = TurnResult.from_state(state, (time.perf_counter() - start) * 1000)
        result.writes = self._writes(state)
        yield {"type": "done", "result": result}

    def _writes(self, state: AgentState) -> list[str]:
        """Confirmations of this turn's successful writes (what, and the resource id), from the tool results."""
        out = []
        for r in state.get("tool_results", []):
            if r["status"] == "success" and r["tool_name"] in self.registry and self.registry[r["tool_name"]].writes:
                out.append(self.registry[r["tool_name"]].formatter(r["data"]))
        return out

    def run_turn(self, thread_id: str, message: str, attachment: Attachment | None = None) -> TurnResult | dict[str, Any]:
        """Run a turn to its end; returns the result, or the approval request if a write is waiting."""
        return _last(self.stream_turn(thread_id, message, attachment))

    def resume(self, thread_id: str, decision: dict[str, Any]) -> TurnResult | dict[str, Any]:
        """Resume a paused write to the end of the turn (or the next approval)."""
        return _last(self.stream_resume(thread_id, decision))


def _patient(state: AgentState) -> dict[str, str] | None:
    active = state.get("active_patient")
    return {"id": active["id"], "name": active["name"]} if active else None


def _last(events: Iterator[Event]) -> TurnResult | dict[str, Any]:
    outcome: TurnResult | dict[str, Any] = TurnResult(answer="")
    for event in events:
        if event["type"] == "done":
            outcome = event["result"]
        elif event["type"] == "approval":
            outcome = event["request"]
    return outcome
