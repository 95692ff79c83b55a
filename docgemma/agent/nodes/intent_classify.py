"""Node ② INTENT_CLASSIFY (LLM, T=0): DIRECT or TOOL_NEEDED, a task summary, a non-binding tool hint.

When the message settles the intent (:func:`docgemma.agent.rules.decide`: a task pattern, an imperative
write, a patient's record, a general question, a greeting) it is decided by rule, with no model call, and
the timeline says "decided by rule" and why. Otherwise the model classifies; if its output is unusable,
the deterministic entities decide (a drug, a patient or an image present → TOOL_NEEDED).

A model flagged not clinically meaningful (the embedded demo model, the fake demo backend) is not asked
either: its classification is noise that costs 30-90 s on a CPU. The turn is marked ``undecided`` and the
answer says what the demo can do here, with the closest actions as buttons.
"""

from __future__ import annotations

from typing import Any, Literal

from docgemma.agent import prompts, rules
from docgemma.agent.node_settings import NODE_CONFIG
from docgemma.agent.schemas import intent_schema
from docgemma.agent.state import AgentState
from docgemma.agent.trace import NodeTrace
from docgemma.llm.base import LLM, LLMError, clinically_meaningful
from docgemma.tools.registry import ToolRegistry


def intent_classify(state: AgentState, *, llm: LLM, registry: ToolRegistry) -> dict[str, Any]:
    """Classify the turn; see the module docstring."""
    trace = NodeTrace("intent_classify", llm)
    assert trace.llm is not None
    config = NODE_CONFIG["intent_classify"]
    query = state["user_query"]
    decided = rules.decide(state, registry)
    if decided is not None:
        detail = f"decided by rule: {decided.reason} (no model call)"
        if decided.tool:
            detail += f"; first resource: {registry.label(decided.tool)}"
        return {
            "intent": decided.intent,
            "scope": decided.scope,
            "task_summary": query[:140],
            "suggested_tool": decided.tool,
            "timeline": [trace.event(decided.intent, detail)],
        }
    if not clinically_meaningful(llm):
        return {
            "intent": "DIRECT",
            "scope": "clinical",
            "task_summary": query[:140],
            "suggested_tool": None,
            "undecided": True,
            "timeline": [trace.event("not decided", "no rule is sure of this request, and the current model is not "
                                                    "fit to judge it: not asked (no model call)")],
        }
    note = ""
    try:
        out = trace.llm.generate_json(
            prompts.intent_messages(state), intent_schema(registry.names),
            temperature=config.temperature, max_tokens=config.max_tokens,
        )
        intent, scope = out.intent, out.scope  # type: ignore[attr-defined]  # dynamic schema
        summary, suggested = out.task_summary, out.suggested_tool  # type: ignore[attr-defined]
    except LLMError:
        entities = state["extracted_entities"]
        needs_tool = bool(entities["drug_mentions"] or entities["patient_ids"] or entities["patient_names"])
        intent, scope, summary, suggested = ("TOOL_NEEDED" if needs_tool else "DIRECT"), "clinical", query[:140], None
        note = "model output unusable; intent decided from the extracted entities"
    detail = summary if not note else f"{note}. {summary}"
    if suggested:
        detail += f" (hint: {registry.label(suggested)})"
    event = trace.event(intent, detail)
    return {
        "intent": intent,
        "scope": scope,
        "task_summary": summary,
        "suggested_tool": suggested,
        "timeline": [event],
    }


def route_after_intent(state: AgentState) -> Literal["tool_select", "synthesize"]:
    """Edge: DIRECT answers at once; TOOL_NEEDED enters the tool loop."""
    return "tool_select" if state.get("intent") == "TOOL_NEEDED" else "synthesize"
