"""One clinician turn as a stream of events: what the UI, the CLI and the golden runner all use.

Events (typed, :mod:`docgemma.agent.events`): ``NodeStart``, ``NodeEnd`` (a timeline event), ``Token`` (answer
text), ``ApprovalRequest`` (a write waits for the clinician: resume with :meth:`Assistant.stream_resume`), and
``TurnDone`` (the :class:`TurnResult`). Each conversation is a LangGraph thread; its state lives in the
checkpointer.
"""

from __future__ import annotations

import logging
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from docgemma.agent.approval import (
    ALREADY_HANDLED,
    BEING_WRITTEN,
    NO_PENDING,
    RECORD_UNREACHABLE,
    RECOVERED_RELEASED,
    RECOVERED_UNKNOWN,
    RECOVERED_WRITTEN,
    UNSENT,
    ApprovalCard,
    quote,
    withdrawn_note,
)
from docgemma.agent.claims import CardClaims, Claim, MemoryClaims, crash_point, holding, owner_gone, process_owner
from docgemma.agent.events import AgentEvent, ApprovalRequest, NodeEnd, NodeStart, Token, TurnDone, TurnResult
from docgemma.agent.graph import build_graph
from docgemma.agent.memory import switched
from docgemma.agent.nodes.input_assembly import PatientContext
from docgemma.agent.nodes.tool_execute import WriteCheck
from docgemma.agent.record_check import RecordFacts
from docgemma.agent.schemas import agent_schemas
from docgemma.agent.state import (
    AgentState,
    Attachment,
    InputState,
    PatientRef,
    ThreadUpdate,
    TimelineEvent,
    TranscriptEntry,
    turn_input,
)
from docgemma.agent.transcript import written
from docgemma.agent.visible import visible_text
from docgemma.clinical.roster import PatientRoster
from docgemma.config import Settings
from docgemma.image_store import ImageStore
from docgemma.llm.base import BACKEND_DOWN_SENTENCE, LLM, BackendUnavailable
from docgemma.llm.observed import observed
from docgemma.tools.registry import ToolRegistry

__all__ = ["EMPTY_MESSAGE", "AgentEvent", "Assistant", "TurnResult", "WriteLookup"]

#: The timeline's decision for the step a model backend failure cut off.
MODEL_DOWN = "model not answering"
#: An approved write ran, then the model could not answer (the rest of the turn is finished from the record later).
BACKEND_DOWN_AFTER_WRITE = ("Written to the record: {what}. The model is not answering right now, so the rest of "
                            "this turn was not processed; please try again in a minute.")
EMPTY_MESSAGE = "Please type a question, or attach an image (PNG, JPEG or DICOM)."
log = logging.getLogger(__name__)

#: (tool name, action id) -> the resource the action wrote ("MedicationRequest/…"), or None when the record holds
#: no write under the action's idempotency key; raises ConnectionError when the record cannot be asked.
WriteLookup = Callable[[str, str], str | None]
#: The parts of a decision a caller may send (anything else, such as a recovery marker, is the Assistant's own).
#: What a decision carries (kept with its claim, so a recovered write names the same approver).
DECISION_KEYS = ("action", "args", "args_hash", "reason", "card_id", "approved_by")


