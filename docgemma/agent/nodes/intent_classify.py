"""Node ② INTENT_CLASSIFY (LLM, T=0): DIRECT or TOOL_NEEDED, a task summary, a non-binding tool hint.

The decision is made once here (:func:`docgemma.agent.decision.decide`) and carried in the state
(``route_decision``; TOOL_SELECT reads it). When it is sure — a rule (:func:`docgemma.agent.rules.decide`) decided
and the learned router agrees — there is no model call, and the timeline says "decided by rule and classifier"
and why. Otherwise the model classifies, shown code's candidates; if its output is unusable, the deterministic
entities decide (a drug, a patient or an image present → TOOL_NEEDED).

A model flagged not clinically meaningful (the embedded demo model, the fake demo backend) is not asked
either: its classification is noise that costs 30-90 s on a CPU. The turn is marked ``undecided`` and the
answer asks the clinician: one sentence and the candidate actions as buttons (:mod:`docgemma.agent.ask`).
"""

from __future__ import annotations

from typing import Any, Literal

from docgemma.agent import decision, prompts
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
    query = state["user_query"]
    decided = decision.decide(state, registry)
    detail = decision.describe(decided, registry)
    if decided["sure"]:
        if decided["tool"]:
            detail += f"; first resource: {registry.label(decided['tool'])}"
        return {
            "intent": decided["intent"],
            "scope": decided["scope"],
            "task_summary": query[:140],
            "suggested_tool": decided["tool"],
            "route_decision": dict(decided),
            "timeline": [trace.event(str(decided["intent"]), detail)],
        }
    if not clinically_meaningful(llm):
        return {
            "intent": "DIRECT",
            "scope": "clinical",
            "task_summary": query[:140],
            "suggested_tool": None,
            "undecided": True,
            "route_decision": dict(decided),
            "timeline": [trace.event("not decided", f"{detail}; the current model is not fit to judge it: not asked "
                                                    "(no model call), the clinician is asked")],
        }
    return {**_by_model(state, trace, registry, decided), "route_decision": dict(decided)}


def _by_model(state: AgentState, trace: NodeTrace, registry: ToolRegistry,
              decided: decision.RouteDecision) -> dict[str, Any]:
    """The model's classification of an unsure turn, shown code's candidates."""
    assert trace.llm is not None
    config = NODE_CONFIG["intent_classify"]
    query = state["user_query"]
    note = ""
    try:
        out = trace.llm.generate_json(
            prompts.intent_messages(state, decision.candidate_labels(decided)), intent_schema(registry.names),
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
    detail = f"{decision.describe(decided, registry)}; model asked. {detail}"
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
