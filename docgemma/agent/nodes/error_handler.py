"""Node ⑤a ERROR_HANDLER (hybrid): ask_user and skip are hard-coded rules (the model scored 0% on both); the model
only chooses between retry_same and retry_different_args (its 92% decision).

After a skip, the loop continues if the task still needs another tool and steps remain
("skip_and_continue"); otherwise the turn goes to the answer.
"""

from __future__ import annotations

from typing import Any, Literal

from docgemma.agent import clarify, prompts
from docgemma.agent.node_settings import MAX_RETRIES, MAX_STEPS, MAX_TOTAL_RETRIES, NODE_CONFIG
from docgemma.agent.patterns import remaining_tools
from docgemma.agent.schemas import RetryStrategy
from docgemma.agent.state import AgentState, PatientRef, RouteAction, ToolResult
from docgemma.agent.trace import NodeTrace
from docgemma.llm.base import LLM, LLMError, clinically_meaningful
from docgemma.tools.outcome import ErrorType
from docgemma.tools.registry import ToolRegistry

ASK_USER_ERRORS: frozenset[ErrorType] = frozenset({"invalid_args", "no_image", "unknown_patient"})
SKIP_ERRORS: frozenset[ErrorType] = frozenset({"drug_not_in_database", "not_configured", "no_vision", "declined",
                                               "not_requested", "offline"})


def deterministic_action(state: AgentState, result: ToolResult) -> tuple[RouteAction, str] | None:
    """ASK_USER or SKIP with the reason, or None when the model should choose how to retry."""
    error_type = result["error_type"] or "generic"
    retries = state.get("retry_count", 0)
    if error_type in ASK_USER_ERRORS:
        return "ASK_USER", f"{error_type}: the clinician must clarify"
    if retries >= MAX_RETRIES:
        return "SKIP", f"{retries} retries already made (limit {MAX_RETRIES})"
    if state.get("total_retries", 0) >= MAX_TOTAL_RETRIES:
        return "SKIP", f"turn retry limit reached ({MAX_TOTAL_RETRIES})"
    if error_type in SKIP_ERRORS:
        return "SKIP", f"{error_type}: retrying cannot help"
    if error_type == "service_unavailable" and retries >= 1:
        return "SKIP", "service still unavailable after a retry"
    return None


def question_for(result: ToolResult, active: PatientRef | None = None) -> str:
    """The clarification question for an ask_user error (``active``: the conversation's patient, named as the
    one whose record was not used in place of an unknown id)."""
    details = result["data"] if isinstance(result["data"], dict) else {}
    error_type = result["error_type"]
    if error_type == "no_image":
        return clarify.NO_IMAGE
    if error_type == "unknown_patient":
        return clarify.unknown_patient(details.get("patient_id", "?"), active["name"] if active else None)
    return clarify.missing_information(details.get("missing_fields", ["arguments"]))


def _model_strategy(llm: LLM, state: AgentState, result: ToolResult) -> tuple[str, str]:
    if not clinically_meaningful(llm):
        # The demo model's choice would be noise (seen: 7-11 s per offline look-up for a random pick).
        return "retry_same", "decided by rule (demo model):"
    config = NODE_CONFIG["error_retry"]
    try:
        out = llm.generate_json(prompts.retry_messages(state, result), RetryStrategy,
                                temperature=config.temperature, max_tokens=config.max_tokens)
        return out.strategy, "model chose"
    except LLMError:
        return "retry_same", "model output unusable; default"


def error_handler(state: AgentState, *, llm: LLM, registry: ToolRegistry) -> dict[str, Any]:
    """Decide ask_user / skip / retry for the last failed tool call."""
    trace = NodeTrace("error_handler", llm)
    assert trace.llm is not None
    result = state["tool_results"][-1]
    fixed = deterministic_action(state, result)
    update: dict[str, Any] = {}
    if fixed is None:
        strategy, how = _model_strategy(trace.llm, state, result)
        action: RouteAction = "RETRY"
        detail = f"{how} {strategy} (retry {state.get('retry_count', 0) + 1} of {MAX_RETRIES})"
        update.update(
            retry_mode="same" if strategy == "retry_same" else "different",
            retry_count=state.get("retry_count", 0) + 1,
            total_retries=state.get("total_retries", 0) + 1,
            route="TOOL_SELECT",
        )
    else:
        action, detail = fixed
        update["error_messages"] = [result["error"]]
        if action == "ASK_USER":
            update.update(clarification_request=question_for(result, state.get("active_patient")), route="SYNTHESIZE")
        else:
            skipped = [*state.get("skipped_tools", []), result["tool_name"]]
            update["skipped_tools"] = skipped
            more = remaining_tools({**state, "skipped_tools": skipped}, registry)
            go_on = bool(more) and state.get("step_count", 0) < MAX_STEPS
            update["route"] = "TOOL_SELECT" if go_on else "SYNTHESIZE"
            detail += f"; continuing with {', '.join(more)}" if go_on else ""
    event = trace.event(action, detail)
    return {**update, "error_action": action, "router_actions": [action], "timeline": [event]}


def route_after_error(state: AgentState) -> Literal["tool_select", "synthesize"]:
    """Edge: retry or continue the loop, or answer (skip with nothing left, or ask the clinician)."""
    return "tool_select" if state.get("route") == "TOOL_SELECT" else "synthesize"
