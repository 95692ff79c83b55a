"""The typed events of a turn: what :class:`~docgemma.agent.assistant.Assistant` streams to every front end
(the web UI, the CLI, the golden runner and the tests all consume these, nothing else).

A turn yields, in order: :class:`NodeStart` and :class:`NodeEnd` for each node run (the reasoning timeline),
:class:`Token` pieces of the answer while SYNTHESIZE writes it, then either :class:`ApprovalRequest` (a write
waits for the clinician: resume with ``Assistant.stream_resume``) or :class:`TurnDone` with the result. The
nodes write the first three on LangGraph's custom stream; the Assistant adds the last two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docgemma.agent.approval import ApprovalCard
from docgemma.agent.state import AgentState, PatientRef, TimelineEvent
from docgemma.tools.outcome import Source


@dataclass(frozen=True)
class NodeStart:
    """A node began (shown as a pending step)."""

    node: str
    label: str


@dataclass(frozen=True)
class NodeEnd:
    """A node finished: its timeline entry (decision, detail, time, model calls)."""

    event: TimelineEvent


@dataclass(frozen=True)
class Token:
    """A piece of the answer text."""

    text: str


@dataclass(frozen=True)
class ApprovalRequest:
    """A write waits for the clinician's decision on this card."""

    request: ApprovalCard


@dataclass
class TurnResult:
    """The output of a finished turn (the answer plus its reasoning trail, and follow-ups)."""

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
    active_patient: PatientRef | None = None
    latency_ms: float = 0.0
    #: What this turn wrote to the record, one confirmation per write with its resource id.
    writes: list[str] = field(default_factory=list)
    #: True when the turn was abandoned because the model backend could not answer (nothing recorded or written).
    backend_down: bool = False
    #: The clinician's message when this turn refused it and nothing in the conversation keeps it (another process
    #: was carrying out a decision on the waiting card): the page holds it and puts it back in the box, also after
    #: a reload (issue 46). Empty when the message was sent, or kept as the waiting card's notice.
    unsent: str = ""

    @property
    def ran(self) -> bool:
        """True for a turn the graph ran (its state is the thread's); False for a refusal before it (an empty
        message, a write waiting for approval, a model backend that could not answer): such a result says nothing
        of the active patient."""
        return bool(self.timeline) and not self.backend_down

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

    # ``.get``: a turn resumed from a checkpoint written before these fields existed has events without them.
    @property
    def cached_tokens(self) -> int:
        """Prompt tokens of the turn served from a prefix cache."""
        return sum(e.get("cached_tokens", 0) for e in self.timeline)

    @property
    def uncached_tokens(self) -> int:
        """Prompt tokens of the turn the model had to prefill."""
        return self.prompt_tokens - self.cached_tokens

    @property
    def decoded_tokens(self) -> int:
        """Tokens the model generated in the turn."""
        return sum(e.get("decoded_tokens", 0) for e in self.timeline)

    @property
    def model_ms(self) -> float:
        """Time inside model calls in the turn."""
        return sum(e.get("model_ms", 0.0) for e in self.timeline)

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


@dataclass(frozen=True)
class TurnDone:
    """The turn (or the resumed write) ended with this result."""

    result: TurnResult


#: Everything a turn streams.
AgentEvent = NodeStart | NodeEnd | Token | ApprovalRequest | TurnDone


def _patient(state: AgentState) -> PatientRef | None:
    active = state.get("active_patient")
    return PatientRef(id=active["id"], name=active["name"]) if active else None
