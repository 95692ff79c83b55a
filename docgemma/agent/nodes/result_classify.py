"""Node ⑤ RESULT_CLASSIFY (LLM, T=0): what happened — never what to do next.

When the tool's own status settles the answer (an error type, an empty result) the class is assigned in
code and the model call is skipped; the timeline says so. A model flagged not clinically meaningful (the
CPU demo model) does not judge clinical data either: a result with data is "success_partial" by rule.
"""

from __future__ import annotations

from typing import Any

from docgemma.agent import prompts
from docgemma.agent.node_settings import NODE_CONFIG
from docgemma.agent.schemas import ResultAssessment
from docgemma.agent.state import AgentState, ToolResult
from docgemma.agent.trace import NodeTrace
from docgemma.llm.base import LLM, LLMError, clinically_meaningful
from docgemma.tools.outcome import RETRYABLE_ERRORS, is_empty


def classify_in_code(result: ToolResult) -> str | None:
    """The class implied by the tool's status alone, or None when the model must judge the data."""
    if result["status"] == "error":
        return "error_retryable" if result["error_type"] in RETRYABLE_ERRORS else "error_fatal"
    if is_empty(result["data"]):
        return "no_results"
    return None


def result_classify(state: AgentState, *, llm: LLM) -> dict[str, Any]:
    """Classify the last tool result; see the module docstring."""
    trace = NodeTrace("result_classify", llm)
    assert trace.llm is not None
    result = state["tool_results"][-1]
    quality = classify_in_code(result)
    if quality is not None:
        summary = result["error"] or f"The {result['tool_label']} returned no results."
        detail = "classified from the tool's status (no model call)"
    elif not clinically_meaningful(llm):
        quality, summary = "success_partial", f"The {result['tool_label']} returned data."
        detail = "decided by rule: data returned; the demo model does not judge clinical data (no model call)"
    else:
        config = NODE_CONFIG["result_classify"]
        try:
            out = trace.llm.generate_json(
                prompts.result_messages(state, result), ResultAssessment,
                temperature=config.temperature, max_tokens=config.max_tokens,
            )
            if out.quality.startswith("error"):
                # The tool succeeded with data: an "error" label cannot be right, and neither can its summary.
                quality, summary = "success_partial", f"The {result['tool_label']} returned data."
                detail = f"model said {out.quality} for a successful result; classified as partial"
            else:
                quality, summary = out.quality, f"The {result['tool_label']} returned data."
                detail = f"model classified the result as {out.quality}"
        except LLMError:
            quality, summary = "success_partial", f"The {result['tool_label']} returned data."
            detail = "model output unusable; classified as partial"
    event = trace.event(quality, detail)
    return {
        "last_result_classification": quality,
        "last_result_summary": summary,
        "qualities": [quality],
        "timeline": [event],
    }
