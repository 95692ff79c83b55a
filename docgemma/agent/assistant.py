"""One clinician turn as a stream of events: what the UI, the CLI and the golden runner all use.

Events (typed, :mod:`docgemma.agent.events`): ``NodeStart``, ``NodeEnd`` (a timeline event), ``Token`` (answer
text), ``ApprovalRequest`` (a write waits for the clinician: resume with :meth:`Assistant.stream_resume`), and
``TurnDone`` (the :class:`TurnResult`). Each conversation is a LangGraph thread; its state lives in the
checkpointer.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from docgemma.agent.approval import ALREADY_HANDLED, NO_PENDING, ApprovalCard
from docgemma.agent.claims import CardClaims, MemoryClaims
from docgemma.agent.events import AgentEvent, ApprovalRequest, NodeEnd, NodeStart, Token, TurnDone, TurnResult
from docgemma.agent.graph import build_graph
from docgemma.agent.memory import switch_marker, switched
from docgemma.agent.nodes.input_assembly import PatientContext
from docgemma.agent.nodes.tool_execute import WriteCheck
from docgemma.agent.schemas import agent_schemas
from docgemma.agent.state import AgentState, Attachment, PatientRef, TranscriptEntry, turn_input
from docgemma.agent.transcript import appended, written
from docgemma.config import Settings
from docgemma.image_store import ImageStore
from docgemma.llm.base import LLM
from docgemma.tools.registry import ToolRegistry

__all__ = ["EMPTY_MESSAGE", "AgentEvent", "Assistant", "TurnResult"]
EMPTY_MESSAGE = "Please type a question, or attach an image (PNG, JPEG or DICOM)."


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
        claims: CardClaims | None = None,
    ) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        self.llm = llm
        self.registry = registry
        # Constraints built now, at load: on a 262k vocabulary a build on first use would delay a clinician's turn.
        prepare = getattr(llm, "prepare_schemas", None)
        if callable(prepare):
            prepare(agent_schemas(registry))
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
        # shared by every caller of this Assistant (Gradio queues, API, CLI), and by every replica when the
        # claims are durable (ops/store.py). The record's idempotency key (the pending action's id) still
        # stops a second write.
        self.claims = claims or MemoryClaims()

    @staticmethod
    def _config(thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    def pending_approval(self, thread_id: str) -> ApprovalCard | None:
        """The write waiting for the clinician on this thread, if any."""
        snapshot = self.graph.get_state(self._config(thread_id))
        for item in getattr(snapshot, "interrupts", ()):
            value = item.value
            if isinstance(value, dict) and value.get("kind") == "approval":
                return cast(ApprovalCard, value)
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
            who = value["name"] if value else "none"
            update["transcript"] = appended(state, TranscriptEntry(note=f"Active patient is now {who}."))
        self.graph.update_state(self._config(thread_id), update, as_node="synthesize")
        return change

    def stream_turn(self, thread_id: str, message: str, attachment: Attachment | None = None) -> Iterator[AgentEvent]:
        """Run one turn. Empty input, or a turn while a write awaits approval, is refused with a message."""
        if not message.strip() and attachment is None:
            yield TurnDone(TurnResult(answer=EMPTY_MESSAGE, notes=[EMPTY_MESSAGE]))
            return
        pending = self.pending_approval(thread_id)
        if pending is not None:
            text = f"Please approve, edit or reject the pending {pending['label']} first."
            yield ApprovalRequest(pending)
            yield TurnDone(TurnResult(answer=text, notes=[text]))
            return
        ref = self.images.put(attachment["filename"], attachment["data"]) if attachment is not None else None
        yield from self._run(turn_input(message, ref, turn_id=uuid.uuid4().hex), thread_id)

    def stream_resume(self, thread_id: str, decision: dict[str, Any]) -> Iterator[AgentEvent]:
        """Continue a paused write with ``{"action": "approve" | "reject" | "edit" | "override", "args": {...},
        "reason": "...", "card_id": "..."}``. ``card_id`` names the card the clinician decided on (the UI sends
        it); a card is consumed once, by whichever decision claims it first: later ones, and decisions on a card
        that was already replaced, get :data:`ALREADY_HANDLED` and change nothing."""
        pending = self.pending_approval(thread_id)
        card = str(pending.get("card_id", "")) if pending else ""
        wanted = str(decision.get("card_id") or "")
        refusal = (NO_PENDING if pending is None and not wanted else
                   ALREADY_HANDLED if pending is None or (wanted and wanted != card) else None)
        if refusal is None and not self.claims.claim(thread_id, card):
            refusal = ALREADY_HANDLED
        if refusal is not None:
            yield TurnDone(TurnResult(answer=refusal, notes=[refusal]))
            return
        finished = False
        try:
            # The signed-in user who decided is named in the write's Provenance (the node reads it from the config).
            yield from self._run(Command(resume={**decision, "card_id": card}), thread_id,
                                 approved_by=str(decision.get("approved_by") or ""))
            finished = True
        finally:
            if not finished:  # the run failed or was abandoned before the graph moved on: the card may be used again
                self.claims.release(thread_id, card)

    def _run(self, graph_input: Any, thread_id: str, approved_by: str = "") -> Iterator[AgentEvent]:
        config = self._config(thread_id)
        if approved_by:
            config["configurable"]["approved_by"] = approved_by
        start = time.perf_counter()
        # durability="exit": one checkpoint when the run ends or pauses for an approval, instead of one per
        # step (measured: ~20 → ~16 ms of per-turn overhead). A turn cut off midway is simply not recorded.
        for mode, chunk in self.graph.stream(graph_input, config, stream_mode=["updates", "custom"], durability="exit"):
            if mode == "custom":
                if isinstance(chunk, (NodeStart, NodeEnd, Token)):  # the nodes' own events (agent/trace.py)
                    yield chunk
            elif isinstance(chunk, dict) and "__interrupt__" in chunk:
                yield ApprovalRequest(cast(ApprovalCard, chunk["__interrupt__"][0].value))
                return
        state = self.graph.get_state(config).values
        result = TurnResult.from_state(state, (time.perf_counter() - start) * 1000)
        result.writes = written(state, self.registry)
        yield TurnDone(result)

    def run_turn(self, thread_id: str, message: str, attachment: Attachment | None = None) -> TurnResult | ApprovalCard:
        """Run a turn to its end; returns the result, or the approval request if a write is waiting."""
        return _last(self.stream_turn(thread_id, message, attachment))

    def resume(self, thread_id: str, decision: dict[str, Any]) -> TurnResult | ApprovalCard:
        """Resume a paused write to the end of the turn (or the next approval)."""
        return _last(self.stream_resume(thread_id, decision))


def _last(events: Iterator[AgentEvent]) -> TurnResult | ApprovalCard:
    outcome: TurnResult | ApprovalCard = TurnResult(answer="")
    for event in events:
        if isinstance(event, TurnDone):
            outcome = event.result
        elif isinstance(event, ApprovalRequest):
            outcome = event.request
    return outcome
