"""Timeline bookkeeping shared by every node: duration, LLM calls and prompt tokens per node run.

A node opens a :class:`NodeTrace` and ends with ``trace.event(decision, detail)``: the event goes to the live
stream (``custom`` mode, for the UI) and into the returned state (for the turn result). While it is open, every
call of the observed model (:mod:`docgemma.llm.observed`) made from the node is counted in its event: the
node's own calls through ``trace.llm``, and a tool's (the image tool asks the model too).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import Token
from typing import Any

from docgemma.agent.answer import strip_template_debris
from docgemma.agent.events import NodeEnd, NodeStart
from docgemma.agent.state import TimelineEvent
from docgemma.llm.base import LLM, Usage
from docgemma.llm.observed import CallObserver, ModelCall, ObservedLLM, close_scope, observed, open_scope

NODE_LABELS: dict[str, str] = {
    "input_assembly": "Reading the request",
    "intent_classify": "Understanding the question",
    "tool_select": "Choosing a resource",
    "tool_execute": "Consulting a resource",
    "result_classify": "Checking the result",
    "router": "Deciding the next step",
    "error_handler": "Handling a problem",
    "synthesize": "Writing the answer",
}


def stream_writer() -> Callable[[Any], None]:
    """LangGraph's custom-stream writer, or a no-op outside a graph run (nodes called directly in tests)."""
    try:
        from langgraph.config import get_stream_writer

        return get_stream_writer()
    except (RuntimeError, KeyError):
        return lambda _event: None


class NodeTrace:
    """One node run: announces its start on the stream and builds its timeline event at the end."""

    def __init__(self, node: str, llm: LLM | None = None, label: str | None = None) -> None:
        self.node = node
        self.label = label or NODE_LABELS[node]
        #: The model the node asks: the graph's observed model (a bare model, as tests pass one, is observed here).
        self.llm: ObservedLLM | None = observed(llm) if llm is not None else None
        self.usages: list[Usage] = []
        self.write = stream_writer()
        self.start = time.perf_counter()
        self._scope: Token[CallObserver | None] | None = open_scope(self.count)
        self.write(NodeStart(node, self.label))

    def count(self, call: ModelCall) -> None:
        """A model call made during this node run."""
        self.usages.append(call.usage)

    def event(self, decision: str, detail: str = "") -> TimelineEvent:
        """Finish the run: emit and return its timeline event."""
        if self._scope is not None:
            close_scope(self._scope)
            self._scope = None
        # Model text (a task summary, a result summary) may echo the prompt template: cleaned once, here,
        # so every consumer (web UI, CLI, golden records) gets the same timeline.
        usages = self.usages
        event = TimelineEvent(
            node=self.node,
            label=self.label,
            decision=strip_template_debris(decision).strip(),
            detail=strip_template_debris(detail).strip(),
            duration_ms=round((time.perf_counter() - self.start) * 1000, 2),
            llm_calls=len(usages),
            prompt_tokens=sum(u.prompt_tokens for u in usages),
            cached_tokens=sum(u.cached_tokens for u in usages),
            decoded_tokens=sum(u.decoded_tokens for u in usages),
            model_ms=round(sum(u.seconds for u in usages) * 1000, 2),
        )
        self.write(NodeEnd(event))
        return event
