"""Node ⑥ DETERMINISTIC_ROUTER (code only: the model judged sufficiency right 0% of the time): every "what next" decision.

:func:`decide_route` is pure; the node records its decision (timeline, ``router_actions``) and the edge
function :func:`route_after_router` only reads it.
"""

from __future__ import annotations

from typing import Any, Literal

from docgemma.agent import clarify
from docgemma.agent.node_settings import MAX_STEPS
from docgemma.agent.patterns import remaining_tools
from docgemma.agent.state import AgentState, RouteAction
from docgemma.agent.trace import NodeTrace
from docgemma.clinical.patient import listing_of
from docgemma.tools.registry import ToolRegistry


def is_duplicate_call(state: AgentState) -> bool:
    """The last call repeats an earlier successful call of this turn (same tool, same arguments)."""
    results = state.get("tool_results", [])
    if len(results) < 2:
        return False
    last = results[-1]
    return any(r["tool_name"] == last["tool_name"] and r["args"] == last["args"] and r["status"] == "success"
               for r in results[:-1])


def _finds_patients(registry: ToolRegistry, name: str) -> bool:
    return name in registry and registry[name].patient_search


def decide_route(state: AgentState, registry: ToolRegistry) -> tuple[RouteAction, str, str | None]:
    """(action, reason, clarification) after RESULT_CLASSIFY. Never consults the model."""
    quality = state.get("last_result_classification") or ""
    if quality.startswith("error"):
        return "ERROR_HANDLER", f"tool result is {quality}", None
    last = state["tool_results"][-1]
    matches = last["data"].get("matches", []) if isinstance(last["data"], dict) else []
    if _finds_patients(registry, last["tool_name"]) and len(matches) > 1:
        return "ASK_USER", f"{len(matches)} patients match", clarify.patient_choice(last["args"].get("name", ""), matches)
    if state.get("step_count", 0) >= MAX_STEPS:
        return "SYNTHESIZE", f"step limit reached ({MAX_STEPS})", None
    if is_duplicate_call(state):
        return "SYNTHESIZE", "the same call was already made (loop stopped)", None
    remaining = remaining_tools(state, registry)
    if remaining:
        return "TOOL_SELECT", f"task still needs: {', '.join(remaining)}", None
    return "SYNTHESIZE", "task pattern satisfied", None


def router(state: AgentState, *, registry: ToolRegistry) -> dict[str, Any]:
    """Record the routing decision."""
    trace = NodeTrace("router")
    action, reason, question = decide_route(state, registry)
    event = trace.event(action, reason)
    update: dict[str, Any] = {"route": action, "router_actions": [action], "timeline": [event]}
    if question:
        update["clarification_request"] = question
        last = state["tool_results"][-1]
        if _finds_patients(registry, last["tool_name"]) and isinstance(last["data"], dict):
            # Kept for the next turn: "the second one" picks from this list and resumes this request.
            update["patient_options"] = [listing_of(m) for m in last["data"].get("matches", [])]
            update["pending_request"] = state["user_query"]
    return update


def route_after_router(state: AgentState) -> Literal["error_handler", "tool_select", "synthesize"]:
    """Edge: follow the recorded decision (ASK_USER ends in the answer node, which asks the question)."""
    route = state.get("route")
    if route == "ERROR_HANDLER":
        return "error_handler"
    if route == "TOOL_SELECT":
        return "tool_select"
    return "synthesize"