def first_decide(pending: ApprovalCard) -> str:
    """The answer to a message sent while ``pending`` waits."""
    return f"Please approve, edit or reject the pending {pending['label']} first."


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
        record_facts: RecordFacts | None = None,
        image_store: ImageStore | None = None,
        claims: CardClaims | None = None,
        find_write: WriteLookup | None = None,
        patient_roster: PatientRoster | None = None,
    ) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        self.llm = llm
        #: The one observed model in front of ``llm`` (``llm`` itself when the caller built it, with its observers):
        #: every node and tool of every turn asks it, so every call reaches the timeline and the observers.
        self.model = observed(llm)
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
            self.model, registry, checkpointer or InMemorySaver(), self.settings,
            patient_context=patient_context, write_check=write_check, record_facts=record_facts,
            patient_roster=patient_roster,
        )
        # The approval cards' state machine (agent/claims.py): whichever decision claims a card first carries it
        # out, as this process (``owner``) under a lease it renews while it runs. Shared by every caller of this
        # Assistant (Gradio queues, API, CLI), and by every replica when the rows are durable (ops/conversation_store.py). The
        # record's idempotency key (the pending action's id) still stops a second write.
        self.claims = claims or MemoryClaims()
        self.owner = process_owner()
        self.lease_s = self.settings.approval_lease_s
        #: How a crashed approval is checked against the record (None: it cannot be, the card is released).
        self.find_write = find_write

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

    def set_active_patient(self, thread_id: str, patient: PatientRef | None) -> bool:
        """Make ``patient`` the conversation's active patient (the UI's patient panel), through the graph's
        THREAD_UPDATE entry. Returns True when this switched from another patient: the conversation then records
        the switch, and the earlier turns (about the previous patient) no longer reach the prompts. A card waiting
        for approval is withdrawn by a switch, with :func:`~docgemma.agent.approval.withdrawn_note` in the
        transcript (the page says it in the chat)."""
        change = switched(self.state(thread_id).get("active_patient"), patient)
        pending = self.pending_approval(thread_id)
        if pending is not None and not change:
            return False  # the same patient again: the waiting card stays (an update would end its paused run)
        update = ThreadUpdate(set_active_patient=patient)
        if pending is not None:
            # A card waits for the previous patient: the switch ends its paused run, so it is withdrawn, and the
            # conversation says so (before, it vanished and a later Approve said "no pending action").
            update["note"] = withdrawn_note(pending)
            log.info("pending %s card withdrawn by a patient switch", pending.get("tool"))
        self._update(thread_id, update)
        return change

    def _update(self, thread_id: str, update: ThreadUpdate) -> None:
        """Run the graph's THREAD_UPDATE entry on this thread (a change made outside a turn)."""
        self.graph.invoke(InputState(thread_update=update), self._config(thread_id))

    def stream_turn(self, thread_id: str, message: str, attachment: Attachment | None = None) -> Iterator[AgentEvent]:
        """Run one turn. Empty input, or a turn while a write awaits approval, is refused with a message."""
        message = visible_text(message)  # what is not seen on screen is not read either
        if not message.strip() and attachment is None:
            yield TurnDone(TurnResult(answer=EMPTY_MESSAGE, notes=[EMPTY_MESSAGE]))
            return
        pending = self.pending_approval(thread_id)
        if pending is not None:
            held = self.claims.get(thread_id, str(pending.get("card_id", "")))
            if held is not None and not held.done and not self._alive(held):
                # The decision on this card died with its process: settle it first (the message is not sent).
                yield from self._recover(thread_id, pending, held, unsent=(message, attachment is not None))
                return
            if held is None:  # nobody is deciding the card: the refusal is kept with it
                yield from self._unsent(thread_id, pending, message, attachment is not None)
                return
            # A decision on the card is being carried out: the graph is not this message's to touch; the message
            # goes back to the page (``unsent``), which keeps it for a reload.
            text = BEING_WRITTEN if self._alive(held) and held.owner != self.owner else first_decide(pending)
            yield ApprovalRequest(pending)
            yield TurnDone(TurnResult(answer=text, notes=[text], unsent=message))
            return
        ref = self.images.put(attachment["filename"], attachment["data"]) if attachment is not None else None
        turn_id = uuid.uuid4().hex
        # Kept in the conversation before the turn runs (the run itself is checkpointed only when it ends or pauses):
        # a page reloaded mid-answer, or an app restarted, still shows the message (issue 46).
        self._update(thread_id, ThreadUpdate(sent=TranscriptEntry(question=message, image=ref, turn_id=turn_id)))
        for event in self._run(turn_input(message, ref, turn_id=turn_id), thread_id):
            if isinstance(event, TurnDone) and event.result.backend_down:
                # No answer node ran: the turn's outcome (the one sentence) is kept on its entry all the same.
                self._update(thread_id, ThreadUpdate(turn_end=TranscriptEntry(turn_id=turn_id,
                                                                              answer=event.result.answer)))
            yield event

    def _unsent(self, thread_id: str, pending: ApprovalCard, message: str, image: bool,
                lead: str = "") -> Iterator[AgentEvent]:
        """A message sent while a card waits is not sent. The card waits on, as a new card whose notice says so
        (``approval.unsent_notice``); kept in the paused run's checkpoint, then on the turn's transcript entry with
        the card's other notices, the refusal is in the chat after a reload too (issue 46: it was a line that a
        reload lost). Claimed like a decision, so that a click on the card at the same moment does one or the other.
        ``lead`` (a recovery's account of the card) comes before the answer's sentence."""
        card = str(pending.get("card_id", ""))
        won, held = self.claims.claim(thread_id, card, self.owner, self.lease_s, {"action": UNSENT})
        if not won:  # decided a moment ago: that decision's answer follows; the message goes back to the page
            text = BEING_WRITTEN if self._alive(held) and held.owner != self.owner else ALREADY_HANDLED
            yield TurnDone(TurnResult(answer=text, notes=[text], unsent=message))
            return
        said = message.strip() or "(an image)"
        if image and message.strip():
            said += " (with an image)"
        yield from self._carry_out(thread_id, card, Command(resume={UNSENT: said, "card_id": card}))
        text = f"{lead}\n\n{first_decide(pending)}" if lead else first_decide(pending)
        yield TurnDone(TurnResult(answer=text, notes=[text]))

    def stream_resume(self, thread_id: str, decision: dict[str, Any]) -> Iterator[AgentEvent]:
        """Continue a paused write with ``{"action": "approve" | "reject" | "edit" | "override", "args": {...},
        "reason": "...", "card_id": "..."}``. ``card_id`` names the card the clinician decided on (the UI sends
        it); a card is consumed once, by whichever decision claims it first: later ones, and decisions on a card
        that was already replaced, get :data:`ALREADY_HANDLED` and change nothing; while another process carries
        the decision out they get :data:`BEING_WRITTEN`. A claim whose process died (its lease ran out) is
        recovered first (:meth:`_recover`), and this decision is not applied."""
        pending = self.pending_approval(thread_id)
        card = str(pending.get("card_id", "")) if pending else ""
        wanted = str(decision.get("card_id") or "")
        refusal = (NO_PENDING if pending is None and not wanted else
                   ALREADY_HANDLED if pending is None or (wanted and wanted != card) else None)
        asked = {key: decision[key] for key in DECISION_KEYS if key in decision}
        if refusal is None:
            assert pending is not None
            won, held = self.claims.claim(thread_id, card, self.owner, self.lease_s, asked)
            if not won and not held.done and not self._alive(held):
                yield from self._recover(thread_id, pending, held, clicked=str(asked.get("action", "")))
                return
            if not won:
                refusal = BEING_WRITTEN if self._alive(held) and held.owner != self.owner else ALREADY_HANDLED
        if refusal is not None:
            yield TurnDone(TurnResult(answer=refusal, notes=[refusal]))
            return
        crash_point("claimed")
        yield from self._carry_out(thread_id, card, Command(resume={**asked, "card_id": card}))

    def settle(self, thread_id: str) -> Iterator[AgentEvent]:
        """On reopening a conversation, before anything is clicked: a card whose decision died with its process is
        settled now (:meth:`_recover`), so the reopened chat says what landed ("The prescription was written: …")
        or that the card waits again; a decision another running process is carrying out is said to be
        (:data:`BEING_WRITTEN`). Nothing for a conversation with no card, or a card nobody decided yet."""
        pending = self.pending_approval(thread_id)
        held = self.claims.get(thread_id, str(pending.get("card_id", ""))) if pending is not None else None
        if pending is None or held is None or held.done:
            return
        if not self._alive(held):
            yield from self._recover(thread_id, pending, held)
        elif held.owner != self.owner:
            yield ApprovalRequest(pending)
            yield TurnDone(TurnResult(answer=BEING_WRITTEN, notes=[BEING_WRITTEN]))

    def _alive(self, held: Claim) -> bool:
        """True while ``held`` belongs to a running process: its lease has not run out, and its owner is not a
        process of this machine that is certainly gone (after a crash on one server, the restarted app settles
        the card at once instead of calling it "being carried out by another server" until the lease ends)."""
        return held.live() and not owner_gone(held.owner)

    def _carry_out(self, thread_id: str, card: str, resume: Command[Any],
                   note: Callable[[str], str] | None = None) -> Iterator[AgentEvent]:
        """Run the claimed decision on ``card`` to the end of the turn (or the next card), moving its row along:
        *written* with the record id when the write is seen, *confirmed* when the graph has moved on. ``note``
        (a recovery's account of what happened, given the write's own words) leads the answer."""
        written = False
        what = ""
        decision = resume.resume if isinstance(resume.resume, dict) else {}
        approved_by = str(decision.get("approved_by") or "")

        def on_update(chunk: dict[str, Any]) -> None:
            nonlocal written, what
            for result in (chunk.get("tool_execute") or {}).get("tool_results", []):
                name = result["tool_name"]
                if result["status"] == "success" and name in self.registry and self.registry[name].writes:
                    crash_point("wrote")  # in the record, not yet in the row
                    record = str((result.get("data") or {}).get("resource", ""))
                    what = str((result.get("data") or {}).get("written") or "")
                    written = self.claims.advance(thread_id, card, self.owner, "written", record_id=record,
                                                  lease_s=self.lease_s)
                    crash_point("written")  # in the row, the turn not yet finished

        finished = False
        try:
            with holding(self.claims, thread_id, card, self.owner, self.lease_s):
                for event in self._run(resume, thread_id, on_update, approved_by=approved_by):
                    if isinstance(event, TurnDone) and event.result.backend_down:
                        if written:  # the approved write ran before the model failed: say so, not "nothing"
                            event.result.answer = BACKEND_DOWN_AFTER_WRITE.format(what=what or "the approved values")
                            event.result.notes = [event.result.answer]
                        yield event  # not finished: the card is released, or settled from the record if written
                        return
                    if isinstance(event, TurnDone) and note is not None:
                        event = TurnDone(self._noted(thread_id, event.result, note(what)))
                    yield event
            finished = True
        finally:
            if finished:
                self.claims.advance(thread_id, card, self.owner, "confirmed")
            elif written:
                # Written, but the turn did not finish here: let the next process that touches the card finish it
                # from the record (lease ended now) rather than offer the card again.
                self.claims.advance(thread_id, card, self.owner, "written")
            else:  # the run failed or was abandoned before writing: the card may be decided again
                self.claims.release(thread_id, card, self.owner)

    def _recover(self, thread_id: str, pending: ApprovalCard, held: Claim, *, clicked: str = "",
                 unsent: tuple[str, bool] | None = None) -> Iterator[AgentEvent]:
        """Settle a claim whose process died (its lease ran out): take it over (one process only), look the write
        up in the record by the action's idempotency key, then finish the turn when the write is there or put the
        card back to pending when it is not, and say which. The clinician's new click or message (``unsent``: its
        text, and whether an image went with it) is not applied; the message is kept, for a reload to show: on the
        card that waits again (its notice), or quoted in the note of the write that had landed."""
        card = held.card_id
        if not self.claims.take_over(held, self.owner, self.lease_s):
            yield TurnDone(TurnResult(answer=BEING_WRITTEN, notes=[BEING_WRITTEN]))  # another process took it
            return
        record = held.record_id
        if not record and self.find_write is not None:
            try:
                record = self.find_write(pending["tool"], pending["action_id"]) or ""
            except ConnectionError:
                self.claims.advance(thread_id, card, self.owner, held.state)  # still unsettled, lease ended
                yield TurnDone(TurnResult(answer=RECORD_UNREACHABLE, notes=[RECORD_UNREACHABLE]))
                return
        log.info("approval recovered from a dead claim (%s): %s", held.state, "written" if record else "released")
        if not record:
            self.claims.release(thread_id, card, self.owner)
            text = RECOVERED_RELEASED if self.find_write is not None else RECOVERED_UNKNOWN
            if unsent is not None:  # kept as the card's notice, as when no decision was under way (issue 46)
                lead = f"{text} Your message was not sent: decide on the card, then send it again."
                yield from self._unsent(thread_id, pending, *unsent, lead=lead)
                return
            yield ApprovalRequest(pending)
            yield TurnDone(TurnResult(answer=text, notes=[text]))
            return
        self.claims.advance(thread_id, card, self.owner, "written", record_id=record, lease_s=self.lease_s)
        after = (f" Your message was not sent: {quote(unsent[0] or '(an image)')}; send it again." if unsent else
                 f" Your '{clicked}' changed nothing." if clicked and clicked not in ("approve", "override") else "")

        def note(what: str) -> str:
            # The write in its confirmation's words (the run below finds it under its key); the card's own
            # values when the run reported none.
            shown = what or ", ".join(f"{v}" for k, v in pending["args"].items() if k != "patient_id" and v)
            return RECOVERED_WRITTEN.format(label=pending["label"].lower(), what=shown, record=record) + after

        resume: Command[Any] = Command(resume={**held.decision, "card_id": card, "recovered": record})
        for event in self._carry_out(thread_id, card, resume, note=note):
            if isinstance(event, TurnDone) and unsent is not None:
                event.result.unsent = unsent[0]  # the page puts it back in the box (and keeps it for a reload)
            yield event

    def _noted(self, thread_id: str, result: TurnResult, note: str) -> TurnResult:
        """``result`` with ``note`` leading its answer, and the note kept in the conversation for a reopened page."""
        self._update(thread_id, ThreadUpdate(note=note))
        result.answer = f"{note}\n\n{result.answer}" if result.answer else note
        result.notes = [note, *result.notes]
        return result

    def _run(self, graph_input: Any, thread_id: str, on_update: Callable[[dict[str, Any]], None] | None = None,
             approved_by: str = "") -> Iterator[AgentEvent]:
        """Stream the graph; ``on_update`` sees each node's state update as it is made; ``approved_by`` (the
        signed-in user who decided) is named in the write's Provenance (the node reads it from the config)."""
        config = self._config(thread_id)
        if approved_by:
            config["configurable"]["approved_by"] = approved_by
        start = time.perf_counter()
        # durability="exit": one checkpoint when the run ends or pauses for an approval, instead of one per
        # step (measured: ~20 → ~16 ms of per-turn overhead). A turn cut off midway leaves its message, kept when
        # it was sent (stream_turn), which a reopened page shows as interrupted.
        running: NodeStart | None = None  # the node a failure cuts off: its pending step is closed with the sentence
        try:
            for mode, chunk in self.graph.stream(graph_input, config, stream_mode=["updates", "custom"],
                                                 durability="exit"):
                if mode == "custom":
                    if isinstance(chunk, (NodeStart, NodeEnd, Token)):  # the nodes' own events (agent/trace.py)
                        if isinstance(chunk, NodeStart):
                            running = chunk
                        elif isinstance(chunk, NodeEnd):
                            running = None
                        yield chunk
                elif isinstance(chunk, dict) and "__interrupt__" in chunk:
                    yield ApprovalRequest(cast(ApprovalCard, chunk["__interrupt__"][0].value))
                    return
                elif on_update is not None and isinstance(chunk, dict):
                    on_update(chunk)
        except BackendUnavailable as down:
            # No model to fall back on: the turn ends here, unrecorded (durability="exit"), so the conversation the
            # prompts read is as it was before the message (stream_turn keeps the message and this sentence for
            # the page), and no write ran (a write waits for a card, and an approved
            # write that did run is settled by the caller, _carry_out, from the record).
            log.error("model backend unavailable, turn abandoned: %s", down.reason)
            yield from _backend_down(running, (time.perf_counter() - start) * 1000)
            return
        state = self.graph.get_state(config).values
        result = TurnResult.from_state(state, (time.perf_counter() - start) * 1000)
        result.writes = written(state, self.registry)
        kept = state.get("transcript") or [{}]
        if result.timeline and kept[-1].get("question") == state.get("user_query") and "steps" not in kept[-1]:
            # The turn's steps and time on its transcript entry, so that a reload shows them as they were.
            self._update(thread_id, ThreadUpdate(turn_figures=TranscriptEntry(steps=result.timeline,
                                                                              latency_ms=result.latency_ms)))
        yield TurnDone(result)

    def run_turn(self, thread_id: str, message: str, attachment: Attachment | None = None) -> TurnResult | ApprovalCard:
        """Run a turn to its end; returns the result, or the approval request if a write is waiting."""
        return _last(self.stream_turn(thread_id, message, attachment))

    def resume(self, thread_id: str, decision: dict[str, Any]) -> TurnResult | ApprovalCard:
        """Resume a paused write to the end of the turn (or the next approval)."""
        return _last(self.stream_resume(thread_id, decision))


def _backend_down(running: NodeStart | None, elapsed_ms: float) -> Iterator[AgentEvent]:
    """The one sentence a turn ends with when the model backend cannot answer: in the timeline (the step it cut
    off, closed) and the chat."""
    node, label = (running.node, running.label) if running is not None else ("model", "Model")
    entry = TimelineEvent(node=node, label=label, decision=MODEL_DOWN, detail=BACKEND_DOWN_SENTENCE,
                          duration_ms=elapsed_ms, llm_calls=0, prompt_tokens=0, cached_tokens=0, decoded_tokens=0,
                          model_ms=0.0)
    yield NodeEnd(entry)
    yield TurnDone(TurnResult(answer=BACKEND_DOWN_SENTENCE, notes=[BACKEND_DOWN_SENTENCE], timeline=[entry],
                              latency_ms=elapsed_ms, backend_down=True))


def _last(events: Iterator[AgentEvent]) -> TurnResult | ApprovalCard:
    outcome: TurnResult | ApprovalCard = TurnResult(answer="")
    for event in events:
        if isinstance(event, TurnDone):
            outcome = event.result
        elif isinstance(event, ApprovalRequest):
            outcome = event.request
    return outcome
