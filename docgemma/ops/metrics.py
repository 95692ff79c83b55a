"""What to watch on a replica, in Prometheus' text format (``/metrics``): turns in flight and waiting, turn
and model-call latency, tool calls and errors by tool, approval decisions.

Labels are closed sets (tool names, statuses, error types, decision outcomes): never a patient, a thread, a
message or an argument, so the metrics hold no patient data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from docgemma.agent.approval import ALREADY_HANDLED, BEING_WRITTEN, NO_PENDING
from docgemma.agent.events import AgentEvent, ApprovalRequest, TurnDone
from docgemma.llm.observed import ModelCall, ObservedLLM, observed

if TYPE_CHECKING:
    from docgemma.llm.base import LLM

#: Model calls take from milliseconds (the demo model) to a minute (a 4B model on CPU).
MODEL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80)
TURN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160)


class Metrics:
    """One replica's metrics, in a registry of its own (several apps in one test process stay apart)."""

    def __init__(self) -> None:
        try:
            from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        except ImportError as exc:
            raise ImportError("the /metrics endpoint needs: pip install prometheus-client") from exc
        self.registry = CollectorRegistry()
        r = self.registry
        self.in_flight = Gauge("docgemma_turns_in_flight", "Turns and approval decisions running now", registry=r)
        self.waiting = Gauge("docgemma_queue_waiting", "Requests waiting in this replica's queue for a worker",
                             registry=r)
        self.turns = Counter("docgemma_turns_total", "Turns and decisions by how they ended", ["kind", "outcome"],
                             registry=r)
        self.turn_seconds = Histogram("docgemma_turn_seconds", "Wall time of a turn or a decision's run", ["kind"],
                                      buckets=TURN_BUCKETS, registry=r)
        self.model_seconds = Histogram("docgemma_model_call_seconds", "Latency of one model call", ["call"],
                                       buckets=MODEL_BUCKETS, registry=r)
        self.model_errors = Counter("docgemma_model_call_errors_total", "Model calls that raised", ["call"],
                                    registry=r)
        self.tool_calls = Counter("docgemma_tool_calls_total", "Tool calls by tool and status", ["tool", "status"],
                                  registry=r)
        self.tool_errors = Counter("docgemma_tool_errors_total", "Failed tool calls by tool and error type",
                                   ["tool", "error_type"], registry=r)
        self.approvals = Counter("docgemma_approvals_total", "Approval decisions by action and outcome",
                                 ["action", "outcome"], registry=r)

    def watch_queue(self, length: Callable[[], int]) -> None:
        """Report ``length()`` (the web server's queue) as ``docgemma_queue_waiting`` when scraped."""
        self.waiting.set_function(lambda: float(length()))

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))

    # ── turns and decisions ──

    def turn(self, events: Iterator[AgentEvent]) -> Iterator[AgentEvent]:
        """Pass a turn's events through, counting it."""
        return self._observe("turn", events, None)

    def decision(self, action: str, events: Iterator[AgentEvent]) -> Iterator[AgentEvent]:
        """Pass a resumed write's events through, counting the decision and its outcome."""
        return self._observe("decision", events, action if action in ("approve", "edit", "reject", "override")
                             else "other")

    def _observe(self, kind: str, events: Iterator[AgentEvent], action: str | None) -> Iterator[AgentEvent]:
        self.in_flight.inc()
        start = time.perf_counter()
        outcome = "abandoned"  # the client went away before the end
        try:
            for event in events:
                if isinstance(event, ApprovalRequest):
                    outcome = "approval_requested"
                elif isinstance(event, TurnDone):
                    outcome = self._done(event, action)
                yield event
        except Exception:
            outcome = "failed"
            raise
        finally:
            self.in_flight.dec()
            self.turn_seconds.labels(kind).observe(time.perf_counter() - start)
            self.turns.labels(kind, outcome).inc()
            if action is not None:
                self.approvals.labels(action, {"answered": "applied"}.get(outcome, outcome)).inc()

    def _done(self, event: TurnDone, action: str | None) -> str:
        result = event.result
        refused = {ALREADY_HANDLED: "already_handled", NO_PENDING: "no_pending", BEING_WRITTEN: "being_written"}
        if action is not None and result.answer in refused:
            return refused[result.answer]
        for tool in result.tools:
            self.tool_calls.labels(str(tool["tool"]), str(tool["status"])).inc()
            if tool["status"] != "success":
                self.tool_errors.labels(str(tool["tool"]), str(tool.get("error_type") or "unknown")).inc()
        return "answered"

    # ── model calls ──

    def timed(self, llm: LLM) -> ObservedLLM:
        """``llm`` observed, each call's latency and failure counted here (everything else passes through)."""
        model = observed(llm)
        model.observe(self.model_call)
        return model

    def model_call(self, call: ModelCall) -> None:
        """Observe one model call (an observer of :class:`~docgemma.llm.observed.ObservedLLM`): its latency (a
        stream: the whole stream, what the clinician waits for) and whether it raised."""
        if call.error is not None:
            self.model_errors.labels(call.kind).inc()
        self.model_seconds.labels(call.kind).observe(call.seconds)
